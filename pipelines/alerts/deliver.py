"""One delivery pass: every alert still pending goes to the channels that route it, at least once and,
short of a crash between sending and recording, exactly once per channel and revision (an escalated
alert is due again) (docs/plans.md#delivery). Alerts of a kind in `alerts.immediate` go one message
each; the others go in one digest per team and channel — every due alert of that team in one message,
at most once per `alerts.digest_hours` unless it holds a critical alert.

A pass takes the warehouse lock twice, briefly, and never while it talks to the network:
1. claim (one transaction): route each pending alert to its channels (a row per alert and channel in
   ops.alert_deliveries), take the deliveries that are due, count their attempt and put their next
   attempt off by the backoff; write the ops.actions row of each alert whose kind has an action.
2. send, with the lock released — each immediate alert alone, each team's digest as one message, whose
   deliveries share its outcome; run the actions that are not dry runs.
3. record (one transaction): delivered, or the error; then sum each alert's deliveries up into
   ops.alerts (status, delivered_at, channel).
A process that dies between 2 and 3 leaves its deliveries claimed: they are due again after the
backoff and sent a second time (at least once; the Idempotency-Key / Message-ID of every message,
the same on every attempt, lets a receiver dedupe). So does a send whose outcome is unknown (the
message went out, no answer came within the deadline): it is recorded `unknown`, not `failed`, and
sent again after the backoff. Every error is redacted (pipelines/lib/redact.py) before it is kept.
An action's row is written before it runs, so an action never runs twice.
"""

from __future__ import annotations

import hashlib
import json
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable, Iterator

import duckdb
import polars as pl

from pipelines.alerts.actions import ActionRefused, command_for, run_command
from pipelines.alerts.messages import Digest, digest_key
from pipelines.alerts.send import DeliveryFailed, channel_secrets, send
from pipelines.lib.config.alert_channels import Channel
from pipelines.lib.config.policies import AlertsConfig
from pipelines.lib.redact import redact
from pipelines.lib.warehouse import bootstrap, connect, transaction
from pipelines.lib.warehouse.writer_lock import LockBusy, warehouse_lock

CLAIM_LIMIT = 200  # deliveries per pass: a backlog drains over a few passes, each one short


