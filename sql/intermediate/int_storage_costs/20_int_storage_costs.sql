-- What each inventoried object group (store, tier, project, run, kind) costs on $day, and what priced it
-- (`priced_by`): `bill`, a piece of each of the store's storage lines, split exactly by bytes (largest
-- remainder), so per day, currency and store the pieces sum to those lines; `rate_card`, a group no line
-- prices, at `storage.rate_card`'s price per GiB-month over the month's days (priced, but no bill money:
-- it is not in fct_cost_daily); `unpriced`, neither (its bytes still counted, its cost NULL).
WITH groups AS (
    SELECT g.*, coalesce(g.project, t.tag_project) AS placed_project, t.tag_project, t.tag_team
    FROM storage_groups g
    LEFT JOIN store_tags t USING (store)
),
bill AS (
    SELECT l.line_key, l.billing_currency, g.*, units_money(se.units) AS effective_cost,
           units_money(sb.units) AS billed_cost
    FROM store_lines l
    JOIN storage_splits se ON se.group_key = l.line_key || '|e'
    JOIN storage_splits sb ON sb.group_key = l.line_key || '|b' AND sb.piece_key = se.piece_key
    JOIN groups g ON to_json([g.store, g.tier, g.project, g.run_id, g.kind])::VARCHAR = se.piece_key
),
rates AS (
    SELECT r.tier, r.store, r.currency, r.price_per_gb_month::DECIMAL(38, 18) AS price
    FROM (SELECT unnest(from_json($storage_rate_card, '[{"tier": "VARCHAR", "store": "VARCHAR", "currency": "VARCHAR",
          "price_per_gb_month": "VARCHAR"}]'), recursive := true)) r
),
unbilled AS (
    -- the store's own price of the tier, else the tier's price for every store; of a tier priced in
    -- several currencies, the default currency's, else the first by name
    SELECT g.*, r.price, r.currency
    FROM groups g
    LEFT JOIN rates r ON r.tier = g.tier AND (r.store = g.store OR r.store IS NULL)
    WHERE to_json([g.store, g.tier, g.project, g.run_id, g.kind])::VARCHAR
          NOT IN (SELECT piece_key FROM storage_splits)
    QUALIFY row_number() OVER (PARTITION BY g.store, g.tier, g.project, g.run_id, g.kind
                               ORDER BY r.store IS NULL, r.store, r.currency <> $default_currency, r.currency) = 1
)
SELECT $day::DATE AS day, line_key, store, tier, kind, run_id,
       coalesce(placed_project, '_unallocated') AS project,
       CASE WHEN placed_project IS NULL THEN '_unallocated'
            ELSE coalesce(config_lookup($project_teams, placed_project),
                          CASE WHEN placed_project = tag_project THEN tag_team END, placed_project) END AS team,
       object_count, bytes::DECIMAL(38, 0) AS bytes, billing_currency, 'bill' AS priced_by,
       effective_cost::DECIMAL(38, 18) AS effective_cost, billed_cost::DECIMAL(38, 18) AS billed_cost,
       -- the objects' own project (int_storage_objects), NULL where the store's tag placed them: what
       -- joins an object to its row
       bill.project AS object_project
FROM bill
UNION ALL
SELECT $day::DATE, NULL, store, tier, kind, run_id, coalesce(placed_project, '_unallocated'),
       CASE WHEN placed_project IS NULL THEN '_unallocated'
            ELSE coalesce(config_lookup($project_teams, placed_project), placed_project) END,
       object_count, bytes::DECIMAL(38, 0), currency, CASE WHEN price IS NULL THEN 'unpriced' ELSE 'rate_card' END,
       -- bytes / 2^30 GiB × price a GiB-month / days of the month, in units of 1e-18, rounded down
       units_money(money_units(price) * bytes
                   // (1073741824::BIGINT * day(last_day($day::DATE))))::DECIMAL(38, 18),
       units_money(money_units(price) * bytes
                   // (1073741824::BIGINT * day(last_day($day::DATE))))::DECIMAL(38, 18),
       project
FROM unbilled
