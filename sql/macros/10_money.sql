-- Money, exactly. It moves between DECIMAL(38,18) and integer units of 1e-18 so that splits are exact
-- integer arithmetic (largest remainder), never floats.
CREATE OR REPLACE MACRO money_units(x) AS
    trunc(x)::HUGEINT * 1000000000000000000::HUGEINT + ((x - trunc(x)) * 1000000000000000000)::HUGEINT;
CREATE OR REPLACE MACRO units_money(u) AS (u::DECIMAL(38, 0) * 0.000000000000000001);
-- A weight for splitting money by money: an amount in whole micro-units (1e-6), never negative. Coarse on
-- purpose: the split itself stays exact, and weights this size keep the products within HUGEINT.
CREATE OR REPLACE MACRO micro_units(x) AS greatest(0, money_units(x) // 1000000000000);

-- The one exact split of money (largest remainder), as a table macro over a table named by its
-- argument: split_exactly('some_input') with columns (group_key, piece_key, units HUGEINT, weight ≥ 0).
-- Each group's integer `units` (money in units of 1e-18) go to its pieces in proportion to `weight`:
-- each piece gets floor(|units|·w / Σw), and the units left over go one each to the pieces with the
-- largest remainders (ties broken by piece_key). The sign is restored afterwards, so the pieces of a
-- group always sum to its units. A group whose weights sum to 0 has no pieces: callers split only
-- groups with something to split by. |units|·w is never formed (1e30 units by a weight of 1e9
-- overflows HUGEINT): with q, r = divmod(|units|, Σw), the floor is q·w + (r·w) // Σw and the
-- remainder (r·w) % Σw, where r·w < Σw².
CREATE OR REPLACE MACRO split_exactly(input) AS TABLE
WITH base AS (
    SELECT group_key, piece_key, units, weight::HUGEINT AS w,
           sum(weight::HUGEINT) OVER (PARTITION BY group_key) AS wt
    FROM query_table(input)
),
shares AS (
    SELECT *, (abs(units) // wt) * w + ((abs(units) % wt) * w) // wt AS floor_units,
           ((abs(units) % wt) * w) % wt AS rem
    FROM base
    WHERE wt > 0
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
FROM ranked;
