-- The day's pieces of every bill line: one row per line and hour of $day, with the exact share of
-- the line's EffectiveCost and BilledCost (largest remainder over the line's hours). What rounding the
-- line's amounts to 1e-18 took off stays whole on its first piece (the hour ChargePeriodStart is in).
SELECT $day::DATE AS day,
       l.line_key, l.quarantined,
       strptime(e.piece_key, '%Y-%m-%dT%H') AS hour_ts,
       units_money(e.units) AS effective_cost,
       units_money(b.units) AS billed_cost,
       l.billing_currency,
       CASE WHEN strptime(e.piece_key, '%Y-%m-%dT%H') = date_trunc('hour', l.ps) THEN l.effective_cost_rounding
            ELSE 0 END::DECIMAL(38, 38) AS effective_cost_rounding,
       CASE WHEN strptime(e.piece_key, '%Y-%m-%dT%H') = date_trunc('hour', l.ps) THEN l.billed_cost_rounding
            ELSE 0 END::DECIMAL(38, 38) AS billed_cost_rounding,
       -- seconds of the hour the line covers (0 for a point-in-time line)
       CASE WHEN l.pe > l.ps
            THEN epoch(least(l.pe, strptime(e.piece_key, '%Y-%m-%dT%H') + INTERVAL 1 HOUR))
                 - epoch(greatest(l.ps, strptime(e.piece_key, '%Y-%m-%dT%H')))
            ELSE 0 END AS covered_seconds,
       l.charge_category, l.charge_class, l.service_category, l.resource_id, l.resource_type,
       l.commitment_discount_id, l.commitment_discount_status, l.tags, l.invoice_month
FROM bill_lines_of_day l
JOIN hour_splits e ON e.group_key = l.line_key || '|e'
JOIN hour_splits b ON b.group_key = l.line_key || '|b' AND b.piece_key = e.piece_key
WHERE strptime(e.piece_key, '%Y-%m-%dT%H') >= $day::DATE
  AND strptime(e.piece_key, '%Y-%m-%dT%H') < $day::DATE + INTERVAL 1 DAY
