-- A batch's minutes (dcgm_batch_minutes) into staging: only those with staged rows, of the files that
-- stage here (dcgm_batch_files, which gives `_file`).
INSERT INTO staging.stg_dcgm__gpu_minutes BY NAME
SELECT b.file AS _file, m.* EXCLUDE (f, ok_rows, bad_rows, sentinel_rows)
FROM dcgm_batch_minutes m JOIN dcgm_batch_files b ON b.f = m.f
WHERE m.samples > 0;
