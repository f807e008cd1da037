"""Raising alerts: each kind is one query, sql/alerts/<kind>.sql, whose rows are inserted into ops.alerts
unless their `alert_id` (a digest of kind, subject and threshold) is there already (docs/plans.md#alerts).
The daily asset (pipelines/defs/alerts/assets.py) and the live sensor (live.py) both raise through `insert_alerts`, so an alert
one of them raised is the same row the other would raise, and is raised once."""

from __future__ import annotations

from datetime import date, datetime

import duckdb

from pipelines.lib.warehouse import _bound, sql

# The alert's identity: the same kind, subject and threshold is the same alert, whichever run raises it.
ALERT_ID = "substr(sha256(json_array(kind, subject_type, subject, threshold)::VARCHAR), 1, 16)"
# Kinds the live sensor raises within the hour, from today's landing files (the daily run raises them too).
LIVE_KINDS = ("hung_job", "step_time_regression")


def alert_rows(con: duckdb.DuckDBPyConnection, kind: str, params: dict[str, object]) -> duckdb.DuckDBPyRelation:
    """The alerts sql/alerts/<kind>.sql calls for, with their alert_id (kind is a constant of the caller)."""
    text = sql(f"alerts/{kind}")
    return con.sql(f"SELECT {ALERT_ID} AS alert_id, * FROM ({text})", params=_bound(text, params))


def insert_alerts(con: duckdb.DuckDBPyConnection, kinds: tuple[str, ...], params: dict[str, object], day: date,
                  raised_at: datetime) -> dict[str, int]:
    """Inserts the alerts each kind's query gives for `params`; returns how many of each kind were new.
    The caller holds the transaction."""
    new: dict[str, int] = {}
    for kind in kinds:
        text = sql(f"alerts/{kind}")   # kinds are constants of the callers; values are bound
        new[kind] = insert_found(con, f"(SELECT {ALERT_ID} AS alert_id, * FROM ({text}))", day, raised_at,
                                 _bound(text, params))
    return new


def insert_found(con: duckdb.DuckDBPyConnection, rows: str, day: date, raised_at: datetime,
                 params: dict[str, object] | None = None) -> int:
    """Inserts `rows` (a table or subquery of the caller's, with alert_id and the query's columns) into
    ops.alerts as pending alerts of `day` — INSERT OR IGNORE: an alert_id already there keeps its row and
    status; returns how many were new."""
    before = con.execute("SELECT count(*) FROM ops.alerts").fetchall()[0][0]
    con.execute(f"""INSERT OR IGNORE INTO ops.alerts BY NAME
                    SELECT *, $day::DATE AS day, $raised_at AS raised_at, 'pending' AS status FROM {rows}""",
                {**(params or {}), "day": day, "raised_at": raised_at})
    return con.execute("SELECT count(*) FROM ops.alerts").fetchall()[0][0] - before
