"""What the set-based readers of many landing files share (DCGM telemetry, trainer events): the files of
a batch, batches of a bounded size, and writing a batch in one transaction.

A batch replaces, through the one writer (pipelines/landing/writer.py) as `sync_files` does a file at
a time, every staging and quarantine row its files contributed before and their ops.landed_files
entries; a crash leaves every file of the batch as it was, or all of them new."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl

from pipelines.landing import writer
from pipelines.landing.parsed import QUARANTINE_SCHEMA, conform
from pipelines.landing.source import Source, SyncReport
from pipelines.lib.warehouse import transaction

Changed = tuple[Path, str, int, str]  # (absolute path, path under the landing root, size, sha256)


@dataclass(frozen=True)
class BatchFile:
    path: Path
    rel: str
    size: int
    sha: str
    weight: int  # what batches are bounded by: rows, lines

    @property
    def changed(self) -> Changed:
        return (self.path, self.rel, self.size, self.sha)


def batches(files: list[BatchFile], limit: int) -> Iterator[list[BatchFile]]:
    """Consecutive files, as many to a batch as stay within `limit` in weight (at least one)."""
    batch: list[BatchFile] = []
    weight = 0
    for file in files:
        if batch and weight + file.weight > limit:
            yield batch
            batch, weight = [], 0
        batch.append(file)
        weight += file.weight
    if batch:
        yield batch


def in_order(rest: list[Changed], changed: list[Changed]) -> list[Changed]:
    """The files left to the per-file parser, in the order they were found."""
    order = {c[1]: i for i, c in enumerate(changed)}
    return sorted(rest, key=lambda c: order[c[1]])


def quarantine_rows(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """Reject frames, some with fewer columns, as one frame of ops.quarantine's columns."""
    return conform(pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame(), QUARANTINE_SCHEMA)


def write_batch(
    con: duckdb.DuckDBPyConnection, source: Source, batch: list[BatchFile], known: set[str],
    counts: pl.DataFrame, rejects: pl.DataFrame, insert: Callable[[], None], report: SyncReport,
) -> None:
    """The batch in one transaction. `counts` has per file (`file`): rows `staged`, `first_day` and
    `last_day`; `rejects` are its quarantine rows; `insert` writes its staging rows."""
    quarantined = rejects.group_by("file").len("quarantined")
    landed = writer.entries(source, (
        pl.DataFrame({"file": [f.rel for f in batch], "size_bytes": [f.size for f in batch],
                      "sha256": [f.sha for f in batch]})
        .join(counts.select("file", "staged", "first_day", "last_day"), on="file", how="left")
        .join(quarantined, on="file", how="left")
        .select("file", "size_bytes", "sha256", pl.col("staged").fill_null(0).alias("rows_staged"),
                pl.col("quarantined").fill_null(0).alias("rows_quarantined"), "first_day", "last_day")
    ))
    files = [f.rel for f in batch]
    with transaction(con):
        # a re-delivered file's rows go; a new file has none (its rows land with its entry)
        writer.forget(con, source, files, staged=[f.rel for f in batch if f.rel in known])
        insert()
        writer.put_rejects(con, rejects)
        writer.record(con, landed)
    report.files_read += files
    report.rows_staged += int(landed["rows_staged"].sum())
    report.rows_quarantined += rejects.height
