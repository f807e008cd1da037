-- The team's inventoried bytes per day and kind over the trend's days [$start, $end], per currency: how
-- fast its storage grows.
SELECT billing_currency AS currency, day, kind, sum(bytes)::DOUBLE AS bytes
FROM marts.fct_storage_daily
WHERE team = $team AND day BETWEEN $start AND $end
GROUP BY ALL
ORDER BY currency, day, kind
