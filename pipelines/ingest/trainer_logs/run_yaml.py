"""A trainer log folder's run.yaml: what a log does not say itself (which run and job it is, the
model, tokens per step, the wall-clock time of a log that prints only elapsed times). The keys and
their meaning: docs/ingest/trainer-logs.md#runyaml."""

from __future__ import annotations

import difflib
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from pipelines.ingest.plans import ModelShape
from pipelines.lib.config.strict_yaml import StrictYamlError, load_yaml, read_yaml_text

RUN_YAML = "run.yaml"
FORMATS = ("megatron", "torchtitan", "nanogpt", "hf_trainer_state", "lightning_csv")


class RunYaml(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    run_id: str | None = Field(None, min_length=1)          # default: the folder's name
    job_id: str | None = Field(None, min_length=1)          # every log of the folder
    job_ids: dict[str, str] | None = None                   # log file name -> job id
    project: str | None = Field(None, min_length=1)
    format: str | None = None                               # default: recognised from the log
    model: ModelShape | None = None
    dtype: str | None = Field(None, min_length=1)
    tokens_per_step: int | None = Field(None, gt=0)
    global_batch_size: int | None = Field(None, gt=0)       # sequences per step
    seq_len: int | None = Field(None, gt=0)                 # tokens per sequence (default: model.seq_len)
    save_steps: int | None = Field(None, gt=0)              # a checkpoint every so many steps (logs that do not say)
    # the checkpoint step a log's job resumed from, for logs that do not say (trainer_state.json,
    # metrics.csv): its entries up to there are an earlier job's
    resume_step: int | None = Field(None, ge=0)
    start: datetime | None = None                           # wall-clock time of the log's zero
    end: datetime | None = None                             # wall-clock time of its last step (logs without times)
    timezone: str = "UTC"                                   # of times the log prints without a zone

    @field_validator("job_id", mode="before")
    @classmethod
    def _job_text(cls, value):
        return str(value) if isinstance(value, int) else value

    @field_validator("job_ids", mode="before")
    @classmethod
    def _job_ids_text(cls, value):
        return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else value

    @field_validator("format")
    @classmethod
    def _known_format(cls, value: str | None) -> str | None:
        if value is not None and value not in FORMATS:
            close = difflib.get_close_matches(value, FORMATS, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ValueError(f"format {value!r} is none of {', '.join(FORMATS)}{hint}")
        return value

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as err:
            raise ValueError(f"timezone {value!r} is no IANA time zone name (e.g. UTC, Europe/Berlin)") from err
        return value

    @model_validator(mode="after")
    def _one_job_key(self):
        if self.job_id and self.job_ids:
            raise ValueError("give job_id (every log) or job_ids (per log file), not both")
        return self

    @property
    def tokens_per_sequence(self) -> int | None:
        return self.seq_len or (self.model.seq_len if self.model else None)

    def seconds_per_step(self, steps: int) -> float | None:
        """For a log without times, the even pace its `steps` took from `start` to `end`."""
        if self.start is None or self.end is None or steps <= 0:
            return None
        return (self.utc(self.end) - self.utc(self.start)).total_seconds() / steps

    def utc(self, wall: datetime) -> datetime:
        """A time as the log (or run.yaml) writes it, in naive UTC: zoned ones converted, naive ones read
        in `timezone`."""
        if wall.tzinfo is None:
            wall = wall.replace(tzinfo=ZoneInfo(self.timezone))
        return wall.astimezone(ZoneInfo("UTC")).replace(tzinfo=None)


class RunYamlError(ValueError):
    """A run.yaml that cannot be read or breaks its schema: every log beside it is refused, naming it."""


def read_run_yaml(folder: Path) -> RunYaml:
    """The folder's run.yaml, or defaults when there is none."""
    path = folder / RUN_YAML
    if not path.is_file():
        return RunYaml()
    try:
        data = load_yaml(read_yaml_text(path), source=RUN_YAML).data or {}
    except (OSError, UnicodeDecodeError, StrictYamlError) as err:
        raise RunYamlError(f"{RUN_YAML} beside it cannot be read: {err}") from err
    if not isinstance(data, dict):
        raise RunYamlError(f"{RUN_YAML} beside it is not a mapping of keys")
    try:
        return RunYaml(**{str(k): v for k, v in data.items()})
    except ValidationError as err:
        problems = "; ".join(_problem(e) for e in err.errors())
        raise RunYamlError(f"{RUN_YAML} beside it: {problems}") from err


def _problem(error: dict) -> str:
    where = ".".join(str(p) for p in error["loc"]) or "the file"
    if error["type"] == "extra_forbidden":
        known = list(RunYaml.model_fields) + list(ModelShape.model_fields)
        close = difflib.get_close_matches(str(error["loc"][-1]), known, n=1)
        return f"unknown key {where}" + (f" (did you mean {close[0]}?)" if close else "")
    return f"{where}: {error['msg'].removeprefix('Value error, ')}"
