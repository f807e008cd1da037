-- Cost lines (a bill's, the config's) in time: which days a charge period touches, and its cut into hours.

-- Whether a charge period [ps, pe) touches the UTC day d; a point in time (pe = ps) belongs to its day.
CREATE OR REPLACE MACRO overlaps_day(ps, pe, d) AS
    ps < d::DATE + INTERVAL 1 DAY AND (pe > d::DATE OR (pe <= ps AND ps >= d::DATE));

-- The one cut of a cost line into hours, as a table macro over a table named by its argument:
-- hour_split_input('some_lines') with columns (line_key, ps, pe, effective_cost, billed_cost). Each line
-- [ps, pe) becomes its hours, weighted by the microseconds of each hour it covers (a line whose end is not
-- after its start, a point in time, falls wholly in the hour of its start), as split_exactly input: group
-- `<line_key>|e` and `<line_key>|b` (EffectiveCost, BilledCost), piece = the hour 'YYYY-MM-DDTHH'. Bill
-- lines (int_bill_line_hours) and the config's cost lines (int_config_cost_lines) are cut by it alike.
CREATE OR REPLACE MACRO hour_split_input(lines) AS TABLE
WITH hours AS (
    SELECT line_key, effective_cost, billed_cost, ps, pe,
           unnest(generate_series(date_trunc('hour', ps),
                                  CASE WHEN pe > ps THEN pe - INTERVAL 1 MICROSECOND ELSE ps END,
                                  INTERVAL 1 HOUR)) AS hour_ts
    FROM query_table(lines)
),
weighted AS (
    SELECT *, CASE WHEN pe > ps
                   THEN epoch_us(least(pe, hour_ts + INTERVAL 1 HOUR)) - epoch_us(greatest(ps, hour_ts))
                   ELSE 1 END AS w
    FROM hours
)
SELECT line_key || '|e' AS group_key, strftime(hour_ts, '%Y-%m-%dT%H') AS piece_key,
       money_units(effective_cost) AS units, w AS weight
FROM weighted
UNION ALL
SELECT line_key || '|b', strftime(hour_ts, '%Y-%m-%dT%H'), money_units(billed_cost), w
FROM weighted;
