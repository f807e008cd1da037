-- Every GPU node known on $day: from inventory/nodes.csv when it lists the node, else from the tags of
-- its bill lines (node, cluster, pool, team, gpu_model, gpu_count), else from its telemetry (GPU model,
-- GPUs seen). A node's pool owner is the inventory's team, else the config's pool → team mapping,
-- else the `team` tag of its bill lines.
WITH inventory AS (
    SELECT hostname, any_value(cluster) AS cluster, any_value(resource_id) AS resource_id,
           any_value(gpu_model) AS gpu_model, any_value(gpu_count) AS gpu_count,
           any_value(pool) AS pool, any_value(team) AS team
    FROM staging.stg_inventory__nodes
    GROUP BY hostname
),
billed AS (
    SELECT tag_value(tags, $node_keys) AS hostname,
           min(resource_id) AS resource_id,
           any_value(tag_value(tags, $cluster_keys)) AS cluster,
           any_value(tag_value(tags, $pool_keys)) AS pool,
           any_value(tag_value(tags, $team_keys)) AS team,
           any_value(tag_value(tags, ['gpu_model'])) AS gpu_model,
           any_value(TRY_CAST(tag_value(tags, ['gpu_count']) AS INTEGER)) AS gpu_count
    FROM intermediate.int_bill_line_hours
    WHERE day = $day AND NOT quarantined AND tag_value(tags, $node_keys) IS NOT NULL
    GROUP BY 1
),
seen AS (
    -- a GPU split into MIG instances may report only its instances' series: they still name their GPU
    SELECT hostname, any_value(model_name) AS gpu_model, count(DISTINCT gpu)::INTEGER AS gpu_count
    FROM staging.stg_dcgm__gpu_minutes
    WHERE day = $day
    GROUP BY hostname
),
hosts AS (
    SELECT hostname FROM inventory UNION SELECT hostname FROM billed UNION SELECT hostname FROM seen
)
SELECT $day::DATE AS day,
       h.hostname,
       coalesce(i.cluster, b.cluster) AS cluster,
       coalesce(i.resource_id, b.resource_id) AS resource_id,
       coalesce(i.gpu_model, b.gpu_model, s.gpu_model) AS gpu_model,
       coalesce(i.gpu_count, b.gpu_count, s.gpu_count) AS gpu_count,
       coalesce(i.pool, b.pool) AS pool,
       coalesce(i.team, config_lookup($pool_teams, coalesce(i.pool, b.pool)), b.team) AS pool_team,
       CASE WHEN i.hostname IS NOT NULL THEN 'inventory' WHEN b.hostname IS NOT NULL THEN 'bill_tags'
            ELSE 'telemetry' END AS known_from
FROM hosts h
LEFT JOIN inventory i USING (hostname)
LEFT JOIN billed b USING (hostname)
LEFT JOIN seen s USING (hostname)
