"""`gpuledger collect slurm` (docs/collect.md)."""

from __future__ import annotations

import argparse
import sys

from pipelines.collect.slurm import CollectError, collect, summary
from pipelines.lib.config import ConfigError, load_config


def collect_slurm(args: argparse.Namespace) -> int:
    try:
        cfg = load_config(args.config)
    except ConfigError as err:
        print(err, file=sys.stderr)
        return 2
    try:
        result = collect(args.landing, args.cluster, cfg.collect.slurm, since=args.since)
    except CollectError as err:
        print(f"collect slurm: {err}", file=sys.stderr)
        return 1
    print("\n".join(summary(result)))
    return 0
