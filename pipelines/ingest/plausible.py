"""What every landing file must be before its rows are staged, whatever its format: not empty, and
dated plausibly.

A 0-byte file is an export that failed: it is refused whole, saying so, rather than read as "nothing
happened". A time is implausible when it is before the earliest plausible day — a year before the
config's `ledger.start`, else 2000-01-01 (a `1970-01-01` Start is a clock or export error, and one
such row once made a day report 28.6e9 GPU-seconds) — or far from its file's other rows: more than a
year, and more than three interquartile ranges, from their median (so a dump of several years of
jobs keeps all its rows, and one row dated 1999 among this week's does not). Such a row is quarantined with the value and the rule named, its money
kept, instead of stretching the ledger across decades. A year of slack keeps what is real: jobs that
ran for weeks, monthly bill lines, the checkpoint a run resumes from, a backfill of old bills.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable
from datetime import date, datetime, timedelta
from pathlib import Path

import duckdb
import polars as pl

from pipelines.landing.parsed import QUARANTINE_SCHEMA, Parsed, file_reject
from pipelines.landing.source import Source
from pipelines.lib.config import OrgConfig

SLACK = timedelta(days=366)
EARLIEST = date(2000, 1, 1)

MONEY = ("effective_cost", "billed_cost", "billing_currency", "effective_cost_rounding", "billed_cost_rounding",
         "charge_period_start", "charge_period_end")

Parse = Callable[[duckdb.DuckDBPyConnection, Path, str, OrgConfig], Parsed]


def earliest_plausible(cfg: OrgConfig) -> datetime:
    start = cfg.ledger.start
    if start is None:
        return datetime(EARLIEST.year, EARLIEST.month, EARLIEST.day)
    # the same day a year earlier (28 February for a 29th)
    return datetime(start.year - 1, start.month, min(start.day, 28) if start.month == 2 else start.day)


def guard(source: Source) -> Source:
    """The declaration with its parsers guarded: an empty file refused, rows with implausible times (by
    its own `time_columns`) quarantined."""
    chunks = source.summary_chunks
    return dataclasses.replace(source, parse=guarded(source, source.parse),
                               summary_chunks=guarded_chunks(source, chunks) if chunks else None)


def guarded(source: Source, parse: Parse) -> Parse:
    """`parse`, refusing an empty file and quarantining implausibly dated rows. It keeps `parse`'s
    signature (functools.wraps), by which an added format's parser is checked when it is declared."""

    @functools.wraps(parse)
    def read(con: duckdb.DuckDBPyConnection, path: Path, rel: str, cfg: OrgConfig) -> Parsed:
        if path.stat().st_size == 0:
            return _empty(source, rel)
        return checked(source, parse(con, path, rel, cfg), rel, cfg)

    return read


def guarded_chunks(source: Source, parse: Callable[[duckdb.DuckDBPyConnection, Path, str, OrgConfig], Iterable[Parsed]]):
    """The same for a parser that yields a file chunk by chunk."""

    @functools.wraps(parse)
    def read(con: duckdb.DuckDBPyConnection, path: Path, rel: str, cfg: OrgConfig) -> Iterable[Parsed]:
        if path.stat().st_size == 0:
            yield _empty(source, rel)
            return
        for parsed in parse(con, path, rel, cfg):
            yield checked(source, parsed, rel, cfg)

    return read


def _empty(source: Source, rel: str) -> Parsed:
    return Parsed(rows=pl.DataFrame(), rejects=file_reject(
        source.name, rel, "empty file (0 bytes): nothing to read, the export probably failed; re-export it or delete it"))


def checked(source: Source, parsed: Parsed, rel: str, cfg: OrgConfig,
            bulk: tuple[datetime | None, int] | None = None) -> Parsed:
    """Moves the rows of `parsed` with an implausible time to its rejects, naming value and rule.
    `bulk` is the file's median time and how many days from it a time may be, when `parsed` holds only
    some of the file's rows (they are judged against the whole file); else it comes from the rows."""
    columns = [(c, label) for c, label in source.time_columns if c in parsed.rows.columns]
    if not columns or parsed.rows.height == 0:
        return parsed
    rows = parsed.rows
    floor = earliest_plausible(cfg)
    median, allowed = bulk if bulk is not None else _bulk(rows[columns[0][0]], floor)
    problems = []
    for column, label in columns:
        value = pl.col(column)
        shown = value.dt.to_string("%Y-%m-%d %H:%M:%S")
        reason = pl.when(value < floor).then(
            pl.format("{} {} is implausible: before {} {}", pl.lit(label), shown, pl.lit(floor.date().isoformat()),
                      pl.lit(_why_floor(cfg))))
        if median is not None:
            days = ((value - pl.lit(median)).dt.total_days()).abs()
            reason = reason.when(days > allowed).then(
                pl.format("{} {} is implausible: {} days from the median time of this file's rows ({})",
                          pl.lit(label), shown, days, pl.lit(median.strftime("%Y-%m-%d %H:%M:%S"))))
        problems.append(reason)
    reasons = rows.select(pl.concat_list(problems).list.drop_nulls().list.join("; ").alias("reason"))["reason"]
    bad = reasons.str.len_chars() > 0
    if not bad.any():
        return parsed
    parsed.rows = rows.filter(~bad)
    parsed.rejects = pl.concat([parsed.rejects, rejects_of(source, rel, rows.filter(bad), reasons.filter(bad))],
                               how="diagonal_relaxed").select(list(QUARANTINE_SCHEMA))
    return parsed


def _bulk(times: pl.Series, floor: datetime) -> tuple[datetime | None, int]:
    """The median of the file's plausible-looking times, and how many days from it a time may be."""
    epoch = times.filter(times >= floor).dt.epoch("us").drop_nulls()
    if epoch.len() == 0:
        return None, SLACK.days
    median = datetime(1970, 1, 1) + timedelta(microseconds=int(epoch.median()))
    iqr_days = (epoch.quantile(0.75) - epoch.quantile(0.25)) / 86_400e6
    return median, max(SLACK.days, int(3 * iqr_days))


def _why_floor(cfg: OrgConfig) -> str:
    if cfg.ledger.start:
        return f"(a year before ledger.start {cfg.ledger.start})"
    return "(no GPU cluster kept such records then: a clock or export error)"


def rejects_of(source: Source, rel: str, rows: pl.DataFrame, reasons: pl.Series) -> pl.DataFrame:
    """Quarantine rows for staged `rows` of `source`, one reason each."""
    word = source.row_word
    if word and "_row" in rows.columns:
        row_ref = pl.format(f"{word} {{}}", pl.col("_row"))
    else:  # telemetry samples carry no row number: name the sample itself
        row_ref = pl.format("{} gpu {} at {}", pl.col("hostname"), pl.col("gpu"), pl.col("timestamp"))
    payload_columns = [c for c in rows.columns if not c.startswith("_")]
    first_time = source.time_columns[0][0]
    return rows.with_columns(reason=reasons).select(
        pl.lit(source.name).alias("source"),
        pl.lit(rel).alias("file"),
        row_ref.alias("row_ref"),
        pl.col("reason"),
        pl.struct(payload_columns).struct.json_encode().alias("payload"),
        *[pl.col(c) for c in MONEY if c in rows.columns],
        pl.col(first_time).dt.date().alias("day"),
    )
