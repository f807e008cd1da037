"""`gpuledger run` (docs/operations.md#commands): the checks before a day runs — landing, config, the
ledger's first day, the engine, days the published file would lose — then the daily job for each day
(materialize.py), and a summary of what was taken in and what each team cost."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from datetime import date, timedelta
from pathlib import Path

from pipelines.cli.preflight import print_ignored, stop_on_signals, stopped, valid_config
from pipelines.lib.dates import day_argument, utc_today
from pipelines.lib.warehouse import PROJECT_ROOT

# Money is shown beside its billing currency and never summed across currencies.
EXAMPLE_QUERIES = [
    "SELECT team, category, billing_currency, sum(effective_cost) AS cost FROM marts.fct_cost_daily GROUP BY ALL "
    "ORDER BY billing_currency, cost DESC",
    "SELECT job_id, user_name, state, allocated_idle_gpu_seconds / 3600 AS idle_gpu_hours, effective_cost, billing_currency "
    "FROM marts.fct_job_cost ORDER BY allocated_idle_gpu_seconds DESC LIMIT 10",
    "SELECT run_id, day, billing_currency, mfu, effective_mfu, goodput, cost_per_mtok, mfu_gap_cost "
    "FROM marts.fct_run_efficiency_daily ORDER BY run_id, day, billing_currency",
    "SELECT * FROM marts.fct_rerun_loss ORDER BY effective_cost DESC",
]


def add_parser(sub: argparse._SubParsersAction) -> None:
    run = sub.add_parser("run", help="materialize daily partitions through Dagster")
    run.add_argument("--landing", required=True, type=Path, metavar="DIR", help="the landing zone to read (docs/landing.md)")
    run.add_argument("--warehouse", type=Path, help="the live warehouse to write (default: $GPULEDGER_WAREHOUSE, "
                                                   "else data/warehouse.duckdb); readers read the copy it publishes beside it")
    run.add_argument("--config", type=Path, help="organisation config YAML (default: $GPULEDGER_CONFIG, else defaults)")
    run.add_argument("--start", required=True, type=day_argument, help="first UTC day to run, YYYY-MM-DD")
    run.add_argument("--end", type=day_argument, help="last day, inclusive (default: --start)")
    run.add_argument("--engine", choices=("duckdb", "spark"),
                     help="where the intermediate tables and marts are computed (default: the config's `engine`, "
                          "else duckdb; docs/spark.md)")
    run.add_argument("--accept-removed-sources", action="store_true",
                     help="let a source whose every landed file is gone from the landing zone take its rows out "
                          "(refused without it: a moved or unmounted folder looks the same)")


def run(args: argparse.Namespace) -> int:
    end = args.end or args.start
    if end < args.start:
        print(f"--end {end} is before --start {args.start}", file=sys.stderr)
        return 2
    if not args.landing.is_dir():
        print(f"landing directory {args.landing} does not exist", file=sys.stderr)
        return 2
    if not valid_config(args.config):
        return 2
    if (problem := _landing_problem(args.landing)) is not None:
        print(problem, file=sys.stderr)
        return 2
    if (problem := _fix_ledger_days(args, end)) is not None:
        print(problem, file=sys.stderr)
        return 2
    if (problem := _engine_problem(args)) is not None:
        print(problem, file=sys.stderr)
        return 2
    # Resources read these when the definitions load, so set them first.
    os.environ["GPULEDGER_LANDING"] = str(args.landing.resolve())
    if args.accept_removed_sources:
        from pipelines.landing.source import ACCEPT_REMOVED_ENV

        os.environ[ACCEPT_REMOVED_ENV] = "1"
    if args.config:
        os.environ["GPULEDGER_CONFIG"] = str(args.config.resolve())
    os.environ.setdefault("DAGSTER_HOME", str(PROJECT_ROOT / "dagster_home"))
    if not Path(os.environ["DAGSTER_HOME"]).is_dir():
        print(f"DAGSTER_HOME={os.environ['DAGSTER_HOME']} is not a folder: create it and copy "
              f"{PROJECT_ROOT / 'dagster_home' / 'dagster.yaml'} into it, or unset DAGSTER_HOME to use "
              f"{PROJECT_ROOT / 'dagster_home'}", file=sys.stderr)
        return 2

    import textwrap

    from models.ledger_categories import UNALLOCATED, UNALLOCATED_HELP
    from pipelines.cli.console import print_table
    from pipelines.ingest.ignored import ignored_files
    from pipelines.lib.warehouse.publish import published_path
    from pipelines.cli.materialize import RunInterrupted, materialize_days
    from pipelines.lib.warehouse.sandbox import open_read_only
    from pipelines.lib.warehouse import sql, warehouse_path

    days = [args.start + timedelta(days=i) for i in range((end - args.start).days + 1)]
    if (problem := _lost_days_problem(days)) is not None:
        print(problem, file=sys.stderr)
        return 2
    stop_on_signals()
    try:
        failed = materialize_days(days)
    except RunInterrupted as stop:
        print(f"\n{stop}", file=sys.stderr)
        return 128 + (stop.signum or signal.SIGINT)
    except KeyboardInterrupt as stop:
        return stopped(stop)
    ignored = ignored_files(args.landing)
    if not published_path().exists():
        print(f"no day completed, so nothing was published to {published_path()}", file=sys.stderr)
        print_ignored(ignored)
        _print_failures(failed)
        return 1
    with open_read_only(published_path()) as con:
        print(f"\nwarehouse {warehouse_path()}\npublished for readers (SQL clients, gpuledger query): "
              f"{published_path()}")
        if (on_spark := _spark_where(args)) is not None:
            print(on_spark)
        print("\nlanding files taken in, per source:")
        print_table(con.sql(sql("reports/landing_summary")).pl())
        print_ignored(ignored)
        print(f"\ncost and waste per team, {args.start} to {end} (in each bill's currency; waste % of the team's GPU node cost):")
        teams = con.sql(sql("reports/team_summary"), params={"start": args.start, "end": end}).pl()
        print_table(teams)
        if UNALLOCATED in teams["team"].to_list():
            print(textwrap.fill(UNALLOCATED_HELP, 79))  # the reports' sentence, so both say the same
    print("\nnext, try:")
    command = os.path.relpath(sys.argv[0]) if sys.argv[0].endswith("gpuledger") else "gpuledger"  # e.g. .venv/bin/gpuledger
    for q in EXAMPLE_QUERIES:
        print(f'  {command} query "{q}"')
    _print_failures(failed)
    return 1 if failed else 0


def _lost_days_problem(days: list[date]) -> str | None:
    """Why the run would make the published file lose days — the live warehouse lacks days it has
    (deleted, or an older copy) and the run does not rebuild them all — or None. Days the run does
    rebuild are said on stderr: its publishes wait until they are all back (docs/operations.md#lost-days)."""
    import duckdb

    from pipelines.lib.ledger_days import PublishWouldLoseDays, days_of_books, describe_days
    from pipelines.lib.warehouse.publish import published_path
    from pipelines.lib.warehouse import warehouse_path

    published, live = published_path(), warehouse_path()
    if not published.exists():
        return None
    try:
        with duckdb.connect(str(published), read_only=True) as con:
            missing = days_of_books(con)
        if live.exists():
            with duckdb.connect(str(live), read_only=True) as con:
                missing -= days_of_books(con)
    except duckdb.Error:
        return None  # held by a writer: its publish step checks the same thing
    if lost := sorted(missing - set(days)):
        return str(PublishWouldLoseDays(lost, live, published))
    if missing:
        print(f"the live warehouse {live} lacks {describe_days(missing)}, which the published file has: this run "
              "rebuilds them, and publishes once they are all back", file=sys.stderr)
    return None


def _engine_problem(args: argparse.Namespace) -> str | None:
    """Why the engine asked for cannot run here (Spark without Java or pyspark), or None."""
    import shutil

    from pipelines.lib.config import ENGINE_ENV, engine_of, load_config

    if args.engine:
        os.environ[ENGINE_ENV] = args.engine
    if engine_of(load_config(args.config)) != "spark":
        return None
    if shutil.which("java") is None:
        return "the Spark engine needs Java 17 on PATH (Debian: apt-get install openjdk-17-jre-headless)"
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "the Spark engine needs pyspark: pip install -e '.[spark]'"
    return None


def _spark_where(args: argparse.Namespace) -> str | None:
    from pipelines.lib.config import engine_of, load_config

    cfg = load_config(args.config)
    if engine_of(cfg) != "spark":
        return None
    from pipelines.engines.spark.daily import spark_root

    return f"computed by Spark on {cfg.spark.master}: staging, intermediate tables and marts as Parquet under {spark_root(cfg)}"


def _landing_problem(root: Path) -> str | None:
    """Why `root` cannot be a landing zone (no file any source reads), or None."""
    from pipelines.ingest.sources import ALL
    from pipelines.landing.source import discover

    if any(discover(root, source) for source in ALL):
        return None
    where = "\n".join(f"  {root / p}" for source in ALL for p in source.patterns)
    hint = (f"\ndid you mean {root / 'landing'}?" if any(discover(root / "landing", s) for s in ALL) else "")
    return f"no landing files under {root}: the ledger reads files named like\n{where}{hint}"


def _fix_ledger_days(args: argparse.Namespace, end: date) -> str | None:
    """Fixes the ledger's first day for the daily partitions (the config's ledger.start, else the first
    day the landing's bills and jobs cover) and says, in one line, why a requested day cannot run."""
    from pipelines.ingest.coverage import ledger_start
    from pipelines.lib.config import load_config
    from pipelines.lib.dagster_glue.resources import LEDGER_START_ENV

    cfg = load_config(args.config)
    first = ledger_start(args.landing, cfg)
    if first is None:
        return (f"no bill line or job in {args.landing} has a date the ledger can use: check "
                f"`gpuledger inspect --landing {args.landing}` for what was quarantined")
    os.environ[LEDGER_START_ENV] = first.isoformat()
    why = ("ledger.start in the config" if cfg.ledger.start
           else "the earliest day the landing's bills and jobs cover; set ledger.start in the config to start earlier")
    if args.start < first:
        return f"{args.start} is before the ledger's first day, {first} ({why})"
    last = utc_today() - timedelta(days=1)
    if end > last:
        return f"{end} is not over yet: the ledger runs complete UTC days, up to {last}"
    return None


def _print_failures(failed: list) -> None:
    for day, reasons in failed:
        print(f"FAILED {day}:", file=sys.stderr)
        for reason in reasons:
            print(f"  {reason}", file=sys.stderr)
