"""Query results as people and programs read them: a table that fits the terminal, money to the cent
(exact in the machine formats), and CSV, JSON and Parquet for the tools after it.

- Table: as many columns as fit the terminal's width (80 when it is no terminal), the rest named in a
  line below; DECIMAL money (scale 10 or more: money and money per token) to the cent, thousands
  separated; long text cut with "…".
- CSV: every value exact as DuckDB has it; lists, structs and maps as JSON text, intervals as their
  text, formula-like text guarded (pipelines/lib/csv_cells.py).
- JSON: an array of objects; DECIMAL as a string (never a float), dates and times ISO 8601, lists and
  structs as JSON.
- Parquet: the frame as it is, DECIMAL kept.
"""

from __future__ import annotations

import json
import shutil
import sys
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path

import polars as pl

# Decimal columns of at least this scale are money (DECIMAL(38,18)) or money per token (DECIMAL(38,10)):
# shown to the cent in a table. Smaller scales (a GPU share of 0.429) are shown as stored.
MONEY_SCALE_AT_LEAST = 10
TEXT_WIDTH = 40   # characters of a text cell shown in a table before "…"


def print_table(frame: pl.DataFrame, max_rows: int = 200, width: int | None = None) -> None:
    """The frame as a table `width` characters wide at most (the terminal's): its leading columns that
    fit, the others named below it."""
    width = width or shutil.get_terminal_size((80, 24)).columns
    shown = _for_people(frame.head(max_rows))
    with pl.Config(tbl_rows=max_rows, tbl_cols=-1, tbl_width_chars=10_000, fmt_str_lengths=TEXT_WIDTH,
                   tbl_hide_column_data_types=True, tbl_hide_dataframe_shape=True, thousands_separator=","):
        keep, text = [], ""
        for name in shown.columns:   # as rendered, so the width is the table's own
            candidate = str(shown.select(*keep, name))
            if keep and max(map(len, candidate.splitlines())) > width:
                break
            keep, text = [*keep, name], candidate
        print(text)
    left = [c for c in frame.columns if c not in keep]
    if left:
        print(f"… {len(left)} more column(s) not shown at {width} characters: {', '.join(left)} "
              "(select fewer columns, or use --csv or --json)")
    if frame.height > max_rows:
        print(f"… {frame.height - max_rows:,} more rows (use --csv or --json for all)")


def _for_people(frame: pl.DataFrame) -> pl.DataFrame:
    """What a table cell can show: the CSV's text for nested values and intervals, money to the cent."""
    return _flat(frame).with_columns(
        pl.col(name).round(2).cast(pl.Decimal(38, 2)) for name, dtype in frame.schema.items()
        if isinstance(dtype, pl.Decimal) and (dtype.scale or 0) >= MONEY_SCALE_AT_LEAST)


def write_csv(frame: pl.DataFrame) -> str:
    from pipelines.lib.csv_cells import guard_frame

    return guard_frame(_flat(frame)).write_csv()


def write_json(frame: pl.DataFrame) -> str:
    rows = [{k: _plain(v) for k, v in row.items()} for row in frame.iter_rows(named=True)]
    return json.dumps(rows, indent=1, ensure_ascii=False) + "\n"


def write_parquet(frame: pl.DataFrame, out: Path) -> None:
    flat = frame.with_columns(pl.col(n).cast(pl.String) for n, t in frame.schema.items() if t == pl.Object)
    if str(out) == "-":
        flat.write_parquet(sys.stdout.buffer)
    else:
        flat.write_parquet(out)


def _flat(frame: pl.DataFrame) -> pl.DataFrame:
    """What CSV holds: lists, structs and maps as JSON text; intervals as their text."""
    out = []
    for name, dtype in frame.schema.items():
        if dtype.is_nested() or dtype == pl.Object:
            out.append(pl.Series(name, [_json_text(v) for v in frame[name].to_list()], dtype=pl.String))
        elif isinstance(dtype, pl.Duration):
            out.append(pl.col(name).cast(pl.String))
    return frame.with_columns(out) if out else frame


def _json_text(value: object) -> str | None:
    return None if value is None else json.dumps(_plain(value), ensure_ascii=False)


def _plain(value: object) -> object:
    """A value as JSON holds it exactly: Decimal as its text, times ISO 8601, nested values inside out."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, timedelta):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not abs(value) < float("inf"):   # NaN and infinities are no JSON numbers
        return None if value != value else str(value)
    return value
