"""Landing files in, staging rows out: discover each source's files, read each file once, and replace
everything a re-delivered file contributed when its content changes.

A file is identified by its path relative to the landing root and fingerprinted by size and SHA-256.
Each changed file is written in one transaction (its staging rows, its quarantine rows, its
ops.landed_files entry), so a crash leaves either the old file's rows or the new ones, never a mix.
Bill sources are deliveries: which of their files count is the delivery rule's to say
(pipelines/ingest/deliveries.py, applied by pipelines/ingest/bill_deliveries.py).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from pathlib import Path

import duckdb
import polars as pl

from models.contract import Contract
from pipelines.ingest.common import Parsed, refuses_file
from pipelines.ingest.deliveries import days_from_name
from pipelines.lib.config import OrgConfig
from pipelines.lib.warehouse import run_sql, sql, transaction

HIVE_DAY = re.compile(r"(?:^|/)day=(\d{4}-\d{2}-\d{2})(?:/|$)")
# Set (to 1) by `gpuledger run --accept-removed-sources`: a source whose every file is gone may drop its rows.
ACCEPT_REMOVED_ENV = "GPULEDGER_ACCEPT_REMOVED_SOURCES"


class LandingUnusable(RuntimeError):
    """The landing zone cannot be read as it stands, and reading it would remove rows: nothing is done."""


def check_landing_root(root: Path) -> Path:
    """The landing zone a reader is about to compare with the warehouse. A root that is missing or
    holds no file is a wrong path (an unset GPULEDGER_LANDING, an unmounted share), never "every file
    deleted": reading it would take every landed file's rows out."""
    if not root.is_dir():
        raise LandingUnusable(f"the landing zone {root} does not exist: set GPULEDGER_LANDING (or --landing) to "
                              f"the folder the exporters write to; nothing was read or removed")
    if not _holds_a_file(root):
        raise LandingUnusable(f"the landing zone {root} holds no file: set GPULEDGER_LANDING (or --landing) to "
                              f"the folder the exporters write to; nothing was read or removed")
    return root


def _holds_a_file(folder: Path) -> bool:
    for entry in os.scandir(folder):
        if entry.is_file() or (entry.is_dir() and _holds_a_file(Path(entry.path))):
            return True
    return False


def check_not_vanished(root: Path, source: "Source", landed: Iterable[str]) -> None:
    """Refuses to take out a source's rows when every file it was read from is gone and none is there
    in their place: that is a moved or unmounted folder far more often than a deliberate removal, which
    has to be said (`gpuledger run --accept-removed-sources`). Files gone one by one, or renamed, are
    removals as usual."""
    landed = sorted(landed)
    if not landed or os.environ.get(ACCEPT_REMOVED_ENV) == "1":
        return
    if any((root / rel).exists() for rel in landed) or discover(root, source):   # renamed, or some remain
        return
    raise LandingUnusable(
        f"every file of source {source.name} the warehouse took in ({len(landed)}, e.g. {landed[0]}) is gone "
        f"from the landing zone {root}; their rows are kept. If the landing zone is right and they were "
        f"removed on purpose, run again with `gpuledger run --accept-removed-sources` "
        f"({ACCEPT_REMOVED_ENV}=1)")


@dataclass(frozen=True)
class Source:
    """One landing format: where its files are, how to parse one, and where its rows go."""

    name: str                      # as in ops.quarantine.source and `inspect --json`
    table: str                     # e.g. "staging/stg_focus__bill_lines": sql/<table>.sql and .day.sql
    patterns: tuple[str, ...]      # globs under the landing root
    parse: Callable[[Path, str, OrgConfig], Parsed]
    contract: Contract             # what the staging table's rows must satisfy
    span: tuple[pl.Expr, pl.Expr]  # first and last instant a parsed row covers (for the manifest)
    rollup: str | None = None      # SQL script rolling parsed rows (as `dcgm_samples`) up into staging
    delivered: bool = False        # files are deliveries that supersede each other (bills)
    # `parse` a chunk of the file at a time, for a summary (inspect) rather than staging: the rows
    # decide what is staged or quarantined and what it costs; columns that only describe may be null
    summary_chunks: Callable[[Path, str, OrgConfig], Iterable[Parsed]] | None = None
    # stages many changed files in one set-based pass: (con, changed [(path, rel, size, sha)], files
    # already landed, cfg, report) -> the changed files it leaves to `parse`, file by file
    batch: Callable[..., list[tuple[Path, str, int, str]]] | None = None

    @property
    def qualified_table(self) -> str:
        return self.table.replace("/", ".")

    @property
    def folder(self) -> str:
        """The folder under the landing root that holds all of the source's files, e.g. `bills/focus`."""
        prefixes = {literal_folder(p) for p in self.patterns}
        assert len(prefixes) == 1, f"{self.name}: patterns under one folder"
        return prefixes.pop()


