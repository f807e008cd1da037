"""`gpuledger report`: a team's, a user's or the organisation's waste report, or a training run's page,
from the published warehouse."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pipelines.cli.preflight import readable


def add_parser(sub: argparse._SubParsersAction) -> None:
    report = sub.add_parser("report", help="write a team's, a user's or the organisation's waste report (HTML, "
                                           "Markdown), or a training run's page")
    whose = report.add_mutually_exclusive_group(required=True)
    whose.add_argument("--team", help="the team, as the ledger names it (marts.dim_projects)")
    whose.add_argument("--user", help="a user, as the scheduler names them (marts.fct_user_cost_daily): their jobs "
                                      "in every team, written under <out>/_users/")
    whose.add_argument("--org", action="store_true",
                       help="the whole organisation's page, <out>/index.html (+ .md): every team's cost, waste, "
                            "under-use and savings, cluster utilisation, the top savings, links to the team reports")
    whose.add_argument("--run", metavar="RUN_ID", help="a training run's page, its whole history (no --day or "
                                                       "--month): <out>/_runs/<run>.html, as serve shows /runs/<run>")
    when = report.add_mutually_exclusive_group()
    # not required by argparse: --run takes no period; run() asks for one for the others
    when.add_argument("--day", help="one UTC day, YYYY-MM-DD (default: none; a team's, user's or org report "
                                    "needs this or --month, --run neither)")
    when.add_argument("--month", help="one month, YYYY-MM (default: none; a team's, user's or org report "
                                      "needs this or --day, --run neither)")
    report.add_argument("--out", type=Path, help="folder (default: data/reports under the current directory)")
    report.add_argument("--warehouse", type=Path, help="a DuckDB file to read (default: the published warehouse)")


def run(args: argparse.Namespace) -> int:
    from pipelines.lib.warehouse.publish import published_path
    from pipelines.lib.warehouse.sandbox import open_read_only
    from pipelines.reports import DEFAULT_REPORTS, check_report_request, period_of, write_team_report
    from pipelines.reports.org import check_org_request
    from pipelines.reports.org_page import write_org_report
    from pipelines.reports.run_report import check_run_request, write_run_report
    from pipelines.reports.user_report import check_user_request, write_user_report

    if (args.run is not None) == (args.day is not None or args.month is not None):
        print("report failed: " + ("a run's page is its whole history: give --run without --day or --month"
                                   if args.run is not None else "give the period: --day YYYY-MM-DD or --month YYYY-MM"), file=sys.stderr)
        return 2
    try:  # what was typed first: a bad date is named before a missing warehouse
        start, end, label = period_of(args.day, args.month) if args.run is None else (None, None, None)
    except ValueError as err:
        print(f"report failed: {err}", file=sys.stderr)
        return 2
    path = args.warehouse or published_path()
    if not readable(path):
        return 2
    try:
        with open_read_only(path) as con:
            if args.run is not None:
                check_run_request(con, args.run)
                paths = write_run_report(con, args.run, args.out or DEFAULT_REPORTS)
            elif args.org:
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
