"""The base of every mapping of the organisation config (pipelines/lib/config.py and the modules of
its larger sections): unknown keys are errors, values are immutable once loaded, an empty key means
its default."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, model_validator


class Section(BaseModel):
    """A mapping in the file: unknown keys are errors, values are immutable once loaded."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    @model_validator(mode="before")
    @classmethod
    def _empty_means_default(cls, data: Any) -> Any:
        # `pools:` with every entry commented out is null in YAML: it means "none", i.e. the default
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if v is not None}
        return data
