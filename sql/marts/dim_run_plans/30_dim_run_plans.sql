-- Each plan and its estimate as of $day (docs/plans.md#the-estimate): the plan's inputs, else the
-- config's, else what the warehouse observed (plan_defaults), else the built-in defaults, each with its
-- source (the parameters mfu_target_source and default_currency_source say whether a config file set
-- them); then the arithmetic of sql/macros/65_plan_estimate.sql. An input nobody has leaves the figures that
-- need it NULL and is named in `missing_inputs`.
WITH inputs AS (
    SELECT k.*, d.* EXCLUDE (run_id),
           coalesce(config_lookup($project_teams, k.project), k.project) AS team,
           coalesce(k.dtype, 'bf16') AS dtype_used,
           coalesce(k.mfu_target, $mfu_target) AS mfu_target_used,
           coalesce(k.redundancy, 1.3) AS redundancy_used,
           coalesce(k.price_per_gpu_hour, d.observed_price_per_gpu_hour) AS price_used,
           CASE WHEN k.price_per_gpu_hour IS NOT NULL THEN coalesce(k.currency, $default_currency)
                ELSE d.price_currency END AS currency_used,
           coalesce(k.checkpoint_seconds, d.observed_checkpoint_seconds) AS checkpoint_used,
           coalesce(k.restart_seconds, d.observed_restart_seconds) AS restart_used,
           coalesce(k.mtbf_gpu_hours, d.observed_mtbf_gpu_hours) AS mtbf_used,
           coalesce(k.peak_flops, pf.peak_flops) AS peak_flops_used,
           CASE WHEN k.peak_flops IS NOT NULL THEN 'plan'
                WHEN pf.peak_flops IS NOT NULL THEN printf('GPU catalog: %s %s (models/gpu_catalog.py)',
                                                           k.gpu_model_canonical, coalesce(k.dtype, 'bf16'))
           END AS peak_flops_source,
           flops_per_token(k.model_active_params, k.model_layers, k.model_heads, k.model_head_dim, k.model_seq_len,
                           $attention_flops) AS fpt
    FROM plan_keys k
    LEFT JOIN plan_defaults d USING (run_id)
    LEFT JOIN intermediate.ref_gpu_peak_flops pf
           ON pf.gpu_model = k.gpu_model_canonical AND pf.dtype = coalesce(k.dtype, 'bf16')
),
estimate AS (
    SELECT *,
           fpt * tokens AS flops,
           fpt * tokens / (peak_flops_used * mfu_target_used) / 3600 AS ideal_gpu_hours,
           mtbf_used / gpus AS run_mtbf_hours,
           young_daly_seconds(checkpoint_used, mtbf_used / gpus * 3600) AS tau_seconds,
           failure_overhead(checkpoint_used, restart_used, mtbf_used / gpus * 3600) AS overhead
    FROM inputs
),
planned AS (
    SELECT *, ideal_gpu_hours * (1 + overhead) AS planned_hours,
           ideal_gpu_hours * (1 + overhead) * redundancy_used AS budget_hours
    FROM estimate
)
SELECT $day::DATE AS day, run_id, project, team, file, start,
       gpu_model, gpu_model_canonical, gpus, dtype_used AS dtype,
       CASE WHEN dtype IS NULL THEN 'built-in (bf16)' ELSE 'plan' END AS dtype_source,
       tokens, model_params, model_active_params, model_layers, model_heads, model_head_dim, model_seq_len,
       $attention_flops AS attention_flops, fpt::DOUBLE AS flops_per_token, flops::DOUBLE AS flops,
       peak_flops_used::DOUBLE AS peak_flops, peak_flops_source,
       mfu_target_used::DOUBLE AS mfu_target,
       CASE WHEN mfu_target IS NULL THEN $mfu_target_source ELSE 'plan' END AS mfu_target_source,
       redundancy_used::DOUBLE AS redundancy,
       CASE WHEN redundancy IS NULL THEN 'built-in (1.3)' ELSE 'plan' END AS redundancy_source,
       price_used::DECIMAL(38, 18) AS price_per_gpu_hour, currency_used AS billing_currency,
       CASE WHEN price_per_gpu_hour IS NOT NULL THEN CASE WHEN currency IS NULL THEN 'plan (currency: ' || $default_currency_source || ')'
                                         ELSE 'plan' END
            WHEN price_used IS NOT NULL THEN printf('fleet %s effective cost per GPU-hour, %s..%s (%.1f GPU-hours billed in %s; marts.fct_node_hourly)',
                 gpu_model_canonical, price_first_day, price_last_day, price_gpu_hours, price_currency)
       END AS price_source,
       checkpoint_used::DOUBLE AS checkpoint_seconds,
       CASE WHEN checkpoint_seconds IS NOT NULL THEN 'plan'
            WHEN checkpoint_used IS NOT NULL THEN printf('median of %d checkpoint saves of %s, %s..%s (marts.fct_checkpoint_saves)',
                 checkpoint_saves, CASE checkpoint_scope WHEN 'project' THEN 'project ' || project ELSE 'all runs' END,
                 checkpoint_first_day, checkpoint_last_day)
       END AS checkpoint_source,
       restart_used::DOUBLE AS restart_seconds,
       CASE WHEN restart_seconds IS NOT NULL THEN 'plan'
            WHEN restart_used IS NOT NULL THEN printf('median restart of %d interruptions, %s..%s (marts.fct_rerun_loss)',
                 restart_interruptions, restart_first_day, restart_last_day)
       END AS restart_source,
       mtbf_used::DOUBLE AS mtbf_gpu_hours,
       CASE WHEN mtbf_gpu_hours IS NOT NULL THEN 'plan'
            WHEN mtbf_used IS NOT NULL THEN printf('%.1f training-run GPU-hours / %d interruptions, %s..%s (marts.fct_run_efficiency_daily, marts.fct_rerun_loss)',
                 mtbf_run_gpu_hours, mtbf_interruptions, mtbf_first_day, mtbf_last_day)
       END AS mtbf_source,
       ideal_gpu_hours::DOUBLE AS ideal_gpu_hours,
       run_mtbf_hours::DOUBLE AS run_mtbf_hours,
       tau_seconds::DOUBLE AS checkpoint_interval_seconds,
       overhead::DOUBLE AS failure_overhead,
       planned_hours::DOUBLE AS planned_gpu_hours,
       budget_hours::DOUBLE AS budget_gpu_hours,
       gpu_hours_cost(planned_hours, price_used) AS planned_cost,
       gpu_hours_cost(budget_hours, price_used) AS budget_cost,
       (planned_hours / gpus / 24)::DOUBLE AS wall_clock_days,
       window_first_day AS defaults_first_day, window_last_day AS defaults_last_day,
       list_filter([CASE WHEN peak_flops_used IS NULL THEN 'peak_flops' END,
                    CASE WHEN price_used IS NULL THEN 'price_per_gpu_hour' END,
                    CASE WHEN checkpoint_used IS NULL THEN 'checkpoint_seconds' END,
                    CASE WHEN restart_used IS NULL THEN 'restart_seconds' END,
                    CASE WHEN mtbf_used IS NULL THEN 'mtbf_gpu_hours' END], lambda x: x IS NOT NULL) AS missing_inputs
FROM planned
