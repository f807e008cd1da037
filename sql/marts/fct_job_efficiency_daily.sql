-- The under-use lens per day, job and currency (docs/ledger.md#under-use-a-lens-on-productive-time): how
-- much of the job's productive time ran at low activity and what that cost, its mean SM and tensor
-- activity, its peak memory use against its GPU's memory, the GPUs it held for nothing and the size it
-- needed, and the smallest GPU — another model of the fleet, or a MIG profile of its own GPU — whose
-- memory holds its peak with `efficiency.memory_headroom` to spare, with what the job would have cost on
-- it at the fleet's price of a GPU-hour (marts.fct_gpu_price_daily, the price `plan` uses), when that is
-- cheaper. The lens is on `productive` only: the ledger's categories are unchanged.
WITH jobs AS (
    SELECT c.*, p.price_per_gpu_hour,
           c.fb_used_max_mib * (1 + $memory_headroom) / 1024 AS memory_needed_gb
    FROM marts.fct_job_cost c
    LEFT JOIN marts.fct_gpu_price_daily p
      ON p.day = $day AND p.gpu_model_canonical = c.gpu_model_canonical AND p.billing_currency = c.billing_currency
    WHERE c.day = $day
),
-- what could run each job of whole GPUs (a job of slices is already on a smaller GPU): another GPU model
-- the fleet has a price for, or a MIG profile of its own GPU at its slices' share of the GPU's price
candidates AS (
    SELECT j.job_uid, j.billing_currency, m.gpu_model AS fits_smaller, m.memory_gb,
           p.price_per_gpu_hour AS price
    FROM jobs j
    JOIN intermediate.ref_gpu_memory m ON m.memory_gb >= j.memory_needed_gb AND m.gpu_model <> j.gpu_model_canonical
     AND j.gpus > 0
    JOIN marts.fct_gpu_price_daily p
      ON p.day = $day AND p.gpu_model_canonical = m.gpu_model AND p.billing_currency = j.billing_currency
    UNION ALL
    SELECT j.job_uid, j.billing_currency, j.gpu_model_canonical || ' ' || s.profile, s.memory_gb,
           units_money(money_units(j.price_per_gpu_hour) * s.share_units // share_units_per_gpu())
    FROM jobs j
    JOIN intermediate.ref_mig_slices s
      ON s.gpu_memory_gb = j.gpu_memory_gb AND s.memory_gb >= j.memory_needed_gb
     AND s.share_units < share_units_per_gpu() AND j.gpus > 0
),
smallest AS (
    SELECT c.* FROM candidates c JOIN jobs j USING (job_uid, billing_currency)
    WHERE c.price < j.price_per_gpu_hour
    QUALIFY row_number() OVER (PARTITION BY c.job_uid, c.billing_currency
                               ORDER BY c.memory_gb, c.price, c.fits_smaller) = 1
)
SELECT j.day, j.job_id, j.job_uid, j.cluster, j.run_id, j.team, j.project, j.user_name, j.account, j.job_name,
       j.billing_currency, j.gpus, j.gpu_model_canonical AS gpu_model, j.gpu_memory_gb,
       j.gpu_seconds, j.productive_gpu_seconds, j.effective_cost,
       j.low_activity_gpu_seconds, j.low_activity_cost, j.low_activity_billed_cost,
       j.sm_active_avg, j.tensor_active_avg, j.fb_used_max_mib, j.fb_used_max_fraction,
       j.gpus_never_active, j.right_size_gpus,
       j.price_per_gpu_hour,
       s.fits_smaller, s.memory_gb AS fits_smaller_memory_gb, s.price AS fits_smaller_price_per_gpu_hour,
       -- the job's GPU-seconds at the smaller GPU's price, to 1e-18 (floor)
       units_money(money_units(s.price) * round(j.gpu_seconds * 1000)::HUGEINT // 3600000)::DECIMAL(38, 18)
           AS fits_smaller_cost
FROM jobs j
LEFT JOIN smallest s USING (job_uid, billing_currency)
