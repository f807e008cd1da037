"""What a landing source is, and how its files are found: the declaration every per-source fact lives
on (pipelines/ingest/sources.py declares gpuledger's), discovery under the landing root, fingerprints,
and the guards that refuse a landing zone which cannot be what the exporters wrote.

A file is identified by its path relative to the landing root and fingerprinted by size and SHA-256.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import duckdb
import polars as pl

from models.contract import Contract
from pipelines.landing.parsed import Parsed
from pipelines.lib.config import OrgConfig

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
class Summary:
    """What `gpuledger inspect` says of a source's staged rows: `facts`, the columns its totals need
    (kept from every file, `distinct` rows only when files repeat rows); `totals`, those facts totalled
    (the keys of `inspect --json`); `says`, the totals as a line of text."""

    facts: tuple[str, ...]
    totals: Callable[[pl.DataFrame], dict]
    says: Callable[[dict], str]
    distinct: bool = False


@dataclass(frozen=True)
class Source:
    """One landing format: where its files are, how to parse one, where its rows go, and what it is to
    the ledger. Everything gpuledger knows of a source is said here, once."""

    name: str                      # as in ops.quarantine.source and `inspect --json`
    # e.g. "staging/stg_focus__bill_lines": the table of a contract of models/staging.TABLES, which makes
    # its DDL; the day's rows are the query of its SQL (warehouse.table_sql: sql/<table>.sql, or the
    # step of sql/<table>/ named for it)
    table: str
    patterns: tuple[str, ...]      # globs under the landing root
    # (con, path, rel, cfg) -> the file's rows and quarantine. `con` is the caller's DuckDB, which a
    # parser runs any SQL of its on (a cursor of its own: `con.cursor()`), never opening one: in sync a
    # cursor of the warehouse connection for the thread that parses, in inspect one in-memory DuckDB
    parse: Callable[[duckdb.DuckDBPyConnection, Path, str, OrgConfig], Parsed]
    contract: Contract             # what the staging table's rows must satisfy
    span: tuple[pl.Expr, pl.Expr]  # first and last instant a parsed row covers (for the manifest)
    group: str                     # its Dagster asset group, e.g. "bills"
    # the time columns whose values must be plausible (staged name, as the file names it); the first
    # one dates a quarantined row (pipelines/ingest/plausible.py)
    time_columns: tuple[tuple[str, str], ...] = ()
    row_word: str | None = None    # how its parser names a row in ops.quarantine: "row 17", "line 17"
    # a bill: its files are deliveries that supersede each other (pipelines/landing/deliveries.py), its
    # quarantined rows keep their money, and it decides which days the ledger has
    is_bill: bool = False
    # a scheduler: its records decide where money goes, so a refused file of its leaves the days its
    # name covers incomplete, and it decides which days the ledger has
    allocates: bool = False
    rollup: str | None = None      # SQL script rolling parsed rows (as `dcgm_samples`) up into staging
    # `parse` a chunk of the file at a time, for a summary (inspect) rather than staging: the rows
    # decide what is staged or quarantined and what it costs; columns that only describe may be null
    summary_chunks: Callable[[duckdb.DuckDBPyConnection, Path, str, OrgConfig], Iterable[Parsed]] | None = None
    # stages many changed files in one set-based pass: (con, source, changed [(path, rel, size, sha)],
    # files already landed, cfg, report) -> the changed files it leaves to `parse`, file by file
    batch: Callable[..., list[tuple[Path, str, int, str]]] | None = None
    # its own sync, in place of the file-by-file one (bills: the delivery rule decides which files count)
    sync: Callable[..., "SyncReport"] | None = None
    # the days a file it refuses whole covers, read from what is left of it (None: it does not say)
    refused_days: Callable[[Path], tuple[date, date] | None] | None = None
    # what `inspect` totals of its staged rows, beside files, rows and quarantine (bills: their money)
    summary: "Summary | None" = None
    # the name of a file beside each of its files that describes them (trainer logs: `run.yaml`): no
    # input by itself, but part of each file's fingerprint, so changing it reads its folder's files again
    sidecar: str | None = None

    @property
    def decides_start(self) -> bool:
        """Whether its rows decide the ledger's days (bills and schedulers; telemetry only adds detail)."""
        return self.is_bill or self.allocates

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


def fingerprint(path: Path, sidecar: str | None = None) -> tuple[int, str]:
    """(size, SHA-256) of the file; with a `sidecar` beside it, the digest covers the sidecar's bytes
    too (after the file's, and a separator no file's bytes can fake: the file's own length)."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    beside = path.with_name(sidecar) if sidecar else None
    if beside is not None and beside.is_file():
        digest.update(f"\0sidecar after {path.stat().st_size} bytes\0".encode())
        digest.update(beside.read_bytes())
    return path.stat().st_size, digest.hexdigest()


def file_span(rows: pl.DataFrame, source: Source) -> tuple[date | None, date | None]:
    if rows.height == 0:
        return None, None
    first, last = rows.select(source.span[0].min().alias("first"), source.span[1].max().alias("last")).row(0)
    return (first.date() if first else None, last.date() if last else None)
