"""Days as a person types them: one parser, one wording, for every command and the reports."""

from __future__ import annotations

import argparse
import re
from datetime import date

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def parse_day(text: str, what: str = "day") -> date:
    """`YYYY-MM-DD`, or a ValueError that says what was typed and what is expected."""
    text = str(text).strip()
    if not _DAY.fullmatch(text):
        raise ValueError(f"{what} {text!r} is not a date written YYYY-MM-DD, e.g. 2026-11-01")
    try:
        return date.fromisoformat(text)
    except ValueError as err:
        raise ValueError(f"{what} {text!r} is not a calendar date ({err})") from None


def day_argument(text: str) -> date:
    """parse_day as an argparse type: argparse prints the sentence after the option's name."""
    try:
        return parse_day(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
