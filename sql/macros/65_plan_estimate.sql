-- The arithmetic of a run plan's estimate (docs/plans.md#the-estimate), in one place: the daily mart
-- marts.dim_run_plans and `gpuledger plan` both run sql/marts/dim_run_plans/30_dim_run_plans.sql, which
-- calls these. Time in seconds, physics in DOUBLE, money in DECIMAL.

-- Young–Daly: the checkpoint interval that minimises the expected overhead, τ = sqrt(2·C·M), for a
-- checkpoint that takes C seconds and a run that is interrupted every M seconds on average.
CREATE OR REPLACE MACRO young_daly_seconds(checkpoint_s, mtbf_s) AS sqrt(2 * checkpoint_s::DOUBLE * mtbf_s::DOUBLE);

-- The expected share of extra time with checkpoints every τ: C/τ saving them, τ/(2M) recomputing the
-- half interval lost on average at each interruption, R/M restarting (R seconds per interruption).
CREATE OR REPLACE MACRO checkpoint_overhead(checkpoint_s, interval_s, restart_s, mtbf_s) AS
    checkpoint_s / interval_s::DOUBLE
    + interval_s / (2 * mtbf_s::DOUBLE)
    + restart_s / mtbf_s::DOUBLE;

-- That overhead at the Young–Daly interval: what a plan expects, and the best a run can do.
CREATE OR REPLACE MACRO failure_overhead(checkpoint_s, restart_s, mtbf_s) AS
    checkpoint_overhead(checkpoint_s, young_daly_seconds(checkpoint_s, mtbf_s), restart_s, mtbf_s);

-- Money rounded to the cent, half to even (banker's rounding: 0.125 -> 0.12, 0.135 -> 0.14), exactly.
CREATE OR REPLACE MACRO cents_half_even(x) AS (
    CASE WHEN x * 100 - floor(x * 100) > 0.5
              OR (x * 100 - floor(x * 100) = 0.5 AND floor(x * 100) % 2 <> 0)
         THEN floor(x * 100) + 1 ELSE floor(x * 100) END * 0.01  -- not `/ 100`: DECIMAL division is DOUBLE
)::DECIMAL(38, 18);

-- What GPU-hours cost at a price per GPU-hour: the hours (a DOUBLE) taken to 1e-6 GPU-hour, times the
-- exact price, rounded to the cent half to even.
CREATE OR REPLACE MACRO gpu_hours_cost(gpu_hours, price) AS
    cents_half_even(gpu_hours::DECIMAL(38, 6) * price::DECIMAL(38, 18));
