"""The `gpuledger` command (docs/operations.md#commands)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
from datetime import date, timedelta
from pathlib import Path

from pipelines.cli.preflight import readable, stop_on_signals, stopped, valid_config
from pipelines.lib.dates import day_argument

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

    sim = sub.add_parser("simulate", help="write a simulated fleet's landing zone and its ground truth")
    sim.add_argument("--out", required=True, type=Path, metavar="DIR",
                     help="folder to write: DIR/landing (the landing zone), DIR/gpuledger.yaml (its config) "
                          "and DIR/truth (what really happened)")
    sim.add_argument("--start", required=True, type=day_argument, help="first UTC day, YYYY-MM-DD")
    sim.add_argument("--days", required=True, type=_positive(int), help="how many days to simulate")
    sim.add_argument("--nodes", type=_positive(int), default=16, help="GPU nodes in the fleet (default: 16)")
    sim.add_argument("--seed", type=int, default=7,
                     help="random seed: the same seed writes the same files (default: 7)")
    sim.add_argument("--kubernetes-cluster", metavar="CLUSTER",
                     help="write this cluster's jobs as Kubernetes pods instead of sacct (default: none, every "
                          "cluster's as sacct)")
    sim.add_argument("--mig-node", action="store_true",
                     help="add east-mig-001, whose GPUs are split into MIG instances for inference and debugging jobs")

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
    query.add_argument("--timeout", type=_positive(float), metavar="SECONDS",
                       help="stop the query after this long (default: query.timeout_seconds, 60)")
    query.add_argument("--max-rows", type=_positive(int), metavar="N",
                       help="fetch at most this many rows and say the result was cut (default: query.max_rows, 100000)")

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

    report = sub.add_parser("report", help="write a team's, a user's or the organisation's waste report (HTML, Markdown)")
    whose = report.add_mutually_exclusive_group(required=True)
    whose.add_argument("--team", help="the team, as the ledger names it (marts.dim_projects)")
    whose.add_argument("--user", help="a user, as the scheduler names them (marts.fct_user_cost_daily): their jobs "
                                      "in every team, written under <out>/_users/")
    whose.add_argument("--org", action="store_true",
                       help="the whole organisation's page, <out>/index.html (+ .md): every team's cost, waste, "
                            "under-use and savings, cluster utilisation, the top savings, links to the team reports")
    when = report.add_mutually_exclusive_group(required=True)
    when.add_argument("--day", help="one UTC day, YYYY-MM-DD (this or --month)")
    when.add_argument("--month", help="one month, YYYY-MM (this or --day)")
    report.add_argument("--out", type=Path, help="folder (default: data/reports under the current directory)")
    report.add_argument("--warehouse", type=Path, help="a DuckDB file to read (default: the published warehouse)")

    export = sub.add_parser("export", help="export the ledger's attribution")
    export_kinds = export.add_subparsers(dest="kind", required=True)
    focus = export_kinds.add_parser("focus", help="FOCUS 1.3 split-cost allocation rows")
    focus.add_argument("--start", required=True, type=day_argument, help="first UTC day, YYYY-MM-DD")
    focus.add_argument("--end", type=day_argument, help="last day, inclusive (default: --start)")
    focus.add_argument("--out", required=True, type=Path, help="FILE.csv or FILE.parquet")
    focus.add_argument("--warehouse", type=Path, help="the live warehouse (default: $GPULEDGER_WAREHOUSE or data/warehouse.duckdb)")

    plan = sub.add_parser("plan", help="estimate a run plan: FLOPs, GPU-hours, failure overhead, budget, cost")
    plan.add_argument("file", type=Path, help="a run plan, YAML (docs/plans.md)")
    plan.add_argument("--json", action="store_true", help="one JSON object: the estimate and every input's source")
    plan.add_argument("--warehouse", type=Path,
                      help="where defaults come from (default: the published warehouse, if there is one)")
    plan.add_argument("--config", type=Path, help="organisation config YAML (default: $GPULEDGER_CONFIG, else defaults)")

    from pipelines.cli import alerts, collect, ui

    alerts.add_parser(sub)
    collect.add_parser(sub)
    ui.add_parser(sub)

    config = sub.add_parser("config", help="the organisation config")
    config_kinds = config.add_subparsers(dest="kind", required=True)
    check = config_kinds.add_parser("check", help="validate a config file and print it as it will be used")
    check.add_argument("file", type=Path, help="the config YAML to check (docs/config.md)")
    check.add_argument("--warehouse", type=Path,
                       help="also check the names of budgets:, pools: and clusters: against this published "
                            "warehouse, each one it lacks a warning (default: names are not checked)")
    return parser


def _main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if hasattr(args, "config") and args.command != "config":
        from pipelines.lib.config import config_file

        args.config = config_file(args.config)  # one lookup order for every command: --config, $GPULEDGER_CONFIG
    if getattr(args, "warehouse", None) and args.command in ("run", "export"):
        os.environ["GPULEDGER_WAREHOUSE"] = str(args.warehouse.resolve())
    if args.command == "simulate":
        return _simulate(args)
    if args.command == "query":
        return _query(args)
    if args.command == "inspect":
        return _inspect(args)
    if args.command == "export":
        return _export_focus(args)
    if args.command == "report":
        return _report(args)
    if args.command == "config":
        return _config_check(args)
    if args.command == "plan":
        return _plan(args)
    if args.command in ("alerts", "collect", "ui"):
        from pipelines.cli import alerts, collect, ui

        return {"alerts": alerts, "collect": collect, "ui": ui}[args.command].run(args)
    return _run(args)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gpuledger")
    except PackageNotFoundError:
        return "(not installed: run from a source tree)"


def _config_check(args: argparse.Namespace) -> int:
    """Exit 0 for a valid config (with --warehouse, each name the ledger lacks a warning on stderr: a budget
    may be set before its project's first GPU-hour), 2 for an invalid one or a missing warehouse."""
    import duckdb

    from pipelines.lib.config import ConfigError, load_config
    from pipelines.lib.ledger_names import config_name_warnings, read_ledger_names
    from pipelines.lib.strict_yaml import load_yaml, read_yaml_text

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
        print(f"config check: cannot read the warehouse {args.warehouse}: {_one_line(err)}", file=sys.stderr)
        return 2
    if ledger is not None:
        lines = load_yaml(read_yaml_text(args.file), args.file).key_lines  # load_config has read it: it loads
        for key, problem in config_name_warnings(cfg, ledger):
            where = f"{args.file}:{lines[key]}" if key in lines else str(args.file)
            print(f"warning: {where}: `{'.'.join(key)}`: {problem}", file=sys.stderr)
    print(f"# {args.file}: valid. The config as it will be used, defaults filled in:")
    sys.stdout.write(cfg.as_yaml())
    return 0


def _simulate(args: argparse.Namespace) -> int:
    from simulator import Knobs, simulate

    manifest = simulate(args.out, args.start, args.days, nodes=args.nodes, seed=args.seed,
                        kubernetes_cluster=args.kubernetes_cluster, knobs=Knobs(mig_node=args.mig_node))
    print(f"simulated {args.days} day(s) from {args.start} on {args.nodes} nodes (seed {args.seed}) into {args.out}")
    for source, facts in manifest.items():
        if isinstance(facts, dict) and source != "simulator":
            shown = ", ".join(f"{k} {v}" for k, v in facts.items() if not isinstance(v, (dict, list)) and k != "day_share_rounding")
            print(f"  {source:<10} {shown}")
            for currency, money in facts.get("by_currency", {}).items():   # bills: money per currency, never added
                print(f"  {'':<10} {currency} effective_cost {money['effective_cost']}, "
                      f"billed_cost {money['billed_cost']}, rows {money['rows']}")
    return 0


def _run(args: argparse.Namespace) -> int:
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
    from pipelines.lib.publish import published_path
    from pipelines.cli.materialize import RunInterrupted, materialize_days
    from pipelines.lib.sandbox import open_read_only
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
        _print_ignored(ignored)
        _print_failures(failed)
        return 1
    with open_read_only(published_path()) as con:
        print(f"\nwarehouse {warehouse_path()}\npublished for readers (SQL clients, gpuledger query): "
              f"{published_path()}")
        if (on_spark := _spark_where(args)) is not None:
            print(on_spark)
        print("\nlanding files taken in, per source:")
        print_table(con.sql(sql("reports/landing_summary")).pl())
        _print_ignored(ignored)
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
    from pipelines.lib.publish import published_path
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
    from datetime import datetime, timezone

    from pipelines.ingest.coverage import ledger_start
    from pipelines.lib.config import load_config
    from pipelines.lib.resources import LEDGER_START_ENV

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
    last = datetime.now(timezone.utc).date() - timedelta(days=1)
    if end > last:
        return f"{end} is not over yet: the ledger runs complete UTC days, up to {last}"
    return None


def _print_failures(failed: list) -> None:
    for day, reasons in failed:
        print(f"FAILED {day}:", file=sys.stderr)
        for reason in reasons:
            print(f"  {reason}", file=sys.stderr)


def _inspect(args: argparse.Namespace) -> int:
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
        _print_ignored(report.get("ignored_files", []))
    if args.strict and (problem := strict_problem(report)) is not None:
        sys.stdout.flush()  # the verdict is the last line, after the report
        print(problem, file=sys.stderr)
        return 1
    return 0


def _print_ignored(ignored: list[dict]) -> None:
    if ignored:
        print(f"\nignored: {len(ignored)} file(s) no source reads")
    for f in ignored:
        print(f"  {f['file']}  ({f['reason']})")


def _report(args: argparse.Namespace) -> int:
    from pipelines.lib.publish import published_path
    from pipelines.lib.sandbox import open_read_only
    from pipelines.reports import DEFAULT_REPORTS, check_report_request, period_of, write_team_report
    from pipelines.reports.org import check_org_request
    from pipelines.reports.org_page import write_org_report
    from pipelines.reports.user_report import check_user_request, write_user_report

    try:  # what was typed first: a bad date is named before a missing warehouse
        start, end, label = period_of(args.day, args.month)
    except ValueError as err:
        print(f"report failed: {err}", file=sys.stderr)
        return 2
    path = args.warehouse or published_path()
    if not readable(path):
        return 2
    try:
        with open_read_only(path) as con:
            if args.org:
                check_org_request(con, start, end)
                paths = write_org_report(con, start, end, label, args.out or DEFAULT_REPORTS)
            elif args.user is not None:
                check_user_request(con, args.user, start, end)
                paths = write_user_report(con, args.user, start, end, label, args.out or DEFAULT_REPORTS)
            else:
                check_report_request(con, args.team, start, end)
                paths = write_team_report(con, args.team, start, end, label, args.out or DEFAULT_REPORTS)
    except (ValueError, RuntimeError) as err:
        print(f"report failed: {err}", file=sys.stderr)
        return 2
    for p in paths:
        print(p)
    return 0


def _export_focus(args: argparse.Namespace) -> int:
    from pipelines.exports.focus import export_focus, part_file
    from pipelines.lib.sandbox import open_read_only
    from pipelines.lib.warehouse import warehouse_path
    from pipelines.lib.writer_lock import warehouse_lock

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


def _plan(args: argparse.Namespace) -> int:
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
    from pipelines.lib.publish import published_path
    from pipelines.lib.strict_yaml import StrictYamlError, read_yaml_text

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
        print(f"plan failed: cannot read the warehouse {warehouse}: {_one_line(err)}", file=sys.stderr)
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


def _query(args: argparse.Namespace) -> int:
    """Runs one statement that only reads, on a sandboxed read-only connection (what is allowed, and
    why: pipelines/lib/sandbox.py), within its time, memory and row limits (pipelines/cli/query.py).
    Exit 2 and one line for what it refuses, 1 for SQL that fails, 3 when a limit stopped it or cut
    its rows (the rows it got are printed)."""
    import duckdb

    from pipelines.cli.console import print_table, write_csv, write_json, write_parquet
    from pipelines.cli.query import QueryLimits, QueryStopped, readable_copy, run_query
    from pipelines.lib.config import load_config
    from pipelines.lib.publish import published_path
    from pipelines.lib.sandbox import allowed_roots, refusal

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
        detail = _one_line(err).removeprefix("Permission Error: ")
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


def _positive(kind: type) -> object:
    """An argparse type: a number of `kind` above 0, else a sentence naming the value."""
    def parse(text: str) -> int | float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a {'whole ' if kind is int else ''}number") from None
        if not 0 < value < float("inf"):  # nan and inf included
            raise argparse.ArgumentTypeError(f"{text} is not a number above 0")
        return value

    return parse


def _one_line(err: Exception) -> str:
    return " ".join(str(err).split("\n")[0].split())


if __name__ == "__main__":
    sys.exit(main())
