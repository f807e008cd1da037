"""/metrics in Prometheus' text format: per team, project, category and currency the cost and GPU-seconds
of the latest complete day and of the month to date; the last run's time and status; open alerts by kind.
Gauges are built fresh per scrape in a private registry, from one connection: one run's numbers."""

from __future__ import annotations

from datetime import timezone

from prometheus_client import CollectorRegistry, Gauge, generate_latest

from pipelines.lib.warehouse import has_table
from pipelines.serve.api import team_filter
from pipelines.serve.db import reading


def render(path, grant) -> bytes:
    reg = CollectorRegistry()
    labels = ["team", "project", "category", "currency"]
    day_cost = Gauge("gpuledger_day_cost", "Effective cost of the latest complete day", labels, registry=reg)
    day_gpu = Gauge("gpuledger_day_gpu_seconds", "GPU-seconds of the latest complete day", labels, registry=reg)
    mtd_cost = Gauge("gpuledger_month_to_date_cost", "Effective cost of the latest complete day's month to date",
                     labels, registry=reg)
    mtd_gpu = Gauge("gpuledger_month_to_date_gpu_seconds", "GPU-seconds of the month to date", labels, registry=reg)
    last_run = Gauge("gpuledger_last_run_day_complete", "1 if the latest ledger day is complete", ["day"],
                     registry=reg)
    open_alerts = Gauge("gpuledger_open_alerts", "Open alerts by kind", ["kind"], registry=reg)
    run_time = Gauge("gpuledger_last_run_timestamp_seconds",
                     "When the last run wrote a ledger day (ops.ledger_days.updated_at, UTC)", registry=reg)
    run_status = Gauge("gpuledger_last_run_status", "1 for the status the last run left its latest day in",
                       ["day", "status"], registry=reg)
    visible, team_params = team_filter(grant)
    with reading(path) as con:
        latest = con.execute("SELECT max(day) FROM finance.reconciliation_daily WHERE complete").fetchone()[0]
        if latest is not None:
            q = ("SELECT team, project, category, billing_currency, sum(effective_cost), sum(gpu_seconds) "
                 f"FROM marts.fct_cost_daily WHERE day BETWEEN ? AND ? AND {visible} GROUP BY ALL")
            for gauge_c, gauge_g, start in ((day_cost, day_gpu, latest), (mtd_cost, mtd_gpu, latest.replace(day=1))):
                for team, project, category, cur, cost, gpu in con.execute(q, [start, latest, *team_params]).fetchall():
                    # Prometheus samples are floats: the exact figure is /api/v1/allocation's decimal string
                    gauge_c.labels(team, project, category, cur or "").set(float(cost or 0))
                    gauge_g.labels(team, project, category, cur or "").set(float(gpu or 0))
        last = con.execute("SELECT day, complete FROM finance.reconciliation_daily ORDER BY day DESC LIMIT 1"
                           ).fetchone()
        if last:
            last_run.labels(last[0].isoformat()).set(1 if last[1] else 0)
        if has_table(con, "ops", "ledger_days"):
            written = con.execute("SELECT day, status, updated_at FROM ops.ledger_days WHERE updated_at IS NOT NULL "
                                  "ORDER BY updated_at DESC, day DESC LIMIT 1").fetchone()
            if written:
                day, status, at = written
                run_time.set(at.replace(tzinfo=timezone.utc).timestamp())
                run_status.labels(day.isoformat(), status).set(1)
        for kind, n in con.execute(f"SELECT kind, count(*) FROM ops.alerts WHERE resolved_at IS NULL AND {visible} "
                                   "GROUP BY kind", team_params).fetchall():
            open_alerts.labels(kind).set(n)
    return generate_latest(reg)
