-- FOCUS export of $day, the first step: the summable metrics of the day's origin lines that the ledger does not
-- split itself (ListCost, ContractedCost, PricingQuantity, ConsumedQuantity), cut over the hours of
-- each line's charge period exactly as the ledger cuts EffectiveCost (int_bill_line_hours): weighted
-- by microseconds of overlap, by largest remainder over all the line's hours (not just this day's),
-- so a line's shares of its days always sum to the line. Quantities are staged as DOUBLE: they are
-- split at their shortest decimal spelling, which is the bill's own text for up to 15 significant
-- digits, in DECIMAL(38,18) (a quantity beyond 1e20 cannot be, and stays NULL). A metric a line does
-- not carry gets no pieces: its day share stays NULL.
CREATE OR REPLACE TEMP TABLE focus_line_metrics AS
SELECT _file || '#' || _row AS line_key, charge_period_start AS ps, charge_period_end AS pe,
       list_cost, contracted_cost,
       TRY_CAST(pricing_quantity::VARCHAR AS DECIMAL(38, 18)) AS pricing_quantity,
       TRY_CAST(consumed_quantity::VARCHAR AS DECIMAL(38, 18)) AS consumed_quantity
FROM staging.stg_focus__bill_lines
WHERE overlaps_day(charge_period_start, charge_period_end, $day);

CREATE OR REPLACE TEMP TABLE metric_split_input AS
WITH metrics AS (
    -- one row per line and metric it carries (UNPIVOT leaves NULLs out)
    SELECT * FROM focus_line_metrics
    UNPIVOT (amount FOR metric IN (list_cost, contracted_cost, pricing_quantity, consumed_quantity))
),
hours AS (
    SELECT metric, line_key, amount, ps, pe,
           unnest(generate_series(date_trunc('hour', ps),
                                  CASE WHEN pe > ps THEN pe - INTERVAL 1 MICROSECOND ELSE ps END,
                                  INTERVAL 1 HOUR)) AS hour_ts
    FROM metrics
)
SELECT metric || '|' || line_key AS group_key, strftime(hour_ts, '%Y-%m-%dT%H') AS piece_key,
       money_units(amount) AS units,
       CASE WHEN pe > ps
            THEN epoch_us(least(pe, hour_ts + INTERVAL 1 HOUR)) - epoch_us(greatest(ps, hour_ts))
            ELSE 1 END AS weight
FROM hours;

-- each line's metrics over its hours, exactly
CREATE OR REPLACE TEMP TABLE metric_splits AS FROM split_exactly('metric_split_input');
