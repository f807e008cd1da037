-- The bill's storage lines of $day that belong to an inventoried store, and the store's objects in
-- groups (store, tier, project, run, kind) with their bytes: what int_storage_costs splits the lines over.
CREATE OR REPLACE TEMP TABLE storage_groups AS
SELECT store, tier, project, run_id, kind, count(*) AS object_count, sum(size_bytes)::HUGEINT AS bytes
FROM intermediate.int_storage_objects
WHERE day = $day
GROUP BY ALL;

-- A line is a store's when its ResourceId is the store's name (CUR's line_item_resource_id of a bucket),
-- its ARN or path ending in `:<name>` or `/<name>`, or the ResourceId `storage.resource_ids` gives the
-- store; it is taken when the ledger would place it as `storage` (tagged) or `shared` (untagged) and its
-- ServiceCategory is Storage. A store with no bytes that day keeps its lines where they were.
CREATE OR REPLACE TEMP TABLE store_lines AS
WITH stores AS (
    SELECT store, sum(bytes) AS bytes FROM storage_groups GROUP BY store HAVING sum(bytes) > 0
),
candidates AS (
    SELECT p.line_key, p.resource_id, p.billing_currency, p.effective_cost, p.billed_cost, p.tags, p.tag_project,
           p.tag_team, s.store
    FROM intermediate.int_bill_line_placements p
    JOIN stores s ON p.resource_id = s.store OR ends_with(p.resource_id, ':' || s.store) OR ends_with(p.resource_id, '/' || s.store)
                     OR p.resource_id = config_lookup($storage_resource_ids, s.store)
    -- a line of a category allocated by its tag (storage) or shared by GPU cost (shared); not a credit
    JOIN marts.dim_ledger_categories c ON c.name = p.placement AND c.allocation IN ('tag', 'gpu_weight')
    WHERE p.day = $day AND p.service_category = 'Storage'
),
-- one store per line: the one its ResourceId names exactly, else the first by name
one_store AS (
    SELECT * EXCLUDE (resource_id) FROM candidates
    QUALIFY row_number() OVER (PARTITION BY line_key ORDER BY (resource_id = store) DESC, store) = 1
),
described AS (
    SELECT l.line_key, lower(concat_ws(' ', b.charge_description, b.sku_id, b.pricing_unit)) AS usage_text
    FROM staging.stg_focus__bill_lines b
    JOIN one_store l ON l.line_key = b._file || '#' || b._row
    WHERE overlaps_day(b.charge_period_start, b.charge_period_end, $day)
)
SELECT l.*,
       -- the tier a line prices: a `storage_class` tag, else AWS's usage type or description; NULL (a
       -- request charge, a file system's capacity) prices every tier of the store
       coalesce(tag_value(l.tags, ['storage_class', 'StorageClass', 'tier']),
         CASE WHEN d.usage_text LIKE '%timedstorage-sia%' OR (d.usage_text LIKE '%infrequent access%'
                                                                AND d.usage_text NOT LIKE '%one zone%') THEN 'STANDARD_IA'
              WHEN d.usage_text LIKE '%timedstorage-zia%' OR d.usage_text LIKE '%one zone%' THEN 'ONEZONE_IA'
              WHEN d.usage_text LIKE '%timedstorage-gir%' OR d.usage_text LIKE '%glacier instant%' THEN 'GLACIER_IR'
              WHEN d.usage_text LIKE '%timedstorage-gda%' OR d.usage_text LIKE '%deep archive%' THEN 'DEEP_ARCHIVE'
              WHEN d.usage_text LIKE '%timedstorage-glacier%' OR d.usage_text LIKE '%glacier%' THEN 'GLACIER'
              WHEN d.usage_text LIKE '%timedstorage-int%' OR d.usage_text LIKE '%intelligent%' THEN 'INTELLIGENT_TIERING'
              WHEN d.usage_text LIKE '%timedstorage-rrs%' OR d.usage_text LIKE '%reduced redundancy%' THEN 'REDUCED_REDUNDANCY'
              WHEN d.usage_text LIKE '%timedstorage-bytehrs%' OR d.usage_text LIKE '%storage used%' THEN 'STANDARD'
         END) AS line_tier
FROM one_store l
LEFT JOIN described d USING (line_key);

-- The project of a store's objects no rule or run names: the project its lines of the day are tagged
-- with, when they agree on one (else `_unallocated`), with the tag's team.
CREATE OR REPLACE TEMP TABLE store_tags AS
SELECT store, CASE WHEN count(DISTINCT tag_project) = 1 AND count(*) = count(tag_project) THEN min(tag_project) END
                  AS tag_project,
       CASE WHEN count(DISTINCT tag_project) = 1 AND count(*) = count(tag_project) THEN min(tag_team) END AS tag_team
FROM store_lines
GROUP BY store;

-- Each line over its targets by bytes: the store's objects of the line's tier, or all of them when it
-- names none or the store has no bytes of it.
CREATE OR REPLACE TEMP TABLE storage_split_input AS
WITH tiers AS (
    SELECT store, tier FROM storage_groups GROUP BY store, tier HAVING sum(bytes) > 0
),
split_tier AS (
    SELECT l.*, t.tier AS split_tier
    FROM store_lines l
    LEFT JOIN tiers t ON t.store = l.store AND t.tier = l.line_tier
)
SELECT l.line_key || '|' || m.measure AS group_key,
       to_json([g.store, g.tier, g.project, g.run_id, g.kind])::VARCHAR AS piece_key,
       CASE m.measure WHEN 'e' THEN money_units(l.effective_cost) ELSE money_units(l.billed_cost) END AS units,
       g.bytes AS weight
FROM split_tier l
JOIN storage_groups g ON g.store = l.store AND (l.split_tier IS NULL OR g.tier = l.split_tier)
CROSS JOIN (VALUES ('e'), ('b')) m(measure);

CREATE OR REPLACE TEMP TABLE storage_splits AS FROM split_exactly('storage_split_input');
