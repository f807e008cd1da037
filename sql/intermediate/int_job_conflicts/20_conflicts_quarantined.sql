-- The conflicting jobs' records, as quarantine rows of their landing file (idempotent per day).
DELETE FROM ops.quarantine WHERE day = $day AND origin = 'intermediate/int_job_conflicts';
INSERT INTO ops.quarantine (source, file, row_ref, reason, payload, day, origin)
SELECT CASE WHEN source_file LIKE 'scheduler/kubernetes/%' THEN 'kubernetes' ELSE 'slurm' END,
       source_file, 'line ' || source_row,
       'claims GPUs of ' || hostname || ' already held: ' || gpu_count_text(gpus) || ' GPU(s) at '
           || strftime(start_ts, '%Y-%m-%dT%H:%M:%SZ') || ' while ' || gpu_count_text(held) || ' of its ' || capacity
           || ' are held by job(s) ' || array_to_string(holders, ', ')
           || '; left out of the ledger',
       json_object('job_id', job_id, 'hostname', hostname), $day::DATE, 'intermediate/int_job_conflicts'
FROM intermediate.int_job_conflicts
WHERE day = $day;
