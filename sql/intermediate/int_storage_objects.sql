-- Every inventoried object on $day, classified: the store's latest snapshot on or before $day (at most
-- $storage_lookback_days before it: a day whose delivery has not landed, or is incomplete, is priced by the
-- one before), each object standing for the whole day (one byte-day per byte). Its kind, run and step come
-- from the first `storage.rules` pattern its URL (`s3://bucket/key`, or the listed path) matches — the
-- storage_rule_* macros the asset compiles from the config (pipelines/lib/config_storage.py) — and its
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
matched AS (
    SELECT o.store, o.store_kind, o.key, o.size_bytes, o.tier, o.last_modified, o.last_accessed, o.snapshot_day,
           u.url, storage_rule_no(o.store, u.url) AS rule_no
    FROM staging.stg_storage__objects o
    JOIN snapshots s USING (store, snapshot_day),
    LATERAL (SELECT CASE o.store_kind WHEN 's3' THEN 's3://' || o.store || '/' || o.key ELSE o.key END AS url) u
),
classified AS (
    SELECT m.* EXCLUDE (url), storage_rule_run(m.url, m.rule_no) AS run_id,
           storage_rule_step(m.url, m.rule_no) AS step
    FROM matched m
)
SELECT $day::DATE AS day, c.store, c.store_kind, c.key, c.size_bytes, c.tier, c.last_modified, c.last_accessed,
       c.snapshot_day,
       -- whole days since it was last written (NULL where the inventory's time did not parse)
       datediff('day', c.last_modified, $day::DATE) AS age_days,
       coalesce(r.kind, 'other') AS kind, c.rule_no, c.run_id, c.step,
       coalesce(r.project, rp.project) AS project
FROM classified c
LEFT JOIN rules r USING (rule_no)
LEFT JOIN run_projects rp ON rp.run_id = c.run_id
