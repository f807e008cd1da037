"""What every command checks before it starts, and how it stops: the config read (a bad key stops it
with its name and line), the warehouse there, SIGTERM and SIGINT stopping it cleanly."""

from __future__ import annotations

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
