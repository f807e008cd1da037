"""Raising alerts as episodes (docs/plans.md#alerts): each query, sql/alerts/<query>.sql, gives the
conditions that hold (or held, within its look-back) as of `as_of`, one row per kind and subject; this
module merges them into ops.alerts, one row per episode. The daily asset (pipelines/defs/alerts/assets.py)
and the live sensor (live.py) both raise through `raise_found`, so an alert one of them raised is the
row the other would raise, under the same alert_id.

An evaluation at `as_of` of some queries:
- opens an episode for a kind and subject not in ops.alerts (pending delivery; `opened_at` when the
  condition first held, the query's or `as_of`);
- updates an episode it finds again — severity, threshold, message, money, details: its latest state —
  and reopens a resolved one; a rise in severity, a budget's higher threshold or a reopening is an
  escalation: the alert is due for delivery again (`revision` + 1, status pending); new figures alone are not;
- resolves an open episode of its kinds it no longer finds (`resolved_at`).
Only an evaluation later than the episode's last change (`as_of` > its resolved_at, else updated_at)
touches it: re-running or backfilling a day never raises an alert again and never moves one backwards.
"""

from __future__ import annotations

import json
from datetime import date, datetime

import duckdb
import polars as pl

from pipelines.lib.warehouse import _bound, sql

# The alert's identity: the same kind and subject is the same alert (episode), whichever run raises it.
ALERT_ID = "substr(sha256(json_array(kind, subject_type, subject)::VARCHAR), 1, 16)"
# Each query and the kinds it gives: an evaluation of a query resolves the open alerts of its kinds.
QUERY_KINDS = {
    "budget_threshold": ("budget_threshold",),
    "cost_anomaly": ("cost_anomaly",),
    "hung_job": ("hung_job", "idle_session"),
    "step_time_regression": ("step_time_regression",),
}
# Queries the live sensor runs within the hour, from today's landing files (the daily run runs them too).
LIVE_QUERIES = ("hung_job", "step_time_regression")
SEVERITY_RANK = "list_position(['info', 'warning', 'critical'], {})"
# what an episode's row says when an evaluation finds it again (figures of a stretch begun before the
# look-back are the window's part only: the episode keeps its own)
FIGURES = ("severity", "threshold", "team", "message", "cost_at_stake", "billing_currency", "details")


def alert_rows(con: duckdb.DuckDBPyConnection, query: str, params: dict[str, object]) -> duckdb.DuckDBPyRelation:
    """The alerts sql/alerts/<query>.sql finds, with their alert_id (query is a constant of the caller)."""
    text = sql(f"alerts/{query}")
    return con.sql(f"SELECT {ALERT_ID} AS alert_id, * FROM ({text})", params=_bound(text, params))


def raise_alerts(con: duckdb.DuckDBPyConnection, queries: tuple[str, ...], params: dict[str, object],
                 day: date, as_of: datetime, raised_at: datetime, severity: dict[str, str]) -> dict[str, int]:
    """Evaluates `queries` on `con` as of `as_of` and merges what they find into its ops.alerts (the
    daily run: the warehouse holds both). Returns how many alerts of each kind were opened."""
    found = pl.concat([alert_rows(con, q, params).pl() for q in queries], how="diagonal_relaxed")
    con.register("alerts_found_in", found)
    try:
        return raise_found(con, "alerts_found_in", queries, day, as_of, raised_at, severity)
    finally:
        con.unregister("alerts_found_in")


def raise_found(con: duckdb.DuckDBPyConnection, rows: str, queries: tuple[str, ...], day: date,
                as_of: datetime, raised_at: datetime, severity: dict[str, str]) -> dict[str, int]:
    """Merges `rows` (a table of the caller's: alert_id and the queries' columns), the finding of
    `queries` as of `as_of`, into ops.alerts. The caller holds the transaction."""
    kinds = [k for q in queries for k in QUERY_KINDS[q]]
    # alerts.severity over the query's own; one row per alert_id (a query gives one per subject already)
    con.execute(f"""CREATE OR REPLACE TEMP TABLE alerts_found AS
                    SELECT * REPLACE (coalesce(json_map($sev::VARCHAR)[kind], severity) AS severity)
                    FROM {rows}
                    QUALIFY row_number() OVER (PARTITION BY alert_id ORDER BY resolved_at DESC NULLS FIRST) = 1""",
                {"sev": json.dumps(severity)})
    # the episodes found again that this evaluation may change, and whether it escalates them
    con.execute(f"""CREATE OR REPLACE TEMP TABLE alerts_merge AS
        SELECT f.*, a.updated_at AS was_updated_at,
               NOT f.since_edge AND {SEVERITY_RANK.format('f.severity')} > {SEVERITY_RANK.format('a.severity')}
               OR (a.resolved_at IS NOT NULL AND f.resolved_at IS NULL)
               OR (f.kind = 'budget_threshold' AND NOT f.since_edge AND f.threshold <> a.threshold
                   AND coalesce(TRY_CAST(rtrim(f.threshold, '%') AS DOUBLE) > TRY_CAST(rtrim(a.threshold, '%') AS DOUBLE),
                                TRUE)) AS escalated
        FROM alerts_found f JOIN ops.alerts a USING (alert_id)
        WHERE $as_of > coalesce(a.resolved_at, a.updated_at, TIMESTAMP '-infinity')""", {"as_of": as_of})
    opened = dict(con.execute("""SELECT kind, count(*) FROM alerts_found
                                 WHERE alert_id NOT IN (SELECT alert_id FROM ops.alerts) GROUP BY kind""").fetchall())
    con.execute("""INSERT INTO ops.alerts BY NAME
                   SELECT alert_id, kind, severity, subject_type, subject, threshold, team, message, cost_at_stake,
                          billing_currency, details, $day::DATE AS day, $raised_at AS raised_at, 'pending' AS status,
                          coalesce(opened_at, $as_of) AS opened_at, coalesce(resolved_at, $as_of) AS updated_at,
                          resolved_at, 0 AS revision
                   FROM alerts_found WHERE alert_id NOT IN (SELECT alert_id FROM ops.alerts)""",
                {"day": day, "raised_at": raised_at, "as_of": as_of})
    figures = ", ".join(f"{c} = CASE WHEN m.since_edge THEN a.{c} ELSE m.{c} END" for c in FIGURES)
    con.execute(f"""UPDATE ops.alerts a SET {figures},
                        updated_at = greatest(coalesce(m.resolved_at, $as_of), m.was_updated_at),
                        resolved_at = m.resolved_at,
                        status = CASE WHEN m.escalated THEN 'pending' ELSE a.status END,
                        revision = coalesce(a.revision, 0) + CASE WHEN m.escalated THEN 1 ELSE 0 END,
                        escalated_at = CASE WHEN m.escalated THEN $as_of ELSE a.escalated_at END
                    FROM alerts_merge m WHERE a.alert_id = m.alert_id""", {"as_of": as_of})
    # what this evaluation looked for and did not find no longer holds
    con.execute("""UPDATE ops.alerts SET resolved_at = $as_of
                   WHERE list_contains($kinds, kind) AND resolved_at IS NULL
                     AND coalesce(updated_at, TIMESTAMP '-infinity') < $as_of
                     AND alert_id NOT IN (SELECT alert_id FROM alerts_found)""", {"as_of": as_of, "kinds": kinds})
    con.execute("DROP TABLE alerts_found")
    con.execute("DROP TABLE alerts_merge")
    return {k: int(opened.get(k, 0)) for k in kinds}
