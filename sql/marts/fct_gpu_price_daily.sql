-- What a GPU-hour of each GPU model cost the fleet over the 30 days ending on $day, per billing currency:
-- every billed GPU-second of its nodes, whatever it was used for, and what those node-hours cost. The one
-- price of a GPU-hour: `plan` fills a plan's price from it (dim_run_plans), and the under-use lens prices
-- a smaller GPU by it (fct_job_efficiency_daily).
SELECT $day::DATE AS day, n.gpu_model_canonical, h.billing_currency,
       sum(h.effective_cost)::DECIMAL(38, 18) AS cost, sum(h.gpu_seconds)::DOUBLE AS gpu_seconds,
       min(h.day) AS first_day, max(h.day) AS last_day,
       -- to 1e-6 in DECIMAL: a DOUBLE rounded to 6 places and widened shows its binary tail (8.260441999999998976)
       (sum(h.effective_cost)::DOUBLE * 3600 / sum(h.gpu_seconds))::DECIMAL(38, 6)::DECIMAL(38, 18)
           AS price_per_gpu_hour
FROM marts.fct_node_hourly h
JOIN marts.dim_nodes n ON n.day = h.day AND n.hostname = h.hostname
WHERE h.day BETWEEN $day::DATE - 29 AND $day::DATE AND h.billing_currency IS NOT NULL
  AND n.gpu_model_canonical IS NOT NULL
GROUP BY n.gpu_model_canonical, h.billing_currency
HAVING sum(h.gpu_seconds) > 0
