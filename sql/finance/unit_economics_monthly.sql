-- Unit economics per project and month: what 1M kept tokens cost, and at what efficiency.
CREATE OR REPLACE VIEW finance.unit_economics_monthly AS
SELECT strftime(day, '%Y-%m') AS month, team, project,
       count(DISTINCT run_id) AS runs,
       sum(tokens) AS tokens, sum(tokens_kept) AS tokens_kept,
       sum(gpu_seconds) / 3600 AS gpu_hours,
       sum(effective_cost) AS effective_cost,
       CASE WHEN sum(tokens_kept) > 0 THEN (sum(effective_cost) / sum(tokens_kept) * 1000000)::DECIMAL(38, 10) END
           AS cost_per_mtok,
       sum(tokens_kept * flops_per_token) / nullif(sum(productive_gpu_seconds * peak_flops) FILTER (tokens > 0), 0) AS mfu,
       sum(tokens_kept * flops_per_token) / nullif(sum(gpu_seconds * peak_flops) FILTER (tokens > 0), 0) AS effective_mfu,
       sum(productive_gpu_seconds) / nullif(sum(gpu_seconds), 0) AS goodput,
       sum(mfu_gap_cost) AS mfu_gap_cost
FROM marts.fct_run_efficiency_daily
GROUP BY ALL
