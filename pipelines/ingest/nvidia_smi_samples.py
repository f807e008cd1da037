"""The lines of an nvidia-smi log, as `nvidia_smi` reads them into tables, → validated long samples:
one per metric a line reads (DCGM's names and units), held to the DcgmSample contract like DCGM's own.

A line is one reading of one GPU: a line any of whose values is refused is quarantined whole, once, as
`line N` with every reason and its cells as payload, and none of its samples is staged. A cell that is
nvidia-smi's "no value" (`[N/A]`, `[Not Supported]`, any `[...]`, `N/A`, dmon's `-`) is no reading:
no sample, never a 0. Times are naive, in the file's zone
(docs/ingest/nvidia-smi.md#the-host-and-the-time-zone)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import polars as pl

from models.landing import DcgmSample
from pipelines.ingest.common import RAW, cast_failures, split_by_contract, unread_casts, utc
from pipelines.ingest.dcgm import STAGED
from pipelines.landing.parsed import QUARANTINE_SCHEMA, Parsed, conform, empty_rejects

if TYPE_CHECKING:
    from pipelines.ingest.nvidia_smi import Lines, Place, Table

SOURCE = "nvidia_smi"
NO_READING = r"^(?:\[.*\]|N/A|n/a|-)?$"
STAGED_SCHEMA = {"timestamp": pl.Datetime("us"), "hostname": pl.String, "gpu": pl.Int32, "gpu_instance": pl.String,
                 "uuid": pl.String, "model_name": pl.String, "hpc_job": pl.String, "metric": pl.String,
                 "value": pl.Float64}
assert list(STAGED_SCHEMA) == STAGED


def to_samples(read: Lines, file: str, place: Place) -> Parsed:
    staged, rejects, times = [], [], []
    dropped = dict(read.dropped)
    for table in read.tables:
        if not table.rows:
            continue
        rows, refused, when, silent = _table(table, file, place)
        staged.append(rows)
        rejects.append(refused)
        times.append(when)
        if silent:
            dropped["lines without a reading"] = dropped.get("lines without a reading", 0) + silent
    if read.bad:
        rejects.append(_bad_lines(read.bad, file))
    rows = pl.concat(staged) if staged else pl.DataFrame(schema=STAGED_SCHEMA)
    rejects = _dated(pl.concat(rejects), pl.concat(times) if times else None) if rejects else empty_rejects()
    return Parsed(rows=rows, rejects=rejects, dropped={k: v for k, v in dropped.items() if v})


def _table(table: Table, file: str, place: Place) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, int]:
    """(staged samples, quarantined lines, each line's time, lines without any reading) of one table."""
    # the file's columns by position (`_c0`, …): their names may be ours (`timestamp`, dmon's `gpu`)
    cell = {column: pl.col(f"_c{i}") for i, column in enumerate(table.columns)}
    frame = pl.DataFrame(table.rows, schema={"_line": pl.Int64, **{f"_c{i}": pl.String for i in range(len(cell))}},
                         orient="row")
    names = {metric: _name(column) for metric, (column, _, _) in table.metrics.items()}
    time_name, gpu_name = " ".join(_name(c) for c in table.time), _name(table.gpu)
    df = frame.with_columns(
        _reading(pl.concat_str([cell[c] for c in table.time], separator=" ")).alias(RAW + time_name),
        _reading(cell[table.gpu]).alias(RAW + gpu_name),
        *[_reading(cell[column]).alias(RAW + names[metric]) for metric, (column, _, _) in table.metrics.items()],
        *[_reading(cell[column]).alias(role) for role, column in table.labels.items()],
    )
    df = df.with_columns(
        _times(pl.col(RAW + time_name), place.zone).alias("timestamp"),
        _wall(pl.col(RAW + time_name)).alias("_wall"),
        pl.col(RAW + gpu_name).cast(pl.Int32, strict=False).alias("gpu"),
        *[_value(RAW + names[metric], unit, factor).alias(metric)
          for metric, (_, unit, factor) in table.metrics.items()],
    )
    casts = {"gpu": (RAW + gpu_name, "a GPU index (a whole number)")}
    casts |= {metric: (RAW + names[metric], f"a reading in {unit or _unit_of(metric)}")
              for metric, (_, unit, _) in table.metrics.items()}
    unread = unread_casts(df, casts, clean=True)
    ts_unread = pl.col(RAW + time_name).is_not_null() & pl.col("timestamp").is_null()
    df = df.with_columns(
        pl.concat_list(_time_reason(time_name, place.zone), cast_failures(df, {"gpu": casts["gpu"]}))
        .list.drop_nulls().alias("_line_errors"),
        ts_unread.alias("_ts_unread"), unread["gpu"].alias("_gpu_unread"),
        pl.all_horizontal([pl.col(RAW + n).is_null() for n in names.values()]).alias("_no_reading"),
    )
    long = pl.concat([_samples_of(df, metric, RAW + names[metric], casts, unread, place) for metric in names]
                     + [_placeholders(df, next(iter(names)), place)], how="vertical").rechunk()  # unchunked: polars
    # 1.x panicked filtering the string views of a vertical concat of literals
    staged, refused = split_by_contract(
        long, DcgmSample, source=SOURCE, file=file, staged_columns=[*STAGED, "_line", "_placeholder"],
        # `line N|metric` until _per_line makes it one row per line, its payload the line's cells
        raw_columns=["_line"], row_ref=pl.format("line {}|{}", pl.col("_line"), pl.col("metric")),
        reject_extras={"day": pl.col("timestamp").dt.date()},
        unread={"timestamp": pl.col("_ts_unread"), "gpu": pl.col("_gpu_unread"), "value": pl.col("_value_unread")},
    )
    refused = _per_line(refused, df, cell, names)
    out = refused["row_ref"].str.strip_prefix("line ").cast(pl.Int64).implode()
    staged = staged.filter(~pl.col("_line").is_in(out) & ~pl.col("_placeholder")).select(STAGED)
    silent = df.filter(pl.col("_no_reading") & ~pl.col("_line").is_in(out)).height
    return staged, refused, df.select("_line", "timestamp"), silent


def _name(column: str) -> str:
    """A column as the reasons name it: its field without the unit (`power.draw [W]` → power.draw)."""
    return column.split("[", 1)[0].strip()


def _unit_of(metric: str) -> str:
    return {"DCGM_FI_DEV_GPU_UTIL": "%", "DCGM_FI_DEV_FB_USED": "MiB", "DCGM_FI_DEV_POWER_USAGE": "W",
            "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION": "mJ"}[metric]


def _reading(cell: pl.Expr) -> pl.Expr:
    """A cell's text, null where nvidia-smi says it has no value."""
    text = cell.str.strip_chars()
    return pl.when(text.str.contains(NO_READING)).then(None).otherwise(text)


def _value(raw: str, unit: str | None, factor: float) -> pl.Expr:
    """A reading as a number in the metric's unit: `87 %`, `512.34 W` or, with nounits, `87`."""
    text = pl.col(raw)
    if unit:
        text = text.str.strip_suffix(unit).str.strip_chars_end()
    number = text.cast(pl.Float64, strict=False)
    return number * factor if factor != 1.0 else number


def _normal(text: pl.Expr) -> pl.Expr:
    """`2026/11/02 00:00:05.123` (query-gpu) and `20261102 00:00:05` (dmon -o DT) as ISO text."""
    return text.str.replace(r"^(\d{4})(\d{2})(\d{2})\s+", "${1}-${2}-${3} ").str.replace_all("/", "-", literal=True)


def _wall(text: pl.Expr) -> pl.Expr:
    return _normal(text).str.to_datetime("%Y-%m-%d %H:%M:%S%.f", strict=False, time_unit="us")


def _times(text: pl.Expr, zone: str) -> pl.Expr:
    """Naive UTC of wall times in `zone`. A wall time a DST fall-back repeats is its earlier instant
    until the log's clock has gone back within that day's repeated hour (the log runs on in order): from
    there on, its second."""
    early = utc(_normal(text), zone, "earliest")
    if zone == "UTC":
        return early
    late = utc(_normal(text), zone, "latest")
    wall = _wall(text)
    repeated = (late != early).fill_null(False)
    went_back = (repeated & (wall < wall.cum_max().shift(1)).fill_null(False)).cast(pl.Int32)
    again = repeated & (went_back.cum_sum().over(wall.dt.date()) > 0)
    return pl.when(again).then(late).otherwise(early)


def _time_reason(name: str, zone: str) -> pl.Expr:
    raw, shown = pl.col(RAW + name), pl.lit(name)
    unread = raw.is_not_null() & pl.col("timestamp").is_null()
    return (pl.when(unread & pl.col("_wall").is_not_null())
            .then(pl.format("{} '{}' does not exist in {}: the clocks skipped it when daylight saving time began",
                            shown, raw, pl.lit(zone)))
            .when(unread)
            .then(pl.format("{} '{}' is not a time (nvidia-smi writes YYYY/MM/DD HH:MM:SS.mmm, dmon -o DT "
                            "YYYYMMDD HH:MM:SS)", shown, raw)))


def _samples_of(df: pl.DataFrame, metric: str, raw: str, casts: dict, unread: dict, place: Place) -> pl.DataFrame:
    """The samples of one metric: every line with a reading of it, readable or not."""
    value_error = cast_failures(df, {metric: casts[metric]})
    return df.filter(pl.col(raw).is_not_null()).select(
        *_sample_columns(df, place),
        pl.lit(metric).alias("metric"),
        pl.col(metric).alias("value"),
        pl.concat_list("_line_errors", value_error).alias("_errors"),
        "_ts_unread", "_gpu_unread", unread[metric].fill_null(False).alias("_value_unread"),
        pl.lit(False).alias("_placeholder"),
    )


def _placeholders(df: pl.DataFrame, metric: str, place: Place) -> pl.DataFrame:
    """A line without any reading still has a time and a GPU to check: one stand-in sample of it, held to
    the contract and never staged."""
    return df.filter(pl.col("_no_reading")).select(
        *_sample_columns(df, place),
        pl.lit(metric).alias("metric"),
        pl.lit(0.0).alias("value"),
        pl.col("_line_errors").alias("_errors"),
        "_ts_unread", "_gpu_unread", pl.lit(False).alias("_value_unread"),
        pl.lit(True).alias("_placeholder"),
    )


def _sample_columns(df: pl.DataFrame, place: Place) -> list[pl.Expr]:
    label = lambda role: pl.col(role) if role in df.columns else pl.lit(None, dtype=pl.String)  # noqa: E731
    return ["_line", "timestamp", pl.lit(place.host).alias("hostname"), "gpu",
            pl.lit(None, dtype=pl.String).alias("gpu_instance"), label("uuid").alias("uuid"),
            label("model_name").alias("model_name"), pl.lit(None, dtype=pl.String).alias("hpc_job")]


def _per_line(refused: pl.DataFrame, df: pl.DataFrame, cell: dict[str, pl.Expr],
              names: dict[str, str]) -> pl.DataFrame:
    """One quarantine row per refused line: every reason of its samples, once each (the contract's
    `value ...` named by the line's column: `power.draw -5.0 is negative`), and its cells."""
    if refused.height == 0:
        return refused
    by_line: dict[int, dict] = {}
    for row_ref, reason, day in refused.select("row_ref", "reason", "day").iter_rows():  # the few refused
        line, _, metric = row_ref.partition("|")
        entry = by_line.setdefault(int(line.removeprefix("line ")), {"reasons": [], "day": day})
        for part in reason.split("; "):
            part = f"{names[metric]} {part[len('value '):]}" if part.startswith("value ") else part
            if part not in entry["reasons"]:
                entry["reasons"].append(part)
    lines = pl.DataFrame({"_line": list(by_line), "reason": ["; ".join(e["reasons"]) for e in by_line.values()],
                          "day": [e["day"] for e in by_line.values()]},
                         schema={"_line": pl.Int64, "reason": pl.String, "day": pl.Date})
    payloads = df.select("_line", pl.struct([c.alias(name) for name, c in cell.items()]).struct.json_encode()
                         .alias("payload"))
    lines = lines.join(payloads, on="_line", how="left", maintain_order="left").with_columns(
        pl.lit(SOURCE).alias("source"), pl.lit(refused["file"][0]).alias("file"),
        pl.format("line {}", "_line").alias("row_ref"))
    return conform(lines, QUARANTINE_SCHEMA)


def _bad_lines(bad: list[tuple[int, str, str]], file: str) -> pl.DataFrame:
    """Lines that are no record: their text is the payload."""
    frame = pl.DataFrame({"_line": [n for n, _, _ in bad], "reason": [r for _, _, r in bad],
                          "payload": [json.dumps({"line": text}) for _, text, _ in bad]},
                         schema={"_line": pl.Int64, "reason": pl.String, "payload": pl.String})
    frame = frame.with_columns(pl.lit(SOURCE).alias("source"), pl.lit(file).alias("file"),
                               pl.format("line {}", "_line").alias("row_ref"))
    return conform(frame, QUARANTINE_SCHEMA)


def _dated(rejects: pl.DataFrame, times: pl.DataFrame | None) -> pl.DataFrame:
    """The rejects in line order, those without a time of their own dated by the nearest line before
    them that has one (else after them), so each counts on a day."""
    rejects = rejects.with_columns(pl.col("row_ref").str.strip_prefix("line ").cast(pl.Int64).alias("_line"))
    rejects = rejects.sort("_line")
    known = times.drop_nulls("timestamp").sort("_line") if times is not None else None
    if known is not None and known.height and rejects["day"].null_count():
        nearest = pl.coalesce(rejects.join_asof(known, on="_line", strategy="backward")["timestamp"],
                              rejects.join_asof(known, on="_line", strategy="forward")["timestamp"])
        rejects = rejects.with_columns(pl.coalesce("day", nearest.dt.date()).alias("day"))
    return rejects.drop("_line")
