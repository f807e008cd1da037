-- What each job asks of each of its hosts on $day, in share units (share_units_per_gpu() a GPU, so MIG
-- slices and fractions weigh exactly what they hold), and which earlier jobs still ran there at its start.
CREATE OR REPLACE TEMP TABLE job_holds AS
SELECT j.job_uid, j.job_id, j.source_file, j.source_row, h.hostname, j.start_ts, j.end_eff,
       coalesce(j.gpus // nullif(coalesce(j.node_count, len(j.hosts)), 0), n.gpu_count, 0) * share_units_per_gpu()
         + coalesce(list_sum(slices_on_host(j.gpu_slices, coalesce(j.node_count, len(j.hosts)), h.k)), 0) AS units,
       n.gpu_count AS capacity
FROM intermediate.int_job_allocations j, unnest(j.hosts) WITH ORDINALITY AS h(hostname, k)
JOIN intermediate.int_nodes n ON n.day = $day AND n.hostname = h.hostname
WHERE j.day = $day AND n.gpu_count IS NOT NULL;

-- a job's possible holders on a host: the jobs that started there before it (a tie goes by job_uid) and
-- still ran at its start
CREATE OR REPLACE TEMP TABLE job_overlaps AS
SELECT a.job_uid, a.hostname, b.job_uid AS holder_uid, b.job_id AS holder_id, b.start_ts AS holder_start,
       b.units AS holder_units
FROM job_holds a
JOIN job_holds b
  ON b.hostname = a.hostname AND b.job_uid <> a.job_uid AND b.end_eff > a.start_ts
 AND (b.start_ts < a.start_ts OR (b.start_ts = a.start_ts AND b.job_uid < a.job_uid));