def literal_folder(pattern: str) -> str:
    """The folders of a glob before its first wildcard: `scheduler/slurm/*/**/*.psv` -> `scheduler/slurm`,
    `inventory/nodes.csv` -> `inventory`."""
    parts = pattern.split("/")
    literal = []
    for part in parts[:-1]:
        if any(ch in part for ch in "*?["):
            break
        literal.append(part)
    return "/".join(literal)


@dataclass
class SyncReport:
    files_read: list[str] = field(default_factory=list)
    files_unchanged: int = 0
    rows_staged: int = 0
    rows_quarantined: int = 0
    rows_dropped: dict[str, int] = field(default_factory=dict)
    files_removed: list[str] = field(default_factory=list)      # gone from landing: their rows went with them
    files_by_status: dict[str, int] = field(default_factory=dict)  # bills: current, superseded, duplicate, unreadable
    set_aside: list[dict] = field(default_factory=list)         # bills: every file not current, with why
    missing_from_manifests: dict[str, list[str]] = field(default_factory=dict)  # newest manifest -> keys not landed


def discover(root: Path, source: Source, day: date | None = None) -> list[tuple[Path, str]]:
    """(absolute path, path relative to root) of the source's files, sorted. Files under a hive
    `day=YYYY-MM-DD` folder hold that day only, so a daily run reads just its own day's folder and
    its neighbours' (activity that crosses midnight is judged whole, whatever order days run in)."""
    found: dict[str, Path] = {}
    for pattern in source.patterns:
        for path in root.glob(pattern):
            if path.is_file():
                rel = path.relative_to(root).as_posix()
                hive = HIVE_DAY.search(rel)
                if day is not None and hive and abs((date.fromisoformat(hive.group(1)) - day).days) > 1:
                    continue
                found[rel] = path
    return [(found[rel], rel) for rel in sorted(found)]


def fingerprint(path: Path) -> tuple[int, str]:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return path.stat().st_size, digest.hexdigest()


def sync(
    con: duckdb.DuckDBPyConnection, root: Path, source: Source, cfg: OrgConfig, day: date | None = None
) -> SyncReport:
    """Reads every new or changed file of `source` into staging, each in its own transaction;
    unchanged files are skipped. For bills, the delivery rule decides which files are staged, over all
    of the source's files whatever `day` is. A missing or empty root, or a source whose every file is
    gone, is refused before anything is removed (LandingUnusable)."""
    check_landing_root(root)
    check_not_vanished(root, source, (f for (f,) in con.execute(
        "SELECT file FROM ops.landed_files WHERE source = $source", {"source": source.name}).fetchall()))
    if source.delivered:
        from pipelines.ingest.bill_deliveries import sync_bills  # it builds on this module

        return sync_bills(con, root, source, cfg)
    report = SyncReport()
    known = {
        file: (size, sha)
        for file, size, sha in con.execute(
            "SELECT file, size_bytes, sha256 FROM ops.landed_files WHERE source = $source", {"source": source.name}
        ).fetchall()
    }
    changed = []
    for path, rel in discover(root, source, day):
        size, sha = fingerprint(path)
        if known.get(rel) == (size, sha):
            report.files_unchanged += 1
        else:
            changed.append((path, rel, size, sha))
    # a file taken in before and gone from the landing zone now takes its rows out (a day's run only
    # looks at its neighbours' `day=` folders: a file outside them is not gone, just not looked at)
    for rel in sorted(known):
        if not (root / rel).exists():
            with transaction(con):
                _delete_file(con, source, rel)
                con.execute("DELETE FROM ops.landed_files WHERE source = $source AND file = $file",
                            {"source": source.name, "file": rel})
            report.files_removed.append(rel)
    if source.batch is not None:
        changed = source.batch(con, changed, set(known), cfg, report)

    # Parsing the next file (polars) overlaps writing this one (DuckDB): both release the GIL.
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = [pool.submit(source.parse, path, rel, cfg) for path, rel, *_ in changed[:1]]
        for i, (path, rel, size, sha) in enumerate(changed):
            if i + 1 < len(changed):
                nxt = changed[i + 1]
                pending.append(pool.submit(source.parse, nxt[0], nxt[1], cfg))
            parsed = pending[i].result()
            pending[i] = None  # let the parsed frame go once written
            _write_file(con, source, rel, size, sha, parsed, report)
    return report


