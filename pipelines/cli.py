"""The `gpuledger` command (DESIGN §6)."""

from __future__ import annotations

import argparse
import os
import sys
from datetime import date, timedelta
from pathlib import Path

from pipelines.lib.warehouse import PROJECT_ROOT


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gpuledger", description="GPU cost ledger for LLM training.")
    sub = parser.add_subparsers(dest="command", required=True)

    sim = sub.add_parser("simulate", help="write a simulated fleet's landing zone and its ground truth")
    sim.add_argument("--out", required=True, type=Path)
    sim.add_argument("--start", required=True, type=date.fromisoformat)
    sim.add_argument("--days", required=True, type=int)
    sim.add_argument("--nodes", type=int, default=16)
    sim.add_argument("--seed", type=int, default=7)

    run = sub.add_parser("run", help="materialize daily partitions through Dagster")
    run.add_argument("--landing", required=True, type=Path)
    run.add_argument("--warehouse", type=Path)
    run.add_argument("--config", type=Path, help="organisation config YAML (default: built-in defaults)")
    run.add_argument("--start", required=True, type=date.fromisoformat)
    run.add_argument("--end", type=date.fromisoformat, help="last day, inclusive (default: --start)")

    args = parser.parse_args(argv)
    if args.command == "simulate":
        return _simulate(args)
    return _run(args)


def _simulate(args: argparse.Namespace) -> int:
    from simulator import simulate

    manifest = simulate(args.out, args.start, args.days, nodes=args.nodes, seed=args.seed)
    print(f"simulated {args.days} day(s) from {args.start} on {args.nodes} nodes (seed {args.seed}) into {args.out}")
    for source, facts in manifest.items():
        if isinstance(facts, dict):
            shown = ", ".join(f"{k} {v}" for k, v in facts.items() if not isinstance(v, (dict, list)))
            print(f"  {source:<10} {shown}")
    return 0


def _run(args: argparse.Namespace) -> int:
    end = args.end or args.start
    if end < args.start:
        print(f"--end {end} is before --start {args.start}", file=sys.stderr)
        return 2
    if not args.landing.is_dir():
        print(f"landing directory {args.landing} does not exist", file=sys.stderr)
        return 2
    # Resources read these when the definitions load, so set them first.
    os.environ["GPULEDGER_LANDING"] = str(args.landing.resolve())
    if args.warehouse:
        os.environ["GPULEDGER_WAREHOUSE"] = str(args.warehouse.resolve())
    if args.config:
        os.environ["GPULEDGER_CONFIG"] = str(args.config.resolve())
    os.environ.setdefault("DAGSTER_HOME", str(PROJECT_ROOT / "dagster_home"))

    from pipelines.lib.run import materialize_days

    days = [args.start + timedelta(days=i) for i in range((end - args.start).days + 1)]
    return materialize_days(days)


if __name__ == "__main__":
    sys.exit(main())
