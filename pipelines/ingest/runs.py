"""Trainer events (runs/**/*.jsonl) → staging.stg_runs__events rows. The events and what is refused:
docs/ingest/runs.md.

The lines are read column-wise by DuckDB's JSON functions (sql/staging/stg_runs__events/10_lines.sql);
the few lines DuckDB might read differently from Python's json (see there) and every line that is not
a JSON object are read one by one in Python, which is the reference and words what is wrong with a
line: not JSON, too long, nested too deeply, not an object."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import polars as pl

from models.landing import RunEvent
from pipelines.ingest.common import MAX_JSON_LINE_BYTES, RAW, cast_failures, clip, json_line, split_by_contract, to_float, to_int, to_utc, unread_casts, unread_record
from pipelines.landing.parsed import Parsed, file_reject
from pipelines.lib.warehouse import sql, step

SOURCE = "runs"
FIELDS = ["run_id", "event", "ts", "job_id", "step", "tokens", "project", "dtype", "data_seconds", "comm_seconds",
          "path"]
# the step timers: seconds of a step spent waiting for data / in exposed communication (docs/ingest/runs.md)
TIMERS = ["data_seconds", "comm_seconds"]
MODEL_FIELDS = {
    "model_params": "params",
    "model_active_params": "active_params",
    "model_layers": "layers",
    "model_heads": "heads",
    "model_head_dim": "head_dim",
    "model_seq_len": "seq_len",
}
# what a trainer log states of its own throughput (pipelines/ingest/trainer_logs/): MFU 0–1, TFLOP/s per GPU
REPORTED = ["reported_mfu", "reported_tflops"]
STAGED = ["_file", "_row", *FIELDS, *MODEL_FIELDS, "step_seconds", *REPORTED, "log_format"]
RAW_SCHEMA = {"_row": pl.Int64, **{RAW + f: pl.String for f in [*FIELDS, *MODEL_FIELDS]}, "_line": pl.String,
              "_error": pl.String}
# Python's json gives up far deeper than this (its recursion limit), so a line with fewer opening
# brackets than this cannot be one it refuses as nested too deeply; one with more is read in Python.
MAX_BRACKETS_COLUMN_WISE = 256
# Blank as Python's str.strip() sees it: Unicode white space and the separators \x1c-\x1f.
BLANK = r"^[\s\x1c-\x1f]*$"
LONE_SURROGATE = "not JSON text: a string escapes half a UTF-16 surrogate pair (\\ud800-\\udfff), which is no character"


def parse(con: duckdb.DuckDBPyConnection, path: Path, file: str) -> Parsed:
    """A file's events; its lines are read on the caller's DuckDB `con` (`read_frame`)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        return Parsed(rows=pl.DataFrame(), rejects=file_reject(SOURCE, file, f"unreadable file: {err}"))
    staged, rejects = events(read_lines(con, text.splitlines()).with_columns(pl.lit(file).alias("_file")))
    return Parsed(rows=staged, rejects=rejects)


