-- Model FLOPs per token (PaLM, Appendix B; docs/ledger.md#efficiency-metrics): 6·N_active + c·L·H·Q·T,
-- c = 12 for the `palm` attention convention, 6 for `causal`. The one formula: the efficiency mart and
-- run plans (sql/marts/dim_run_plans/, `gpuledger plan`) both call it.
CREATE OR REPLACE MACRO flops_per_token(n_active, layers, heads, head_dim, seq_len, attention) AS
    6 * n_active + CASE attention WHEN 'causal' THEN 6 ELSE 12 END * layers::DOUBLE * heads * head_dim * seq_len;
