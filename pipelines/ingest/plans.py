"""Run plans (plans/*.yaml) → staging.stg_plans__run_plans, one row per file. The keys and what is
refused: docs/ingest/plans.md; the estimate made of them: docs/plans.md.

A plan is one YAML mapping, validated against one schema (`PlanFile`): an unknown key (with the closest
known one suggested), a missing required key, a value of the wrong type or out of range. Every problem
is a quarantine row naming the file, the key and its line; a plan with any problem stages nothing, so a
half-understood plan never sets a budget. `gpuledger plan FILE` reads a file with the same `read_plan`.
"""

from __future__ import annotations

import difflib
from datetime import date
from pathlib import Path
from typing import Any

import polars as pl
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from pipelines.ingest.common import clip
from pipelines.landing.parsed import QUARANTINE_SCHEMA, Parsed, file_reject
from pipelines.lib.config.section import currency as _currency
from pipelines.lib.config.section import Money
from pipelines.lib.config.strict_yaml import MAX_YAML_BYTES, StrictYamlError, load_yaml, read_yaml_text

SOURCE = "plans"
MAX_PLAN_BYTES = MAX_YAML_BYTES  # a plan is a few hundred bytes; a megabyte is not a plan
MAX_PEAK_FLOPS = 1e17  # per GPU: a B200 is 2.25e15 in bf16


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


class ModelShape(_Strict):
    """The transformer's shape, as trainer events' run_config carries it (parameters without embeddings)."""

    params: float = Field(gt=0)
    active_params: float | None = Field(None, gt=0)  # mixture of experts: the parameters a token uses; default params
    layers: int = Field(gt=0)
    heads: int = Field(gt=0)
    head_dim: int = Field(gt=0)
    seq_len: int = Field(gt=0)


class PlanFile(_Strict):
    """A run plan file. Optional inputs left out (or null) are filled from the warehouse or the config,
    with their source named (docs/plans.md#where-the-inputs-come-from)."""

    run_id: str = Field(min_length=1)
    project: str = Field(min_length=1)
    model: ModelShape
    tokens: float = Field(gt=0, description="tokens to train on")
    gpu_model: str = Field(min_length=1)
    gpus: int = Field(gt=0)
    dtype: str | None = Field(None, min_length=1)               # default bf16
    mfu_target: float | None = Field(None, gt=0, le=1)          # default: the config's mfu_target
    redundancy: float | None = Field(None, ge=1, le=10)         # default 1.3
    price_per_gpu_hour: Money | None = Field(None, gt=0)
    currency: str | None = None                                 # of price_per_gpu_hour; default: the config's
    checkpoint_seconds: float | None = Field(None, gt=0)
    restart_seconds: float | None = Field(None, ge=0)
    mtbf_gpu_hours: float | None = Field(None, gt=0)
    start: date | None = None
    # per GPU, FLOP/s, dense, in the plan's dtype (docs/plans.md#peak-flops): for a GPU outside the catalog
    peak_flops: float | None = Field(None, gt=0)

    @field_validator("currency")
    @classmethod
    def _iso_currency(cls, value: str | None) -> str | None:
        return None if value is None else _currency(value)

    @field_validator("price_per_gpu_hour", mode="before")
    @classmethod
    def _price_text(cls, value: Any) -> Any:
        # a YAML float is read through its shortest round-trip text (3.12, not 3.1200000000000001)
        return repr(value) if isinstance(value, float) else value

    @field_validator("peak_flops")
    @classmethod
    def _one_gpu(cls, value: float | None) -> float | None:
        # the catalog's fastest is 5e15 (GB200, fp8): a figure past 1e17 is a node's or a cluster's
        if value is not None and value > MAX_PEAK_FLOPS:
            raise ValueError(f"is one GPU's peak FLOP/s, at most {MAX_PEAK_FLOPS:.0e}: divide a node's or "
                             "cluster's by its GPUs")
        return value

    @field_validator("dtype")
    @classmethod
    def _lower(cls, value: str | None) -> str | None:
        return None if value is None else value.lower()


