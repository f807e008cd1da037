"""How everything that only reads a warehouse file opens it: read-only, with DuckDB's way out closed.

`gpuledger query` runs SQL typed by finance analysts and by the tools that wrap the command, so a
read-only file is not enough: DuckDB can ATTACH another file read-write, COPY … TO or EXPORT
DATABASE over any file, INSTALL and LOAD extensions, read any file (`read_text`, `read_csv`,
`read_parquet`, `glob`, `FROM 'file.csv'`) and SET its way back out of any restriction. A reader
connection (`open_read_only`) therefore

- opens the file with `read_only=True`: no table of it can change;
- turns `enable_external_access` off: no file or network other than the database itself, so no
  ATTACH, COPY … TO, EXPORT DATABASE, INSTALL, LOAD or file-reading function; the one way through
  is the Parquet folders a Spark-built warehouse's marts are views over, readable and nothing else.
  Those folders come from the config and from where the file is (`allowed_roots`), never from the
  file's own contents: a DuckDB file is data anybody can write, `/` into its ops.parquet_roots too;
- caps DuckDB's memory (`memory_limit`), when the caller gives one: `gpuledger query`'s limit;
- never autoloads or autoinstalls an extension, and refuses community ones;
- sets `lock_configuration`: no SET, RESET or PRAGMA can change a setting (and undo the above).

TEMP tables and macros still work (they live in memory): the FOCUS export builds its rows in them.
Its one file to write is the exception a caller may name (`writable`): DuckDB's `allowed_paths`,
which can only be set before external access is turned off, lets exactly that file through.

`gpuledger query` also checks what it is given before it opens anything (`refusal`): only
statements that read — SELECT in all its forms (WITH, VALUES, FROM-first, TABLE, DESCRIBE, SHOW,
SUMMARIZE, UNPIVOT) and EXPLAIN of one — one statement per call.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

if TYPE_CHECKING:
    from pipelines.lib.config import OrgConfig

READ_ONLY_KINDS = "SELECT (also WITH, VALUES, FROM, TABLE, DESCRIBE, SHOW, SUMMARIZE) and EXPLAIN of one"
_EXPLAIN = re.compile(r"^\s*EXPLAIN\s+(?:ANALY[SZ]E\s+)?(?:\([^)]*\)\s*)?", re.IGNORECASE)
_KEYWORD = re.compile(r"[A-Za-z]+")


def open_read_only(path: str | Path, writable: Path | None = None, *, roots: list[str] | None = None,
                   memory_limit: str | None = None) -> duckdb.DuckDBPyConnection:
    """A read-only, sandboxed connection to the DuckDB file at `path`; `writable` is the one file
    that COPY … TO may write, if any; `roots` the folders it may read Parquet from (default:
    `allowed_roots(path)`); `memory_limit` DuckDB's cap on the memory it uses (default: DuckDB's).

    The restrictions are SET after connecting, not passed as the connection's config: DuckDB shares
    one database instance among a process's connections to a file, and refuses a second connection
    whose config differs from the first's. So a process that already reads the file (a notebook, a
    test) keeps working, and its instance is locked down too."""
    con = duckdb.connect(str(path), read_only=True)
    try:
        locked, external = con.execute(
            "SELECT current_setting('lock_configuration'), current_setting('enable_external_access')").fetchone()
        if locked:  # another sandboxed connection of this process to the file is open: it is this one's
            if external or writable is not None:
                raise RuntimeError(f"{path} is open in this process with a locked configuration that is not "
                                   "the read-only sandbox's")
            return con
        if writable is not None:
            con.execute("SET allowed_paths = $paths", {"paths": [str(Path(writable).resolve())]})
        if dirs := (allowed_roots(Path(path)) if roots is None else roots):  # a Spark run's marts read Parquet there
            con.execute("SET allowed_directories = $dirs", {"dirs": dirs})
        if memory_limit is not None:
            con.execute("SET memory_limit = $limit", {"limit": memory_limit})
        for name, value in _SANDBOX:  # constants below
            con.execute(f"SET {name} = {'true' if value else 'false'}")
    except BaseException:
        con.close()
        raise
    return con


def allowed_roots(opened: Path, cfg: OrgConfig | None = None) -> list[str]:
    """The folders a reader of the file `opened` may read Parquet from: the Spark root of the config
    (`spark.root`, else `<warehouse>.spark/` beside the live warehouse) and the one beside `opened`
    itself (`X.spark/` for `X.duckdb` and for its published `X.published.duckdb`). Each ends in '/'
    so a sibling folder of a longer name is not let through too. `cfg` defaults to $GPULEDGER_CONFIG's.

    Never the roots the file lists (`ops.parquet_roots`, which the Spark engine writes for people to
    read): whoever can hand a reader a file could list `/` there."""
    from pipelines.lib.config import load_config
    from pipelines.lib.warehouse import warehouse_path

    cfg = cfg if cfg is not None else load_config(os.environ.get("GPULEDGER_CONFIG") or None)
    # the Spark engine's own rule (pipelines/engines/spark/daily.py, spark_root), which lib may not import
    live = warehouse_path().resolve()
    configured = Path(cfg.spark.root).resolve() if cfg.spark.root else live.with_name(f"{live.stem}.spark")
    opened = opened.resolve()
    beside = opened.with_name(f"{opened.stem.removesuffix('.published')}.spark")
    return sorted({str(configured).rstrip("/") + "/", f"{beside}/"})


# Settings, in the order they are set: external access off after allowed_paths, the lock last. The
# progress bar is off because DuckDB draws it on stdout, into the CSV a long query prints.
_SANDBOX = (("enable_progress_bar", False), ("autoinstall_known_extensions", False), ("autoload_known_extensions", False),
            ("allow_community_extensions", False), ("enable_external_access", False), ("lock_configuration", True))


def refusal(text: str) -> str | None:
    """Why `gpuledger query` will not run `text`, in one line; None when it only reads.
    Raises duckdb.Error when the text does not parse."""
    statements = duckdb.extract_statements(text)
    for i, statement in enumerate(statements, 1):
        try:
            kind = _kind(statement)
        except ValueError:  # a statement type the Python client has no name for (e.g. UPDATE EXTENSIONS)
            kind = _keyword(statement.query)
        if kind is not None:
            where = f" (statement {i} of {len(statements)})" if len(statements) > 1 else ""
            return f"{kind}{where} is not a statement that only reads; gpuledger query runs {READ_ONLY_KINDS}"
    if len(statements) > 1:
        return f"{len(statements)} statements: gpuledger query runs one at a time"
    if not statements:
        return "no statement given"
    return None


def _kind(statement) -> str | None:
    """None for a statement that only reads; else what it is, e.g. "INSTALL (a LOAD statement)"."""
    if statement.type == duckdb.StatementType.SELECT:
        return None
    if statement.type == duckdb.StatementType.EXPLAIN:
        inner = _EXPLAIN.sub("", statement.query, count=1)
        try:
            explained = duckdb.extract_statements(inner)
        except (duckdb.Error, ValueError):
            explained = []
        if len(explained) == 1 and explained[0].type == duckdb.StatementType.SELECT:
            return None  # EXPLAIN ANALYZE runs what it explains: only ever a SELECT
        return f"EXPLAIN of {_keyword(inner)}"
    keyword = _keyword(statement.query)
    return keyword if keyword == statement.type.name else f"{keyword} (a {statement.type.name} statement)"


def _keyword(text: str) -> str:
    found = _KEYWORD.search(re.sub(r"--[^\n]*|/\*.*?\*/", " ", text, flags=re.DOTALL))
    return found.group(0).upper() if found else "?"