def utc_now() -> datetime:
    """The warehouse's times are naive UTC (as ops.alerts.raised_at)."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


@dataclass
class Claim:
    alert: dict
    channel: Channel
    attempt: int


@dataclass
class PassResult:
    delivered: list[tuple[str, str]] = field(default_factory=list)        # (alert_id, channel)
    failed: list[tuple[str, str, str]] = field(default_factory=list)      # (alert_id, channel, error)
    unknown: list[tuple[str, str, str]] = field(default_factory=list)     # sent, no answer: (alert_id, channel, why)
    unsent: list[tuple[str, str]] = field(default_factory=list)           # claimed, not tried: out of time
    actions: list[tuple[str, list[str], bool, int | None]] = field(default_factory=list)  # alert, command, dry run, exit
    not_recorded: str | None = None  # why step 3 could not run (the sends will repeat after the backoff)

    def summary(self) -> str:
        parts = [f"{len(self.delivered)} delivered", f"{len(self.failed)} failed"]
        if self.unknown:
            parts.append(f"{len(self.unknown)} outcome unknown (sent again after the backoff, same key)")
        if self.unsent:
            parts.append(f"{len(self.unsent)} left for the next pass")
        if self.actions:
            parts.append(f"{len(self.actions)} action(s)")
        return ", ".join(parts)


def delivery_pass(
    warehouse: str | Path, cfg: AlertsConfig, *, clock: Callable[[], datetime] = utc_now,
    lock_wait_seconds: float | None = None, record_wait_seconds: float | None = None,
    send_budget_seconds: float | None = None, log: Callable[[str], None] | None = None,
    sender: Callable[[Channel, dict | Digest, datetime], str | None] = send,
    runner: Callable[[list[str], float], tuple[int | None, str]] = run_command,
) -> PassResult:
    """Delivers what is due. `lock_wait_seconds` / `record_wait_seconds`: how long to wait for the
    lock before claiming / recording (None: as long as it takes; LockBusy past it);
    `send_budget_seconds`: stop starting sends after that long (the rest stays due)."""
    result = PassResult()
    with warehouse_lock(warehouse, wait_seconds=lock_wait_seconds, report=log):
        with _open(warehouse) as con, transaction(con):
            claims = _claim(con, cfg, clock())
            actions = _claim_actions(con, cfg, clock())
    started = time.monotonic()
    broken: dict[str, str] = {}  # channel -> its first error of this pass
    notes: dict[tuple[str, str], str] = {}
    arrived: dict[tuple[str, str], datetime] = {}  # when each receiver took its message
    digests: dict[tuple[str, str], str] = {}  # (alert_id, channel) -> the digest it went in
    for batch, item in _messages(claims, cfg.immediate):
        keys = [(c.alert["alert_id"], c.channel.name) for c in batch]
        channel = batch[0].channel
        if send_budget_seconds is not None and time.monotonic() - started > send_budget_seconds:
            result.unsent.extend(keys)
            continue
        if channel.name in broken:
            # a channel that just failed is not tried again in this pass: its deliveries back off together
            result.failed.extend((*k, f"not tried: the channel failed earlier in this pass ({broken[channel.name]})")
                                 for k in keys)
            continue
        try:
            note = sender(channel, item, clock())
        except Exception as err:  # DeliveryFailed, or anything unforeseen: this message failed, the pass goes on
            reason = str(err) if isinstance(err, DeliveryFailed) else f"{type(err).__name__}: {err}"
            # redacted here too: a sender's or an unforeseen error may quote the URL or a password
            reason = redact(reason, channel_secrets(channel))
            broken[channel.name] = reason
            unknown = isinstance(err, DeliveryFailed) and err.unknown
            (result.unknown if unknown else result.failed).extend((*k, reason) for k in keys)
            continue
        result.delivered.extend(keys)
        for k in keys:
            arrived[k] = clock()
            if isinstance(item, Digest):
                digests[k] = item.key
            if note:
                notes[k] = redact(note, channel_secrets(channel))
    outcomes = {alert_id: runner(command, timeout) for alert_id, command, timeout in actions}
    result.actions = [(a, c, False, outcomes[a][0]) for a, c, _ in actions]
    try:
        with warehouse_lock(warehouse, wait_seconds=record_wait_seconds, report=log):
            with _open(warehouse) as con, transaction(con):
                _record(con, cfg, result, notes, arrived, clock(), claims, digests)
                _record_actions(con, outcomes)
    except LockBusy as busy:
        result.not_recorded = str(busy)
        if log:
            log(f"alert deliveries not recorded ({busy}): they are sent again after the backoff")
    return result


@contextmanager
def _open(path: str | Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to the warehouse with its tables bootstrapped (ops.alert_deliveries, ops.actions
    appear in a warehouse an older version made); closed before the lock is let go."""
    con = connect(path)
    try:
        bootstrap(con)
        yield con
    finally:
        con.close()


def _messages(claims: list[Claim], immediate: list[str]) -> list[tuple[list[Claim], dict | Digest]]:
    """What the claims are sent as: an alert of an immediate kind alone; the others one Digest per
    channel and team, in the order their first claim came (the oldest due first)."""
    out: list[tuple[list[Claim], dict | Digest]] = []
    groups: dict[tuple[str, str | None], list[Claim]] = {}
    for claim in claims:
        if claim.alert["kind"] in immediate:
            out.append(([claim], claim.alert))
        else:
            group = groups.setdefault((claim.channel.name, claim.alert["team"]), [])
            if not group:
                out.append((group, None))  # its place; filled below
            group.append(claim)
    return [(batch, item if item is not None else
             Digest(batch[0].alert["team"], [c.alert for c in batch],
                    digest_key(batch[0].channel.name, batch[0].alert["team"], [c.alert for c in batch])))
            for batch, item in out]


