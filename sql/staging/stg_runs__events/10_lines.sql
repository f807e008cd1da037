-- Trainer event lines (`runs_lines`: _row, _line, and any columns that say whose file; blank lines
-- already gone) read column-wise: each line's fields as text, the way pipelines/ingest/runs.py reads
-- one line in Python (`_text`: strings as they are, true/false, integers' digits, null), or `_python`
-- when the line is one DuckDB's JSON reader might read differently from Python's json, which then
-- reads it alone:
--   longer than $max_bytes, not JSON to DuckDB, not an object;
--   a comma before a closing bracket (DuckDB tolerates it, Python does not);
--   $max_brackets or more opening brackets (Python stops at its nesting limit, DuckDB does not);
--   a key twice in the object or its `model` (Python keeps the last, DuckDB the first);
--   an escaped NUL (\u0000) anywhere;
--   a field that is a number with a fraction or exponent (Python prints it its own way), an array or an
--   object — except model.params, model.active_params, data_seconds and comm_seconds, which are read as
--   numbers whatever their text, unless they are NaN or infinite (Python spells those its own way).
WITH objects AS (
    SELECT *,
           CASE WHEN strlen(_line) <= $max_bytes THEN  -- bytes
               CASE WHEN json_valid(_line) THEN
                   CASE WHEN json_type(_line) = 'OBJECT' THEN _line::JSON END END END AS obj
    FROM runs_lines
), fields AS (
    SELECT *,
           json_extract(obj, ['$.run_id', '$.event', '$.ts', '$.job_id', '$.step', '$.tokens', '$.project', '$.dtype',
                              '$.model.layers', '$.model.heads', '$.model.head_dim', '$.model.seq_len',
                              '$.model.params', '$.model.active_params', '$.data_seconds', '$.comm_seconds',
                              '$.path']) AS v
    FROM objects
)
SELECT * EXCLUDE (obj, v),
       obj IS NULL
       OR regexp_matches(_line, ',[ \t\n\r]*[\]}]')
       OR length(_line) - length(replace(replace(_line, '[', ''), '{', '')) >= $max_brackets
       OR contains(_line, '\u0000')
       OR len(json_keys(obj)) <> len(list_distinct(json_keys(obj)))
       OR coalesce(len(json_keys(obj, '$.model')) <> len(list_distinct(json_keys(obj, '$.model'))), FALSE)
       OR NOT list_bool_and(list_transform(v[1:12] || v[17:17],
              lambda e: coalesce(json_type(e) IN ('NULL', 'VARCHAR', 'BOOLEAN', 'BIGINT', 'UBIGINT'), TRUE)))
       OR NOT list_bool_and(list_transform(v[13:16],
              lambda e: coalesce(json_type(e) IN ('NULL', 'VARCHAR', 'BOOLEAN', 'BIGINT', 'UBIGINT')
                                 OR (json_type(e) = 'DOUBLE' AND coalesce(isfinite(TRY_CAST(json_extract_string(e, '$') AS DOUBLE)), FALSE)), TRUE)))
       AS _python,
       json_extract_string(v[1], '$')  AS "raw.run_id",
       json_extract_string(v[2], '$')  AS "raw.event",
       json_extract_string(v[3], '$')  AS "raw.ts",
       json_extract_string(v[4], '$')  AS "raw.job_id",
       json_extract_string(v[5], '$')  AS "raw.step",
       json_extract_string(v[6], '$')  AS "raw.tokens",
       json_extract_string(v[7], '$')  AS "raw.project",
       json_extract_string(v[8], '$')  AS "raw.dtype",
       json_extract_string(v[13], '$') AS "raw.model_params",
       json_extract_string(v[14], '$') AS "raw.model_active_params",
       json_extract_string(v[9], '$')  AS "raw.model_layers",
       json_extract_string(v[10], '$') AS "raw.model_heads",
       json_extract_string(v[11], '$') AS "raw.model_head_dim",
       json_extract_string(v[12], '$') AS "raw.model_seq_len",
       json_extract_string(v[15], '$') AS "raw.data_seconds",
       json_extract_string(v[16], '$') AS "raw.comm_seconds",
       json_extract_string(v[17], '$') AS "raw.path"
FROM fields
