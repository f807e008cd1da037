-- Unit economics per project, month and billing currency: what 1M kept tokens cost, and at what
-- efficiency. With `fx:` rates, `*_reporting` columns convert the money to the reporting currency.
CREATE OR REPLACE VIEW finance.unit_economics_monthly AS
WITH monthly AS (
    SELECT strftime(day, '%Y-%m') AS month, team, project, billing_currency,
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
)
SELECT m.*, fx.reporting_currency,
       finance.times_rate(m.effective_cost, fx.rate) AS effective_cost_reporting,
       (m.cost_per_mtok * fx.rate)::DECIMAL(38, 10) AS cost_per_mtok_reporting,
       fx.source AS fx_source
FROM monthly m
LEFT JOIN finance.fx_rates fx ON fx.currency = m.billing_currency AND (fx.month = m.month OR fx.month IS NULL)
