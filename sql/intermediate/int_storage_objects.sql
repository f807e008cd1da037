-- Every inventoried object on $day, classified: the store's latest snapshot on or before $day (at most
-- $storage_lookback_days before it: a day whose delivery has not landed, or is incomplete, is priced by the
-- one before), each object standing for the whole day (one byte-day per byte). Its kind, run and step come
-- from the first `storage.rules` pattern its URL (`s3://bucket/key`, or the listed path) matches — the
-- storage_rule_* macros the asset compiles from the config (pipelines/lib/config/storage.py), or from the
-- checkpoint_saved event whose `path` it lies under — and its
-- project from the rule, else its run's (the run_config event), else NULL: the store's bill tag decides
-- (int_storage_costs). Kept per object, so what acts on objects (tiering, pruning) can be built on it.
WITH snapshots AS (
    SELECT store, max(snapshot_day) AS snapshot_day
    FROM staging.stg_storage__objects
    WHERE snapshot_day <= $day::DATE AND snapshot_day >= $day::DATE - $storage_lookback_days::INTEGER
    GROUP BY store
),
rules AS (
    SELECT r.rule_no, r.kind, r.project
    FROM (SELECT unnest(from_json($storage_rules, '[{"rule_no": "INTEGER", "kind": "VARCHAR", "project": "VARCHAR"}]'),
                        recursive := true)) r
),
run_projects AS (
    SELECT run_id, arg_max(project, ts) AS project
    FROM staging.stg_runs__events
    WHERE event = 'run_config' AND project IS NOT NULL
    GROUP BY run_id
),
-- checkpoint_saved events that say where they wrote (`path`, docs/ingest/runs.md): every object under
-- it is that run's checkpoint of that step, whatever the rules say of its layout (the latest save there
-- by the end of $day)
checkpoint_paths AS (
    SELECT run_id, step, prefix
    FROM (SELECT run_id, step, ts, CASE WHEN ends_with(path, '/') THEN path ELSE path || '/' END AS prefix
          FROM staging.stg_runs__events
          WHERE event = 'checkpoint_saved' AND path IS NOT NULL AND ts < $day::DATE + INTERVAL 1 DAY)
    QUALIFY row_number() OVER (PARTITION BY prefix ORDER BY ts DESC, run_id) = 1
),
matched AS (
    SELECT o.store, o.store_kind, o.key, o.size_bytes, o.tier, o.last_modified, o.last_accessed, o.snapshot_day,
           u.url, storage_rule_no(o.store, u.url) AS rule_no
    FROM staging.stg_storage__objects o
    JOIN snapshots s USING (store, snapshot_day),
    LATERAL (SELECT CASE o.store_kind WHEN 's3' THEN 's3://' || o.store || '/' || o.key ELSE o.key END AS url) u
),
-- the objects under a saved checkpoint's path (a range join: a prefix is every string from it to it
-- followed by the last code point), the longest path where they nest
saved AS (
    SELECT m.store, m.key, arg_max(c.run_id, length(c.prefix)) AS run_id, arg_max(c.step, length(c.prefix)) AS step
    FROM matched m
    JOIN checkpoint_paths c ON m.url >= c.prefix AND m.url < c.prefix || chr(1114111)
    GROUP BY m.store, m.key
),
classified AS (
    SELECT m.* EXCLUDE (url), s.run_id IS NOT NULL AS saved,
           coalesce(s.run_id, storage_rule_run(m.url, m.rule_no)) AS run_id,
           coalesce(s.step, storage_rule_step(m.url, m.rule_no)) AS step
    FROM matched m
    LEFT JOIN saved s USING (store, key)
)
SELECT $day::DATE AS day, c.store, c.store_kind, c.key, c.size_bytes, c.tier, c.last_modified, c.last_accessed,
       c.snapshot_day,
       -- whole days since it was last written (NULL where the inventory's time did not parse)
       datediff('day', c.last_modified, $day::DATE) AS age_days,
       CASE WHEN c.saved THEN 'checkpoint' ELSE coalesce(r.kind, 'other') END AS kind, c.rule_no, c.run_id, c.step,
       coalesce(r.project, rp.project) AS project
FROM classified c
LEFT JOIN rules r USING (rule_no)
LEFT JOIN run_projects rp ON rp.run_id = c.run_id
