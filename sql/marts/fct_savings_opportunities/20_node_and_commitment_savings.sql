-- What nodes and commitments could have saved over the window (docs/ledger.md#savings-opportunities):
-- node pools are the idle GPUs no job held (idle_unallocated) and unused commitments, apart from the
-- job pools of 10_job_and_run_savings.sql.
--
-- How each node-day is paid for decides what its idle time calls for: `on_demand` (bill lines without a
-- commitment, spot included, and rate cards: it can be released), `committed` (a bill commitment or a
-- config contract: the commitment is what to reduce) or `owned` (amortized hardware: neither; it shows
-- as utilisation).
-- the window's bill lines of a commitment, read once for both uses below
CREATE OR REPLACE TEMP TABLE sav_commitment_lines AS
SELECT DISTINCT day, line_key, commitment_discount_id FROM intermediate.int_bill_line_hours
WHERE day IN (SELECT day FROM sav_days) AND commitment_discount_id IS NOT NULL;

CREATE OR REPLACE TEMP TABLE sav_node_days AS
WITH pieces AS (
    SELECT c.day, c.hostname, c.billing_currency, c.category, c.team, c.cost_source, c.gpu_seconds,
           c.effective_cost,
           -- idle GPUs no job held (idle_unallocated: GPU time without a precedence); productive GPU time
           k.is_gpu AND k.precedence IS NULL AS unheld, k.is_gpu AND NOT k.is_waste AS productive,
           CASE WHEN c.cost_source = 'amortization' THEN 'owned'
                WHEN l.commitment_discount_id IS NOT NULL OR c.line_key LIKE '["contract"%' THEN 'committed'
                WHEN c.cost_source IN ('bill', 'rate_card') THEN 'on_demand' END AS paid_as,
           coalesce(l.commitment_discount_id,
                    CASE WHEN c.line_key LIKE '["contract"%' THEN 'contract ' || json_extract_string(c.line_key, '$[1]') END)
               AS commitment_id
    FROM intermediate.int_cost_allocations c
    LEFT JOIN marts.dim_ledger_categories k ON k.name = c.category
    LEFT JOIN sav_commitment_lines l ON l.day = c.day AND l.line_key = c.line_key
    WHERE c.day IN (SELECT day FROM sav_days) AND c.line_kind = 'node_hour' AND c.hostname IS NOT NULL
      AND c.cost_source <> 'energy'
)
SELECT p.day, p.hostname, p.billing_currency,
       -- the node-day is committed or owned when any of its cost is
       CASE WHEN bool_or(p.paid_as = 'owned') THEN 'owned' WHEN bool_or(p.paid_as = 'committed') THEN 'committed'
            ELSE 'on_demand' END AS paid_as,
       min(p.commitment_id) AS commitment_id,
       min(p.team) FILTER (p.unheld) AS idle_team,
       coalesce(sum(p.gpu_seconds), 0) AS billed_gpu_seconds,
       coalesce(sum(p.gpu_seconds) FILTER (p.unheld), 0) AS idle_gpu_seconds,
       coalesce(sum(p.gpu_seconds) FILTER (p.productive), 0) AS productive_gpu_seconds,
       money_units(sum(p.effective_cost)) AS cost_units,
       money_units(coalesce(sum(p.effective_cost) FILTER (p.unheld), 0)) AS idle_units
FROM pieces p
GROUP BY p.day, p.hostname, p.billing_currency;

-- unused commitments: the unused part of each bill commitment, and its team (the pool owner's)
CREATE OR REPLACE TEMP TABLE sav_unused_commitments AS
SELECT l.commitment_discount_id AS commitment_id, c.billing_currency, min(c.team) AS team,
       money_units(sum(c.effective_cost)) AS unused_units, count(DISTINCT c.day) AS days
FROM intermediate.int_cost_allocations c
JOIN sav_commitment_lines l ON l.day = c.day AND l.line_key = c.line_key
WHERE c.day IN (SELECT day FROM sav_days)
  -- unused commitment: the category charged to the commitment's owner
  AND c.category IN (SELECT name FROM marts.dim_ledger_categories WHERE allocation = 'commitment_owner')
GROUP BY ALL
HAVING sum(c.effective_cost) > 0;

-- the steady on-demand base per GPU model and currency: the fewest GPUs busy (productive) on on-demand
-- nodes in any hour of the window's days, that a commitment at savings.commitment_discount would have
-- covered all window long; nodes to release are left out of it
CREATE OR REPLACE TEMP TABLE sav_on_demand_base AS
WITH released AS (
    SELECT hostname, billing_currency FROM sav_node_days WHERE paid_as = 'on_demand'
    GROUP BY ALL
    HAVING sum(idle_gpu_seconds) > $release_idle_share * sum(billed_gpu_seconds)
),
hours AS (
    SELECT h.hour_ts, n.gpu_model_canonical AS gpu_model, h.billing_currency,
           sum(h.gpu_seconds) FILTER (h.category = 'productive') AS productive_gpu_seconds
    FROM marts.fct_node_hourly h
    JOIN marts.dim_nodes n ON n.day = h.day AND n.hostname = h.hostname
    JOIN sav_node_days d ON d.day = h.day AND d.hostname = h.hostname AND d.billing_currency = h.billing_currency
    LEFT JOIN released r ON r.hostname = h.hostname AND r.billing_currency = h.billing_currency
    WHERE h.day IN (SELECT day FROM sav_days) AND d.paid_as = 'on_demand' AND n.gpu_model_canonical IS NOT NULL
      AND r.hostname IS NULL
    GROUP BY ALL
),
od AS (
    SELECT n.gpu_model_canonical AS gpu_model, d.billing_currency,
           sum(d.cost_units) AS cost_units, sum(d.billed_gpu_seconds) AS billed_gpu_seconds
    FROM sav_node_days d
    JOIN marts.dim_nodes n ON n.day = d.day AND n.hostname = d.hostname
    LEFT JOIN released r ON r.hostname = d.hostname AND r.billing_currency = d.billing_currency
    WHERE d.paid_as = 'on_demand' AND n.gpu_model_canonical IS NOT NULL AND r.hostname IS NULL
    GROUP BY ALL
)
SELECT o.gpu_model, o.billing_currency, o.cost_units, o.billed_gpu_seconds,
       round(o.billed_gpu_seconds)::HUGEINT AS billed_seconds,
       -- every hour of the window's days must have had busy on-demand GPUs of the model
       CASE WHEN count(h.hour_ts) = 24 * (SELECT count(*) FROM sav_days)
            THEN floor(min(coalesce(h.productive_gpu_seconds, 0)) / 3600)::BIGINT ELSE 0 END AS base_gpus,
       (CASE WHEN count(h.hour_ts) = 24 * (SELECT count(*) FROM sav_days)
             THEN floor(min(coalesce(h.productive_gpu_seconds, 0)) / 3600)::BIGINT ELSE 0 END
        * 3600 * 24 * (SELECT count(*) FROM sav_days))::HUGEINT AS base_seconds
FROM od o
LEFT JOIN hours h ON h.gpu_model = o.gpu_model AND h.billing_currency = o.billing_currency
WHERE $commitment_discount > 0 AND o.billed_gpu_seconds > 0
GROUP BY ALL;
