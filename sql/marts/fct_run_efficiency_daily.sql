-- Efficiency of each training run per day (docs/ledger.md#efficiency-metrics). A run's GPU-seconds
-- and cost are those of its jobs' allocations on the day, node cost only. Tokens are the day's step events; kept tokens exclude
-- steps an interruption rolled back (steps of an interrupted job after its last saved checkpoint).
-- flops_per_token = 6·N_active + c·L·H·Q·T with c = 12 (palm) or 6 (causal), stored with the value
-- (the flops_per_token macro, sql/macros/60_flops.sql).
-- A run without token events has NULL MFU. Cost is per billing currency: a run whose nodes were billed
-- in two currencies has a row for each, with its GPU-seconds and tokens on the first currency's row
-- only, and no per-token money (its cost cannot be added up without exchange rates).
WITH configs AS (
    SELECT run_id, arg_max(project, ts) AS project, arg_max(dtype, ts) AS dtype,
           arg_max(coalesce(model_active_params, model_params), ts) AS n_active,
           arg_max(model_layers, ts) AS layers, arg_max(model_heads, ts) AS heads,
           arg_max(model_head_dim, ts) AS head_dim, arg_max(model_seq_len, ts) AS seq_len
    FROM staging.stg_runs__events WHERE event = 'run_config' GROUP BY run_id
),
jobs AS (
    SELECT * FROM intermediate.int_job_allocations WHERE day = $day AND run_id IS NOT NULL
),
seconds AS (
    SELECT j.run_id, sum(g.gpu_seconds) AS gpu_seconds,
           coalesce(sum(g.gpu_seconds) FILTER (g.category = 'productive'), 0) AS productive_gpu_seconds
    FROM intermediate.int_gpu_seconds g JOIN jobs j USING (job_uid)
    WHERE g.day = $day GROUP BY j.run_id
),
cost AS (
    SELECT j.run_id, c.billing_currency, sum(c.effective_cost) AS effective_cost,
           row_number() OVER (PARTITION BY j.run_id ORDER BY c.billing_currency) = 1 AS first_currency,
           count(*) OVER (PARTITION BY j.run_id) AS currencies
    FROM intermediate.int_cost_allocations c JOIN jobs j USING (job_uid)
    WHERE c.day = $day AND c.line_kind = 'node_hour' GROUP BY j.run_id, c.billing_currency
),
-- the run's checkpoints in inventoried storage (int_storage_costs): their bytes whatever prices them, and
-- what the bill or the storage rate card charges for them in the row's currency
checkpoints AS (
    SELECT run_id, billing_currency, sum(effective_cost) AS checkpoint_storage_cost
    FROM intermediate.int_storage_costs
    WHERE day = $day AND kind = 'checkpoint' AND run_id IS NOT NULL AND priced_by <> 'unpriced'
    GROUP BY ALL
),
checkpoint_bytes AS (
    SELECT run_id, sum(bytes) AS checkpoint_bytes
    FROM (SELECT DISTINCT store, tier, project, run_id, kind, bytes FROM intermediate.int_storage_costs
          WHERE day = $day AND kind = 'checkpoint' AND run_id IS NOT NULL)
    GROUP BY run_id
),
hardware AS (
    SELECT j.run_id, mode(n.gpu_model) AS gpu_model
    FROM jobs j, unnest(j.hosts) AS h(hostname)
    JOIN intermediate.int_nodes n ON n.day = $day AND n.hostname = h.hostname
    GROUP BY j.run_id
),
hardware_models AS (
    -- the canonical model named in a projection, not in the join condition: Spark joins on no subquery
    SELECT hw.run_id, gpu_model_canonical(hw.gpu_model) AS canonical_gpu_model FROM hardware hw
),
interrupted AS (
    -- jobs of any day whose later steps were rolled back, with the step they were rolled back to
    SELECT job_id, max(coalesce(last_checkpoint_step, -1)) AS kept_through_step
    FROM intermediate.int_job_allocations WHERE interrupted AND day BETWEEN $day::DATE - 7 AND $day::DATE
    GROUP BY job_id
),
tokens AS (
    SELECT e.run_id, sum(e.tokens) AS tokens,
           sum(e.tokens) FILTER (i.job_id IS NULL OR e.step <= i.kept_through_step) AS tokens_kept
    FROM staging.stg_runs__events e LEFT JOIN interrupted i ON i.job_id = e.job_id
    WHERE e.event = 'step' AND e.ts >= $day::DATE AND e.ts < $day::DATE + INTERVAL 1 DAY
    GROUP BY e.run_id
),
reported AS (
    -- what a trainer log says of its own throughput (docs/ingest/trainer-logs.md), averaged over the
    -- day's steps by the seconds they took: the log's MFU over its time, as gpuledger's is
    SELECT run_id,
           sum(reported_mfu * step_seconds) FILTER (reported_mfu IS NOT NULL)
               / sum(step_seconds) FILTER (reported_mfu IS NOT NULL) AS reported_mfu,
           sum(reported_tflops * step_seconds) FILTER (reported_tflops IS NOT NULL)
               / sum(step_seconds) FILTER (reported_tflops IS NOT NULL) AS reported_tflops
    FROM staging.stg_runs__events
    WHERE event = 'step' AND step_seconds > 0 AND ts >= $day::DATE AND ts < $day::DATE + INTERVAL 1 DAY
    GROUP BY run_id
),
runs AS (
    SELECT run_id FROM seconds UNION SELECT run_id FROM tokens
),
measured AS (
    SELECT r.run_id,
           coalesce(cf.project, (SELECT min(project) FROM jobs j WHERE j.run_id = r.run_id)) AS project,
           hw.gpu_model, cf.dtype,
           coalesce(s.gpu_seconds, 0) AS gpu_seconds, coalesce(s.productive_gpu_seconds, 0) AS productive_gpu_seconds,
           c.billing_currency, coalesce(c.effective_cost, 0) AS effective_cost,
           coalesce(c.first_currency, TRUE) AS first_currency, coalesce(c.currencies, 1) AS currencies,
           coalesce(t.tokens, 0) AS tokens, coalesce(t.tokens_kept, 0) AS tokens_kept,
           flops_per_token(cf.n_active, cf.layers, cf.heads, cf.head_dim, cf.seq_len, $attention_flops) AS flops_per_token,
           pf.peak_flops, rp.reported_mfu AS log_mfu, rp.reported_tflops
    FROM runs r
    LEFT JOIN configs cf USING (run_id)
    LEFT JOIN seconds s USING (run_id)
    LEFT JOIN cost c USING (run_id)
    LEFT JOIN tokens t USING (run_id)
    LEFT JOIN reported rp USING (run_id)
    LEFT JOIN hardware hw USING (run_id)
    LEFT JOIN hardware_models hm USING (run_id)
    LEFT JOIN intermediate.ref_gpu_peak_flops pf
           ON pf.gpu_model = hm.canonical_gpu_model AND pf.dtype = lower(coalesce(cf.dtype, 'bf16'))
),
ratios AS (
    SELECT *,
           CASE WHEN tokens > 0 AND productive_gpu_seconds > 0
                THEN tokens_kept * flops_per_token / (productive_gpu_seconds * peak_flops) END AS mfu,
           CASE WHEN tokens > 0 AND gpu_seconds > 0
                THEN tokens_kept * flops_per_token / (gpu_seconds * peak_flops) END AS effective_mfu,
           -- the log's MFU, or its TFLOP/s per GPU over the GPU's peak where it prints no MFU
           coalesce(log_mfu, reported_tflops * 1e12 / peak_flops) AS reported_mfu
    FROM measured
)
SELECT $day::DATE AS day, run_id,
       coalesce(config_lookup($project_teams, project), project) AS team, project,
       gpu_model, dtype, billing_currency,
       CASE WHEN first_currency THEN gpu_seconds ELSE 0 END::DOUBLE AS gpu_seconds,
       CASE WHEN first_currency THEN productive_gpu_seconds ELSE 0 END::DOUBLE AS productive_gpu_seconds,
       CASE WHEN first_currency THEN tokens ELSE 0 END::BIGINT AS tokens,
       CASE WHEN first_currency THEN tokens_kept ELSE 0 END::BIGINT AS tokens_kept,
       flops_per_token::DOUBLE AS flops_per_token, $attention_flops AS attention_flops, peak_flops::DOUBLE AS peak_flops,
       mfu, effective_mfu,
       reported_mfu, reported_tflops::DOUBLE AS reported_tflops_per_gpu,
       CASE WHEN reported_mfu > 0 THEN mfu / reported_mfu END AS mfu_vs_reported,
       CASE WHEN gpu_seconds > 0 THEN productive_gpu_seconds / gpu_seconds END AS goodput,
       effective_cost::DECIMAL(38, 18) AS effective_cost,
       CASE WHEN tokens_kept > 0 AND currencies = 1
            THEN (effective_cost::DOUBLE / tokens_kept * 1e6)::DECIMAL(38, 10) END AS cost_per_mtok,
       CASE WHEN gpu_seconds > 0 AND peak_flops > 0 AND currencies = 1
            THEN (effective_cost::DOUBLE / gpu_seconds * flops_per_token / (peak_flops * $mfu_target) * 1e6)::DECIMAL(38, 10)
       END AS mfu_adjusted_cost_per_mtok,
       CASE WHEN effective_mfu IS NOT NULL
            THEN (effective_cost::DOUBLE * (1 - effective_mfu / $mfu_target))::DECIMAL(38, 10) END AS mfu_gap_cost,
       $mfu_target::DOUBLE AS mfu_target,
       -- inventoried checkpoint storage of the run (docs/ingest/storage.md); NULL without an inventory
       ck.checkpoint_storage_cost::DECIMAL(38, 18) AS checkpoint_storage_cost,
       CASE WHEN first_currency THEN cb.checkpoint_bytes END::DECIMAL(38, 0) AS checkpoint_bytes
FROM ratios
LEFT JOIN checkpoints ck USING (run_id, billing_currency)
LEFT JOIN checkpoint_bytes cb USING (run_id)
