"""`gpuledger alerts` (docs/plans.md#alerts): the alerts of ops.alerts for people — a summary by kind and
team (alerts, open ones, money at stake per currency: two currencies are never added), then each alert,
its message whole beneath it — filtered by team, kind, severity, day and state; `--json` for programs.
Also one delivery pass (`--deliver`) and one live tick (`--live`) by hand, for cron and tests."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from datetime import timezone
from pathlib import Path

from pipelines.alerts.messages import money
from pipelines.lib.alert_money import summary_groups
from pipelines.lib.dates import day_argument, time_argument

SEVERITIES = ("info", "warning", "critical")
WIDTH = 80  # the alerts' lines are laid out for an 80-column terminal


def add_parser(sub: argparse._SubParsersAction) -> None:
    alerts = sub.add_parser("alerts", help="list the alerts (ops.alerts): a summary, then each alert")
    alerts.add_argument("--team", help="only this team's alerts (default: every team's)")
    alerts.add_argument("--kind", help="only alerts of this kind: hung_job, idle_session, budget_threshold … (default: every kind)")
    alerts.add_argument("--severity", choices=SEVERITIES, help="only alerts of this severity or above (default: info, all)")
    alerts.add_argument("--since", type=day_argument, metavar="DATE",
                        help="only alerts that held on or after this UTC day, YYYY-MM-DD (default: any day)")
    alerts.add_argument("--open", action="store_true", help="only open alerts (not resolved)")
    alerts.add_argument("--undelivered", action="store_true",
                        help="only alerts not delivered yet (what --open meant before alerts had episodes)")
    alerts.add_argument("--json", action="store_true",
                        help="the rows of ops.alerts as a JSON array, `details` as an object")
    alerts.add_argument("--warehouse", type=Path, help="a DuckDB file to read (default: the published warehouse; "
                        "with --deliver or --live, the live warehouse written: $GPULEDGER_WAREHOUSE or "
                        "data/warehouse.duckdb)")
    alerts.add_argument("--deliver", action="store_true",
                        help="run one delivery pass: send due alerts to alerts.channels, run alerts.actions")
    alerts.add_argument("--live", action="store_true",
                        help="raise hung jobs, idle sessions and step-time regressions now from today's landing "
                             "files, as the live sensor does, and print what was found")
    alerts.add_argument("--as-of", type=time_argument, metavar="TIME",
                        help="with --live: consider only data up to this time, YYYY-MM-DDTHH:MM:SS, UTC unless "
                             "it names its offset (default: now)")
    alerts.add_argument("--landing", type=Path, help="with --live: the landing zone (default: $GPULEDGER_LANDING)")
    alerts.add_argument("--config", type=Path, help="with --deliver or --live: organisation config YAML "
                                                     "(default: $GPULEDGER_CONFIG)")


def run(args: argparse.Namespace) -> int:
    if args.deliver:
        return _deliver(args)
    if args.live:
        return _live(args)
    return _list(args)


def _list(args: argparse.Namespace) -> int:
    from pipelines.cli.preflight import readable
    from pipelines.lib.config.alert_channels import ALERT_KINDS
    from pipelines.lib.names import unknown_name
    from pipelines.lib.warehouse.publish import published_path
    from pipelines.lib.warehouse.sandbox import open_read_only
    from pipelines.lib.warehouse import has_table

    path = args.warehouse or published_path()
    if not readable(path):
        return 2
    if args.kind and args.kind not in ALERT_KINDS:
        print(unknown_name("alert kind", args.kind, list(ALERT_KINDS), "gpuledger"), file=sys.stderr)
        return 2
    with open_read_only(path) as con:
        if not has_table(con, "ops", "alerts"):
            print(f"{path} has no ops.alerts yet: run `gpuledger run` with this version", file=sys.stderr)
            return 2
        columns = {r[0] for r in con.execute("SELECT column_name FROM duckdb_columns() WHERE schema_name = 'ops' "
                                             "AND table_name = 'alerts'").fetchall()}
        if args.team:
            teams = [t for (t,) in con.execute("SELECT DISTINCT team FROM ops.alerts WHERE team IS NOT NULL").fetchall()]
            if args.team not in teams:
                print(unknown_name("team", args.team, teams, f"the alerts of {path}"), file=sys.stderr)
                return 2
        # a published file of an older version has no episodes: read as opened when raised, never resolved
        episodes = "" if "resolved_at" in columns else \
            ", raised_at AS opened_at, raised_at AS updated_at, NULL::TIMESTAMP AS resolved_at"
        rows = con.execute(f"""
            SELECT * FROM (SELECT *{episodes} FROM ops.alerts)
            WHERE ($team IS NULL OR team = $team) AND ($kind IS NULL OR kind = $kind)
              AND list_position($severities, severity) >= list_position($severities, coalesce($severity, 'info'))
              AND ($since IS NULL OR coalesce(resolved_at, updated_at, opened_at, raised_at) >= $since)
              AND (NOT $open OR resolved_at IS NULL) AND (NOT $undelivered OR status <> 'delivered')
            ORDER BY resolved_at IS NOT NULL, list_position($severities, severity) DESC, opened_at, kind, subject""",
            {"team": args.team, "kind": args.kind, "severity": args.severity, "severities": list(SEVERITIES),
             "since": args.since, "open": args.open, "undelivered": args.undelivered})
        names = [d[0] for d in rows.description]
        alerts = [dict(zip(names, r)) for r in rows.fetchall()]
    if args.json:
        print(json.dumps([_for_json(a) for a in alerts], indent=2, default=str))
        return 0
    if not alerts:
        print("no alerts" + (" match" if _filtered(args) else ""))
        return 0
    print("\n".join(summary_lines(alerts)))
    for a in alerts:
        print()
        print("\n".join(alert_lines(a)))
    return 0


def _filtered(args: argparse.Namespace) -> bool:
    return any((args.team, args.kind, args.severity, args.since, args.open, args.undelivered))


def _for_json(alert: dict) -> dict:
    out = dict(alert)
    if isinstance(out.get("details"), str):
        try:
            out["details"] = json.loads(out["details"])
        except ValueError:  # a row some other writer left: kept as its text
            pass
    return out


def summary_lines(alerts: list[dict]) -> list[str]:
    """Per kind and team (alert_money.summary_groups): alerts, open ones, and the money at stake, a line per
    currency."""
    n_open = sum(a["resolved_at"] is None for a in alerts)
    lines = [f"{len(alerts)} alert{'s' if len(alerts) != 1 else ''}, {n_open} open",
             f"{'kind':<21} {'team':<20} {'alerts':>6} {'open':>5}  {'at stake':>22}"]
    for kind, team, n, n_open, stake in summary_groups(alerts):
        stakes = [money(v, c) for c, v in stake.items()] or ["–"]
        lines.append(f"{kind[:21]:<21} {_cut(team, 20):<20} {n:>6} {n_open:>5}  {stakes[0]:>22}")
        lines += [f"{'':<57}{s:>22}" for s in stakes[1:]]
    return lines


def alert_lines(a: dict) -> list[str]:
    """An alert in a few lines of at most WIDTH characters: what and how bad, its state and money, the
    message wrapped beneath."""
    state = "OPEN" if a["resolved_at"] is None else "resolved"
    # a short threshold says the state (`80%`, `burn_ahead`); a stretch's start is in the message already
    shown = f"  [{a['threshold']}]" if len(a["threshold"]) <= 16 else ""
    head = f"{state:<8} {a['severity']:<8} {a['kind']}  {a['subject_type']} {a['subject']}{shown}  {a['alert_id']}"
    when = f"opened {a['opened_at']:%Y-%m-%d %H:%M}" if a.get("opened_at") else f"day {a['day']}"
    if a["resolved_at"] is not None:
        when += f", resolved {a['resolved_at']:%Y-%m-%d %H:%M}"
    stake = money(a["cost_at_stake"], a["billing_currency"])
    facts = [f"team {a['team'] or '–'}", when, f"at stake {stake}", a["status"]]
    out = textwrap.wrap(head, WIDTH, subsequent_indent="    ", break_on_hyphens=False)
    out += _joined(facts, " · ", "    ")
    out += textwrap.wrap(a["message"], WIDTH, initial_indent="    ", subsequent_indent="    ", break_on_hyphens=False)
    return out


def _joined(parts: list[str], sep: str, indent: str) -> list[str]:
    """`parts` joined by `sep` in lines of at most WIDTH, a line breaking only between parts."""
    lines = [indent + parts[0]]
    for part in parts[1:]:
        if len(lines[-1]) + len(sep) + len(part) <= WIDTH:
            lines[-1] += sep + part
        else:
            lines.append(indent + part)
    return lines


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _deliver(args: argparse.Namespace) -> int:
    """One delivery pass on the live warehouse (docs/plans.md#delivery), for cron and tests: exit 0
    when nothing failed, 1 when a channel failed or its outcome is unknown (its deliveries are retried
    by the next pass), 2 when the config or the warehouse cannot be used."""
    from pipelines.alerts.deliver import delivery_pass
    from pipelines.cli.preflight import readable, stop_on_signals, stopped, valid_config
    from pipelines.lib.config import load_config
    from pipelines.lib.warehouse import warehouse_path

    config = args.config
    if not valid_config(config):
        return 2
    cfg = load_config(config).alerts
    path = args.warehouse or warehouse_path()
    if not readable(path):
        return 2
    if not cfg.channels and not any(a.enabled for a in cfg.actions.values()):
        print("no alerts.channels (and no enabled alerts.actions) in the config: nothing to deliver to", file=sys.stderr)
        return 0
    stop_on_signals()
    try:
        result = delivery_pass(path, cfg)  # waits for a run that holds the warehouse, saying so
    except KeyboardInterrupt as stop:
        return stopped(stop)
    for alert_id, channel, error in result.failed + result.unknown:  # redacted by the pass
        print(f"  {alert_id} → {channel}: {error}", file=sys.stderr)
    for alert_id, command, dry_run, exit_code in result.actions:
        print(f"  action for {alert_id}: {' '.join(command)} → exit {exit_code}")
    print(f"alerts: {result.summary()}")
    return 1 if result.failed or result.unknown else 0


def _live(args: argparse.Namespace) -> int:
    """One tick of the live sensor by hand (pipelines/alerts/live.py): for cron users and tests."""
    from pipelines.alerts.live import run_live
    from pipelines.lib.config import load_config
    from pipelines.lib.dagster_glue.resources import landing_resource

    landing = args.landing or landing_resource().path
    if not landing.is_dir():
        print(f"no landing zone at {landing}: give --landing or set GPULEDGER_LANDING", file=sys.stderr)
        return 2
    cfg = load_config(args.config)
    as_of = args.as_of.astimezone(timezone.utc).replace(tzinfo=None) if args.as_of and args.as_of.tzinfo else args.as_of
    result = run_live(landing, cfg, args.warehouse, as_of)
    if args.json:
        print(json.dumps({"as_of": result.as_of.isoformat(), "files_read": result.files_read, "raised": result.raised,
                          "found": [_for_json(a) for a in result.alerts.to_dicts()]}, indent=2, default=str))
        return 0
    new = ", ".join(f"{n} {kind}" for kind, n in result.raised.items() if n) or "nothing new"
    print(f"as of {result.as_of:%Y-%m-%d %H:%M:%S} UTC: {result.files_read} landing files read; raised {new}")
    for a in result.alerts.iter_rows(named=True):
        state = "open" if a["resolved_at"] is None else f"ended {a['resolved_at']:%H:%M}"
        print(f"  {a['severity']:<8}  {a['kind']:<20}  {a['subject_type']} {a['subject']}  {state}  {a['alert_id']}")
        print(textwrap.fill(a["message"], WIDTH, initial_indent="    ", subsequent_indent="    "))
    return 0

