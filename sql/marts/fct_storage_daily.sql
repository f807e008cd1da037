-- Inventoried storage per day × store × project × run × kind × tier × currency × what priced it: the
-- objects, their bytes and GiB-days (each object of the day's snapshot stands for the whole day), and
-- their cost. `bill` rows are the store's storage lines split by bytes: per day, currency and store
-- they sum to those lines exactly, and they are the `storage` rows of fct_cost_daily for those lines;
-- `rate_card` rows are priced by the config (not bill money, so not in fct_cost_daily); `unpriced` rows
-- have no price (cost NULL). A group whose store's lines are in two currencies is on a row of each,
-- with its objects on both.
SELECT day, store, project, team, run_id, kind, tier, billing_currency, priced_by,
       max(object_count)::BIGINT AS object_count,
       max(bytes)::DECIMAL(38, 0) AS bytes,
       (max(bytes) / 1073741824)::DOUBLE AS gb_days,
       sum(effective_cost)::DECIMAL(38, 18) AS effective_cost,
       sum(billed_cost)::DECIMAL(38, 18) AS billed_cost,
       count(line_key)::INTEGER AS bill_lines
FROM intermediate.int_storage_costs
WHERE day = $day
GROUP BY ALL
