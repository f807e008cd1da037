"""Which source costs which node, for `gpuledger inspect` (docs/ledger.md#cost-sources): a node with a
bill line (its ResourceId, or its node tag, on a current bill file) is costed by the bill; else by the
config entry the ledger would pick (the same SQL step, sql/intermediate/int_config_cost_lines/
10_costed_nodes.sql, run on an in-memory warehouse over the inventory's nodes); else by nothing.
Validity dates are judged on `as_of`: the last day the landing covers."""

from __future__ import annotations

from datetime import date

import polars as pl

from pipelines.lib.config import OrgConfig
from pipelines.lib.warehouse import bootstrap, run_sql

KIND_NAMES = {"rate_card": "rate_cards", "contract": "contracts", "owned": "owned"}
NODE_COLUMNS = {"hostname": pl.String, "cluster": pl.String, "resource_id": pl.String, "gpu_model": pl.String,
                "gpu_count": pl.Int64, "pool": pl.String}


def node_costing(cfg: OrgConfig, nodes: pl.DataFrame, bill_keys: pl.DataFrame, as_of: date) -> dict:
    """`nodes`: the inventory's (hostname, cluster, resource_id, gpu_model, gpu_count, pool); `bill_keys`:
    distinct (resource_id, tags) of the current bill lines. Returns {as_of, nodes: [...], by_pool: {...}}."""
    import duckdb

    con = duckdb.connect()
    try:
        bootstrap(con)
        nodes = nodes.select([pl.col(c).cast(t) if c in nodes.columns else pl.lit(None, t).alias(c)
                              for c, t in NODE_COLUMNS.items()]).unique("hostname", keep="first")
        bill_keys = bill_keys.select([pl.col(c).cast(pl.String) if c in bill_keys.columns
                                      else pl.lit(None, pl.String).alias(c) for c in ("resource_id", "tags")])
        con.register("nodes_in", nodes)
        con.register("bill_keys_in", bill_keys)
        # every node here is the inventory's, so it is priced as the ledger prices an inventory node
        con.execute("CREATE OR REPLACE TABLE intermediate.int_nodes AS "
                    "SELECT $d::DATE AS day, *, 'inventory' AS known_from FROM nodes_in",
                    {"d": as_of})
        con.execute("CREATE OR REPLACE TABLE intermediate.int_node_hours AS "
                    "SELECT NULL::DATE AS day, NULL::VARCHAR AS hostname, NULL::TIMESTAMP AS hour_ts WHERE FALSE")
        params = {"day": as_of, **cfg.sql_params()}
        run_sql(con, "intermediate/int_config_cost_lines/10_costed_nodes", params)
        rows = con.execute(
            """SELECT n.hostname, n.cluster, n.pool,
                      CASE WHEN b.hostname IS NOT NULL THEN 'bill' ELSE coalesce(c.kind, 'none') END AS source,
                      CASE WHEN b.hostname IS NULL THEN c.kind END AS kind, c.idx
               FROM intermediate.int_nodes n
               LEFT JOIN node_costing c USING (hostname)
               LEFT JOIN (SELECT DISTINCT n2.hostname FROM intermediate.int_nodes n2 JOIN bill_keys_in k
                          ON k.resource_id = n2.resource_id OR tag_value(k.tags, $node_keys) = n2.hostname) b
                      USING (hostname)
               ORDER BY n.pool NULLS LAST, n.hostname""",
            {"node_keys": params["node_keys"]}).fetchall()
    finally:
        con.close()
    listed = [{"hostname": h, "cluster": cl, "pool": p, "source": s,
               **({"entry": f"costs.{KIND_NAMES[k]}[{i}]"} if k else {})} for h, cl, p, s, k, i in rows]
    by_pool: dict[str, dict[str, int]] = {}
    for node in listed:
        counts = by_pool.setdefault(node["pool"] or "(no pool)", {})
        counts[node["source"]] = counts.get(node["source"], 0) + 1
    return {"as_of": as_of.isoformat(), "nodes": listed, "by_pool": by_pool}
