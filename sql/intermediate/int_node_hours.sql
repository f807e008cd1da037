-- Each billed hour of each GPU node on $day: the node's instance lines (matched by ResourceId, else by
-- the node tag) and its billed GPU capacity. Several lines may price the same hour (committed and
-- on-demand parts, or parts in two currencies): capacity counts the hour once. The money stays on the
-- lines (int_bill_line_hours), so two currencies are never added here.
WITH node_of_resource AS (
    -- a line belongs to one node, even when two node records claim its resource id
    SELECT resource_id, min(hostname) AS hostname FROM intermediate.int_nodes
    WHERE day = $day AND resource_id IS NOT NULL GROUP BY resource_id
),
node_lines AS (
    SELECT coalesce(by_id.hostname, by_tag.hostname) AS hostname, l.*
    FROM intermediate.int_bill_line_hours l
    LEFT JOIN node_of_resource by_id ON by_id.resource_id = l.resource_id
    LEFT JOIN intermediate.int_nodes by_tag ON by_tag.day = $day AND by_tag.hostname = tag_value(l.tags, $node_keys)
    WHERE l.day = $day AND NOT l.quarantined
      AND l.charge_category IN ('Usage', 'Adjustment')
      AND coalesce(l.commitment_discount_status, '') <> 'Unused'
      AND coalesce(by_id.hostname, by_tag.hostname) IS NOT NULL
)
SELECT $day::DATE AS day, l.hostname, l.hour_ts,
       n.cluster, n.gpu_model, coalesce(n.gpu_count, 0) AS gpu_count, n.pool, n.pool_team,
       max(l.covered_seconds) AS billed_seconds,
       list(l.line_key ORDER BY l.line_key) AS line_keys,
       list(DISTINCT l.billing_currency ORDER BY l.billing_currency) AS currencies
FROM node_lines l
JOIN intermediate.int_nodes n ON n.day = $day AND n.hostname = l.hostname
GROUP BY ALL
