"""Days and times as a person types them: one parser, one wording, for every command and the reports."""

from __future__ import annotations

import argparse
import os
import re
from datetime import date, datetime, timezone

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
# a day, a time of it to the minute or finer, and its offset from UTC (Z or ±HH:MM) if it names one
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)?(?:Z|[+-]\d{2}:?\d{2})?")


TODAY_ENV = "GPULEDGER_TODAY"


def utc_today() -> date:
    """Today in UTC, the first day `gpuledger run` refuses as not over; `$GPULEDGER_TODAY` (YYYY-MM-DD)
    sets it instead, to replay a past day's behaviour or for a test that must not depend on when it
    runs. The daemon's schedule and sensors keep the wall clock (Dagster's partitions read it)."""
    text = os.environ.get(TODAY_ENV, "").strip()
    return parse_day(text, f"${TODAY_ENV}") if text else datetime.now(timezone.utc).date()


def parse_day(text: str, what: str = "day") -> date:
    """`YYYY-MM-DD`, or a ValueError that says what was typed and what is expected."""
    return _parsed(text, what, _DAY, date.fromisoformat, "date written YYYY-MM-DD, e.g. 2026-11-01", "date")


def parse_time(text: str, what: str = "time") -> datetime:
    """`YYYY-MM-DDTHH:MM[:SS]` (a day alone is its midnight), with an offset (`Z`, `+01:00`) or without
    (the caller's zone, UTC for every command), or a ValueError worded as parse_day's."""
    return _parsed(text, what, _TIME, datetime.fromisoformat,
                   "time written YYYY-MM-DDTHH:MM:SS, e.g. 2026-11-01T13:05:00", "time")


def _parsed(text: str, what: str, shape: re.Pattern, parse, written: str, kind: str):
    """The shape checked first, so a wrong one gets the expected form, not Python's parser's words."""
    text = str(text).strip()
    if not shape.fullmatch(text):
        raise ValueError(f"{what} {text!r} is not a {written}")
    try:
        return parse(text)
    except ValueError as err:
        raise ValueError(f"{what} {text!r} is not a calendar {kind} ({err})") from None


def day_argument(text: str) -> date:
    """parse_day as an argparse type: argparse prints the sentence after the option's name."""
    try:
        return parse_day(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def time_argument(text: str) -> datetime:
    """parse_time as an argparse type."""
    try:
        return parse_time(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
