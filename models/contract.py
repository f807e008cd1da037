"""A data contract: the columns a table's rows carry, their types, and the checks every row must pass.

A contract is written once and used three ways:

- on ingest, `failures()` gives each check as polars expressions — which rows fail, and the reason
  worded from the row's own value — evaluated with the parser's own checks in one pass over a chunk
  (`pipelines/ingest/common.split_by_contract`);
- on the set-based readers, `sql_failed()` gives the same checks as one DuckDB expression, which decides
  whether a row is bad where rows are read in SQL (`pipelines/ingest/dcgm_batch.py`);
- on the staging table, `to_pandera()` gives the same contract as a pandera schema, which the blocking
  asset check validates the day's rows with (`pipelines/ingest/staging_asset.contract_check`).

A staging table's contract lists every column of the table, checked or not, so the table's DDL is made
from it too (`ddl()`): one schema per table, which the warehouse creates and a parser's rows are held to.

A failed check becomes a reason here, once, in plain words (`effective_cost is empty`, `gpu -1 is
negative`, `charge_category 'Refund' is not one of Usage, Purchase, Tax, Credit, Adjustment`, a row
check by its name): `ops.quarantine.reason` and `gpuledger inspect` say what this module says. Each
check keeps pandera's name for it (`not_nullable`, `isin([...])`), so a pandera failure case is worded
by the same rule (`Rule.says`), and tests/unit/test_contract.py holds the two to agree row by row.
Parsing does not go through pandera itself because it is the slow part of a parse: importing it (with
pandas) takes half a second, and validating runs a query per check and chunk; these expressions cost a
few milliseconds per chunk. The semantics are pandera's: a column's checks ignore its nulls, a
non-nullable float column also refuses NaN (as missing only: pandera also holds it to the bounds), and
extra columns are allowed (parsers keep raw and bookkeeping columns beside).
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import polars as pl


@dataclass(frozen=True)
class Rule:
    """One check of one column: pandera's name for it (as its failure cases name it), which rows fail
    it, and `says`, the plain reason worded from a failing value's text (null for a null value)."""

    column: str
    pandera: str
    fails: pl.Expr
    says: Callable[[pl.Expr], pl.Expr]


@dataclass(frozen=True)
class Failure:
    """A check as ingest evaluates it: which rows fail, their reason, and the columns it judges — a row
    whose value of one of them its parser could not read is not judged by it (the parser names that
    value itself; `split_by_contract`)."""

    fails: pl.Expr
    reason: pl.Expr
    judges: tuple[str, ...]


