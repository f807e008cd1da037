"""The Parquet copies Spark reads of the tables DuckDB writes: staging (the parsers' rows), ops (landed
files, quarantine) and the reference catalogs; and, once, a ledger table a DuckDB run made before the
warehouse moved to Spark.

A table's copy is `<root>/<schema>/<table>/`: one folder per day (`day=YYYY-MM-DD/data.parquet`, the
day in the folder name only) where the table has a `day` column that is never NULL, else one
`data.parquet`. A copy is brought up to date by fingerprints (rows, and the sum of the rows' hashes)
kept beside it: per day for a daily table, so only the days whose rows changed are written again — a
re-delivered bill rewrites the days it covers, a new day of telemetry writes that day, a day whose
rows are gone is removed — and for the whole table otherwise. Each file is written under a hidden
name beside its place and renamed in (lib/atomic.py), and the fingerprints are saved last: a copy a crash cut short
differs from its fingerprints and is written again at the next run."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from datetime import date
from pathlib import Path

import duckdb

from pipelines.engines.spark.parquet import quoted
from pipelines.lib.atomic import replace_atomically

FINGERPRINTS = "_fingerprints.json"  # Spark and DuckDB's globs skip names starting with '_'
# 2: HUGEINT columns written as DECIMAL(38, 0). DuckDB writes a HUGEINT to Parquet as a DOUBLE, which
# loses digits and which Spark refuses to read beside its own DECIMAL(38, 0) files of the same table.
FORMAT = 2
WIDE_INTEGERS = ("HUGEINT", "UHUGEINT")


def mirror(con: duckdb.DuckDBPyConnection, root: Path, tables: Iterable[str]) -> dict[str, int]:
    """Brings the copy of each of `tables` ("schema/name", a constant of the caller) up to date with
    the DuckDB warehouse; returns the files written per table (0: it was up to date)."""
    return {table: _mirror_table(con, root, table) for table in tables}


def _mirror_table(con: duckdb.DuckDBPyConnection, root: Path, table: str) -> int:
    qualified = table.replace("/", ".")
    folder = root / table
    columns = [(name, dtype) for name, dtype, *_ in con.execute(f"DESCRIBE {qualified}").fetchall()]
    parts = _fingerprints(con, qualified, by_day="day" in dict(columns))
    daily = bool(parts) and "all" not in parts and None not in parts
    if not daily:  # no rows, or undated ones: one file, its fingerprint the days' added up (no second scan)
        parts = {"all": [str(sum(int(n) for n, _ in parts.values())), str(sum(int(h) for _, h in parts.values()))]}
    wanted = {"columns": columns, "layout": "daily" if daily else "whole", "format": FORMAT, "parts": parts}
    saved = _saved(folder)
    if "layout" in saved and (any(saved.get(key) != wanted[key] for key in ("layout", "format"))
                              or saved.get("columns") != [list(c) for c in columns]):
        shutil.rmtree(folder, ignore_errors=True)
        saved = {"parts": {}}
    elif "layout" not in saved:
        # no copy yet, or one a crash left without fingerprints: every wanted part is written below and
        # its leftover days go; the folder is never removed whole, as a first copy made twice at once
        # (two days of a Spark backfill starting together) had one run delete what the other wrote
        for stale in folder.glob("day=*"):
            if stale.name.removeprefix("day=") not in wanted["parts"]:
                shutil.rmtree(stale, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    written = 0
    for part, fingerprint in wanted["parts"].items():
        if saved["parts"].get(part) != fingerprint:
            _write_part(con, qualified, columns, folder, part if daily else None)
            written += 1
    for part in set(saved["parts"]) - set(wanted["parts"]):  # days whose rows are all gone
        shutil.rmtree(folder / f"day={part}", ignore_errors=True)
    replace_atomically(folder / FINGERPRINTS, lambda tmp: tmp.write_text(json.dumps(wanted, default=str)))
    return written


def _fingerprints(con: duckdb.DuckDBPyConnection, qualified: str, by_day: bool) -> dict[str | None, list[str]]:
    """Rows and the sum of their hashes, per day (a key None for undated rows) or for all ("all"), in one
    scan. A row hash sums to the same value whatever order the rows are in; rows and the sum together
    change with any row added, removed or altered (short of a hash collision)."""
    key = "day::VARCHAR" if by_day else "'all'"
    rows = con.execute(f"SELECT {key} AS part, count(*)::VARCHAR, sum(hash(t))::VARCHAR "
                       f"FROM {qualified} t GROUP BY part").fetchall()
    return {part: [n, h] for part, n, h in rows}


def _write_part(con: duckdb.DuckDBPyConnection, qualified: str, columns: list[tuple[str, str]], folder: Path,
                day: str | None) -> None:
    select = ", ".join(f'"{name}"::DECIMAL(38, 0) AS "{name}"' if dtype in WIDE_INTEGERS else f'"{name}"'
                       for name, dtype in columns if not (day and name == "day"))
    query = f"SELECT {select} FROM {qualified}" + (" WHERE day = $day" if day else "")
    params = {"day": date.fromisoformat(day)} if day else {}
    target = (folder / f"day={day}" if day else folder) / "data.parquet"
    # COPY takes no bound path: the path is ours (root from the config, names constants), quoted
    replace_atomically(target, lambda tmp: con.execute(f"COPY ({query}) TO '{quoted(tmp)}' (FORMAT parquet)", params))
    if day:  # a day Spark wrote before (a warehouse moved back and forth): its files give way to this one
        for other in target.parent.glob("*.parquet"):
            if other != target:
                other.unlink()


def _saved(folder: Path) -> dict:
    try:
        return json.loads((folder / FINGERPRINTS).read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return {"parts": {}}