# sources whose records decide where money goes (a refused file of theirs leaves its days incomplete)
SCHEDULER_SOURCES = ("slurm", "kubernetes")


def _delete_file(con: duckdb.DuckDBPyConnection, source: Source, rel: str) -> None:
    """Takes out every staging and quarantine row a landing file gave (its table is a constant)."""
    con.execute(f"DELETE FROM {source.qualified_table} WHERE _file = $file", {"file": rel})
    con.execute("DELETE FROM ops.quarantine WHERE source = $source AND file = $file AND origin = 'landing'",
                {"source": source.name, "file": rel})


def _write_file(
    con: duckdb.DuckDBPyConnection, source: Source, rel: str, size: int, sha: str, parsed: Parsed,
    report: SyncReport,
) -> None:
    first, last = file_span(parsed.rows, source)
    status, status_reason = "current", None
    if source.name in SCHEDULER_SOURCES and refuses_file(parsed):
        # A refused scheduler export hides jobs that move money between teams and idle: the days its
        # name covers (every day, when it names none) are not complete (finance.reconciliation_daily
        # reads `unreadable` files), and its quarantine row carries the first of them.
        status, status_reason = "unreadable", parsed.rejects["reason"][0]
        first, last = days_from_name(rel) or (None, None)
        parsed.rejects = parsed.rejects.with_columns(pl.coalesce(pl.col("day"), pl.lit(first)).alias("day"))
    with transaction(con):
        _delete_file(con, source, rel)
        insert_rows(con, source, parsed.rows, rel)
        if parsed.rejects.height:
            con.register("incoming_rejects", parsed.rejects)
            con.execute("INSERT INTO ops.quarantine BY NAME SELECT * FROM incoming_rejects")
            con.unregister("incoming_rejects")
        con.execute(
            """INSERT OR REPLACE INTO ops.landed_files (source, file, size_bytes, sha256, rows_staged,
                   rows_quarantined, first_day, last_day, loaded_at, status, status_reason)
               VALUES ($source, $file, $size, $sha, $staged, $quarantined, $first, $last, $loaded_at,
                       $status, $status_reason)""",
            {
                "source": source.name, "file": rel, "size": size, "sha": sha, "staged": parsed.rows.height,
                "quarantined": parsed.rejects.height, "first": first, "last": last,
                "status": status, "status_reason": status_reason,
                "loaded_at": datetime.now(timezone.utc).replace(tzinfo=None),
            },
        )
    report.files_read.append(rel)
    report.rows_staged += parsed.rows.height
    report.rows_quarantined += parsed.rejects.height
    for reason, n in parsed.dropped.items():
        report.rows_dropped[reason] = report.rows_dropped.get(reason, 0) + n


def insert_rows(con: duckdb.DuckDBPyConnection, source: Source, rows: pl.DataFrame, rel: str) -> None:
    """Table names come from the Source constants, never from input; values are bound."""
    if rows.height == 0:
        return
    view = "dcgm_samples" if source.rollup else "incoming_rows"
    con.register(view, rows)
    try:
        if source.rollup:
            run_sql(con, source.rollup, {"file": rel})  # inserts the file's rolled-up rows
        else:
            con.execute(f"INSERT INTO {source.qualified_table} BY NAME SELECT * FROM incoming_rows")
    finally:
        con.unregister(view)


def file_span(rows: pl.DataFrame, source: Source) -> tuple[date | None, date | None]:
    if rows.height == 0:
        return None, None
    first, last = rows.select(source.span[0].min().alias("first"), source.span[1].max().alias("last")).row(0)
    return (first.date() if first else None, last.date() if last else None)
