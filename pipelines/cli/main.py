"""The `gpuledger` command (docs/operations.md#commands): a module per command under commands/, each
with its `add_parser` (flags and help) and `run` (what it does). They import what they need when they
run, so `gpuledger --help` stays quick."""

from __future__ import annotations

import argparse
import os
import signal
import sys

from pipelines.cli.commands import (alerts, collect, config, export, inspect, plan, query, report, run, serve,
                                    simulate, ui)
from pipelines.landing.formats import FormatsError
from pipelines.lib.dates import utc_today

# in the order `gpuledger --help` lists them
COMMANDS = {"simulate": simulate, "run": run, "query": query, "inspect": inspect, "report": report,
            "export": export, "plan": plan, "alerts": alerts, "collect": collect, "ui": ui, "serve": serve, "config": config}


def main(argv: list[str] | None = None) -> int:
    """The command; a reader that closes the pipe early (`gpuledger alerts | head`) ends it quietly,
    with the status a Unix tool killed by SIGPIPE has, instead of a traceback."""
    try:
        code = _main(argv)
        sys.stdout.flush()  # a closed pipe shows here at the latest, not at interpreter exit
        return code
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit's flush is quiet too
        return 128 + signal.SIGPIPE


def build_parser() -> argparse.ArgumentParser:
    """Every command, flag and help text, built without running anything (tests walk it)."""
    parser = argparse.ArgumentParser(prog="gpuledger", description="GPU cost ledger for LLM training.")
    parser.add_argument("--version", action="version", version=f"gpuledger {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS.values():
        command.add_parser(sub)
    return parser


def _main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if hasattr(args, "config") and args.command != "config":
        from pipelines.lib.config import config_file

        args.config = config_file(args.config)  # one lookup order for every command: --config, $GPULEDGER_CONFIG
    if getattr(args, "warehouse", None) and args.command in ("run", "export"):
        os.environ["GPULEDGER_WAREHOUSE"] = str(args.warehouse.resolve())
    try:
        utc_today()  # a $GPULEDGER_TODAY set wrong is one sentence before any command starts
    except ValueError as err:
        print(f"gpuledger {args.command}: {err}", file=sys.stderr)
        return 2
    try:
        return COMMANDS[args.command].run(args)
    except FormatsError as err:  # raised where the formats load: a sentence, not a traceback
        print(f"gpuledger {args.command}: {err}", file=sys.stderr)
        return 2


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gpuledger")
    except PackageNotFoundError:
        return "(not installed: run from a source tree)"


if __name__ == "__main__":
    sys.exit(main())
