"""Which days a report covers, and which labels are safe to name its files.

The CLI and the Dagster asset pass what a person typed (`--day 2026-11-01`, `--month 2026-11`,
`--team pretrain`), so every check here ends in a ValueError that says what was wrong and what is
expected; callers print the message as it is.
"""

from __future__ import annotations

import re
from calendar import monthrange
from datetime import date, timedelta

from pipelines.lib.dates import parse_day

_MONTH = re.compile(r"(\d{4})-(\d{2})")
# A label names a report file: refuse anything that could climb out of the team's folder.
_SAFE_LABEL = re.compile(r"\d{4}-\d{2}(?:-\d{2})?")

# A day report also shows the trend of the days before it, so a single bar is never all there is.
TREND_DAYS = 7


def period_of(day: str | None, month: str | None) -> tuple[date, date, str]:
    """The first and last day (inclusive, UTC) and the label (file name) of a report for exactly one
    of `day` ("YYYY-MM-DD") or `month` ("YYYY-MM")."""
    day = None if day is None or str(day).strip() == "" else str(day).strip()
    month = None if month is None or str(month).strip() == "" else str(month).strip()
    if day is not None and month is not None:
        raise ValueError(f"give a day or a month, not both (got day {day!r} and month {month!r})")
    if day is None and month is None:
        raise ValueError("give the report's period: a day (YYYY-MM-DD) or a month (YYYY-MM)")
    if day is not None:
        d = parse_day(day)
        return d, d, d.isoformat()
    m = _MONTH.fullmatch(month)
    if not m:
        raise ValueError(f"month {month!r} is not a month written YYYY-MM, e.g. 2026-11")
    year, mon = int(m.group(1)), int(m.group(2))
    if not 1 <= mon <= 12 or year < 1:
        raise ValueError(f"month {month!r} has no month {mon:02d} (months run 01 to 12)")
    first = date(year, mon, 1)
    return first, date(year, mon, monthrange(year, mon)[1]), f"{year:04d}-{mon:02d}"


def trend_window(start: date, end: date) -> tuple[date, date]:
    """The days the time-series charts cover: the period itself, or for a one-day report the
    TREND_DAYS days ending on it."""
    if start == end:
        return end - timedelta(days=TREND_DAYS - 1), end
    return start, end


def check_label(label: str, start: date, end: date) -> str:
    """The label names the report file (period_of gives "2026-11-01" or "2026-11"); like the team it
    must not be able to leave the team's folder."""
    if end < start:
        raise ValueError(f"the period ends ({end}) before it starts ({start})")
    if not isinstance(label, str) or not _SAFE_LABEL.fullmatch(label):
        raise ValueError(f"label {label!r} cannot name a report file: use e.g. 2026-11-01 or 2026-11")
    return label
