-- Cost of each job on the day (a job crossing midnight has a row per day), with its GPU-seconds per
-- ledger category. GPU-seconds count all of the job's allocation; cost comes from billed node-hours,
-- one row per billing currency (a job on nodes billed in two currencies has two rows; its GPU-seconds
-- are on the first currency's row only, so they never count twice). A job with no billed cost has
-- one row with a NULL currency. `kwh` and `co2e_kg`: the job's share of its nodes' energy
-- (int_node_hour_energy) by GPU-seconds (exactly: share-unit GPU-milliseconds), hour by hour, whether or
-- not the hour is costed. The under-use lens on the job's productive time
-- (docs/ledger.md#under-use-a-lens-on-productive-time): its low-activity GPU-seconds and their cost (split
-- exactly from the productive cost, 10_low_activity_split.sql), its mean SM and tensor activity, its
-- peak memory use, and the GPUs it held that were never active while others were.
WITH job_hours AS (
    -- one scan of the day's GPU-seconds: each row with its node-hour's GPU-seconds (its GPUs for the
    -- hour, or what jobs held if more), over which the node-hour's energy is shared
    SELECT g.job_uid, g.hostname, g.hour_ts, g.category, g.gpu_seconds, g.gpu_share_ms::HUGEINT AS weight,
           -- in exact integers (share-unit GPU-milliseconds), so each job's share is the same on every engine
           greatest(sum(g.gpu_share_ms::HUGEINT) OVER (PARTITION BY g.hostname, g.hour_ts),
                    coalesce(n.gpu_count, 0)::HUGEINT * 3600000 * share_units_per_gpu()) AS hour_weight
    FROM intermediate.int_gpu_seconds g
    LEFT JOIN intermediate.int_nodes n ON n.day = $day AND n.hostname = g.hostname
    WHERE g.day = $day
),
lens AS (
    SELECT job_uid,
           share_ms_seconds(sum(low_activity_share_ms)) AS low_activity_gpu_seconds,
           -- exact integer sums (activity in millionths), so the ratios are the same on every re-run; to
           -- 1e-9, as Spark's division differs from DuckDB's in the last binary digit
           round(sum(activity_weighted_share_ms)::DOUBLE / nullif(sum(activity_share_ms), 0)::DOUBLE / 1000000, 9)
               AS sm_active_avg,
           round(sum(tensor_weighted_share_ms)::DOUBLE / nullif(sum(tensor_share_ms), 0)::DOUBLE / 1000000, 9)
               AS tensor_active_avg,
           max(fb_used_max_mib) AS fb_used_max_mib
    FROM intermediate.int_gpu_seconds
    -- productive time's: the GPU time that is no waste
    WHERE day = $day AND category IN (SELECT name FROM marts.dim_ledger_categories WHERE is_gpu AND NOT is_waste)
    GROUP BY job_uid
),
-- per host, the job's whole GPUs with their own series and those ever active; held for nothing: those
-- never active while another GPU of the job was
gpu_activity AS (
    SELECT job_uid, sum(gpus_seen) AS gpus_seen, sum(gpus_active) AS gpus_active
    FROM (SELECT job_uid, hostname, max(gpus_seen) AS gpus_seen, max(gpus_active) AS gpus_active
          FROM intermediate.int_gpu_seconds WHERE day = $day AND gpus_seen IS NOT NULL
          GROUP BY job_uid, hostname) per_host
    GROUP BY job_uid
),
-- the GPU model of the job's first host and its memory: the size the node's model name says
-- (`A100-SXM4-40GB`), else the catalog's
job_gpu_model AS (
    SELECT j.job_uid, n.gpu_model, gpu_model_canonical(n.gpu_model) AS gpu_model_canonical
    FROM intermediate.int_job_allocations j
    LEFT JOIN intermediate.int_nodes n ON n.day = $day AND n.hostname = j.hosts[1]
    WHERE j.day = $day
),
-- (the catalog joined on the model found above: Spark takes the canonical-model macro, a correlated
-- subquery, in a projection only)
job_gpu_memory AS (
    SELECT g.job_uid, g.gpu_model_canonical,
           coalesce(try_cast(nullif(regexp_extract(upper(g.gpu_model), '([0-9]+) *GB', 1), '') AS INTEGER),
                    rm.memory_gb) AS memory_gb
    FROM job_gpu_model g
    LEFT JOIN intermediate.ref_gpu_memory rm ON rm.gpu_model = g.gpu_model_canonical
),
seconds AS (
    SELECT h.job_uid,
           sum(h.gpu_seconds) AS gpu_seconds,
           sum(h.gpu_seconds) FILTER (h.category = 'productive') AS productive_gpu_seconds,
           sum(h.gpu_seconds) FILTER (h.category = 'rerun_loss') AS rerun_loss_gpu_seconds,
           sum(h.gpu_seconds) FILTER (h.category = 'allocated_idle') AS allocated_idle_gpu_seconds,
           sum(h.gpu_seconds) FILTER (h.category = 'failed_job') AS failed_job_gpu_seconds,
           sum(h.gpu_seconds) FILTER (h.category = 'unmonitored') AS unmonitored_gpu_seconds,
           -- decimals per row, so the sums are the same in any order
           sum(units_money(money_units(en.kwh) * h.weight // h.hour_weight)::DECIMAL(38, 12))
               FILTER (h.hour_weight > 0) AS kwh,
           sum(units_money(money_units(en.co2e_kg) * h.weight // h.hour_weight)::DECIMAL(38, 12))
               FILTER (h.hour_weight > 0) AS co2e_kg
    FROM job_hours h
    LEFT JOIN intermediate.int_node_hour_energy en ON en.day = $day AND en.hostname = h.hostname AND en.hour_ts = h.hour_ts
    GROUP BY h.job_uid
),
cost AS (
    SELECT job_uid, billing_currency, sum(effective_cost) AS effective_cost, sum(billed_cost) AS billed_cost,
           row_number() OVER (PARTITION BY job_uid ORDER BY billing_currency) = 1 AS first_currency
    FROM intermediate.int_cost_allocations WHERE day = $day AND job_uid IS NOT NULL
    GROUP BY job_uid, billing_currency
),
rows AS (
    SELECT j.*, c.billing_currency, c.effective_cost, c.billed_cost,
           CASE WHEN coalesce(c.first_currency, TRUE) THEN 1 ELSE 0 END AS seconds_share
    FROM intermediate.int_job_allocations j
    LEFT JOIN cost c USING (job_uid)
    WHERE j.day = $day
)
SELECT r.day, r.job_id, r.job_uid, r.cluster, r.run_id, r.team, r.project, r.user_name, r.account,
       r.job_name, r.partition, r.interactive, r.state, r.exit_code, r.start_ts, r.end_ts,
       coalesce(r.gpus, 0) AS gpus, r.hosts, r.billing_currency,
       (coalesce(s.gpu_seconds, 0) * r.seconds_share)::DOUBLE AS gpu_seconds,
       coalesce(r.effective_cost, 0)::DECIMAL(38, 18) AS effective_cost,
       coalesce(r.billed_cost, 0)::DECIMAL(38, 18) AS billed_cost,
       (coalesce(s.productive_gpu_seconds, 0) * r.seconds_share)::DOUBLE AS productive_gpu_seconds,
       (coalesce(s.rerun_loss_gpu_seconds, 0) * r.seconds_share)::DOUBLE AS rerun_loss_gpu_seconds,
       (coalesce(s.allocated_idle_gpu_seconds, 0) * r.seconds_share)::DOUBLE AS allocated_idle_gpu_seconds,
       (coalesce(s.failed_job_gpu_seconds, 0) * r.seconds_share)::DOUBLE AS failed_job_gpu_seconds,
       (coalesce(s.unmonitored_gpu_seconds, 0) * r.seconds_share)::DOUBLE AS unmonitored_gpu_seconds,
       (coalesce(s.kwh, 0) * r.seconds_share)::DOUBLE AS kwh,
       (coalesce(s.co2e_kg, 0) * r.seconds_share)::DOUBLE AS co2e_kg,
       (coalesce(l.low_activity_gpu_seconds, 0) * r.seconds_share)::DOUBLE AS low_activity_gpu_seconds,
       coalesce(lc.low_activity_cost, 0)::DECIMAL(38, 18) AS low_activity_cost,
       coalesce(lc.low_activity_billed_cost, 0)::DECIMAL(38, 18) AS low_activity_billed_cost,
       l.sm_active_avg::DOUBLE AS sm_active_avg, l.tensor_active_avg::DOUBLE AS tensor_active_avg,
       l.fb_used_max_mib::DOUBLE AS fb_used_max_mib,
       (l.fb_used_max_mib / (m.memory_gb * 1024.0))::DOUBLE AS fb_used_max_fraction,
       CASE WHEN a.gpus_active > 0 THEN a.gpus_seen - a.gpus_active ELSE 0 END::INTEGER AS gpus_never_active,
       (coalesce(r.gpus, 0) - CASE WHEN a.gpus_active > 0 THEN a.gpus_seen - a.gpus_active ELSE 0 END)::INTEGER
           AS right_size_gpus,
       m.gpu_model_canonical, m.memory_gb::INTEGER AS gpu_memory_gb
FROM rows r
LEFT JOIN seconds s USING (job_uid)
LEFT JOIN lens l USING (job_uid)
LEFT JOIN gpu_activity a USING (job_uid)
LEFT JOIN low_activity_cost lc ON lc.job_uid = r.job_uid AND lc.billing_currency IS NOT DISTINCT FROM r.billing_currency
LEFT JOIN job_gpu_memory m USING (job_uid)
