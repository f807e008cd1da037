-- Which config cost entry costs each node of $day (docs/ledger.md#fleets-without-a-bill): the rate cards,
-- contracts and owned hardware of `costs:` (bound as one JSON array, $cost_entries) that apply on the day
-- and whose matchers (hostname, cluster, pool, gpu_model: every one given must match) fit the node. Where
-- several fit, the most specific wins (hostname 8, pool 4, cluster 2, gpu_model 1, summed), then
-- contract, rate card, owned, then the order in the file. The nodes are those int_nodes knows on the day
-- (inventory, bill tags, telemetry), so a rented or owned node costs its hours whether or not jobs ran.
CREATE OR REPLACE TEMP TABLE cost_entries AS
SELECT e.*,
       to_json([e.kind, e.idx::VARCHAR])::VARCHAR AS entry_key,
       CASE WHEN e.hostname IS NOT NULL THEN 8 ELSE 0 END + CASE WHEN e.pool IS NOT NULL THEN 4 ELSE 0 END
           + CASE WHEN e.cluster IS NOT NULL THEN 2 ELSE 0 END + CASE WHEN e.gpu_model IS NOT NULL THEN 1 ELSE 0 END
           AS specificity,
       CASE e.kind WHEN 'contract' THEN 0 WHEN 'rate_card' THEN 1 ELSE 2 END AS kind_rank,
       gpu_model_canonical(e.gpu_model) AS canonical_gpu_model
FROM (SELECT unnest(from_json($cost_entries, '[{"kind": "VARCHAR", "idx": "INTEGER", "hostname": "VARCHAR",
        "cluster": "VARCHAR", "pool": "VARCHAR", "gpu_model": "VARCHAR", "currency": "VARCHAR",
        "valid_from": "DATE", "valid_to": "DATE", "includes_power": "BOOLEAN",
        "price_per_gpu_hour": "VARCHAR", "amount_per_month": "VARCHAR", "purchase_price": "VARCHAR",
        "purchase_date": "DATE", "depreciation_months": "INTEGER", "residual": "VARCHAR",
        "facility_per_node_month": "VARCHAR"}]'), recursive := true)) e
WHERE CASE WHEN e.kind = 'owned' THEN e.purchase_date <= $day::DATE
           ELSE coalesce(e.valid_from <= $day::DATE, TRUE) AND coalesce($day::DATE <= e.valid_to, TRUE) END;

CREATE OR REPLACE TEMP TABLE node_costing AS
SELECT n.hostname, n.cluster AS node_cluster, n.pool AS node_pool, n.gpu_model AS node_gpu_model,
       -- the entry's matchers left out: the node's hostname is the one that counts from here on (and
       -- two columns of one name are an error on Spark)
       coalesce(n.gpu_count, 0) AS gpu_count, e.* EXCLUDE (hostname, cluster, pool, gpu_model, canonical_gpu_model),
       -- energy is a cost of its own only where power is paid apart
       e.kind = 'owned' OR NOT coalesce(e.includes_power, TRUE) AS prices_energy
-- canonical models named in projections, not in the join condition: Spark joins on no subquery
FROM (SELECT n.*, gpu_model_canonical(n.gpu_model) AS canonical_gpu_model
      FROM intermediate.int_nodes n WHERE n.day = $day) n
-- Matchers fail closed: a matcher the entry gives fits only a node whose value is known and equal (a
-- node of unknown pool never fits a pool's rate card). A node known from telemetry alone — no inventory
-- row, no bill line, so perhaps a stray line or another spelling of a billed node's name — is costed
-- only by an entry naming its hostname; otherwise int_nodes reports it in ops.quarantine, unpriced.
JOIN cost_entries e
  ON (e.hostname IS NULL OR coalesce(e.hostname = n.hostname, FALSE))
 AND (e.cluster IS NULL OR coalesce(e.cluster = n.cluster, FALSE))
 AND (e.pool IS NULL OR coalesce(e.pool = n.pool, FALSE))
 AND (e.gpu_model IS NULL OR coalesce(lower(e.gpu_model) = lower(n.gpu_model), FALSE)
      OR coalesce(e.canonical_gpu_model = n.canonical_gpu_model, FALSE))
 AND (n.known_from <> 'telemetry' OR e.hostname IS NOT NULL)
WHERE n.day = $day
QUALIFY row_number() OVER (PARTITION BY n.hostname ORDER BY e.specificity DESC, e.kind_rank, e.idx) = 1;

-- the node-hours a bill line covers: the bill wins, they take no config cost line
CREATE OR REPLACE TEMP TABLE bill_covered_node_hours AS
SELECT DISTINCT hostname, hour_ts FROM intermediate.int_node_hours WHERE day = $day;
