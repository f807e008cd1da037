-- The team's users over [$start, $end], per billing currency, the $top by what their jobs wasted plus
-- what ran at low activity (marts.fct_user_cost_daily), as `sreport user top` lists them.
WITH users AS (
    SELECT billing_currency AS currency, user_name,
           sum(effective_cost)::DECIMAL(38, 18) AS effective_cost,
           coalesce(sum(effective_cost) FILTER (category IN (SELECT name FROM marts.dim_ledger_categories
                                                             WHERE is_waste)), 0)::DECIMAL(38, 18) AS waste_cost,
           sum(low_activity_cost)::DECIMAL(38, 18) AS low_activity_cost,
           sum(gpu_seconds)::DOUBLE AS gpu_seconds,
           sum(low_activity_gpu_seconds)::DOUBLE AS low_activity_gpu_seconds
    FROM marts.fct_user_cost_daily
    WHERE team = $team AND day BETWEEN $start AND $end
    GROUP BY billing_currency, user_name
)
SELECT * FROM users
QUALIFY row_number() OVER (PARTITION BY currency ORDER BY waste_cost + low_activity_cost DESC, user_name) <= $top
ORDER BY currency, waste_cost + low_activity_cost DESC, user_name
