-- Splits each group's integer `units` (money in units of 1e-18) over the group's pieces in
-- proportion to `weight`, exactly: each piece gets floor(|units|·w / Σw), and the units left over
-- go one each to the pieces with the largest remainders (ties broken by piece_key). The sign is
-- restored afterwards, so the pieces of a group always sum to its units.
-- Input: temp table split_input(group_key, piece_key, units HUGEINT, weight HUGEINT ≥ 0, 0 < Σ < 1.3e19).
CREATE OR REPLACE TEMP TABLE split_output AS
WITH base AS (
    SELECT group_key, piece_key, units, weight::HUGEINT AS w,
           sum(weight::HUGEINT) OVER (PARTITION BY group_key) AS wt
    FROM split_input
),
shares AS (
    -- |units|·w / Σw without forming |units|·w, which overflows HUGEINT for large amounts (a quantity
    -- of 1e12 is 1e30 units): with |units| = q·Σw + r it is q·w + r·w / Σw, and r·w < Σw², so any
    -- weights summing below 1.3e19 split any amount. Same floors and remainders as the direct product.
    SELECT *, (abs(units) // wt) * w + ((abs(units) % wt) * w) // wt AS floor_units,
           ((abs(units) % wt) * w) % wt AS rem
    FROM base
),
ranked AS (
    SELECT *,
           abs(units) - sum(floor_units) OVER (PARTITION BY group_key) AS leftover,
           row_number() OVER (PARTITION BY group_key ORDER BY rem DESC, piece_key) AS rnk
    FROM shares
)
SELECT group_key, piece_key,
       (CASE WHEN units < 0 THEN -1 ELSE 1 END)::HUGEINT
         * (floor_units + CASE WHEN rnk <= leftover THEN 1 ELSE 0 END) AS units
FROM ranked