def _rows(con: duckdb.DuckDBPyConnection, query: str, params: dict | None = None) -> list[dict]:
    cursor = con.execute(query, params or {})
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def _claim(con: duckdb.DuckDBPyConnection, cfg: AlertsConfig, now: datetime) -> list[Claim]:
    pending = _rows(con, "SELECT * FROM ops.alerts WHERE status = 'pending' ORDER BY raised_at, alert_id")
    routes = pl.DataFrame(
        [(a["alert_id"], c.name, a.get("revision") or 0)
         for a in pending for c in cfg.channels if c.routes(a["team"], a["severity"])],
        schema={"alert_id": pl.String, "channel": pl.String, "revision": pl.Int32}, orient="row")
    con.register("routes_in", routes)
    con.register("pending_in", pl.DataFrame({"alert_id": [a["alert_id"] for a in pending]}, schema={"alert_id": pl.String}))
    try:
        # a route no longer configured (channel removed, teams or min_severity changed) is not waited for;
        # one configured again is due again
        con.execute("""UPDATE ops.alert_deliveries d SET status = 'cancelled',
                           last_error = 'no longer routed by alerts.channels'
                       WHERE status = 'pending' AND alert_id IN (SELECT alert_id FROM pending_in)
                         AND (alert_id, channel) NOT IN (SELECT (alert_id, channel) FROM routes_in)""")
        # an escalated alert (a higher revision) is due again on every route, its attempts counted afresh
        con.execute("""INSERT INTO ops.alert_deliveries (alert_id, channel, status, attempts, next_attempt_at, revision)
                       SELECT alert_id, channel, 'pending', 0, $now, revision FROM routes_in
                       ON CONFLICT (alert_id, channel) DO UPDATE SET status = 'pending', next_attempt_at = $now,
                           attempts = CASE WHEN EXCLUDED.revision > coalesce(revision, 0) THEN 0 ELSE attempts END,
                           revision = EXCLUDED.revision
                       WHERE status = 'cancelled'
                          OR (EXCLUDED.revision > coalesce(revision, 0) AND status IN ('delivered', 'failed'))""",
                    {"now": now})
    finally:
        con.unregister("routes_in")
        con.unregister("pending_in")
    # A team's digest to a channel waits while its last one is younger than digest_hours, unless it
    # holds a critical alert or alerts left over from that digest (due before it went: a claim limit)
    due = _rows(con, """
        WITH due AS (
            SELECT d.alert_id, d.channel, d.attempts, d.next_attempt_at, a.team, a.kind, a.severity
            FROM ops.alert_deliveries d JOIN ops.alerts a USING (alert_id)
            WHERE d.status = 'pending' AND d.next_attempt_at <= $now
        ),
        last_digest AS (
            SELECT d.channel, a.team, max(d.delivered_at) AS at
            FROM ops.alert_deliveries d JOIN ops.alerts a USING (alert_id)
            WHERE d.digest_key IS NOT NULL AND d.delivered_at IS NOT NULL GROUP BY ALL
        ),
        held AS (
            SELECT u.channel, u.team FROM due u
            JOIN last_digest l ON l.channel = u.channel AND l.team IS NOT DISTINCT FROM u.team
            WHERE NOT list_contains($immediate, u.kind)
            GROUP BY ALL
            HAVING max(l.at) > $now - to_seconds(CAST($digest_seconds AS BIGINT))
               AND NOT bool_or(u.severity = 'critical') AND min(u.next_attempt_at) > max(l.at)
        )
        SELECT alert_id, channel, attempts FROM due u
        WHERE list_contains($immediate, kind)
           OR NOT EXISTS (SELECT 1 FROM held h WHERE h.channel = u.channel AND h.team IS NOT DISTINCT FROM u.team)
        ORDER BY next_attempt_at, alert_id, channel LIMIT $limit""",
                {"now": now, "limit": CLAIM_LIMIT, "immediate": list(cfg.immediate),
                 "digest_seconds": round(cfg.digest_hours * 3600)})
    by_id = {a["alert_id"]: a for a in pending}
    channels = {c.name: c for c in cfg.channels}
    claims = [Claim(by_id[d["alert_id"]], channels[d["channel"]], d["attempts"] + 1)
              for d in due if d["alert_id"] in by_id and d["channel"] in channels]
    if claims:
        claimed = pl.DataFrame(
            [(c.alert["alert_id"], c.channel.name, now + timedelta(seconds=cfg.retry.delay_seconds(c.attempt)))
             for c in claims],
            schema={"alert_id": pl.String, "channel": pl.String, "next_attempt_at": pl.Datetime("us")}, orient="row")
        con.register("claimed_in", claimed)
        try:
            con.execute("""UPDATE ops.alert_deliveries d SET attempts = d.attempts + 1,
                               first_attempt_at = coalesce(d.first_attempt_at, $now), last_attempt_at = $now,
                               next_attempt_at = c.next_attempt_at
                           FROM claimed_in c WHERE d.alert_id = c.alert_id AND d.channel = c.channel""", {"now": now})
        finally:
            con.unregister("claimed_in")
    return claims


