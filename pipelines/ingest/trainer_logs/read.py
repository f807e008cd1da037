"""A trainer log file → staging.stg_runs__events rows: its folder's run.yaml applied, its format
recognised (or run.yaml's `format` held to), its events read by the format's module and staged
through the JSONL reader's typing and RunEvent contract, so a log's step is the same row a JSONL
step would be."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from pipelines.ingest import runs
from pipelines.ingest.common import RAW, clip
from pipelines.ingest.trainer_logs import hf_trainer_state, lightning_csv, megatron, nanogpt, torchtitan
from pipelines.ingest.trainer_logs.events import Reading, resolve
from pipelines.ingest.trainer_logs.run_yaml import RunYaml, RunYamlError, read_run_yaml
from pipelines.landing.parsed import Parsed, file_reject

SOURCE = "trainer_logs"
# in the order they are tried: the JSON and CSV ones by their file's name, then the text ones by a line
READERS = {
    "hf_trainer_state": hf_trainer_state,
    "lightning_csv": lightning_csv,
    "megatron": megatron,
    "torchtitan": torchtitan,
    "nanogpt": nanogpt,
}
SLURM_OUTPUT = re.compile(r"^slurm-(?P<job>\d+(?:_\d+)?)\.out$")  # sbatch's default output name
REPORTED = ["reported_mfu", "reported_tflops"]


def parse(path: Path, rel: str, source: str = SOURCE) -> Parsed:
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark is no part of the first line
    except (OSError, UnicodeDecodeError) as err:
        return _refused(source, rel, f"unreadable file: {err}")
    try:
        meta = read_run_yaml(path.parent)
    except RunYamlError as err:
        return _refused(source, rel, str(err))
    fmt = meta.format or next((name for name, r in READERS.items() if r.recognises(path.name, text)), None)
    if fmt is None:
        return _refused(source, rel, "not a trainer log gpuledger can place: no Megatron-LM iteration line, torchtitan "
                        "step line or nanoGPT step line, and not a trainer_state.json or a Lightning metrics.csv; "
                        "if it is one of those, set format in run.yaml (docs/ingest/trainer-logs.md)")
    if meta.format and not READERS[fmt].recognises(path.name, text):
        return _refused(source, rel, f"run.yaml says format {fmt}, but the file has none of its lines "
                        f"(docs/ingest/trainer-logs.md, section {fmt})")
    staged, rejects = runs.events(_frame(rel, path, READERS[fmt].read(text, rel, meta), meta, fmt), source)
    return Parsed(rows=staged, rejects=rejects, read_as=fmt)


def _frame(rel: str, path: Path, reading: Reading, meta: RunYaml, fmt: str) -> pl.DataFrame:
    records = resolve(reading, meta)
    run_id = meta.run_id or path.parent.name
    job_id = meta.job_id or (meta.job_ids or {}).get(path.name)
    if job_id is None and (m := SLURM_OUTPUT.match(path.name)):
        job_id = m["job"]
    first_ts = min((r["ts"] for r in records if r["ts"] and not r["_error"]), default=None)
    config = _config(meta, reading, first_ts)
    rows = [config] if config else []
    rows += records
    frame = pl.DataFrame(
        [{**{RAW + k: r.get(k) for k in ("event", "ts", "step", "tokens", "data_seconds", "comm_seconds",
                                           "project", "dtype", *runs.MODEL_FIELDS, *REPORTED)},
          "_row": r["_row"], "_line": clip(r["_line"]), "_error": r["_error"]} for r in rows],
        schema={**{RAW + k: pl.String for k in ("event", "ts", "step", "tokens", "data_seconds", "comm_seconds",
                                                  "project", "dtype", *runs.MODEL_FIELDS, *REPORTED)},
                "_row": pl.Int64, "_line": pl.String, "_error": pl.String},
    )
    return frame.with_columns(pl.lit(run_id).alias(RAW + "run_id"), pl.lit(job_id, pl.String).alias(RAW + "job_id"),
                              pl.lit(rel).alias("_file"), pl.lit(fmt).alias("log_format"))


def _config(meta: RunYaml, reading: Reading, ts: str | None) -> dict | None:
    """The run's run_config event, at the log's first time: the model and dtype the log states (Megatron-LM
    prints its arguments), filled in from run.yaml; a value both state differently is no reading of
    either, so the run has no FLOPs a token rather than wrong ones."""
    stated = {**reading.model, **({"dtype": reading.dtype} if reading.dtype else {})}
    given = {**(meta.model.model_dump(exclude_none=True) if meta.model else {}),
             **({"dtype": meta.dtype} if meta.dtype else {})}
    if ts is None or not (stated or given or meta.project):
        return None
    differ = [f"{k} {_text(stated[k])} in the log, {_text(given[k])} in run.yaml" for k in sorted(stated.keys() & given.keys())
              if _text(stated[k]) != _text(given[k])]
    model = {**given, **stated}
    shape = model if all(key in model for key in ("params", "layers", "heads", "head_dim", "seq_len")) else {}
    return {"_row": 0, "_line": "run.yaml and the log's own arguments" if stated else "run.yaml",
            "_error": ("the log and run.yaml state the model differently (" + "; ".join(differ) + "): which is "
                       "right is for the run's owner to say") if differ else None,
            "event": "run_config", "ts": ts, "project": meta.project, "dtype": model.get("dtype"),
            **{col: _text(shape.get(key)) for col, key in runs.MODEL_FIELDS.items()}}


def _text(value) -> str | None:
    if value is None:
        return None
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _refused(source: str, rel: str, reason: str) -> Parsed:
    return Parsed(rows=pl.DataFrame(), rejects=file_reject(source, rel, reason))
