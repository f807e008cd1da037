-- What jobs and runs could have saved over the trailing window ending $day (savings.window_days), in
-- units of 1e-18 of their currency, each GPU-second's money claimed by at most one opportunity
-- (docs/ledger.md#savings-opportunities). The pools, in precedence order:
--   a job's allocated_idle cost: first the GPUs it never used (right_size), then the idle time past
--     the policy limit (cancel_hung_jobs for batch jobs, idle_session_timeout for interactive sessions);
--   a job's productive cost outside a run: a smaller GPU that holds its memory (right_size);
--   a run's checkpoint saves and rerun loss: the Young–Daly interval (checkpoint_interval), less the
--     storage of the extra checkpoints a shorter interval keeps;
--   a run's cost: its MFU gap, less what the kinds above already claimed on it (raise_mfu).

-- the window's days the ledger has (a month's rate is taken over these)
CREATE OR REPLACE TEMP TABLE sav_days AS
SELECT DISTINCT day FROM marts.fct_cost_daily
WHERE day BETWEEN $day::DATE - ($savings_window_days - 1) AND $day::DATE;

-- storage.policy per kind of inventoried object (checkpoint_interval below and the storage
-- opportunities of the next file)
CREATE OR REPLACE TEMP TABLE sav_storage_policy AS
SELECT p.kind, p.hot_tiers, p.max_hot_age_hours, p.cold_tier, p.keep_last, p.stale_after_days
FROM (SELECT unnest(from_json($storage_policy, '[{"kind": "VARCHAR", "hot_tiers": ["VARCHAR"], "max_hot_age_hours": "DOUBLE",
      "cold_tier": "VARCHAR", "keep_last": "INTEGER", "stale_after_days": "INTEGER"}]'), recursive := true)) p;

-- each job-hour's idle cost split exactly (largest remainder) into its part past the policy limit and
-- the rest, by share-unit milliseconds (int_gpu_seconds); batch jobs by policies.hung_job_cancel_minutes,
-- interactive sessions by policies.idle_session_minutes
CREATE OR REPLACE TEMP TABLE sav_idle_groups AS
WITH cost AS (
    SELECT day, job_uid, hostname, hour_ts, billing_currency, money_units(sum(effective_cost)) AS units
    FROM intermediate.int_cost_allocations
    -- allocated_idle: idle time a job held (a category with a precedence)
    WHERE day IN (SELECT day FROM sav_days) AND category IN (SELECT name FROM marts.dim_ledger_categories WHERE is_idle AND precedence IS NOT NULL) AND job_uid IS NOT NULL
    GROUP BY ALL
),
ms AS (
    SELECT g.day, g.job_uid, g.hostname, g.hour_ts, sum(g.gpu_share_ms) AS idle_ms,
           sum(CASE WHEN j.interactive THEN g.idle_past_session_share_ms ELSE g.idle_past_cancel_share_ms END) AS past_ms
    FROM intermediate.int_gpu_seconds g
    JOIN intermediate.int_job_allocations j ON j.day = g.day AND j.job_uid = g.job_uid
    WHERE g.day IN (SELECT day FROM sav_days) AND g.category IN (SELECT name FROM marts.dim_ledger_categories WHERE is_idle AND precedence IS NOT NULL)
    GROUP BY ALL
)
SELECT to_json([c.day::VARCHAR, c.job_uid, c.hostname, strftime(c.hour_ts, '%Y-%m-%dT%H'), c.billing_currency])::VARCHAR
           AS group_key,
       c.day, c.job_uid, c.billing_currency, c.units, m.idle_ms, m.past_ms
FROM cost c JOIN ms m USING (day, job_uid, hostname, hour_ts)
WHERE m.past_ms > 0;

CREATE OR REPLACE TEMP TABLE sav_idle_split_input AS
SELECT g.group_key, p.part AS piece_key, g.units,
       CASE p.part WHEN 'past' THEN g.past_ms ELSE g.idle_ms - g.past_ms END AS weight
FROM sav_idle_groups g CROSS JOIN (VALUES ('past'), ('rest')) p(part);

CREATE OR REPLACE TEMP TABLE sav_idle_splits AS FROM split_exactly('sav_idle_split_input');

-- per job, day and currency: its cost pools and what each job kind claims of them
CREATE OR REPLACE TEMP TABLE sav_job_days AS
WITH pools AS (
    SELECT day, job_uid, billing_currency,
           money_units(sum(effective_cost)) AS cost_units,
           -- a job's idle time (allocated_idle) and its productive time (the GPU time that is no waste)
           money_units(coalesce(sum(c.effective_cost) FILTER (k.is_idle), 0)) AS idle_units,
           money_units(coalesce(sum(c.effective_cost) FILTER (k.is_gpu AND NOT k.is_waste), 0)) AS productive_units
    FROM intermediate.int_cost_allocations c LEFT JOIN marts.dim_ledger_categories k ON k.name = c.category
    WHERE day IN (SELECT day FROM sav_days) AND job_uid IS NOT NULL
    GROUP BY ALL
),
past AS (
    SELECT g.day, g.job_uid, g.billing_currency, sum(s.units) AS past_units, sum(g.past_ms) AS past_ms
    FROM sav_idle_groups g JOIN sav_idle_splits s ON s.group_key = g.group_key AND s.piece_key = 'past'
    GROUP BY ALL
),
jobs AS (
    SELECT c.day, c.job_uid, c.job_id, c.cluster, c.run_id, c.team, c.project, c.user_name, c.job_name,
           c.interactive, c.billing_currency, c.gpus, c.hosts, c.gpu_seconds, c.productive_gpu_seconds,
           c.allocated_idle_gpu_seconds, e.gpu_model, e.gpus_never_active, e.right_size_gpus, e.fits_smaller,
           e.fits_smaller_price_per_gpu_hour, e.fb_used_max_mib, e.gpu_memory_gb
    FROM marts.fct_job_cost c
    LEFT JOIN marts.fct_job_efficiency_daily e
      ON e.day = c.day AND e.job_uid = c.job_uid AND e.billing_currency IS NOT DISTINCT FROM c.billing_currency
    WHERE c.day IN (SELECT day FROM sav_days) AND c.billing_currency IS NOT NULL
),
claims AS (
    SELECT j.*, p.cost_units, p.idle_units, p.productive_units,
           coalesce(pa.past_units, 0) AS past_units, coalesce(pa.past_ms, 0) AS past_ms,
           -- the GPUs it never used: their share of the job's cost, within its idle cost
           CASE WHEN coalesce(j.gpus_never_active, 0) > 0 AND j.gpus > 0
                THEN least(p.idle_units, p.cost_units * j.gpus_never_active // j.gpus) ELSE 0 END AS never_units,
           -- a smaller GPU for a job outside a run (a run's under-use is its MFU gap)
           CASE WHEN j.run_id IS NULL AND j.fits_smaller IS NOT NULL
                THEN greatest(0, p.productive_units - money_units(j.fits_smaller_price_per_gpu_hour)
                                 * round(j.productive_gpu_seconds * 1000)::HUGEINT // 3600000)
                ELSE 0 END AS smaller_units
    FROM jobs j
    JOIN pools p USING (day, job_uid, billing_currency)
    LEFT JOIN past pa USING (day, job_uid, billing_currency)
)
SELECT *, greatest(0, least(past_units, idle_units - never_units)) AS timeout_units
FROM claims;

-- per run, day and currency: the checkpoint interval's excess (within the run's save and rerun-loss
-- cost) and the MFU gap beyond what its jobs' kinds and the checkpoint claimed
CREATE OR REPLACE TEMP TABLE sav_run_days AS
WITH badput AS (
    SELECT day, run_id, billing_currency,
           money_units(coalesce(sum(effective_cost) FILTER (kind IN ('checkpoint_save', 'disruption')), 0)) AS pool_units
    FROM marts.fct_run_badput_daily
    WHERE day IN (SELECT day FROM sav_days)
    GROUP BY ALL
),
job_claims AS (
    SELECT day, run_id, billing_currency, sum(never_units + timeout_units + smaller_units) AS claimed_units
    FROM sav_job_days WHERE run_id IS NOT NULL GROUP BY ALL
),
-- what the run's checkpoints cost stored that day where storage grows with their number: inventoried
-- storage in the run's currency off the policy's hot tiers (a file system's provisioned capacity does
-- not grow with one more checkpoint; an object store's bill does)
checkpoint_storage AS (
    SELECT c.day, c.run_id, c.billing_currency, money_units(sum(c.effective_cost)) AS storage_units
    FROM intermediate.int_storage_costs c, sav_storage_policy pol
    WHERE c.day IN (SELECT day FROM sav_days) AND c.kind = 'checkpoint' AND c.run_id IS NOT NULL
      AND c.priced_by IN ('bill', 'rate_card') AND pol.kind = 'checkpoint' AND NOT list_contains(pol.hot_tiers, c.tier)
    GROUP BY ALL
),
runs AS (
    SELECT e.day, e.run_id, e.team, e.project, e.billing_currency, e.gpu_model, e.gpu_seconds, e.effective_mfu,
           money_units(e.effective_cost) AS cost_units,
           greatest(0, money_units(coalesce(e.mfu_gap_cost, 0))) AS mfu_gap_units,
           o.checkpoint_interval_s, o.checkpoint_save_s, o.mtbf_s, o.young_daly_interval_s,
           -- the recomputation and save time the Young–Daly interval saves, less the storage of the extra
           -- checkpoints it keeps when it is the shorter one (their number grows as the interval shrinks)
           greatest(0, least(greatest(0, money_units(coalesce(o.checkpoint_interval_cost, 0))), coalesce(b.pool_units, 0))
                       - CASE WHEN o.young_daly_interval_s > 0 AND o.checkpoint_interval_s > o.young_daly_interval_s
                              THEN coalesce(cs.storage_units, 0)
                                   * round(1000000 * (o.checkpoint_interval_s / o.young_daly_interval_s - 1))::HUGEINT
                                   // 1000000
                              ELSE 0 END) AS checkpoint_units,
           coalesce(cs.storage_units, 0) AS checkpoint_storage_units,
           coalesce(jc.claimed_units, 0) AS job_claimed_units
    FROM marts.fct_run_efficiency_daily e
    LEFT JOIN marts.fct_run_overhead_daily o
      ON o.day = e.day AND o.run_id = e.run_id AND o.billing_currency IS NOT DISTINCT FROM e.billing_currency
    LEFT JOIN badput b ON b.day = e.day AND b.run_id = e.run_id AND b.billing_currency = e.billing_currency
    LEFT JOIN job_claims jc ON jc.day = e.day AND jc.run_id = e.run_id AND jc.billing_currency = e.billing_currency
    LEFT JOIN checkpoint_storage cs ON cs.day = e.day AND cs.run_id = e.run_id AND cs.billing_currency = e.billing_currency
    WHERE e.day IN (SELECT day FROM sav_days) AND e.billing_currency IS NOT NULL
)
SELECT *, greatest(0, mfu_gap_units - job_claimed_units - checkpoint_units) AS mfu_units
FROM runs;
