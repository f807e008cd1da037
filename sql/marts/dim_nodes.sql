-- GPU nodes as known on the day: cluster, cloud resource, GPU model and count, pool and its owner,
-- and where the facts came from (inventory, bill tags or telemetry).
SELECT day, hostname, cluster, resource_id, gpu_model, gpu_model_canonical(n.gpu_model) AS gpu_model_canonical,
       gpu_count, pool, pool_team, known_from
FROM intermediate.int_nodes n
WHERE day = $day
