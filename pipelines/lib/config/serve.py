"""The `serve:` section: the tokens `gpuledger serve` accepts (as sha256 hashes, never the token) and the
teams each may see, `"*"` for every team (finance, admins); and the limits on one request. docs/serve.md."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from pipelines.lib.config.section import Section as _Section


class ServeToken(_Section):
    name: str | None = None  # who holds it, for the operators; never logged with the token
    sha256: str = Field(pattern=r"^[0-9a-fA-F]{64}$")
    teams: list[str] | Literal["*"]

    @field_validator("teams")
    @classmethod
    def _some_team(cls, value):
        if isinstance(value, list) and not value:
            raise ValueError('name at least one team, or "*" for every team')
        return value


class ServeConfig(_Section):
    tokens: list[ServeToken] = Field(default_factory=list)
    max_window_days: int = Field(400, ge=1, le=3660)
    max_rows: int = Field(10_000, ge=1, le=1_000_000)
