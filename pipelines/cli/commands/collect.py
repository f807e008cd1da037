"""`gpuledger collect …`: fill the landing zone from a cluster's own systems (docs/collect.md).

Each collector is a subcommand of the `collect` group: `dcgm` (Prometheus → telemetry/dcgm/) and
`slurm` (sacct → scheduler/slurm/<cluster>/)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from pipelines.lib.dates import day_argument

# test hook: seconds to sleep after each file, so a test can kill a collect between two files
PAUSE_ENV = "GPULEDGER_COLLECT_PAUSE_SECONDS"


def add_parser(sub: argparse._SubParsersAction) -> None:
    collect = sub.add_parser("collect", help="pull telemetry and scheduler data into the landing zone")
    kinds = collect.add_subparsers(dest="kind", required=True)
    dcgm = kinds.add_parser("dcgm", help="DCGM telemetry from Prometheus' HTTP API into DIR/telemetry/dcgm/")
    dcgm.add_argument("--landing", required=True, type=Path, metavar="DIR", help="the landing zone to write into")
    dcgm.add_argument("--prometheus", metavar="URL", help="base URL, e.g. http://prometheus:9090 "
                      "(default: collect.prometheus.url of the config)")
    dcgm.add_argument("--start", required=True, type=day_argument, help="first UTC day, YYYY-MM-DD")
    dcgm.add_argument("--end", type=day_argument, help="last UTC day, inclusive (default: --start)")
    dcgm.add_argument("--config", type=Path, help="organisation config YAML (default: $GPULEDGER_CONFIG, else defaults)")
    dcgm.add_argument("--json", action="store_true", help="one JSON object per day, a line each")
    slurm = kinds.add_parser(
        "slurm", help="sacct -> LANDING/scheduler/slurm/CLUSTER/, a file per UTC day, with a watermark")
    slurm.add_argument("--landing", required=True, type=Path, help="the landing zone to write into")
    slurm.add_argument("--cluster", required=True, help="the Slurm ClusterName (also the landing folder)")
    slurm.add_argument("--since", type=day_argument,
                       help="first UTC day to collect (default: the watermark less collect.slurm.lookback_hours)")
    slurm.add_argument("--config", type=Path, help="organisation config YAML (default: $GPULEDGER_CONFIG, else defaults)")


def run(args: argparse.Namespace) -> int:
    if args.kind == "dcgm":
        return _dcgm(args)
    if args.kind == "slurm":
        return _slurm(args)
    raise AssertionError(args.kind)


def _dcgm(args: argparse.Namespace) -> int:
    from pipelines.collect.prometheus import CollectError, client, collect_day, days_between, settings_of
    from pipelines.lib.config import ConfigError, load_config

    if args.end and args.end < args.start:
        print(f"--end {args.end} is before --start {args.start}", file=sys.stderr)
        return 2
    try:
        cfg = load_config(args.config)
        settings = settings_of(cfg, args.prometheus)
        prom = client(settings)
    except (ConfigError, CollectError) as err:
        print(err, file=sys.stderr)
        return 2
    pause = float(os.environ.get(PAUSE_ENV) or 0)
    began = time.monotonic()
    total_files = total_samples = 0
    for day in days_between(args.start, args.end):
        try:
            result = collect_day(args.landing, prom, day, settings, pause_between_files=pause)
        except CollectError as err:
            print(f"{day}: {err}", file=sys.stderr)
            return 1
        total_files += len(result.files)
        total_samples += result.samples
        if args.json:
            print(json.dumps(result.as_dict()), flush=True)
            continue
        if result.files:
            print(f"{day}: {len(result.files)} file(s), {result.hosts} host(s), {result.samples:,} samples, "
                  f"{result.requests} requests, {result.seconds:.1f} s -> {args.landing / Path(result.files[0]).parent}",
                  flush=True)
        else:
            print(f"{day}: no samples of {', '.join(settings.metrics)} at {settings.url} "
                  f"({result.requests} requests, {result.seconds:.1f} s); nothing written", flush=True)
        if result.no_host:
            print(f"  {result.no_host:,} samples had neither a {settings.labels['hostname']} nor an instance label: "
                  "not written (set collect.prometheus.labels.hostname)", flush=True)
    if not args.json:
        print(f"collected {total_files} file(s), {total_samples:,} samples in {time.monotonic() - began:.1f} s")
    return 0


def _slurm(args: argparse.Namespace) -> int:
    from pipelines.collect.slurm import CollectError, collect, summary
    from pipelines.lib.config import ConfigError, load_config

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
