"""The days a bill file refused whole (a column named twice, say) covers, read from its charge period
as far as it can be: those days are not complete, and not every day is, as for a file that says none.
A bill source's declaration names its charge period columns (pipelines/ingest/sources.py)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path

import polars as pl

from pipelines.ingest.common import utc


def charge_days(*periods: tuple[str, str]) -> Callable[[Path], tuple[date, date] | None]:
    """A reader of the first and last day a file's (start, end) charge period columns cover, trying
    each pair of column names in turn; None when the file does not say."""
    def days(path: Path) -> tuple[date, date] | None:
        try:
            if path.name.lower().endswith(".parquet"):
                frame = pl.scan_parquet(path)
            else:  # polars renames a repeated column; bytes that are not UTF-8 do not matter here
                frame = pl.scan_csv(path, infer_schema=False, encoding="utf8-lossy", glob=False,
                                    truncate_ragged_lines=True)
            names = {n.strip(): n for n in frame.collect_schema().names()}
            for start, end in periods:
                if start in names and end in names:
                    first, last = frame.select(
                        utc(pl.col(names[start]).cast(pl.String).str.strip_chars()).min(),
                        (utc(pl.col(names[end]).cast(pl.String).str.strip_chars()) - pl.duration(microseconds=1)).max(),
                    ).collect().row(0)
                    return (first.date(), last.date()) if first and last else None
        except Exception:  # a file refused for being unreadable may well not say
            return None
        return None

    return days
