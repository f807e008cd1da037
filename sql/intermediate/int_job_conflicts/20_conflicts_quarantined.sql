-- The conflicting jobs' records, as quarantine rows of their landing file (idempotent per day). A job
-- asking more GPUs of a host than it has is told so; one crowded out names the jobs holding the GPUs.
-- The reason is never NULL (the last coalesce names the step, should a value above be missing).
DELETE FROM ops.quarantine WHERE day = $day AND origin = 'intermediate/int_job_conflicts';
INSERT INTO ops.quarantine (source, file, row_ref, reason, payload, day, origin)
SELECT coalesce(f.source, 'scheduler'), c.source_file, 'line ' || source_row,
       coalesce(
           CASE WHEN gpus > capacity
                THEN 'AllocTRES asks for ' || gpu_count_text(gpus) || ' GPU(s) on ' || hostname || ' but node '
                     || hostname || ' has ' || capacity || ' GPUs; left out of the ledger'
                ELSE 'claims GPUs of ' || hostname || ' already held: ' || gpu_count_text(gpus) || ' GPU(s) at '
                     || strftime(start_ts, '%Y-%m-%dT%H:%M:%SZ') || ' while ' || gpu_count_text(held) || ' of its '
                     || capacity || ' are held by job(s) ' || array_to_string(holders, ', ')
                     || '; left out of the ledger' END,
           'claims more GPUs of a node than it has free; left out of the ledger (intermediate/int_job_conflicts)'),
       json_object('job_id', job_id, 'hostname', hostname), $day::DATE, 'intermediate/int_job_conflicts'
FROM intermediate.int_job_conflicts c
-- the source of the record's landing file (a file is under one source's folder)
LEFT JOIN (SELECT file, min(source) AS source FROM ops.landed_files GROUP BY file) f ON f.file = c.source_file
WHERE c.day = $day;
