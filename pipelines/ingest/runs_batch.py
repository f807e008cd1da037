"""Trainer events staged set-based: the new and changed files under runs/ a batch at a time, their
lines read column-wise in one DuckDB pass (`runs.read_frame`), typed and checked by the RunEvent
contract once for the batch, implausible times judged per file against the file's own rows, and the
batch written in one transaction.

A fleet's trainers write hundreds of files a day of a few thousand lines each, so what a file costs
by itself (a contract check, a transaction) outweighs its lines; a batch pays it once. Empty files and
files that are not UTF-8 are left to the per-file parser, which refuses them with the reason."""

from __future__ import annotations

import duckdb
import polars as pl

from pipelines.ingest import runs
from pipelines.landing.batches import BatchFile, Changed, batches, in_order, quarantine_rows, write_batch
from pipelines.landing.parsed import Parsed
from pipelines.landing.source import Source, SyncReport
from pipelines.ingest.plausible import checked
from pipelines.lib.config import OrgConfig

# Bytes of landing text per batch (one transaction): a few hundred trainer files, about half a GiB of
# memory while they are read.
BATCH_BYTES = 32 << 20


def sync_batches(con: duckdb.DuckDBPyConnection, source: Source, changed: list[Changed], known: set[str],
                 cfg: OrgConfig, report: SyncReport) -> list[Changed]:
    """Stages the files of `changed`, a batch at a time; returns those left to the per-file parser
    (empty or not UTF-8), in their order. `known` are the files ops.landed_files has: their old rows go."""
    rest = [c for c in changed if c[2] == 0]  # an empty file is refused as empty, per file
    files = [BatchFile(path, rel, size, sha, size) for path, rel, size, sha in changed if size]
    for batch in batches(files, BATCH_BYTES):
        rest += _stage(con, source, batch, known, cfg, report)
    return in_order(rest, changed)


def _stage(con: duckdb.DuckDBPyConnection, source: Source, batch: list[BatchFile], known: set[str],
           cfg: OrgConfig, report: SyncReport) -> list[Changed]:
    frames, readable, unreadable = [], [], []
    for file in batch:
        try:
            text = file.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            unreadable.append(file.changed)
            continue
        readable.append(file)
        frames.append(runs.lines_frame(text.splitlines()).with_columns(pl.lit(file.rel).alias("_file")))
    if not readable:
        return unreadable
    staged, rejects = runs.events(runs.read_frame(con, pl.concat(frames)))
    rows, rejected = [], [rejects]
    for (rel,), of_file in staged.group_by("_file", maintain_order=True):
        parsed = checked(source, Parsed(rows=of_file), rel, cfg)  # implausible times, against the file's rows
        rows.append(parsed.rows)
        rejected.append(parsed.rejects)
    staged = pl.concat(rows) if rows else staged
    counts = staged.group_by("_file").agg(
        pl.len().alias("staged"), pl.col("ts").min().dt.date().alias("first_day"),
        pl.col("ts").max().dt.date().alias("last_day"),
    ).rename({"_file": "file"})
    con.register("runs_batch_rows", staged)
    try:
        write_batch(con, source, readable, known, counts, quarantine_rows(rejected), report=report,
                    insert=lambda: con.execute(f"INSERT INTO {source.qualified_table} BY NAME SELECT * FROM runs_batch_rows"))
    finally:
        con.unregister("runs_batch_rows")
    return unreadable
