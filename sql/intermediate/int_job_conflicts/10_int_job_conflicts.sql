-- Jobs that claim GPUs a node does not have free: at the job's start, the GPUs it takes on a host plus
-- those held there by kept jobs that started before it and still run exceed the node's GPU count (two
-- schedulers, or a stale export, giving the same GPUs twice; stated GPU fractions adding up to more
-- than the node's GPUs; or an AllocTRES asking more GPUs than the node has). Such a job is left out of
-- the GPU-second ledger (its time stays the kept jobs' or the node's idle) and holds nothing, and its
-- record is quarantined with this reason, so the node's GPU-seconds are never counted twice and the day
-- still reconciles. Which jobs are left out: 07_jobs_left_out.sql.
WITH kept_holders AS (
    SELECT o.* FROM job_overlaps o LEFT JOIN jobs_left_out x ON x.job_uid = o.holder_uid WHERE x.job_uid IS NULL
),
at_start AS (
    SELECT h.job_uid, h.job_id, h.source_file, h.source_row, h.hostname, h.start_ts, h.units, h.capacity,
           coalesce(sum(k.holder_units), 0) AS held_units,
           list(k.holder_id ORDER BY k.holder_start, k.holder_id) FILTER (k.holder_uid IS NOT NULL) AS holders
    FROM job_holds h
    JOIN jobs_left_out x ON x.job_uid = h.job_uid
    LEFT JOIN kept_holders k ON k.job_uid = h.job_uid AND k.hostname = h.hostname
    GROUP BY h.job_uid, h.job_id, h.source_file, h.source_row, h.hostname, h.start_ts, h.units, h.capacity
)
-- GPUs as a decimal: whole numbers for whole GPUs, e.g. 0.429 for a 3g.40gb slice (3/7, to 1e-3)
SELECT $day::DATE AS day, job_uid, job_id, source_file, source_row, hostname, start_ts,
       round(units / share_units_per_gpu(), 3)::DECIMAL(18, 3) AS gpus,
       round(held_units / share_units_per_gpu(), 3)::DECIMAL(18, 3) AS held,
       capacity, holders
FROM at_start
WHERE held_units + units > capacity * share_units_per_gpu()
