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
-- Model FLOPs per token (PaLM, Appendix B; docs/ledger.md#efficiency-metrics): 6·N_active + c·L·H·Q·T,
-- c = 12 for the `palm` attention convention, 6 for `causal`. The one formula: the efficiency mart and
-- run plans (sql/marts/dim_run_plans/, `gpuledger plan`) both call it.
CREATE OR REPLACE MACRO flops_per_token(n_active, layers, heads, head_dim, seq_len, attention) AS
    6 * n_active + CASE attention WHEN 'causal' THEN 6 ELSE 12 END * layers::DOUBLE * heads * head_dim * seq_len;
