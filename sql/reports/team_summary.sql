-- Per team and billing currency over [$start, $end]: cost, waste by category (amounts and share of the
-- team's GPU cost), the under-use beside it (productive GPU time at low SM activity and its cost:
-- docs/ledger.md#under-use-a-lens-on-productive-time), and the MFU and cost per 1M tokens of its runs.
WITH cost AS (
    SELECT team, billing_currency,
           sum(effective_cost) AS total,
           sum(effective_cost) FILTER (category IN (SELECT name FROM marts.dim_ledger_categories WHERE is_gpu))
               AS gpu_cost,
           sum(effective_cost) FILTER (category IN (SELECT name FROM marts.dim_ledger_categories WHERE is_waste))
               AS waste,
           sum(effective_cost) FILTER (category = 'idle_unallocated') AS idle_unallocated,
           sum(effective_cost) FILTER (category = 'allocated_idle') AS allocated_idle,
           sum(effective_cost) FILTER (category = 'rerun_loss') AS rerun_loss,
           sum(effective_cost) FILTER (category = 'failed_job') AS failed_job,
           sum(effective_cost) FILTER (category = 'unmonitored') AS unmonitored
    FROM marts.fct_cost_daily WHERE day BETWEEN $start AND $end GROUP BY team, billing_currency
),
under_use AS (
    SELECT team, billing_currency, sum(low_activity_cost) AS low_activity_cost
    FROM marts.fct_job_cost WHERE day BETWEEN $start AND $end AND billing_currency IS NOT NULL
    GROUP BY team, billing_currency
),
runs AS (
    -- per-token cost only over run-days billed in one currency (the mart leaves the others NULL)
    SELECT team, billing_currency,
           sum(effective_cost) FILTER (tokens_kept > 0 AND cost_per_mtok IS NOT NULL)
               / nullif(sum(tokens_kept) FILTER (cost_per_mtok IS NOT NULL), 0) * 1e6 AS cost_per_mtok
    FROM marts.fct_run_efficiency_daily WHERE day BETWEEN $start AND $end GROUP BY team, billing_currency
),
efficiency AS (
    -- MFU has no currency: over all of the team's runs
    SELECT team,
           sum(tokens_kept * flops_per_token) / nullif(sum(gpu_seconds * peak_flops) FILTER (tokens > 0), 0) AS effective_mfu
    FROM marts.fct_run_efficiency_daily WHERE day BETWEEN $start AND $end GROUP BY team
)
-- the headline first (an 80-column terminal shows those and names the rest), then the waste by kind
SELECT c.team, c.billing_currency AS currency, round(c.total, 2) AS total_cost,
       round(coalesce(c.waste, 0), 2) AS waste,
       round(100 * coalesce(c.waste, 0) / nullif(c.gpu_cost, 0), 1) AS "waste_%",
       round(coalesce(u.low_activity_cost, 0), 2) AS under_use,
       round(100 * coalesce(u.low_activity_cost, 0) / nullif(c.gpu_cost, 0), 1) AS "under_use_%",
       round(f.effective_mfu, 3) AS effective_mfu, round(r.cost_per_mtok, 2) AS cost_per_mtok,
       round(coalesce(c.idle_unallocated, 0), 2) AS idle_unallocated, round(100 * coalesce(c.idle_unallocated, 0) / nullif(c.gpu_cost, 0), 1) AS "idle_unallocated_%",
       round(coalesce(c.allocated_idle, 0), 2) AS allocated_idle, round(100 * coalesce(c.allocated_idle, 0) / nullif(c.gpu_cost, 0), 1) AS "allocated_idle_%",
       round(coalesce(c.rerun_loss, 0), 2) AS rerun_loss, round(100 * coalesce(c.rerun_loss, 0) / nullif(c.gpu_cost, 0), 1) AS "rerun_loss_%",
       round(coalesce(c.failed_job, 0), 2) AS failed_job, round(100 * coalesce(c.failed_job, 0) / nullif(c.gpu_cost, 0), 1) AS "failed_job_%",
       round(coalesce(c.unmonitored, 0), 2) AS unmonitored
FROM cost c LEFT JOIN runs r USING (team, billing_currency) LEFT JOIN under_use u USING (team, billing_currency)
LEFT JOIN efficiency f USING (team)
ORDER BY c.billing_currency, c.total DESC
