"""One rule for every CSV gpuledger writes: a text cell that a spreadsheet would run as a formula
(it starts with = + - @, a tab or a carriage return) is written with a leading apostrophe, so
`=HYPERLINK(...)` in a project tag or job name stays text when finance opens the file. Money and
numbers are written as numbers and never guarded (a negative credit stays `-1.11`)."""

from __future__ import annotations

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def guard(text: object) -> str:
    """A text cell for a CSV file written from Python."""
    text = "" if text is None else str(text)
    return "'" + text if text[:1] in FORMULA_PREFIXES else text


def guard_sql(column: str) -> str:
    """The same rule as a DuckDB expression over a text column (a constant name of the caller)."""
    prefixes = ", ".join("'" + p + "'" for p in FORMULA_PREFIXES)
    return f"CASE WHEN left({column}, 1) IN ({prefixes}) THEN '''' || {column} ELSE {column} END"


def guard_frame(frame):
    """The same rule over every text column of a polars frame that is about to become CSV."""
    import polars as pl

    return frame.with_columns(
        pl.when(pl.col(name).str.slice(0, 1).is_in(list(FORMULA_PREFIXES)))
        .then(pl.lit("'") + pl.col(name))
        .otherwise(pl.col(name))
        .alias(name)
        for name, dtype in frame.schema.items()
        if dtype == pl.String
    )
