-- Macros every layer uses. Money moves between DECIMAL(38,18) and integer units of 1e-18 so that
-- splits are exact integer arithmetic (largest remainder), never floats.
CREATE OR REPLACE MACRO money_units(x) AS
    trunc(x)::HUGEINT * 1000000000000000000::HUGEINT + ((x - trunc(x)) * 1000000000000000000)::HUGEINT;
CREATE OR REPLACE MACRO units_money(u) AS (u::DECIMAL(38, 0) * 0.000000000000000001);
-- A weight for splitting money by money: an amount in whole micro-units (1e-6), never negative. Coarse on
-- purpose: the split itself stays exact, and weights this size keep the products within HUGEINT.
CREATE OR REPLACE MACRO micro_units(x) AS greatest(0, money_units(x) // 1000000000000);
-- Whether a charge period [ps, pe) touches the UTC day d; a point in time (pe = ps) belongs to its day.
CREATE OR REPLACE MACRO overlaps_day(ps, pe, d) AS
    ps < d::DATE + INTERVAL 1 DAY AND (pe > d::DATE OR (pe <= ps AND ps >= d::DATE));
-- A JSON object as a map of its keys to their values as text. Keys and values are looked up as data,
-- never pasted into a JSON path: a tag key or project name may hold any character (`"`, `*`, `$`…).
-- Not an object (or not JSON): NULL.
CREATE OR REPLACE MACRO json_map(doc) AS TRY_CAST(TRY_CAST(doc AS JSON) AS MAP(VARCHAR, VARCHAR));
CREATE OR REPLACE MACRO first_present(m, keys) AS list_filter(list_transform(keys, lambda k: m[k]), lambda v: v IS NOT NULL)[1];
-- The first of `keys` present in a FOCUS Tags JSON object (tag keys have spellings: project, user:project…).
CREATE OR REPLACE MACRO tag_value(tags, keys) AS first_present(json_map(tags), keys);
-- A value of a config mapping passed as a JSON object parameter (pools → team, account → project…).
CREATE OR REPLACE MACRO config_lookup(mapping, key) AS json_map(mapping)[key];
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
-- Model FLOPs per token (PaLM, Appendix B; docs/ledger.md#efficiency-metrics): 6·N_active + c·L·H·Q·T,
-- c = 12 for the `palm` attention convention, 6 for `causal`. The one formula: the efficiency mart and
-- run plans (sql/marts/dim_run_plans/, `gpuledger plan`) both call it.
CREATE OR REPLACE MACRO flops_per_token(n_active, layers, heads, head_dim, seq_len, attention) AS
    6 * n_active + CASE attention WHEN 'causal' THEN 6 ELSE 12 END * layers::DOUBLE * heads * head_dim * seq_len;

-- An interactive session (a notebook, an editor, a shell) as policies.interactive describes one: its
-- partition, QOS, job name or one of its pod labels (`key=value`) matches that key's patterns. `res` is
-- $session_patterns: those four keys' globs, made one anchored regular expression each by the config.
-- NULLs and empty texts match nothing.
CREATE OR REPLACE MACRO is_interactive_session(partition_, qos_, job_name_, labels_, res) AS (
    coalesce(regexp_matches(nullif(partition_, ''), res[1]), FALSE)
    OR coalesce(regexp_matches(nullif(qos_, ''), res[2]), FALSE)
    OR coalesce(regexp_matches(nullif(job_name_, ''), res[3]), FALSE)
    OR coalesce(len(list_filter(labels_, lambda kv: regexp_matches(kv, res[4]))) > 0, FALSE)
);

-- a count and its noun for people: 1 GPU, 2 GPUs, 1 day, 3 days
CREATE OR REPLACE MACRO plural(n, noun) AS (n::VARCHAR || ' ' || noun || CASE WHEN n = 1 THEN '' ELSE 's' END);

-- a number for people, to `places` decimals, the same text on every engine: rounded as a decimal (half
-- away from zero), never by a printf of a DOUBLE (C and Java round a binary 0.35 differently)
CREATE OR REPLACE MACRO num_text(x, places) AS round(x::DECIMAL(38, 6), places)::VARCHAR;

-- Words for alert messages (sql/alerts/), counts said with plural(): GPUs as people say them, from
-- share units (models/mig_profiles.py) — whole GPUs, sevenths of a MIG GPU ("⅐ of a GPU (MIG 1g.10gb)",
-- "3/7 of a GPU"), other fractions in decimals ("0.25 of a GPU") — and a duration ("45 minutes",
-- "10 h 05 min").
CREATE OR REPLACE MACRO gpu_units_text(units, mig) AS CASE
    WHEN units % 7000 = 0 THEN plural(units // 7000, 'GPU')
    WHEN units % 1000 = 0 AND units < 7000
        THEN CASE WHEN units = 1000 THEN '⅐' ELSE (units // 1000)::VARCHAR || '/7' END || ' of a GPU'
             || coalesce(' (' || mig || ')', '')
    WHEN units < 7000 THEN gpu_count_text(round(units / 7000, 3)::DECIMAL(18, 3)) || ' of a GPU'
    ELSE gpu_count_text(round(units / 7000, 3)::DECIMAL(18, 3)) || ' GPUs' END;
CREATE OR REPLACE MACRO duration_text(seconds) AS CASE
    WHEN seconds < 7200 THEN plural(floor(seconds / 60)::BIGINT, 'minute')
    ELSE printf('%d h %02d min', floor(seconds / 3600)::BIGINT, floor((seconds % 3600) / 60)::BIGINT) END;

-- How many GiB-hours one unit of a bill's PricingUnit holds, where the unit is bytes over time as bills
-- spell it (GB-Months, GB-Mo, GB/Month, 1 GB/Month, GB Hours, gibibyte month, TB-Mo); NULL for any other
-- unit (Requests, GB of transfer, GiB/Second-Months of throughput). A month is the days of `d`'s month.
-- GB counts as a GiB, as AWS's storage bills mean it: of the two readings it gives the lower price per byte.
CREATE OR REPLACE MACRO storage_unit_parts(unit) AS regexp_replace(lower(trim(unit)), '\s+', ' ', 'g');
CREATE OR REPLACE MACRO storage_unit_pattern() AS
    '^(?:([0-9]{1,6}) ?)?(gb|gib|gibibytes?|gigabytes?|tb|tib|tebibytes?|terabytes?) ?[-/ ] ?(mo|mos|mon|mth|mths|months?|days?|hrs?|hours?)$';
CREATE OR REPLACE MACRO storage_unit_gib_hours(unit, d) AS CASE
    WHEN regexp_matches(storage_unit_parts(unit), storage_unit_pattern()) THEN
        coalesce(TRY_CAST(nullif(regexp_extract(storage_unit_parts(unit), storage_unit_pattern(), 1), '') AS BIGINT), 1)
        * CASE WHEN starts_with(regexp_extract(storage_unit_parts(unit), storage_unit_pattern(), 2), 't') THEN 1024 ELSE 1 END
        * CASE left(regexp_extract(storage_unit_parts(unit), storage_unit_pattern(), 3), 1)
               WHEN 'm' THEN 24 * day(last_day(d)) WHEN 'd' THEN 24 ELSE 1 END END;
