"""`gpuledger query`: one read-only statement on the published warehouse, sandboxed and within its
limits (pipelines/cli/query.py), printed as a table, CSV, JSON or Parquet."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pipelines.cli.preflight import one_line, positive, readable, stop_on_signals, stopped, valid_config


def add_parser(sub: argparse._SubParsersAction) -> None:
    query = sub.add_parser("query", help="run read-only SQL against the published warehouse")
    query.add_argument("sql", help="one read-only statement (SELECT, WITH, DESCRIBE …), quoted")
    query.add_argument("--warehouse", type=Path, help="a DuckDB file to read (default: the published warehouse)")
    form = query.add_mutually_exclusive_group()
    form.add_argument("--csv", action="store_true", help="print CSV instead of a table: exact values, lists and "
                                                       "structs as JSON text")
    form.add_argument("--json", action="store_true", help="print a JSON array of objects: DECIMAL as strings, "
                                                        "times ISO 8601")
    form.add_argument("--parquet", type=Path, metavar="FILE", help="write the result to a Parquet file (- for "
                                                                   "stdout) (default: print a table)")
    query.add_argument("--config", type=Path, help="organisation config YAML: the query.* limits and spark.root "
                                                   "(default: $GPULEDGER_CONFIG, else defaults)")
    query.add_argument("--timeout", type=positive(float), metavar="SECONDS",
                       help="stop the query after this long (default: query.timeout_seconds, 60)")
    query.add_argument("--max-rows", type=positive(int), metavar="N",
                       help="fetch at most this many rows and say the result was cut (default: query.max_rows, 100000)")


def run(args: argparse.Namespace) -> int:
    """Runs one statement that only reads, on a sandboxed read-only connection (what is allowed, and
    why: pipelines/lib/warehouse/sandbox.py), within its time, memory and row limits (pipelines/cli/query.py).
    Exit 2 and one line for what it refuses, 1 for SQL that fails, 3 when a limit stopped it or cut
    its rows (the rows it got are printed)."""
    import duckdb

    from pipelines.cli.console import print_table, write_csv, write_json, write_parquet
    from pipelines.cli.query import QueryLimits, QueryStopped, readable_copy, run_query
    from pipelines.lib.config import load_config
    from pipelines.lib.warehouse.publish import published_path
    from pipelines.lib.warehouse.sandbox import allowed_roots, refusal

    config = args.config
    if not valid_config(config):
        return 2
    path = args.warehouse or published_path()
    if not readable(path):
        return 2
    cfg = load_config(config)
    try:
        limits = QueryLimits.of(cfg, args.timeout, args.max_rows)
    except ValueError as bad:  # $GPULEDGER_MEMORY_LIMIT that is no size
        print(bad, file=sys.stderr)
        return 2
    try:
        refused = refusal(args.sql)
        if refused:
            print(f"query refused: {refused}", file=sys.stderr)
            return 2
        roots = allowed_roots(path, cfg)  # of the file named, not of a copy of it
        stop_on_signals()  # the query is interrupted and the live file's copy removed
        with readable_copy(path, limits) as copy:
            frame, cut = run_query(copy, args.sql, limits, roots)
    except KeyboardInterrupt as stop:
        return stopped(stop)
    except QueryStopped as stop:
        print(stop, file=sys.stderr)
        return 3
    except OSError as err:
        print(f"query failed: {err}", file=sys.stderr)
        return 1
    except duckdb.PermissionException as err:  # the sandbox: a file, extension or setting out of reach
        detail = one_line(err).removeprefix("Permission Error: ")
        print(f"query refused: a SELECT that reaches outside the warehouse: {detail} (readers may read Parquet "
              f"only under {', '.join(roots)}: spark.root of the config, or <warehouse>.spark/)", file=sys.stderr)
        return 2
    except duckdb.Error as err:
        print(f"query failed: {err}", file=sys.stderr)
        return 1
    if frame is None:
        print("the statement returned no rows", file=sys.stderr)
        return 0
    if args.csv:
        sys.stdout.write(write_csv(frame))
    elif args.json:
        sys.stdout.write(write_json(frame))
    elif args.parquet:
        write_parquet(frame, args.parquet)
    else:
        print_table(frame)
    if cut:
        print(f"query result cut at its first {frame.height:,} rows ({limits.rows.source}); the query has more: "
              "narrow it or raise the limit", file=sys.stderr)
        return 3
    return 0
