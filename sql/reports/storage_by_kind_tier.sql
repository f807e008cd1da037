-- The team's inventoried storage over [$start, $end], per billing currency, kind and tier: its average
-- bytes a day, its GiB-days and what it cost (marts.fct_storage_daily; unpriced rows count their bytes).
SELECT billing_currency AS currency, kind, tier,
       (sum(bytes) / count(DISTINCT day))::DOUBLE AS bytes_per_day,
       sum(gb_days)::DOUBLE AS gb_days,
       coalesce(sum(effective_cost), 0)::DECIMAL(38, 18) AS effective_cost,
       string_agg(DISTINCT priced_by, ', ' ORDER BY priced_by) AS priced_by
FROM marts.fct_storage_daily
WHERE team = $team AND day BETWEEN $start AND $end
GROUP BY ALL
ORDER BY currency, effective_cost DESC, kind, tier
