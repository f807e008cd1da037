"""Trainer events (runs/**/*.jsonl) → staging.stg_runs__events rows. The events and what is refused:
docs/ingest/runs.md."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from models.landing import RunEvent
from pipelines.ingest.common import (RAW, Parsed, cast_failures, clip, file_reject, json_line, split_by_contract, to_float,
                                     to_int, to_utc)

SOURCE = "runs"
FIELDS = ["run_id", "event", "ts", "job_id", "step", "tokens", "project", "dtype"]
MODEL_FIELDS = {
    "model_params": "params",
    "model_active_params": "active_params",
    "model_layers": "layers",
    "model_heads": "heads",
    "model_head_dim": "head_dim",
    "model_seq_len": "seq_len",
}
STAGED = ["_file", "_row", *FIELDS, *MODEL_FIELDS]


def parse(path: Path, file: str) -> Parsed:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        return Parsed(rows=pl.DataFrame(), rejects=file_reject(SOURCE, file, f"unreadable file: {err}"))
    records, broken = [], []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json_line(line)
        except ValueError as err:
            broken.append({"_row": n, "_line": clip(line), "_error": str(err)})
            continue
        if not isinstance(obj, dict):
            broken.append({"_row": n, "_line": clip(line), "_error": "not a JSON object"})
            continue
        model = obj.get("model") if isinstance(obj.get("model"), dict) else {}
        rec = {RAW + f: _text(obj.get(f)) for f in FIELDS}
        rec |= {RAW + col: _text(model.get(key)) for col, key in MODEL_FIELDS.items()}
        records.append({"_row": n, **rec, "_line": line, "_error": None})
    schema = {"_row": pl.Int64, **{RAW + f: pl.String for f in [*FIELDS, *MODEL_FIELDS]}, "_line": pl.String, "_error": pl.String}
    df = pl.DataFrame(records + broken, schema=schema).sort("_row")
    df = df.with_columns(
        pl.lit(file).alias("_file"),
        *[pl.col(RAW + f).alias(f) for f in ["run_id", "event", "job_id", "project", "dtype"]],
        to_utc(RAW + "ts").alias("ts"),
        to_int(RAW + "step").alias("step"),
        to_int(RAW + "tokens").alias("tokens"),
        to_float(RAW + "model_params").alias("model_params"),
        to_float(RAW + "model_active_params").alias("model_active_params"),
        *[to_int(RAW + c, pl.Int32).alias(c) for c in ["model_layers", "model_heads", "model_head_dim", "model_seq_len"]],
    )
    casts = {"ts": (RAW + "ts", "a timestamp"), "step": (RAW + "step", "an integer"), "tokens": (RAW + "tokens", "an integer")}
    df = df.with_columns(
        pl.concat_list(cast_failures(df, casts), pl.col("_error")).list.drop_nulls().alias("_errors")
    )
    staged, rejects = split_by_contract(
        df,
        RunEvent,
        source=SOURCE,
        file=file,
        staged_columns=STAGED,
        raw_columns=["_line"],
        row_ref=pl.format("line {}", pl.col("_row")),
        reject_extras={"day": pl.col("ts").dt.date()},
    )
    return Parsed(rows=staged, rejects=rejects)


def _text(value: object) -> str | None:
    """JSON scalars as text, so one cast path (and one error message) serves every value."""
    if value is None:
        return None
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float, str)):
        return str(value)
    return json.dumps(value)