@dataclass(frozen=True)
class Column:
    """One column's type and value checks; a bound of None is no bound. `doc` is what the column holds,
    as the table's DDL comments it; `default`, the table's default (a constant); `provenance`, a column
    the pipeline sets to say where a row came from (`_file`, `_row`, `source`): NOT NULL in the table,
    never judged as a value of the row, and left out of the day's rows the asset check reads."""

    dtype: pl.DataType
    nullable: bool = False
    isin: tuple[str, ...] | None = None
    min_length: int | None = None
    ge: Any = None
    gt: Any = None
    le: Any = None
    lt: Any = None
    doc: str = ""
    default: Any = None
    provenance: bool = False

    @property
    def sql_type(self) -> str:
        return _sql_type(self.dtype)

    def rules(self, name: str) -> list[Rule]:
        """Its checks in the order pandera runs them: nullability, then each check of a present value
        (a null value fails none of those). A provenance column has none."""
        if self.provenance:
            return []
        c = pl.col(name)
        present = c.is_not_null()
        found = []
        if not self.nullable:
            missing = c.is_null() | c.is_nan() if self.dtype.is_float() else c.is_null()
            found.append(Rule(name, "not_nullable", missing, lambda text: _empty(name, text)))
            # a NaN is then missing, said once, and not also held to the bounds as pandera holds it
            present = ~missing
        # pandera's name, the bound, a present value that passes, and what a failing one is
        bounds = (("greater_than", self.gt, lambda b: c > b, "is not more than"),
                  ("greater_than_or_equal_to", self.ge, lambda b: c >= b, "is less than"),
                  ("less_than", self.lt, lambda b: c < b, "is not less than"),
                  ("less_than_or_equal_to", self.le, lambda b: c <= b, "is more than"))
        for check, bound, passes, words in bounds:
            if bound is None:
                continue
            # `gpu -1 is negative` reads better than `gpu -1 is less than 0`
            says = "is negative" if check == "greater_than_or_equal_to" and bound == 0 else f"{words} {bound}"
            found.append(Rule(name, f"{check}({bound})", present & ~passes(bound), self._worded(name, says)))
        if self.isin is not None:
            found.append(Rule(name, f"isin({list(self.isin)!r})", present & ~c.is_in(list(self.isin)),
                              self._worded(name, f"is not one of {', '.join(self.isin)}")))
        if self.min_length is not None:
            short = present & (c.str.len_chars() < self.min_length)
            n = self.min_length
            says = ((lambda text: _empty(name, text)) if n == 1
                    else self._worded(name, f"is shorter than {n} characters"))
            found.append(Rule(name, f"str_length({n}, None)", short, says))
        return found

    def sql_fails(self, name: str) -> list[str]:
        """Its checks as DuckDB SQL over column `name`, in the order of `rules()`: each true exactly
        where that rule fails (tests/unit/test_contract.py holds the two to agree row by row)."""
        if self.provenance:
            return []
        present = f"{name} IS NOT NULL"
        found = []
        if not self.nullable:
            # NaN as "neither finite nor infinite": DuckDB 2.0 folds isnan() to false on a Parquet column
            # whose statistics show no NaN (they never count one), and finds no NaN a file holds
            nan = f"(NOT isfinite({name}) AND NOT isinf({name}))"
            missing = f"({name} IS NULL OR {nan})" if self.dtype.is_float() else f"{name} IS NULL"
            found.append(missing)
            present = f"NOT ({missing})"
        for op, bound in ((">", self.gt), (">=", self.ge), ("<", self.lt), ("<=", self.le)):
            if bound is not None:
                found.append(f"({present} AND NOT ({name} {op} {_sql_literal(bound)}))")
        if self.isin is not None:
            found.append(f"({present} AND {name} NOT IN ({', '.join(_sql_literal(v) for v in self.isin)}))")
        if self.min_length is not None:
            found.append(f"({present} AND length({name}) < {self.min_length})")
        return found

    def _definition(self) -> str:
        """`TYPE [NOT NULL] [DEFAULT value]`, as the table declares the column."""
        not_null = "" if self.nullable else " NOT NULL"
        default = "" if self.default is None else f" DEFAULT {_sql_literal(self.default)}"
        return f"{self.sql_type}{not_null}{default}"

    def _worded(self, name: str, says: str) -> Callable[[pl.Expr], pl.Expr]:
        """`<column> <value> <says>`: text quoted as the parsers quote it, numbers bare."""
        quoted = self.dtype == pl.String

        def worded(text: pl.Expr) -> pl.Expr:
            value = pl.format("'{}'", text) if quoted else _number(text, self.dtype)
            return pl.format("{} {} {}", pl.lit(name), value, pl.lit(says))

        return worded


def _empty(name: str, text: pl.Expr) -> pl.Expr:
    """A missing value: empty, or NaN (which a float column refuses as missing)."""
    return pl.when(text.eq_missing(pl.lit("NaN"))).then(pl.lit(f"{name} is NaN, not a number")).otherwise(
        pl.lit(f"{name} is empty"))


def _sql_literal(value: Any) -> str:
    """A bound, allowed or default value of a contract (a constant of models/, never input) as SQL."""
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"no SQL form for the contract value {value!r}")
    return repr(value)


_SQL_TYPES = {pl.String: "VARCHAR", pl.Int64: "BIGINT", pl.Int32: "INTEGER", pl.Float64: "DOUBLE",
              pl.Boolean: "BOOLEAN", pl.Date: "DATE"}


def _sql_type(dtype: pl.DataType) -> str:
    """A column's DuckDB type: the one DuckDB gives back as this polars type (tests/unit/test_contract.py)."""
    if isinstance(dtype, pl.Decimal):
        return f"DECIMAL({dtype.precision}, {dtype.scale})"
    if isinstance(dtype, pl.Datetime):
        if dtype.time_unit != "us" or dtype.time_zone is not None:
            raise TypeError(f"staging times are naive UTC microseconds, not {dtype}")
        return "TIMESTAMP"
    if isinstance(dtype, pl.List):
        return _sql_type(dtype.inner) + "[]"
    for polars_type, sql_type in _SQL_TYPES.items():
        if dtype == polars_type:
            return sql_type
    raise TypeError(f"no DuckDB type for the contract type {dtype}")


