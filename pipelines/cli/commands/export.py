"""`gpuledger export focus`: FOCUS 1.3 split-cost allocation rows from the live warehouse (docs/focus-export.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pipelines.cli.preflight import readable, stop_on_signals, stopped
from pipelines.lib.dates import day_argument


def add_parser(sub: argparse._SubParsersAction) -> None:
    export = sub.add_parser("export", help="export the ledger's attribution")
    export_kinds = export.add_subparsers(dest="kind", required=True)
    focus = export_kinds.add_parser("focus", help="FOCUS 1.3 split-cost allocation rows")
    focus.add_argument("--start", required=True, type=day_argument, help="first UTC day, YYYY-MM-DD")
    focus.add_argument("--end", type=day_argument, help="last day, inclusive (default: --start)")
    focus.add_argument("--out", required=True, type=Path, help="FILE.csv or FILE.parquet")
    focus.add_argument("--warehouse", type=Path, help="the live warehouse (default: $GPULEDGER_WAREHOUSE or data/warehouse.duckdb)")


def run(args: argparse.Namespace) -> int:
    from pipelines.exports.focus import export_focus, part_file
    from pipelines.lib.warehouse.sandbox import open_read_only
    from pipelines.lib.warehouse import warehouse_path
    from pipelines.lib.warehouse.writer_lock import warehouse_lock

    path = warehouse_path()
    if not readable(path):
        return 2
    stop_on_signals()
    try:
        # The live warehouse, shared with other readers: a run writing it is waited for, not collided with.
        with warehouse_lock(path, shared=True), open_read_only(path, writable=part_file(args.out)) as con:
            rows = export_focus(con, args.start, args.end or args.start, args.out)
    except KeyboardInterrupt as stop:
        return stopped(stop)
    except ValueError as err:
        print(f"export failed: {err}", file=sys.stderr)
        return 1
    print(f"wrote {rows:,} FOCUS 1.3 allocation rows for {args.start} to {args.end or args.start} into {args.out}")
    return 0
