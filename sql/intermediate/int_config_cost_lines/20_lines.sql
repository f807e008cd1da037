-- The config's cost lines that touch $day, in the shape of bill lines (an amount over [ps, pe)), before
-- they are cut into hours:
--   rate card     per node and day: price_per_gpu_hour × GPUs × 24;
--   contract      per contract and calendar month: amount_per_month (its nodes share each hour below);
--   depreciation  per owned node and month of its life (months counted from purchase_date): (purchase_price
--                 − residual) split exactly over depreciation_months equal months, nothing after the last;
--   facility      per owned node and month from purchase_date: facility_per_node_month;
--   energy        per node-hour of a node costed as owned, or by a rate card or contract with
--                 includes_power: false: gpu_kwh × PUE × the hour's price per kWh, exact, rounded to 1e-18.
-- Amounts are exact DECIMAL text from the config; no line is built from a float.
CREATE OR REPLACE TEMP TABLE owned_life AS
SELECT c.*,
       -- the month of the node's life $day is in: k whole months after purchase_date
       datediff('month', c.purchase_date, $day::DATE)
           - CASE WHEN c.purchase_date + to_months(datediff('month', c.purchase_date, $day::DATE)) > $day::DATE
                  THEN 1 ELSE 0 END AS life_month
FROM node_costing c
WHERE c.kind = 'owned';

-- (purchase − residual) over depreciation_months equal months, exactly (largest remainder, ties to the
-- earlier month); only the month $day is in is kept
CREATE OR REPLACE TEMP TABLE depreciation_split_input AS
SELECT to_json([o.entry_key, o.hostname])::VARCHAR AS group_key, lpad(m.k::VARCHAR, 4, '0') AS piece_key,
       money_units(o.purchase_price::DECIMAL(38, 18) - o.residual::DECIMAL(38, 18)) AS units, 1 AS weight
FROM owned_life o, unnest(range(o.depreciation_months)) AS m(k)
WHERE o.life_month < o.depreciation_months;

CREATE OR REPLACE TEMP TABLE depreciation_splits AS FROM split_exactly('depreciation_split_input');

CREATE OR REPLACE TEMP TABLE energy_prices AS
SELECT h AS hour_of_day, config_lookup($energy_prices, h::VARCHAR)::DECIMAL(38, 18) AS price_per_kwh
FROM range(24) t(h);

CREATE OR REPLACE TEMP TABLE config_lines AS
-- rate cards: a line per node and day
SELECT to_json(['rate_card', c.entry_key, c.hostname, strftime($day::DATE, '%Y-%m-%d')])::VARCHAR AS line_key,
       'rate_card' AS cost_source, 'rate_card' AS cost_basis, c.entry_key, c.hostname,
       $day::DATE::TIMESTAMP AS ps, $day::DATE::TIMESTAMP + INTERVAL 1 DAY AS pe,
       (c.price_per_gpu_hour::DECIMAL(38, 18) * c.gpu_count * 24)::DECIMAL(38, 18) AS amount,
       c.currency, NULL::DECIMAL(18, 9) AS priced_gpu_kwh
FROM node_costing c
WHERE c.kind = 'rate_card' AND c.gpu_count > 0
UNION ALL
-- contracts: a line per contract and calendar month, whether or not its nodes are known today
SELECT to_json(['contract', e.entry_key, strftime($day::DATE, '%Y-%m')])::VARCHAR,
       'rate_card', 'contract', e.entry_key, NULL,
       date_trunc('month', $day::DATE)::TIMESTAMP, date_trunc('month', $day::DATE)::TIMESTAMP + INTERVAL 1 MONTH,
       e.amount_per_month::DECIMAL(38, 18), e.currency, NULL
FROM cost_entries e
WHERE e.kind = 'contract'
UNION ALL
-- depreciation: the node's month of life
SELECT to_json(['depreciation', o.entry_key, o.hostname, o.life_month::VARCHAR])::VARCHAR,
       'amortization', 'depreciation', o.entry_key, o.hostname,
       (o.purchase_date + to_months(o.life_month))::TIMESTAMP, (o.purchase_date + to_months(o.life_month + 1))::TIMESTAMP,
       units_money(s.units)::DECIMAL(38, 18), o.currency, NULL
FROM owned_life o
JOIN depreciation_splits s ON s.group_key = to_json([o.entry_key, o.hostname])::VARCHAR
                          AND s.piece_key = lpad(o.life_month::VARCHAR, 4, '0')
UNION ALL
-- facility (colocation, rack, network of the site) per node-month
SELECT to_json(['facility', o.entry_key, o.hostname, o.life_month::VARCHAR])::VARCHAR,
       'amortization', 'facility', o.entry_key, o.hostname,
       (o.purchase_date + to_months(o.life_month))::TIMESTAMP, (o.purchase_date + to_months(o.life_month + 1))::TIMESTAMP,
       o.facility_per_node_month::DECIMAL(38, 18), o.currency, NULL
FROM owned_life o
WHERE o.facility_per_node_month::DECIMAL(38, 18) > 0
UNION ALL
-- energy per node-hour, in integer arithmetic: kWh in 1e-9, PUE in 1e-6, price in 1e-18 units; the
-- product (1e-33 units) rounded half up to 1e-18
SELECT to_json(['energy', c.entry_key, c.hostname, strftime(en.hour_ts, '%Y-%m-%dT%H')])::VARCHAR,
       'energy', 'energy', c.entry_key, c.hostname, en.hour_ts, en.hour_ts + INTERVAL 1 HOUR,
       units_money((money_units(en.gpu_kwh) // 1000000000
                    * round($energy_pue::DECIMAL(38, 18) * 1000000)::HUGEINT
                    * money_units(p.price_per_kwh) + 500000000000000) // 1000000000000000)::DECIMAL(38, 18),
       $energy_currency, en.gpu_kwh
FROM node_costing c
JOIN intermediate.int_node_hour_energy en ON en.day = $day AND en.hostname = c.hostname
JOIN energy_prices p ON p.hour_of_day = hour(en.hour_ts)
WHERE c.prices_energy;
