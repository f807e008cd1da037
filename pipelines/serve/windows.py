"""OpenCost's `window` values as UTC day ranges, both ends inclusive. Relative windows (`today`, `7d`,
`month`) are reckoned from today in UTC (lib/dates.utc_today: the wall clock, or $GPULEDGER_TODAY), as
OpenCost does and as finance reads a calendar."""

from __future__ import annotations

import re
from datetime import date, timedelta

from pipelines.lib.dates import utc_today


def parse_window(window: str, max_days: int, today: date | None = None) -> tuple[date, date]:
    """`window` as (first day, last day); longer than `max_days` (the config's serve.max_window_days) is refused."""
    today = today or utc_today()
    w = window.strip()
    if w == "today":
        start, end = today, today
    elif w == "yesterday":
        start = end = today - timedelta(days=1)
    elif re.fullmatch(r"[1-9][0-9]{0,6}d", w):
        n = int(w[:-1])
        if n > max_days:
            raise ValueError(f"window {w} is longer than the limit of {max_days} days")
        start, end = today - timedelta(days=n - 1), today
    elif w == "month":
        start, end = today.replace(day=1), today
    elif w == "lastmonth":
        end = today.replace(day=1) - timedelta(days=1)
        start = end.replace(day=1)
    elif re.fullmatch(r"\d{4}-\d{2}-\d{2},\d{4}-\d{2}-\d{2}", w):
        try:
            start, end = (date.fromisoformat(p) for p in w.split(","))
        except ValueError:
            raise ValueError(f"window {w!r} is not two valid dates YYYY-MM-DD,YYYY-MM-DD") from None
        if end < start:
            raise ValueError(f"window {w!r} ends before it starts")
    else:
        raise ValueError(f"window {w[:40]!r} is not one of today, yesterday, Nd, month, lastmonth or "
                         "YYYY-MM-DD,YYYY-MM-DD")
    if (end - start).days + 1 > max_days:
        raise ValueError(f"window {w} is longer than the limit of {max_days} days")
    return start, end
