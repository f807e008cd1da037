"""A data contract: the columns a table's rows carry, their types, and the checks every row must pass.

A contract is written once and used two ways:

- on ingest, `failures()` gives each check as a pair of polars expressions — which rows fail, and the
  reason worded from the row's own value — evaluated with the parser's own checks in one pass over a
  chunk (`pipelines/ingest/common.split_by_contract`);
- on the staging table, `to_pandera()` gives the same contract as a pandera schema, which the blocking
  asset check validates the day's rows with (`pipelines/ingest/staging_asset.contract_check`).

Both say the same: reasons are worded as pandera words a failure case (`gpu
greater_than_or_equal_to(0) failed (value -1)`, `value not_nullable failed (value NaN)`, a row check by
its name), and tests/unit/test_contract.py holds the two to agree row by row. Parsing does not go
through pandera itself because it is the slow part of a parse: importing it (with pandas) takes half a
second, and validating runs a query per check and chunk; these expressions cost a few milliseconds per
chunk. The semantics are pandera's: a column's checks ignore its nulls, a non-nullable float column
also refuses NaN, and extra columns are allowed (parsers keep raw and bookkeeping columns beside).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import polars as pl

# (the row fails, the reason): as the parsers' own checks are written (pipelines/ingest/common.py)
Failure = tuple[pl.Expr, pl.Expr]


@dataclass(frozen=True)
class Column:
    """One column's type and value checks; a bound of None is no bound."""

    dtype: pl.DataType
    nullable: bool = False
    isin: tuple[str, ...] | None = None
    min_length: int | None = None
    ge: Any = None
    gt: Any = None
    le: Any = None
    lt: Any = None

    def checks(self, name: str) -> list[tuple[str, pl.Expr]]:
        """(pandera's wording of the check, the expression a present value must satisfy), in the order
        pandera runs them."""
        c = pl.col(name)
        found = []
        if self.gt is not None:
            found.append((f"greater_than({self.gt})", c > self.gt))
        if self.ge is not None:
            found.append((f"greater_than_or_equal_to({self.ge})", c >= self.ge))
        if self.lt is not None:
            found.append((f"less_than({self.lt})", c < self.lt))
        if self.le is not None:
            found.append((f"less_than_or_equal_to({self.le})", c <= self.le))
        if self.isin is not None:
            found.append((f"isin({list(self.isin)!r})", c.is_in(list(self.isin))))
        if self.min_length is not None:
            found.append((f"str_length({self.min_length}, None)", c.str.len_chars() >= self.min_length))
        return found


@dataclass(frozen=True)
class RowCheck:
    """A check on each row as a whole: `passes()` is true for a good row (a function, so a check
    against the clock is built when it runs); `name` is the reason a failing row gets."""

    name: str
    passes: Callable[[], pl.Expr]


@dataclass(frozen=True, eq=False)  # a contract is itself: compared and hashed by identity
class Contract:
    name: str
    description: str
    columns: dict[str, Column]
    row_checks: tuple[RowCheck, ...] = field(default=())

    def mismatches(self, schema: pl.Schema) -> list[str]:
        """Columns missing or of another type: a parser's bug, never bad input."""
        found = []
        for name, column in self.columns.items():
            if name not in schema:
                found.append(f"column {name!r} is missing")
            elif schema[name] != column.dtype:
                found.append(f"column {name!r} is {schema[name]}, not {column.dtype}")
        return found

    def failures(self) -> list[Failure]:
        """Every check as (fails, reason), in pandera's order: per column its nullability, then its
        value checks (a null value fails none of them); then the row checks."""
        found: list[Failure] = []
        for name, column in self.columns.items():
            c = pl.col(name)
            value = c.cast(pl.String).fill_null("null")
            missing = c.is_null() | c.is_nan() if column.dtype.is_float() else c.is_null()
            if not column.nullable:
                found.append((missing, _worded(name, "not_nullable", value)))
            for check, passes in column.checks(name):
                found.append((c.is_not_null() & ~passes, _worded(name, check, value)))
        for check in self.row_checks:
            found.append((~check.passes(), pl.lit(check.name)))
        return found

    def to_pandera(self):
        """The contract as a pandera (polars) schema. Imported here, not at the top: parsing never needs it."""
        import pandera.polars as pa

        def column(spec: Column) -> pa.Column:
            checks = []
            for name, value in (("gt", spec.gt), ("ge", spec.ge), ("lt", spec.lt), ("le", spec.le)):
                if value is not None:
                    checks.append(getattr(pa.Check, name)(value))
            if spec.isin is not None:
                checks.append(pa.Check.isin(list(spec.isin)))
            if spec.min_length is not None:
                checks.append(pa.Check.str_length(min_value=spec.min_length))
            return pa.Column(spec.dtype, checks=checks, nullable=spec.nullable)

        def row_check(check: RowCheck) -> pa.Check:
            return pa.Check(lambda data: data.lazyframe.select(check.passes()), name=check.name)

        return pa.DataFrameSchema(
            {name: column(spec) for name, spec in self.columns.items()},
            checks=[row_check(c) for c in self.row_checks],
            name=self.name,
            strict=False,
            coerce=False,
        )


def _worded(column: str, check: str, value: pl.Expr) -> pl.Expr:
    return pl.format("{} {} failed (value {})", pl.lit(column), pl.lit(check), value)
