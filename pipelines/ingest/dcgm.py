"""DCGM exporter samples (long or wide; Parquet or CSV) → validated long samples, rolled up per GPU
and minute into staging.stg_dcgm__gpu_minutes (the rollup is SQL: sql/staging/stg_dcgm__gpu_minutes/10_rollup.sql).
Labels, metrics, sentinels and what is refused: docs/ingest/dcgm.md."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from models.landing import DCGM_SENTINEL_MIN, DcgmSample
from pipelines.ingest.common import RAW, blank_to_null, cast_failures, split_by_contract, to_float, to_int, to_utc, unread_casts
from pipelines.landing.parsed import Parsed, file_reject

SOURCE = "dcgm"
# label spellings across exporter versions → ours
LABELS = {
    "timestamp": ("timestamp", "Timestamp", "ts", "time"),
    "hostname": ("hostname", "Hostname"),
    "gpu": ("gpu",),
    "gpu_instance": ("GPU_I_ID",),
    "uuid": ("UUID", "uuid"),
    "model_name": ("modelName",),
    "hpc_job": ("hpc_job",),
    "namespace": ("namespace",),
    "pod": ("pod",),
}
STAGED = ["timestamp", "hostname", "gpu", "gpu_instance", "uuid", "model_name", "hpc_job", "metric", "value"]


def read_table(path: Path) -> pl.DataFrame:
    if path.name.lower().endswith(".parquet"):
        return pl.read_parquet(path)
    return pl.read_csv(path, infer_schema=False)


def parse(path: Path, file: str) -> Parsed:
    try:
        raw = read_table(path)
    except Exception as err:
        return Parsed(rows=pl.DataFrame(), rejects=file_reject(SOURCE, file, f"unreadable file: {err}"))
    return from_frame(raw, file)


def from_frame(raw: pl.DataFrame, file: str, row_numbers: pl.Series | None = None) -> Parsed:
    """Validated long samples of a long or wide frame. `row_numbers` are the file's numbers of a long
    frame's rows when it holds only some of them (1-based; else the frame's own order counts)."""
    present = {ours: next((n for n in names if n in raw.columns), None) for ours, names in LABELS.items()}
    missing = [k for k in ("timestamp", "hostname", "gpu") if present[k] is None]
    if missing:
        return Parsed(rows=pl.DataFrame(), rejects=file_reject(SOURCE, file, f"missing column(s): {', '.join(missing)}"))
    label_cols = [c for c in present.values() if c]
    if {"metric", "value"} <= set(raw.columns):
        long = raw
    else:  # wide: one column per DCGM field
        fields = [c for c in raw.columns if c.startswith("DCGM_FI_")]
        if not fields:
            return Parsed(rows=pl.DataFrame(), rejects=file_reject(SOURCE, file, "neither metric/value columns nor DCGM_FI_* columns"))
        long = raw.select(*label_cols, *[pl.col(f).cast(pl.String) for f in fields]).unpivot(
            index=label_cols, on=fields, variable_name="metric", value_name="value"
        ).filter(pl.col("value").is_not_null())
    if row_numbers is None:
        long = long.with_row_index("_row", offset=1)
    else:
        assert long is raw, "row numbers of a long frame"
        long = long.with_columns(row_numbers.alias("_row"))
    long = long.rename({c: RAW + c for c in long.columns if c != "_row"})
    present = {k: RAW + v if v else None for k, v in present.items()}
    raw_columns = [RAW + c for c in [*label_cols, "metric", "value"]]
    ts = present["timestamp"]
    job = _label(present["hpc_job"])
    # a pod is the job label, qualified by its namespace when there is one
    pod = pl.when(_label(present["pod"]).is_not_null()).then(
        pl.concat_str([_label(present["namespace"]), _label(present["pod"])], separator="/", ignore_nulls=True)
    )
    df = long.with_columns(
        _typed(long, ts, pl.Datetime("us")).alias("timestamp"),
        _label(present["hostname"]).alias("hostname"),
        _typed(long, present["gpu"], pl.Int32).alias("gpu"),
        _label(present["gpu_instance"]).alias("gpu_instance"),
        _label(present["uuid"]).alias("uuid"),
        _label(present["model_name"]).alias("model_name"),
        pl.coalesce(job, pod).alias("hpc_job"),
        pl.col(RAW + "metric").cast(pl.String).str.strip_chars().alias("metric"),
        _typed(long, RAW + "value", pl.Float64).alias("value"),
    )
    # DCGM's "not supported" sentinels are no reading at all: counted, not staged, not an error.
    sentinel = pl.col("value") >= DCGM_SENTINEL_MIN
    sentinel = sentinel & pl.col("value").is_finite()
    dropped = df.filter(sentinel).height
    df = df.filter(~sentinel | pl.col("value").is_null())
    casts = {"timestamp": (ts, "a timestamp"), "gpu": (present["gpu"], "a GPU index"), "value": (RAW + "value", "a number")}
    df = df.with_columns(cast_failures(df, casts).alias("_errors"))
    staged, rejects = split_by_contract(
        df,
        DcgmSample,
        source=SOURCE,
        file=file,
        staged_columns=STAGED,
        raw_columns=raw_columns,
        row_ref=pl.format("row {}", pl.col("_row")),
        reject_extras={"day": pl.col("timestamp").dt.date()},
        unread=unread_casts(df, casts),
    )
    return Parsed(rows=staged, rejects=rejects, dropped={"unsupported_sentinel": dropped} if dropped else {})


def _typed(df: pl.DataFrame, name: str, dtype: pl.DataType) -> pl.Expr:
    """Parquet brings typed columns (cast directly, fast at millions of rows); CSV brings text."""
    current = df.schema[name]
    if current == pl.String:
        if dtype == pl.Datetime("us"):
            return to_utc(name)
        return to_float(name) if dtype == pl.Float64 else to_int(name, dtype)
    col = pl.col(name)
    if isinstance(current, pl.Datetime) and current.time_zone:
        col = col.dt.convert_time_zone("UTC").dt.replace_time_zone(None)
    return col.cast(dtype, strict=False)


def _label(name: str | None) -> pl.Expr:
    """A label column as a string; absent and empty labels are the same thing (older exporters print pod="")."""
    if name is None:
        return pl.lit(None, dtype=pl.String)
    return blank_to_null(name)