def _claim_actions(con: duckdb.DuckDBPyConnection, cfg: AlertsConfig, now: datetime) -> list[tuple[str, list[str], float]]:
    """Writes the ops.actions row of each pending alert whose kind has an enabled action and that has
    none yet; returns those to run (not dry runs, not refused): (alert_id, command, timeout)."""
    enabled = {kind: a for kind, a in cfg.actions.items() if a.enabled}
    if not enabled:
        return []
    candidates = _rows(con, """SELECT * FROM ops.alerts WHERE status = 'pending' AND list_contains($kinds, kind)
                                 AND alert_id NOT IN (SELECT alert_id FROM ops.actions)
                               ORDER BY raised_at, alert_id""", {"kinds": sorted(enabled)})
    to_run, rows = [], []
    for alert in candidates:
        action = enabled[alert["kind"]]
        if alert["raised_at"] < now - timedelta(hours=action.max_age_hours):
            continue
        try:
            command, output = command_for(action, alert), None
        except ActionRefused as err:
            command, output = list(action.command), f"refused: {err}"
        if output is None and action.dry_run:
            output = "dry run: not executed"
        elif output is None:
            to_run.append((alert["alert_id"], command, action.timeout_seconds))
        action_id = hashlib.sha256(json.dumps([alert["alert_id"], alert["kind"]]).encode()).hexdigest()[:16]
        rows.append((action_id, alert["alert_id"], alert["kind"], json.dumps(command), action.dry_run, now, output))
    if rows:
        con.executemany("INSERT INTO ops.actions (action_id, alert_id, kind, command, dry_run, started_at, output) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    return to_run


def _record(con: duckdb.DuckDBPyConnection, cfg: AlertsConfig, result: PassResult, notes: dict,
            arrived: dict, now: datetime, claims: list[Claim], digests: dict) -> None:
    if result.delivered:
        con.executemany("UPDATE ops.alert_deliveries SET status = 'delivered', last_outcome = 'delivered', "
                        "delivered_at = ?, last_error = ?, digest_key = ? WHERE alert_id = ? AND channel = ?",
                        [(arrived[k], notes.get(k), digests.get(k), *k) for k in result.delivered])
    # failed: the receiver surely does not have it; unknown: it may (sent whole, no answer). Both are
    # due again after the backoff, and both give up after max_attempts.
    tried = [("failed", *f) for f in result.failed] + [("unknown", *u) for u in result.unknown]
    if tried:
        con.executemany("""UPDATE ops.alert_deliveries SET last_error = ?, last_outcome = ?,
                               status = CASE WHEN ?::INTEGER IS NOT NULL AND attempts >= ? THEN 'failed' ELSE status END
                           WHERE alert_id = ? AND channel = ? AND status = 'pending'""",
                        [(err, outcome, cfg.retry.max_attempts, cfg.retry.max_attempts, a, c)
                         for outcome, a, c, err in tried])
    if result.unsent:
        # not tried: the attempt does not count and it is due at once
        con.executemany("UPDATE ops.alert_deliveries SET attempts = attempts - 1, next_attempt_at = ? "
                        "WHERE alert_id = ? AND channel = ?", [(now, *k) for k in result.unsent])
    touched = sorted({c.alert["alert_id"] for c in claims})
    if touched:
        _sum_up(con, touched)


def _sum_up(con: duckdb.DuckDBPyConnection, alert_ids: list[str]) -> None:
    """ops.alerts.status from the alert's deliveries: pending while one is still due, failed when none
    is due and one gave up, delivered when all arrived; `channel` the channels it reached,
    `delivered_at` the last arrival."""
    con.execute("""
        UPDATE ops.alerts a SET status = s.status, delivered_at = s.delivered_at, channel = s.channels
        FROM (
            SELECT alert_id,
                   CASE WHEN bool_or(status = 'pending') THEN 'pending'
                        WHEN bool_or(status = 'failed') THEN 'failed'
                        ELSE 'delivered' END AS status,
                   CASE WHEN bool_and(status = 'delivered') THEN max(delivered_at) END AS delivered_at,
                   string_agg(channel, ',' ORDER BY channel) FILTER (WHERE status = 'delivered') AS channels
            FROM ops.alert_deliveries
            WHERE status <> 'cancelled' AND list_contains($ids, alert_id)
            GROUP BY alert_id
        ) s
        WHERE a.alert_id = s.alert_id AND a.status = 'pending'""", {"ids": alert_ids})


def _record_actions(con: duckdb.DuckDBPyConnection, outcomes: dict[str, tuple[int | None, str]]) -> None:
    if outcomes:
        con.executemany("UPDATE ops.actions SET exit_code = ?, output = ? WHERE alert_id = ?",
                        [(code, output, alert_id) for alert_id, (code, output) in outcomes.items()])
