"""The base of every mapping of the organisation config (pipelines/lib/config/__init__.py and the modules of
its larger sections): unknown keys are errors, values are immutable once loaded, an empty key means
its default. `Money` is the type of every amount the config (or a run plan) gives."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, model_validator

from models.currencies import check_currency
from models.landing import MAX_AMOUNT_DIGITS

# The warehouse keeps money as DECIMAL(38,18), to 1e-18, and an amount of the books is below 1e12, the
# limit bill lines have too (models/landing.py; docs/landing.md#amounts-and-currencies), so their sums fit.
# A config amount has no rounding record beside it, so one the type cannot hold exactly is refused rather
# than rounded, and one past the limit is refused rather than left to fail every day's run.
MONEY_PRECISION, MONEY_SCALE = 38, 18
MONEY_LIMIT = Decimal(10) ** MAX_AMOUNT_DIGITS


def _exact_money(value: Decimal) -> Decimal:
    # pydantic has already refused NaN and infinities (a Decimal field allows no inf/nan). Both checks
    # are exact: copy_abs and as_tuple do not round to the context's 28 digits as abs() and quantize do.
    if value.copy_abs() >= MONEY_LIMIT:
        raise ValueError(f"{value} is beyond what the books hold: an amount must be below 1e{MAX_AMOUNT_DIGITS} "
                         f"in magnitude, as a bill line's")
    _, digits, exponent = value.as_tuple()
    significant = "".join(map(str, digits)).rstrip("0")
    if significant and exponent + (len(digits) - len(significant)) < -MONEY_SCALE:
        raise ValueError(f"{value} has more than {MONEY_SCALE} decimal places, the warehouse's precision "
                         f"(DECIMAL({MONEY_PRECISION},{MONEY_SCALE})): it would be rounded")
    return value


Money = Annotated[Decimal, AfterValidator(_exact_money)]


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


MONTH = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")
# a Slurm ClusterName as a landing folder and a sacct argument: no path separator, no leading '-'
CLUSTER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def currency(value: str) -> str:
    # a code ISO 4217 does not have (or `usd` for USD) would open a currency of its own, never added up
    problem = check_currency(value)
    if problem:
        raise ValueError(problem)
    return value
