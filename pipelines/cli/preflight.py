"""What the commands share, kept light (every command imports it before it runs): the checks before
a command starts (a bad config key stops it with its name and line; the warehouse must be there), how
it stops (SIGTERM and SIGINT cleanly), its argument types, and the few lines it prints the same way."""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path


def valid_config(path: Path | None) -> bool:
    """Checks the config before anything runs, so a bad key stops the command with its name and line."""
    from pipelines.lib.config import ConfigError, load_config

    try:
        load_config(path)
    except ConfigError as err:
        print(err, file=sys.stderr)
        return False
    return True


def stop_on_signals() -> None:
    """SIGTERM, like SIGINT, raises KeyboardInterrupt (named after the signal), so a command waiting
    for the warehouse or between Dagster's steps stops cleanly rather than being cut off; inside a
    step Dagster handles both (it swaps these handlers while it executes, and puts them back)."""
    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)


def stopped(stop: KeyboardInterrupt) -> int:
    name = stop.args[0] if stop.args and stop.args[0] in signal.Signals.__members__ else "SIGINT"
    print(f"\nstopped by {name}", file=sys.stderr)
    return 128 + signal.Signals[name]


def readable(path: Path) -> bool:
    if not path.exists():
        print(f"no warehouse at {path}: run `gpuledger run` first, or pass --warehouse", file=sys.stderr)
    return path.exists()


def positive(kind: type) -> object:
    """An argparse type: a number of `kind` above 0, else a sentence naming the value."""
    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {'whole ' if kind is int else ''}number") from None
        if not 0 < value < float("inf"):  # nan and inf included
            raise argparse.ArgumentTypeError(f"{text} is not a number above 0")
        return value

    return parse


def print_ignored(ignored: list[dict]) -> None:
    if ignored:
        print(f"\nignored: {len(ignored)} file(s) no source reads")
    for f in ignored:
        print(f"  {f['file']}  ({f['reason']})")


def one_line(err: Exception) -> str:
    return " ".join(str(err).split("\n")[0].split())
