"""Days and times as a person types them: one parser, one wording, for every command and the reports."""

from __future__ import annotations

import argparse
import re
from datetime import date, datetime

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
# a day, a time of it to the minute or finer, and its offset from UTC (Z or ±HH:MM) if it names one
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)?(?:Z|[+-]\d{2}:?\d{2})?")


def parse_day(text: str, what: str = "day") -> date:
    """`YYYY-MM-DD`, or a ValueError that says what was typed and what is expected."""
    text = str(text).strip()
    if not _DAY.fullmatch(text):
        raise ValueError(f"{what} {text!r} is not a date written YYYY-MM-DD, e.g. 2026-11-01")
    try:
        return date.fromisoformat(text)
    except ValueError as err:
        raise ValueError(f"{what} {text!r} is not a calendar date ({err})") from None


def parse_time(text: str, what: str = "time") -> datetime:
    """`YYYY-MM-DDTHH:MM[:SS]` (a day alone is its midnight), with an offset (`Z`, `+01:00`) or without
    (the caller's zone, UTC for every command), or a ValueError worded as parse_day's."""
    text = str(text).strip()
    if not _TIME.fullmatch(text):
        raise ValueError(f"{what} {text!r} is not a time written YYYY-MM-DDTHH:MM:SS, e.g. 2026-11-01T13:05:00")
    try:
        return datetime.fromisoformat(text)
    except ValueError as err:
        raise ValueError(f"{what} {text!r} is not a calendar time ({err})") from None


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
