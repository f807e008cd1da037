"""`gpuledger plan FILE`: a run plan's estimate (pipelines/cli/plan.py), its names checked first."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pipelines.cli.preflight import one_line, valid_config


def add_parser(sub: argparse._SubParsersAction) -> None:
    plan = sub.add_parser("plan", help="estimate a run plan: FLOPs, GPU-hours, failure overhead, budget, cost")
    plan.add_argument("file", type=Path, help="a run plan, YAML (docs/plans.md)")
    plan.add_argument("--json", action="store_true", help="one JSON object: the estimate and every input's source")
    plan.add_argument("--warehouse", type=Path,
                      help="where defaults come from (default: the published warehouse, if there is one)")
    plan.add_argument("--config", type=Path, help="organisation config YAML (default: $GPULEDGER_CONFIG, else defaults)")


def run(args: argparse.Namespace) -> int:
    """Exit 0 with the estimate, 1 when an input is missing (what can be computed is still shown), 2
    when the plan file or the config cannot be used, or the plan names a GPU nobody knows the speed of.
    A project the ledger and the config lack is a warning on stderr (docs/plans.md#names-checked)."""
    import json

    import duckdb

    from pipelines.cli.plan import PlanError, as_json, as_text, estimate
    from pipelines.cli.plan_names import check_plan_names
    from pipelines.ingest.plans import MAX_PLAN_BYTES, read_plan
    from pipelines.lib.config import load_config
    from pipelines.lib.ledger_names import read_ledger_names
    from pipelines.lib.warehouse.publish import published_path
    from pipelines.lib.config.strict_yaml import StrictYamlError, read_yaml_text

    config = args.config
    if not valid_config(config):
        return 2
    try:
        text = read_yaml_text(args.file, MAX_PLAN_BYTES)
    except (OSError, UnicodeDecodeError, StrictYamlError) as err:
        print(f"plan {args.file} cannot be read: {err}", file=sys.stderr)
        return 2
    plan, problems = read_plan(text)
    if plan is None:
        print(f"plan {args.file} is not valid:", file=sys.stderr)
        for line, problem in problems:
            print(f"  {args.file}:{line}: {problem}" if line else f"  {args.file}: {problem}", file=sys.stderr)
        return 2
    if args.warehouse and not args.warehouse.exists():
        print(f"no warehouse at {args.warehouse}", file=sys.stderr)
        return 2
    cfg, warehouse = load_config(config), args.warehouse or published_path()
    try:
        ledger = read_ledger_names(warehouse)
    except duckdb.Error as err:
        print(f"plan failed: cannot read the warehouse {warehouse}: {one_line(err)}", file=sys.stderr)
        return 2
    errors, warnings = check_plan_names(plan, text, str(args.file), cfg, ledger)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if errors:
        print(f"plan {args.file} names what is not there:", file=sys.stderr)
        for error in errors:
            print(f"  {error}", file=sys.stderr)
        return 2
    try:
        row = estimate(plan, str(args.file), cfg, warehouse, config, ledger)
    except PlanError as err:
        print(f"plan failed: {err}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(as_json(row), indent=2, default=str))
    else:
        print(as_text(row))
    return 1 if row["missing_inputs"] else 0
