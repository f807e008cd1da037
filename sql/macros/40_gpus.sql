-- The catalog's canonical GPU model for a device name (GB200 before B200, H100 NVL/PCIe before H100).
CREATE OR REPLACE MACRO gpu_model_canonical(name) AS (
    SELECT arg_min(gpu_model, ord) FROM intermediate.ref_gpu_model_patterns
    WHERE regexp_matches(upper(name), pattern)
);
-- A physical GPU is this many share units (models/mig_profiles.py, SHARE_UNITS_PER_GPU): a MIG slice or a
-- stated fraction of a GPU is a whole number of them, so a shared GPU's slices add up to it exactly.
CREATE OR REPLACE MACRO share_units_per_gpu() AS 7000;
-- The GPU slices (share units) a job holds on the k-th (1-based) of its n hosts: all of them on one host;
-- an equal part of them, in order, on each host of a multi-node job (AllocTRES counts a job's GRES whole).
CREATE OR REPLACE MACRO slices_on_host(slices, n, k) AS
    CASE WHEN coalesce(n, 1) <= 1 THEN coalesce(slices, []::INTEGER[])
         ELSE list_slice(coalesce(slices, []::INTEGER[]), (k - 1) * (len(slices) // n) + 1, k * (len(slices) // n)) END;
-- A count of GPUs that may hold slices, as text without trailing zeros: 8.000 → '8', 0.500 → '0.5'.
CREATE OR REPLACE MACRO gpu_count_text(x) AS rtrim(rtrim(x::VARCHAR, '0'), '.');
-- GPU-seconds of an exact count of share-unit milliseconds, as a DOUBLE rounded to 1/65536 s (~15 µs):
-- 3/7 of a second has no exact binary value, and sums of such multiples of 2^-16 (below 2^36 s) are
-- exact, so every table adds GPU-seconds up to the same total in any order, run after run.
CREATE OR REPLACE MACRO share_ms_seconds(ms) AS
    round(ms::DOUBLE * 65536 / (1000 * share_units_per_gpu())) / 65536;
