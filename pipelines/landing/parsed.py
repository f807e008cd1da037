"""A landing file after parsing: rows for its staging table and rejects for ops.quarantine, as every
parser returns them and the landing writer takes them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import polars as pl

from models.landing import MONEY, ROUNDING, TS

QUARANTINE_SCHEMA: dict[str, pl.DataType] = {
    "source": pl.String,
    "file": pl.String,
    "row_ref": pl.String,
    "reason": pl.String,
    "payload": pl.String,
    "effective_cost": MONEY,
    "billed_cost": MONEY,
    "billing_currency": pl.String,
    # what rounding the amount to 1e-18 took off: the file's exact amount is effective_cost + this
    "effective_cost_rounding": ROUNDING,
    "billed_cost_rounding": ROUNDING,
    "charge_period_start": TS,
    "charge_period_end": TS,
    "day": pl.Date,
}


@dataclass
class Parsed:
    """A landing file after parsing: rows ready for staging, and the rejects for ops.quarantine."""

    rows: pl.DataFrame
    rejects: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=QUARANTINE_SCHEMA))
    dropped: dict[str, int] = field(default_factory=dict)  # counted, deliberately not staged (e.g. DCGM sentinels)
    # staged rows that lacked a value and took a configured default: column -> {default: rows}
    # (e.g. {"billing_currency": {"USD": 1281}} for a bill without BillingCurrency)
    defaulted: dict[str, dict[str, int]] = field(default_factory=dict)
    # which of its source's formats the file was read as, for a source of several (nvidia-smi's
    # `query-gpu csv` and `dmon`): what `inspect` counts per format
    read_as: str | None = None


def empty_rejects() -> pl.DataFrame:
    return pl.DataFrame(schema=QUARANTINE_SCHEMA)


def refuses_file(parsed: Parsed) -> bool:
    """Whether `parsed` is a whole file refused (unreadable, or not the format): nothing staged."""
    return parsed.rows.height == 0 and parsed.rejects.height > 0 and (parsed.rejects["row_ref"] == "file").all()


def combine(parts: Iterable[Parsed]) -> Parsed:
    """The chunks of a file parsed one by one, as one Parsed; a file refused part-way is refused whole
    (what was staged from it before is let go, as if it had been unreadable from the start)."""
    parts = list(parts)
    refused = [p for p in parts if refuses_file(p)]
    if refused:
        return refused[-1]
    staged = [p.rows for p in parts if p.rows.width]
    rejects = [p.rejects for p in parts if p.rejects.height]
    combined = Parsed(rows=pl.concat(staged) if staged else pl.DataFrame(),
                      rejects=pl.concat(rejects) if rejects else empty_rejects())
    for p in parts:
        for reason, n in p.dropped.items():
            combined.dropped[reason] = combined.dropped.get(reason, 0) + n
        for column, counts in p.defaulted.items():
            into = combined.defaulted.setdefault(column, {})
            for value, n in counts.items():
                into[value] = into.get(value, 0) + n
    return combined


def file_reject(source: str, file: str, reason: str) -> pl.DataFrame:
    """One quarantine row standing for a whole file that could not be read."""
    return pl.DataFrame(
        [{"source": source, "file": file, "row_ref": "file", "reason": reason or f"unreadable {source} file"}],
        schema=QUARANTINE_SCHEMA,
    )


def conform(frame: pl.DataFrame, schema: dict[str, pl.DataType],
            defaults: dict[str, pl.Expr] | None = None) -> pl.DataFrame:
    """`frame` with exactly `schema`'s columns, in its order and types: a column it lacks is NULL, or its
    default; a NULL where a default is given takes the default."""
    defaults = defaults or {}

    def column(name: str, dtype: pl.DataType) -> pl.Expr:
        given = pl.col(name) if name in frame.columns else pl.lit(None)
        return (pl.coalesce(given, defaults[name]) if name in defaults else given).cast(dtype).alias(name)

    return frame.select([column(name, dtype) for name, dtype in schema.items()])
