"""Each daily table's dependencies are the tables its SQL reads (sqlglot), and reads go one way:
staging ← intermediate ← marts. A file that reads a table no asset writes, or reads up a layer, fails."""

import pytest

from pipelines.definitions import defs
from pipelines.lib.warehouse.sql_lineage import tables_in, tables_read
from pipelines.lib.warehouse import table_sql

LAYER = {"staging": 0, "intermediate": 1, "marts": 2}


def _graph():
    return defs().resolve_asset_graph()


def _sql_assets():
    graph = _graph()
    return {k.to_user_string(): graph.get(k) for k in graph.get_all_asset_keys()
            if k.path[0] in ("intermediate", "marts")}


@pytest.mark.parametrize("table", sorted(_sql_assets()))
def test_every_table_read_is_an_upstream_asset_of_a_lower_or_equal_layer(table):
    graph = _graph()
    assets = {k.to_user_string() for k in graph.get_all_asset_keys()}
    node = _sql_assets()[table]
    read = tables_read(table)
    assert read, f"{table} reads no table"
    assert read <= assets, f"{table} reads {sorted(read - assets)}, which no asset writes"
    assert {p.to_user_string() for p in node.parent_keys} == set(read)
    layer = LAYER[table.split("/")[0]]
    assert all(LAYER[r.split("/")[0]] <= layer for r in read), f"{table} reads up a layer: {sorted(read)}"


def test_lineage_sees_reads_in_ctes_subqueries_and_steps():
    text = """CREATE OR REPLACE TEMP TABLE t AS SELECT * FROM intermediate.int_nodes;
              WITH x AS (SELECT * FROM staging.stg_runs__events) SELECT * FROM x
              JOIN (SELECT * FROM marts.fct_cost_daily) USING (day) WHERE day IN (SELECT day FROM intermediate.ref_gpu_tdp)
              AND category IN (SELECT name FROM marts.dim_ledger_categories)"""
    # the reference tables are loaded before any asset runs: no asset depends on them
    assert tables_in(text) == {"intermediate/int_nodes", "staging/stg_runs__events", "marts/fct_cost_daily"}


def test_a_multi_step_table_runs_its_steps_around_its_query():
    steps = table_sql("intermediate/int_cost_allocations")
    assert steps.query == "intermediate/int_cost_allocations/60_int_cost_allocations"
    assert [s.rsplit("/", 1)[-1] for s in steps.prepare] == [
        "05_cost_lines", "10_node_hour_weights", "20_node_pieces", "30_direct_pieces", "40_shared_pieces",
        "50_tax_and_credit_pieces"]
    assert table_sql("intermediate/int_nodes").finish == ("intermediate/int_nodes/20_unknown_gpu_models",)
    assert table_sql("marts/fct_cost_daily").files == ("marts/fct_cost_daily",)
