"""Landing files in, staging rows out: bring a source's staging rows in line with its files on the
landing zone, reading each new or changed file once and replacing everything a re-delivered file gave.

`sync` guards the landing zone, then hands over to the source's own sync when it declares one (bills:
pipelines/landing/bill_deliveries.py) or to `sync_files`, which writes a file at a time, after the
source's set-based `batch` (if any) has taken the files it reads together.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path

import duckdb
import polars as pl

from pipelines.landing import writer
from pipelines.landing.deliveries import days_from_name
from pipelines.landing.parsed import Parsed, refuses_file
from pipelines.landing.source import (Source, SyncReport, check_landing_root, check_not_vanished, discover, file_span,
                                      fingerprint)
from pipelines.lib.config import OrgConfig
from pipelines.lib.warehouse import transaction


def sync(
    con: duckdb.DuckDBPyConnection, root: Path, source: Source, cfg: OrgConfig, day: date | None = None
) -> SyncReport:
    """Reads every new or changed file of `source` into staging; unchanged files are skipped. A
    missing or empty root, or a source whose every file is gone, is refused before anything is removed
    (LandingUnusable)."""
    check_landing_root(root)
    check_not_vanished(root, source, (f for (f,) in con.execute(
        "SELECT file FROM ops.landed_files WHERE source = $source", {"source": source.name}).fetchall()))
    writer.declare(con, source)
    return (source.sync or sync_files)(con, root, source, cfg, day)


def sync_files(
    con: duckdb.DuckDBPyConnection, root: Path, source: Source, cfg: OrgConfig, day: date | None = None
) -> SyncReport:
    """Each changed file in its own transaction. With `day`, only the files of the day and its
    neighbours' hive `day=` folders are looked at (pipelines/landing/source.py `discover`)."""
    report = SyncReport()
    known = {
        file: (size, sha)
        for file, size, sha in con.execute(
            "SELECT file, size_bytes, sha256 FROM ops.landed_files WHERE source = $source", {"source": source.name}
        ).fetchall()
    }
    changed = []
    for path, rel in discover(root, source, day):
        size, sha = fingerprint(path, source.sidecar)
        if known.get(rel) == (size, sha):
            report.files_unchanged += 1
        else:
            changed.append((path, rel, size, sha))
    # a file taken in before and gone from the landing zone now takes its rows out (a day's run only
    # looks at its neighbours' `day=` folders: a file outside them is not gone, just not looked at)
    for rel in sorted(known):
        if not (root / rel).exists():
            with transaction(con):
                writer.drop_entries(con, source, [rel])
            report.files_removed.append(rel)
    if source.batch is not None:
        changed = source.batch(con, source, changed, set(known), cfg, report)

    # Parsing the next file (polars) overlaps writing this one (DuckDB): both release the GIL. The parse
    # thread has a cursor of the warehouse connection of its own (a connection is one thread's at a time).
    with con.cursor() as parse_con, ThreadPoolExecutor(max_workers=1) as pool:
        pending = [pool.submit(source.parse, parse_con, path, rel, cfg) for path, rel, *_ in changed[:1]]
        for i, (path, rel, size, sha) in enumerate(changed):
            if i + 1 < len(changed):
                nxt = changed[i + 1]
                pending.append(pool.submit(source.parse, parse_con, nxt[0], nxt[1], cfg))
            parsed = pending[i].result()
            pending[i] = None  # let the parsed frame go once written
            _write_file(con, source, rel, size, sha, parsed, report)
    return report


def _write_file(
    con: duckdb.DuckDBPyConnection, source: Source, rel: str, size: int, sha: str, parsed: Parsed,
    report: SyncReport,
) -> None:
    first, last = file_span(parsed.rows, source)
    status, status_reason = "current", None
    if source.allocates and refuses_file(parsed):
        # A refused scheduler export hides jobs that move money between teams and idle: the days its
        # name covers (every day, when it names none) are not complete (finance.reconciliation_daily
        # reads `unreadable` files), and its quarantine row carries the first of them.
        status, status_reason = "unreadable", parsed.rejects["reason"][0]
        first, last = days_from_name(rel) or (None, None)
        parsed.rejects = parsed.rejects.with_columns(pl.coalesce(pl.col("day"), pl.lit(first)).alias("day"))
    entry = writer.entries(source, [{
        "file": rel, "size_bytes": size, "sha256": sha, "rows_staged": parsed.rows.height,
        "rows_quarantined": parsed.rejects.height, "first_day": first, "last_day": last, "status": status,
        "status_reason": status_reason}])
    with transaction(con):
        writer.forget(con, source, [rel])
        writer.put_rows(con, source, parsed.rows, rel)
        writer.put_rejects(con, parsed.rejects)
        writer.record(con, entry)
    report.files_read.append(rel)
    report.rows_staged += parsed.rows.height
    report.rows_quarantined += parsed.rejects.height
    for reason, n in parsed.dropped.items():
        report.rows_dropped[reason] = report.rows_dropped.get(reason, 0) + n
