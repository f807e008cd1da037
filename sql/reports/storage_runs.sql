-- The team's $top runs by what their checkpoints cost stored over [$start, $end], per currency, with
-- their checkpoint bytes on the period's last day that has them.
WITH runs AS (
    SELECT billing_currency AS currency, run_id, day, sum(bytes) AS bytes, sum(effective_cost) AS cost,
           string_agg(DISTINCT store, ', ' ORDER BY store) AS stores
    FROM marts.fct_storage_daily
    WHERE team = $team AND day BETWEEN $start AND $end AND kind = 'checkpoint' AND run_id IS NOT NULL
    GROUP BY ALL
)
SELECT currency, run_id, arg_max(bytes, day)::DOUBLE AS last_bytes, max(day) AS last_day,
       coalesce(sum(cost), 0)::DECIMAL(38, 18) AS effective_cost, arg_max(stores, day) AS stores
FROM runs
GROUP BY currency, run_id
QUALIFY row_number() OVER (PARTITION BY currency ORDER BY sum(cost) DESC NULLS LAST, run_id) <= $top
ORDER BY currency, effective_cost DESC, run_id
