-- The team's runs over [$start, $end]: GPU time, tokens, cost and the sums MFU is a ratio of.
-- MFU only counts run-days the mart could measure (effective_mfu not NULL: the run logged tokens);
-- a run with none has NULL MFU, never 0 (DESIGN section 4).
SELECT run_id,
       any_value(project) AS project,
       string_agg(DISTINCT gpu_model, ', ' ORDER BY gpu_model) AS gpu_model,
       string_agg(DISTINCT dtype, ', ' ORDER BY dtype) AS dtype,
       count(*) AS days,
       sum(gpu_seconds)::DOUBLE AS gpu_seconds,
       sum(productive_gpu_seconds)::DOUBLE AS productive_gpu_seconds,
       sum(tokens)::HUGEINT AS tokens,
       sum(tokens_kept)::HUGEINT AS tokens_kept,
       sum(effective_cost)::DECIMAL(38, 18) AS effective_cost,
       sum(effective_cost) FILTER (effective_mfu IS NOT NULL)::DECIMAL(38, 18) AS measured_cost,
       sum(tokens_kept) FILTER (effective_mfu IS NOT NULL)::HUGEINT AS measured_tokens_kept,
       sum(tokens_kept * flops_per_token) FILTER (effective_mfu IS NOT NULL)::DOUBLE AS model_flops,
       sum(gpu_seconds * peak_flops) FILTER (effective_mfu IS NOT NULL)::DOUBLE AS peak_flops_all,
       sum(productive_gpu_seconds * peak_flops) FILTER (mfu IS NOT NULL)::DOUBLE AS peak_flops_productive,
       sum(mfu_gap_cost)::DECIMAL(38, 10) AS mfu_gap_cost,
       max(mfu_target)::DOUBLE AS mfu_target
FROM marts.fct_run_efficiency_daily
WHERE team = $team AND day BETWEEN $start AND $end
GROUP BY run_id
ORDER BY effective_cost DESC, run_id
