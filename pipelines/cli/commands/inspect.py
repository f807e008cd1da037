"""`gpuledger inspect`: every landing file parsed and reported (pipelines/cli/inspect.py), the warehouse
untouched."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pipelines.cli.preflight import print_ignored, valid_config


def add_parser(sub: argparse._SubParsersAction) -> None:
    insp = sub.add_parser("inspect", help="parse every landing file and report, without writing the warehouse")
    insp.add_argument("--landing", required=True, type=Path, metavar="DIR", help="the landing zone to read")
    insp.add_argument("--config", type=Path, help="organisation config YAML: cluster time zones, sacct columns "
                                                   "(default: $GPULEDGER_CONFIG, else defaults)")
    insp.add_argument("--json", action="store_true", help="one JSON object, a key per source")
    insp.add_argument("--strict", action="store_true",
                      help="exit 1 when any row is quarantined or any file is unreadable, saying why in the "
                           "last line (default: exit 0 whatever was found)")
    insp.add_argument("--verbose", action="store_true",
                      help="also list the deliveries later ones superseded, the copies, and every reason "
                           "(default: count them)")


def run(args: argparse.Namespace) -> int:
    import json

    from pipelines.lib.config import load_config
    from pipelines.cli.inspect import inspect_landing
    from pipelines.cli.inspect_text import print_report, strict_problem

    if not args.landing.is_dir():
        print(f"landing directory {args.landing} does not exist", file=sys.stderr)
        return 2
    if not valid_config(args.config):
        return 2
    report = inspect_landing(args.landing, load_config(args.config))
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        print_report(report, args.landing, verbose=args.verbose)
        print_ignored(report.get("ignored_files", []))
    if args.strict and (problem := strict_problem(report)) is not None:
        sys.stdout.flush()  # the verdict is the last line, after the report
        print(problem, file=sys.stderr)
        return 1
    return 0
