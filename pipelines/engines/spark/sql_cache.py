"""The Spark SQL of each statement, kept once it is made: transpiling a statement (macros expanded,
sqlglot's DuckDB → Spark translation, the transforms of transpile.py) costs ~0.3 s of Python, and a
day's run on Spark has about a hundred statements, the same every day. Each `gpuledger run` is a new
process, so the text is kept on disk as well as in memory.

A kept text is found by a digest of everything it depends on: the statement's DuckDB text, the macro
files, transpile.py and macros.py themselves and sqlglot's version. A change to any of them finds
nothing kept and transpiles again; nothing is ever stale, only unused. The folder is
$GPULEDGER_CACHE, else $XDG_CACHE_HOME/gpuledger, else ~/.cache/gpuledger; one that cannot be written
is no error, the text is made each time."""

from __future__ import annotations

import hashlib
import os
from functools import cache
from pathlib import Path

import sqlglot
from sqlglot import exp

from pipelines.engines.spark import macros, transpile
from pipelines.lib.atomic import replace_atomically
from pipelines.lib.warehouse import macro_files, sql

CACHE_ENV = "GPULEDGER_CACHE"
_kept: dict[str, str] = {}


def spark_sql(statement: exp.Expression) -> str:
    """`transpile.to_spark(statement)`, from memory, or disk, where it was made before."""
    key = hashlib.sha256(f"{_inputs_digest()}\x00{statement.sql(dialect='duckdb')}".encode()).hexdigest()
    if key in _kept:
        return _kept[key]
    path = _folder() / f"{key}.sql"
    try:
        text = path.read_text()
    except OSError:
        text = transpile.to_spark(statement)
        try:
            replace_atomically(path, lambda tmp: tmp.write_text(text))
        except OSError:
            pass  # a cache it cannot write: made again next time
    _kept[key] = text
    return text


def _folder() -> Path:
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit) / "spark-sql"
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "gpuledger" / "spark-sql"


@cache
def _inputs_digest() -> str:
    parts = [sqlglot.__version__, Path(transpile.__file__).read_text(), Path(macros.__file__).read_text()]
    parts += [sql(name) for name in macro_files()]
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()
