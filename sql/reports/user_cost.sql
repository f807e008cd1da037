-- A user's cost over [$start, $end] per billing currency, team and ledger category, with the under-use
-- lens (marts.fct_user_cost_daily), for `gpuledger report --user`.
SELECT billing_currency AS currency, team, category,
       sum(gpu_seconds)::DOUBLE AS gpu_seconds,
       sum(effective_cost)::DECIMAL(38, 18) AS effective_cost,
       sum(low_activity_gpu_seconds)::DOUBLE AS low_activity_gpu_seconds,
       sum(low_activity_cost)::DECIMAL(38, 18) AS low_activity_cost
FROM marts.fct_user_cost_daily
WHERE user_name = $user AND day BETWEEN $start AND $end
GROUP BY ALL
ORDER BY currency, team, effective_cost DESC, category
