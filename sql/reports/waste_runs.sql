-- The team's runs over [$start, $end], a row per run and billing currency: the run's GPU time, tokens
-- and the sums MFU is a ratio of (the run's own, over all its currencies: the mart puts them on a
-- run-day's first currency row only), and the run's cost billed in the row's currency. Rows without
-- a currency (no billed cost) go with the run's first currency, else the team's first.
-- MFU only counts run-days the mart could measure (effective_mfu not NULL: the run logged tokens);
-- a run with none has NULL MFU, never 0. Per-token money needs all of a run's cost in one currency:
-- for a run billed in several in the period, measured_cost is NULL.
WITH rows AS (
    SELECT coalesce(billing_currency, min(billing_currency) OVER (PARTITION BY run_id), $first_currency) AS currency,
           *
    FROM marts.fct_run_efficiency_daily
    WHERE team = $team AND day BETWEEN $start AND $end
),
run AS (
    SELECT run_id,
           any_value(project) AS project,
           string_agg(DISTINCT gpu_model, ', ' ORDER BY gpu_model) AS gpu_model,
           string_agg(DISTINCT dtype, ', ' ORDER BY dtype) AS dtype,
           count(DISTINCT day) AS days,
           count(DISTINCT currency) AS currencies,
           sum(gpu_seconds)::DOUBLE AS gpu_seconds,
           sum(productive_gpu_seconds)::DOUBLE AS productive_gpu_seconds,
           sum(tokens)::HUGEINT AS tokens,
           sum(tokens_kept)::HUGEINT AS tokens_kept,
           sum(tokens_kept) FILTER (effective_mfu IS NOT NULL)::HUGEINT AS measured_tokens_kept,
           sum(tokens_kept * flops_per_token) FILTER (effective_mfu IS NOT NULL)::DOUBLE AS model_flops,
           sum(gpu_seconds * peak_flops) FILTER (effective_mfu IS NOT NULL)::DOUBLE AS peak_flops_all,
           sum(productive_gpu_seconds * peak_flops) FILTER (mfu IS NOT NULL)::DOUBLE AS peak_flops_productive,
           max(mfu_target)::DOUBLE AS mfu_target
    FROM rows
    GROUP BY run_id
),
money AS (
    SELECT run_id, currency,
           sum(effective_cost)::DECIMAL(38, 18) AS effective_cost,
           sum(effective_cost) FILTER (effective_mfu IS NOT NULL)::DECIMAL(38, 18) AS measured_cost,
           sum(mfu_gap_cost)::DECIMAL(38, 10) AS mfu_gap_cost
    FROM rows
    GROUP BY run_id, currency
)
SELECT m.currency, r.run_id, r.project, r.gpu_model, r.dtype, r.days, r.gpu_seconds, r.productive_gpu_seconds,
       r.tokens, r.tokens_kept, m.effective_cost,
       CASE WHEN r.currencies = 1 THEN m.measured_cost END AS measured_cost,
       r.measured_tokens_kept, r.model_flops, r.peak_flops_all, r.peak_flops_productive, m.mfu_gap_cost,
       r.mfu_target, r.currencies
FROM money m JOIN run r USING (run_id)
ORDER BY m.currency, m.effective_cost DESC, r.run_id
