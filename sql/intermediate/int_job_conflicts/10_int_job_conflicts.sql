-- Jobs that claim GPUs a node does not have free: at the job's start, the GPUs it takes on a host plus
-- those held there by jobs that started before it and still run exceed the node's GPU count (two
-- schedulers, or a stale export, giving the same GPUs twice; or stated GPU fractions adding up to more
-- than the node's GPUs). Such a job is left out of the GPU-second ledger (its time stays the earlier
-- jobs' or the node's idle) and its record is quarantined with this reason, so the node's GPU-seconds
-- are never counted twice and the day still reconciles. GPUs are counted in share units
-- (share_units_per_gpu() a GPU), so MIG slices and fractions weigh exactly what they hold.
WITH holds AS (
    SELECT j.job_uid, j.job_id, j.source_file, j.source_row, h.hostname, j.start_ts, j.end_eff,
           coalesce(j.gpus // nullif(coalesce(j.node_count, len(j.hosts)), 0), n.gpu_count, 0) * share_units_per_gpu()
             + coalesce(list_sum(slices_on_host(j.gpu_slices, coalesce(j.node_count, len(j.hosts)), h.k)), 0) AS units,
           n.gpu_count AS capacity
    FROM intermediate.int_job_allocations j, unnest(j.hosts) WITH ORDINALITY AS h(hostname, k)
    JOIN intermediate.int_nodes n ON n.day = $day AND n.hostname = h.hostname
    WHERE j.day = $day AND n.gpu_count IS NOT NULL
),
at_start AS (
    SELECT a.job_uid, a.job_id, a.source_file, a.source_row, a.hostname, a.start_ts, a.units, a.capacity,
           coalesce(sum(b.units), 0) AS held_units,
           list(b.job_id ORDER BY b.start_ts, b.job_id) FILTER (b.job_uid IS NOT NULL) AS holders
    FROM holds a
    LEFT JOIN holds b
           ON b.hostname = a.hostname AND b.job_uid <> a.job_uid AND b.end_eff > a.start_ts
          AND (b.start_ts < a.start_ts OR (b.start_ts = a.start_ts AND b.job_uid < a.job_uid))
    GROUP BY ALL
)
-- GPUs as a decimal: whole numbers for whole GPUs, e.g. 0.429 for a 3g.40gb slice (3/7, to 1e-3)
SELECT $day::DATE AS day, job_uid, job_id, source_file, source_row, hostname, start_ts,
       round(units / share_units_per_gpu(), 3)::DECIMAL(18, 3) AS gpus,
       round(held_units / share_units_per_gpu(), 3)::DECIMAL(18, 3) AS held,
       capacity, holders
FROM at_start
WHERE held_units + units > capacity * share_units_per_gpu()