def _number(text: pl.Expr, dtype: pl.DataType) -> pl.Expr:
    """A number's text; a DECIMAL's without the trailing zeros of its scale (-2.25, not -2.250000000000000000)."""
    if isinstance(dtype, pl.Decimal):
        return text.str.replace(r"(\.\d*?)0+$", "${1}").str.strip_suffix(".")
    return text


@dataclass(frozen=True)
class RowCheck:
    """A check on each row as a whole: `passes()` is true for a good row (a function, so a check
    against the clock is built when it runs); `name` is the reason a failing row gets; `reads`, the
    columns it compares."""

    name: str
    passes: Callable[[], pl.Expr]
    reads: tuple[str, ...]
    sql: str | None = None  # `passes` as DuckDB SQL, for the readers that check rows in SQL


@dataclass(frozen=True, eq=False)  # a contract is itself: compared and hashed by identity
class Contract:
    name: str
    description: str
    columns: dict[str, Column]
    row_checks: tuple[RowCheck, ...] = field(default=())
    table: str | None = None  # the staging table it is the schema of ("staging/stg_focus__bill_lines")
    table_doc: str = ""       # what the table holds beyond `description`, as its DDL's header says

    def mismatches(self, schema: pl.Schema) -> list[str]:
        """Columns missing or of another type: a parser's bug, never bad input. Provenance columns
        are the writer's, not the parser's; a column that may be NULL and has no check may be left
        out (the table holds NULL there), but one a parser gives must be of the table's type."""
        found = []
        for name, column in self.columns.items():
            if column.provenance or (name not in schema and column.nullable and not column.rules(name)):
                continue
            if name not in schema:
                found.append(f"column {name!r} is missing")
            elif schema[name] != column.dtype:
                found.append(f"column {name!r} is {schema[name]}, not {column.dtype}")
        return found

    def rules(self) -> list[Rule]:
        return [rule for name, column in self.columns.items() for rule in column.rules(name)]

    def failures(self) -> list[Failure]:
        """Every check, in pandera's order: per column its nullability, then its value checks; then
        the row checks. Each reason is worded from the row's own value."""
        found = [Failure(rule.fails, rule.says(pl.col(rule.column).cast(pl.String)), (rule.column,))
                 for rule in self.rules()]
        for check in self.row_checks:
            found.append(Failure(~check.passes(), pl.lit(check.name), check.reads))
        return found

    def sql_failed(self) -> str:
        """DuckDB SQL true for a row that fails any check, over columns named as the contract's: the
        set-based readers decide a bad row by it, so one declaration decides on every path."""
        fails = [f for name, column in self.columns.items() for f in column.sql_fails(name)]
        for check in self.row_checks:
            if check.sql is None:
                raise ValueError(f"{self.name}: the row check {check.name!r} has no SQL form")
            fails.append(f"coalesce(NOT ({check.sql}), FALSE)")  # a null is no failure, as in polars
        return "(" + " OR ".join(fails) + ")" if fails else "FALSE"

    def ddl(self) -> str:
        """The table's DDL: CREATE TABLE with every column, commented; then each column that may be
        NULL added where missing, so a warehouse made by an older version gains the columns added
        since (NULL, or the default, on its earlier rows) and upgrading never needs a rebuild."""
        if self.table is None:
            raise ValueError(f"{self.name} is the contract of no table")
        qualified = self.table.replace("/", ".")
        width = max(len(name) for name in self.columns)
        lines = []
        for i, (name, column) in enumerate(self.columns.items()):
            definition = f"{name:<{width}} {column._definition()}" + ("," if i < len(self.columns) - 1 else "")
            lines.append(f"    {definition:<{width + 30}} -- {column.doc}" if column.doc else f"    {definition}")
        header = "\n".join(f"-- {line}" for line in textwrap.wrap(f"{self.description} {self.table_doc}".strip(), 100))
        statements = [f"{header}\nCREATE TABLE IF NOT EXISTS {qualified} (\n" + "\n".join(lines) + "\n)"]
        statements += [f"ALTER TABLE {qualified} ADD COLUMN IF NOT EXISTS {name} {column._definition()}"
                       for name, column in self.columns.items() if column.nullable]
        return ";\n".join(statements) + ";\n"

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
            {name: column(spec) for name, spec in self.columns.items() if not spec.provenance},
            checks=[row_check(c) for c in self.row_checks],
            name=self.name,
            strict=False,
            coerce=False,
        )

