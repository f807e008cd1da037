"""Which warehouse tables a table's SQL reads, parsed from the SQL itself (sqlglot, DuckDB dialect), so
a daily asset's dependencies are never a hand-written list that can drift from what its SQL does."""

from __future__ import annotations

from functools import cache

import sqlglot
from sqlglot import exp

from pipelines.lib.warehouse.reference import TABLES as REFERENCE_TABLES
from pipelines.lib.warehouse import sql, table_sql

# schemas whose tables are daily assets; `ops` is bookkeeping every layer writes, and the reference
# tables (the GPU catalog, the ledger's categories) are loaded before any asset runs
ASSET_SCHEMAS = ("staging", "intermediate", "marts")


@cache
def tables_read(table: str) -> frozenset[str]:
    """The asset tables ("schema/table") that any SQL file of `table` reads, itself excluded."""
    found: set[str] = set()
    for name in table_sql(table).files:
        found |= tables_in(sql(name))
    return frozenset(found - {table})


@cache
def tables_named(table: str) -> frozenset[str]:
    """Every warehouse table ("schema/table") any SQL file of `table` names, itself excluded: the
    asset tables, and also ops and the reference tables, which are no assets."""
    found: set[str] = set()
    for name in table_sql(table).files:
        found |= tables_in(sql(name), assets_only=False)
    return frozenset(found - {table})


def tables_in(text: str, assets_only: bool = True) -> set[str]:
    found = set()
    for statement in sqlglot.parse(text, read="duckdb"):
        if statement is None:
            continue
        for t in statement.find_all(exp.Table):
            if not t.db:
                continue  # a temp table or a CTE
            if not assets_only or (t.db in ASSET_SCHEMAS and f"{t.db}.{t.name}" not in REFERENCE_TABLES):
                found.add(f"{t.db}/{t.name}")
    return found