def events(df: pl.DataFrame, source: str = SOURCE) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Read lines (`read_frame`'s, with the `_file` they are from, of one file or many; or a trainer
    log's events, with their REPORTED figures and `log_format`) typed and split by the RunEvent
    contract into staged rows and quarantine rows."""
    df = df.with_columns(
        *[pl.lit(None, pl.String).alias(RAW + c) for c in REPORTED if RAW + c not in df.columns],
        *([] if "log_format" in df.columns else [pl.lit(None, pl.String).alias("log_format")]),
        *([] if RAW + "path" in df.columns else [pl.lit(None, pl.String).alias(RAW + "path")]),
    )
    df = df.with_columns(
        *[pl.col(RAW + f).alias(f) for f in ["run_id", "event", "job_id", "project", "dtype", "path"]],
        to_utc(RAW + "ts").alias("ts"),
        to_int(RAW + "step").alias("step"),
        to_int(RAW + "tokens").alias("tokens"),
        to_float(RAW + "model_params").alias("model_params"),
        to_float(RAW + "model_active_params").alias("model_active_params"),
        *[to_int(RAW + c, pl.Int32).alias(c) for c in ["model_layers", "model_heads", "model_head_dim", "model_seq_len"]],
        *[to_float(RAW + c).alias(c) for c in [*TIMERS, *REPORTED]],
    )
    df = df.with_columns(step_seconds(df))
    casts = {"ts": (RAW + "ts", "a timestamp"), "step": (RAW + "step", "an integer"), "tokens": (RAW + "tokens", "an integer"),
             **{c: (RAW + c, "a number") for c in [*TIMERS, *REPORTED]}}
    df = df.with_columns(
        pl.concat_list(cast_failures(df, casts), pl.col("_error")).list.drop_nulls().alias("_errors")
    )
    return split_by_contract(
        df,
        RunEvent,
        source=source,
        file=pl.col("_file"),
        staged_columns=STAGED,
        raw_columns=["_line"],
        row_ref=pl.format("line {}", pl.col("_row")),
        reject_extras={"day": pl.col("ts").dt.date()},
        # a line that is no JSON object has no value for the contract to judge
        unread=unread_record(RunEvent, pl.col("_error").is_not_null(), unread_casts(df, casts)),
    )


def step_seconds(df: pl.DataFrame) -> pl.Expr:
    """Each step event's seconds since the job's previous step event in the same file (NULL for its
    first, or without a job): what the step timers are held to, and what the badput's data and
    communication shares divide by. Events in other files are not seen: a file is judged by itself."""
    steps = (pl.col("event") == "step") & pl.col("ts").is_not_null() & pl.col("job_id").is_not_null()
    keyed = pl.when(steps).then(pl.col("ts"))
    previous = keyed.shift(1).over(["_file", "run_id", "job_id", steps], order_by=keyed)
    return (pl.when(steps).then((pl.col("ts") - previous).dt.total_microseconds() / 1e6)
            .otherwise(None).cast(pl.Float64).alias("step_seconds"))


def read_lines(con: duckdb.DuckDBPyConnection, lines: list[str], column_wise: bool = True) -> pl.DataFrame:
    """The lines of a file as `read_frame` reads them."""
    return read_frame(con, lines_frame(lines), column_wise)


def lines_frame(lines: list[str]) -> pl.DataFrame:
    """A file's lines, numbered from 1 (`_row`), blank ones left out."""
    frame = pl.DataFrame({"_row": pl.int_range(1, len(lines) + 1, eager=True, dtype=pl.Int64), "_line": lines},
                         schema={"_row": pl.Int64, "_line": pl.String})
    return frame.filter(~pl.col("_line").str.contains(BLANK))


def read_frame(con: duckdb.DuckDBPyConnection, frame: pl.DataFrame, column_wise: bool = True) -> pl.DataFrame:
    """Lines (`_row`, `_line`, and any columns that tell files apart, kept) as RAW_SCHEMA rows in the
    order of `frame`: the fields as text, and `_error` saying why a line could not be read (then its
    fields are null). Column-wise, they are read on a cursor of the caller's DuckDB `con` of its own
    (its `runs_lines` is no other thread's); `column_wise=False` reads every line in Python (the
    reference the tests compare with)."""
    keys = [c for c in frame.columns if c not in ("_row", "_line")]
    frame = frame.with_row_index("_order")
    parts = []
    if column_wise:
        with con.cursor() as own:
            own.register("runs_lines", frame)
            read = own.sql(sql(step("staging/stg_runs__events", "lines")),
                           params={"max_bytes": MAX_JSON_LINE_BYTES, "max_brackets": MAX_BRACKETS_COLUMN_WISE}).pl()
        parts.append(read.filter(~pl.col("_python")).with_columns(pl.lit(None, dtype=pl.String).alias("_error"))
                     .select("_order", *keys, *RAW_SCHEMA))
        frame = read.filter(pl.col("_python"))
    parts.append(pl.concat([frame.select("_order", *keys), _one_by_one(frame.select("_row", "_line"))],
                           how="horizontal"))
    return pl.concat(parts).sort("_order").drop("_order")


def _one_by_one(lines: pl.DataFrame) -> pl.DataFrame:
    records = [_record(n, line) for n, line in lines.iter_rows()]
    return pl.DataFrame(records, schema=RAW_SCHEMA)


def _record(n: int, line: str) -> dict:
    """One line read in Python: its fields as text, or why it cannot be read."""
    try:
        obj = json_line(line)
    except ValueError as err:
        return {"_row": n, "_line": clip(line), "_error": str(err)}
    if not isinstance(obj, dict):
        return {"_row": n, "_line": clip(line), "_error": "not a JSON object"}
    model = obj.get("model") if isinstance(obj.get("model"), dict) else {}
    rec = {RAW + f: _text(obj.get(f)) for f in FIELDS}
    rec |= {RAW + col: _text(model.get(key)) for col, key in MODEL_FIELDS.items()}
    if any(v is not None and not _is_text(v) for v in rec.values()):
        return {"_row": n, "_line": clip(line), "_error": LONE_SURROGATE}
    return {"_row": n, **rec, "_line": line, "_error": None}


def _is_text(value: str) -> bool:
    """Whether `value` is characters (a JSON escape such as \\ud800 decodes to half a UTF-16 pair, which
    no text column can hold)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _text(value: object) -> str | None:
    """JSON scalars as text, so one cast path (and one error message) serves every value."""
    if value is None:
        return None
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (int, float, str)):
        return str(value)
    return json.dumps(value)
