-- Plan against actual, per day and planned run (docs/plans.md#plan-against-actual): the day's plan and
-- budget (marts.dim_run_plans), the run's GPU-hours, cost and kept tokens from its first day up to
-- $day (marts.fct_run_efficiency_daily), and what they say: burn % of the GPU-hour budget, progress %
-- of the planned tokens, and the total at the current pace (GPU-hours per kept token so far, times the
-- planned tokens). Cost counts only the plan's currency (amounts in two currencies are never added).
-- A plan gets rows from its `start` (every day when it has none) or from the run's first GPU-hour.
WITH plans AS (
    SELECT * FROM marts.dim_run_plans WHERE day = $day
),
actual AS (
    SELECT e.run_id,
           sum(e.gpu_seconds) / 3600 AS gpu_hours_to_date,
           sum(e.gpu_seconds) FILTER (e.day = $day) / 3600 AS gpu_hours,
           sum(e.tokens_kept) AS tokens_kept_to_date,
           sum(e.effective_cost) FILTER (e.billing_currency = p.billing_currency) AS cost_to_date,
           min(e.day) AS first_day
    FROM marts.fct_run_efficiency_daily e JOIN plans p USING (run_id)
    WHERE e.day <= $day
    GROUP BY e.run_id
),
measured AS (
    SELECT p.*, coalesce(a.gpu_hours, 0) AS day_gpu_hours, coalesce(a.gpu_hours_to_date, 0) AS used_gpu_hours,
           coalesce(a.tokens_kept_to_date, 0) AS kept, coalesce(a.cost_to_date, 0) AS spent, a.first_day
    FROM plans p LEFT JOIN actual a USING (run_id)
    WHERE p.start IS NULL OR p.start <= $day OR a.first_day IS NOT NULL
),
paced AS (
    SELECT *,
           CASE WHEN kept > 0 THEN used_gpu_hours * tokens / kept END AS projected_hours,
           CASE WHEN kept > 0 AND billing_currency IS NOT NULL
                THEN cents_half_even(spent::DECIMAL(38, 6) * (tokens / kept)::DECIMAL(38, 9)) END AS projected_money
    FROM measured
)
SELECT $day::DATE AS day, run_id, project, team, billing_currency, start, first_day AS first_active_day,
       tokens::DOUBLE AS planned_tokens,
       planned_gpu_hours, budget_gpu_hours, planned_cost, budget_cost,
       day_gpu_hours::DOUBLE AS gpu_hours,
       used_gpu_hours::DOUBLE AS gpu_hours_to_date,
       CASE WHEN billing_currency IS NOT NULL THEN spent END::DECIMAL(38, 18) AS cost_to_date,
       kept::BIGINT AS tokens_kept_to_date,
       (100 * used_gpu_hours / budget_gpu_hours)::DOUBLE AS burn_pct,
       (100 * used_gpu_hours / planned_gpu_hours)::DOUBLE AS planned_burn_pct,
       (100 * kept / tokens)::DOUBLE AS progress_pct,
       (100 * used_gpu_hours / planned_gpu_hours - 100 * kept / tokens)::DOUBLE AS burn_ahead_pct,
       projected_hours::DOUBLE AS projected_gpu_hours,
       projected_money::DECIMAL(38, 18) AS projected_cost,
       (projected_hours - budget_gpu_hours)::DOUBLE AS projected_overrun_gpu_hours,
       (projected_money - budget_cost)::DECIMAL(38, 18) AS projected_overrun_cost
FROM paced
