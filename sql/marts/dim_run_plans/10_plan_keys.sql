-- The plans to estimate (docs/plans.md): one per run_id — when two plan files name the same run, the
-- one landed last — with the GPU model as the catalog knows it. `gpuledger plan FILE` runs this and the
-- next two steps on its one plan, in memory, against the published warehouse's marts.
CREATE OR REPLACE TEMP TABLE plan_keys AS
SELECT p.* EXCLUDE (_file, _row), p._file AS file, gpu_model_canonical(p.gpu_model) AS gpu_model_canonical
FROM staging.stg_plans__run_plans p
LEFT JOIN ops.landed_files f ON f.file = p._file
      AND f.source IN (SELECT source FROM ops.landing_sources WHERE staging_table = 'staging.stg_plans__run_plans')
QUALIFY row_number() OVER (PARTITION BY p.run_id ORDER BY f.loaded_at DESC NULLS LAST, p._file DESC) = 1;
