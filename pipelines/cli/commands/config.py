"""`gpuledger config check`: a config validated and printed as it will be used; with --warehouse, the
names it uses checked against the ledger's."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pipelines.cli.preflight import one_line


def add_parser(sub: argparse._SubParsersAction) -> None:
    config = sub.add_parser("config", help="the organisation config")
    config_kinds = config.add_subparsers(dest="kind", required=True)
    check = config_kinds.add_parser("check", help="validate a config file and print it as it will be used")
    check.add_argument("file", type=Path, help="the config YAML to check (docs/config.md)")
    check.add_argument("--warehouse", type=Path,
                       help="also check the names of budgets:, pools: and clusters: against this published "
                            "warehouse, each one it lacks a warning (default: names are not checked)")


def run(args: argparse.Namespace) -> int:
    """Exit 0 for a valid config (with --warehouse, each name the ledger lacks a warning on stderr: a budget
    may be set before its project's first GPU-hour), 2 for an invalid one or a missing warehouse."""
    import duckdb

    from pipelines.lib.config import ConfigError, load_config
    from pipelines.lib.ledger_names import config_name_warnings, read_ledger_names
    from pipelines.lib.config.strict_yaml import load_yaml, read_yaml_text

    try:
        cfg = load_config(args.file)
    except ConfigError as err:
        print(err, file=sys.stderr)
        return 2
    if args.warehouse and not args.warehouse.exists():
        print(f"no warehouse at {args.warehouse}: pass a published warehouse to check the config's names "
              "against", file=sys.stderr)
        return 2
    try:
        ledger = read_ledger_names(args.warehouse) if args.warehouse else None
    except duckdb.Error as err:
        print(f"config check: cannot read the warehouse {args.warehouse}: {one_line(err)}", file=sys.stderr)
        return 2
    if ledger is not None:
        lines = load_yaml(read_yaml_text(args.file), args.file).key_lines  # load_config has read it: it loads
        for key, problem in config_name_warnings(cfg, ledger):
            where = f"{args.file}:{lines[key]}" if key in lines else str(args.file)
            print(f"warning: {where}: `{'.'.join(key)}`: {problem}", file=sys.stderr)
    print(f"# {args.file}: valid. The config as it will be used, defaults filled in:")
    sys.stdout.write(cfg.as_yaml())
    return 0
