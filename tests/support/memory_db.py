"""The DuckDB the tests hand to the parsers they call directly: a parser runs its SQL on its caller's
connection (pipelines/landing/source.py, `Source.parse`) and never opens one of its own."""

from __future__ import annotations

from functools import cache

import duckdb


@cache
def memory_db() -> duckdb.DuckDBPyConnection:
    """One in-memory DuckDB per test process (each use of it by a parser is on a cursor of its own)."""
    return duckdb.connect()