# The staging row: the plan's keys flattened, model sizes as trainer events name them.
STAGED_SCHEMA: dict[str, pl.DataType] = {
    "_file": pl.String, "_row": pl.Int64, "run_id": pl.String, "project": pl.String,
    "model_params": pl.Float64, "model_active_params": pl.Float64, "model_layers": pl.Int32,
    "model_heads": pl.Int32, "model_head_dim": pl.Int32, "model_seq_len": pl.Int32,
    "tokens": pl.Float64, "gpu_model": pl.String, "gpus": pl.Int32, "dtype": pl.String,
    "mfu_target": pl.Float64, "redundancy": pl.Float64, "price_per_gpu_hour": pl.Decimal(38, 18),
    "currency": pl.String, "checkpoint_seconds": pl.Float64, "restart_seconds": pl.Float64,
    "mtbf_gpu_hours": pl.Float64, "start": pl.Date, "peak_flops": pl.Float64,
}


def read_plan(text: str) -> tuple[PlanFile | None, list[tuple[int, str]]]:
    """The plan in `text`, or None and every problem as (line, message naming the key); line 0 when the
    problem is the whole document's."""
    try:
        document = load_yaml(text, max_bytes=MAX_PLAN_BYTES)
    except StrictYamlError as err:  # not YAML, a duplicate key, an alias, over a limit
        return None, [(err.line, err.problem)]
    raw, lines = document.data, document.key_lines
    if not isinstance(raw, dict):
        return None, [(0, f"a plan is a mapping of keys (run_id:, model:, tokens: …), not a {type(raw).__name__}")]
    try:
        return PlanFile.model_validate(raw), []
    except ValidationError as err:
        return None, _problems(err, lines)


def _problems(err: ValidationError, lines: dict[tuple, int]) -> list[tuple[int, str]]:
    out = []
    for problem in err.errors():
        loc = tuple(str(p) for p in problem["loc"])
        key = ".".join(loc) or "(top level)"
        line = next((lines[loc[:n]] for n in range(len(loc), 0, -1) if loc[:n] in lines), 0)
        if problem["type"] == "extra_forbidden":
            known = list((ModelShape if loc[:1] == ("model",) else PlanFile).model_fields)
            close = difflib.get_close_matches(loc[-1], known, n=1, cutoff=0.6)
            hint = f" — did you mean `{close[0]}`?" if close else f" (known keys: {', '.join(known)})"
            out.append((line, f"unknown key `{key}`{hint}"))
        elif problem["type"] == "missing":
            out.append((line, f"missing key `{key}`"))
        else:
            shown = "" if isinstance(problem["input"], dict) else f" (got {problem['input']!r})"
            out.append((line, f"`{key}`: {problem['msg'].removeprefix('Value error, ')}{shown}"))
    return sorted(out)


def plan_row(plan: PlanFile, file: str) -> dict:
    """The staging row of a plan (column names and types: STAGED_SCHEMA)."""
    m = plan.model
    return {
        "_file": file, "_row": 1, "run_id": plan.run_id, "project": plan.project,
        "model_params": m.params, "model_active_params": m.active_params if m.active_params is not None else m.params,
        "model_layers": m.layers, "model_heads": m.heads, "model_head_dim": m.head_dim, "model_seq_len": m.seq_len,
        "tokens": plan.tokens, "gpu_model": plan.gpu_model, "gpus": plan.gpus, "dtype": plan.dtype,
        "mfu_target": plan.mfu_target, "redundancy": plan.redundancy, "price_per_gpu_hour": plan.price_per_gpu_hour,
        "currency": plan.currency, "checkpoint_seconds": plan.checkpoint_seconds,
        "restart_seconds": plan.restart_seconds, "mtbf_gpu_hours": plan.mtbf_gpu_hours, "start": plan.start,
        "peak_flops": plan.peak_flops,
    }


def plan_frame(rows: list[dict]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=STAGED_SCHEMA, orient="row")


def parse(path: Path, file: str) -> Parsed:
    try:
        text = read_yaml_text(path, MAX_PLAN_BYTES)
    except StrictYamlError as err:
        return Parsed(rows=plan_frame([]), rejects=file_reject(SOURCE, file, err.problem))
    except (OSError, UnicodeDecodeError) as err:
        return Parsed(rows=plan_frame([]), rejects=file_reject(SOURCE, file, f"unreadable file: {err}"))
    plan, problems = read_plan(text)
    if plan is None:
        rejects = pl.DataFrame(
            [{"source": SOURCE, "file": file, "row_ref": f"line {line}" if line else "file", "reason": reason,
              "payload": clip(text)} for line, reason in problems],
            schema=QUARANTINE_SCHEMA)
        return Parsed(rows=plan_frame([]), rejects=rejects)
    return Parsed(rows=plan_frame([plan_row(plan, file)]))
