"""What each kind of channel receives (docs/plans.md#delivery): one alert (a kind of `alerts.immediate`),
or a team's digest — its alerts opened or escalated since its last digest, a line each, and the total at
stake per currency. Every message carries its alert ids and a key (`delivery_key` of the alert, its
revision and the channel; a digest's `digest_key` over its alerts): the HTTP `Idempotency-Key`, the
webhook body's `idempotency_key`, the e-mail's Message-ID, the same on every attempt, so a receiver can
drop the second copy a send whose outcome was unknown (no answer in time, a crash between send and
record) leaves.

An alert here is a row of ops.alerts as a dict (column -> value, money as Decimal)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from email.message import EmailMessage
from email.utils import format_datetime

from pipelines.lib.alert_money import at_stake, money_subject  # noqa: F401 — messages' own, and its callers'

# the row's delivery bookkeeping says nothing to a receiver (it is 'pending' while being sent)
NOT_SENT = ("status", "delivered_at", "channel")


@dataclass
class Digest:
    """One message to one channel for the alerts of one team (None: alerts of no team)."""

    team: str | None
    alerts: list[dict]
    key: str  # digest_key: the same alerts (and revisions) to the same channel, the same key


def money(amount: Decimal | None, currency: str | None) -> str:
    """An amount for people: to the cent (half to even), thousands separated, with its currency."""
    if amount is None:
        return "–"
    return f"{amount:,.2f} {currency or ''}".strip()


def _exact(value: object) -> object:
    # exact decimal text, trailing zeros dropped (1234.5, never 1234.500000000000000000 or a float)
    if isinstance(value, Decimal):
        text = format(value.normalize(), "f")
        return text
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    return value


def headline(alert: dict) -> str:
    return f"{alert['kind']}: {alert['subject_type']} {alert['subject']}"


def state(alert: dict) -> str:
    """Whether the episode is open, and since when: 'open since …', 'resolved …'."""
    if alert.get("resolved_at") is not None:
        return f"resolved {alert['resolved_at']:%Y-%m-%d %H:%M} UTC"
    opened = alert.get("opened_at")
    return f"open since {opened:%Y-%m-%d %H:%M} UTC" if opened else "open"


def stake_text(totals: dict[str, Decimal]) -> str:
    return " + ".join(money(v, c) for c, v in totals.items()) or "–"


def text_body(alert: dict) -> str:
    """The alert in a few lines of plain text (Slack's text and the e-mail body)."""
    return "\n".join([
        f"[gpuledger] {alert['severity'].upper()} {headline(alert)}",
        alert["message"],
        f"team: {alert.get('team') or '–'}   day: {alert['day']}   threshold: {alert.get('threshold') or '–'}"
        + (f"   {state(alert)}" if "opened_at" in alert else ""),
        f"cost at stake: {money(alert.get('cost_at_stake'), alert.get('billing_currency'))}",
        f"alert_id: {alert['alert_id']}",
    ])


def _slack(text: str) -> dict:
    return {"text": text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")}


def slack_payload(alert: dict) -> dict:
    """A Slack-compatible incoming webhook's body. &, < and > are escaped as Slack asks, so a run or
    team name from the data can never become a link or an @channel mention."""
    return _slack(text_body(alert))


def webhook_payload(alert: dict, channel: str) -> dict:
    """The alert row as JSON: money as exact decimal text, times in ISO 8601, `details` parsed."""
    out = {k: _exact(v) for k, v in alert.items() if k not in NOT_SENT}
    if isinstance(out.get("details"), str):
        try:  # decimals in the details stay exact text too
            out["details"] = json.loads(out["details"], parse_float=str)
        except ValueError:
            pass
    out["channel"] = channel
    out["idempotency_key"] = alert_key(alert, channel)
    return out


def delivery_key(alert_id: str, channel: str, revision: int | None = 0) -> str:
    """The key of one alert's delivery to one channel: 32 hex digits of SHA-256 of alert_id NUL channel
    (and NUL its revision, once escalated: an escalation is a new message), the same on every attempt
    (a receiver keeps the keys it has seen and drops a repeat)."""
    tail = f"\x00{revision}" if revision else ""
    return hashlib.sha256(f"{alert_id}\x00{channel}{tail}".encode()).hexdigest()[:32]


def alert_key(alert: dict, channel: str) -> str:
    return delivery_key(alert["alert_id"], channel, alert.get("revision"))


def digest_key(channel: str, team: str | None, alerts: list[dict]) -> str:
    """A digest's key: over its channel, team and each alert's id and revision, in order."""
    ids = sorted(f"{a['alert_id']}:{a.get('revision') or 0}" for a in alerts)
    return hashlib.sha256("\x00".join([channel, team or "", *ids]).encode()).hexdigest()[:32]


def message_id(alert_id: str, channel: str, sender: str, key: str | None = None) -> str:
    """The same alert to the same channel always has the same Message-ID, so mail clients drop a resend."""
    domain = sender.rpartition("@")[2] or "gpuledger"
    return f"<gpuledger.{alert_id}.{(key or delivery_key(alert_id, channel))[:16]}@{domain}>"


# --- digests -------------------------------------------------------------------------------------

def digest_title(digest: Digest) -> str:
    n = len(digest.alerts)
    return (f"{digest.team or 'no team'}: {n} alert{'' if n == 1 else 's'} opened or escalated, "
            f"at stake {stake_text(at_stake(digest.alerts))}")


def digest_text(digest: Digest) -> str:
    """The digest in plain text: a title, a line per alert (most critical first), its alert ids."""
    order = {"critical": 0, "warning": 1, "info": 2}
    alerts = sorted(digest.alerts, key=lambda a: (order.get(a["severity"], 3), a["kind"], a["subject"]))
    lines = [f"[gpuledger] {digest_title(digest)}"]
    for a in alerts:
        stake = money(a.get("cost_at_stake"), a.get("billing_currency"))
        lines.append(f"- {a['severity'].upper()} {headline(a)} ({state(a)}; at stake {stake}): {a['message']}")
    lines.append("alert_ids: " + ", ".join(a["alert_id"] for a in alerts))
    return "\n".join(lines)


def digest_slack_payload(digest: Digest) -> dict:
    return _slack(digest_text(digest))


def digest_webhook_payload(digest: Digest, channel: str) -> dict:
    """The digest as JSON: its team, the total at stake per currency (exact text), and its alerts as the
    single-alert webhook sends each (without the per-alert channel and key)."""
    rows = []
    for a in digest.alerts:
        row = webhook_payload(a, channel)
        del row["channel"], row["idempotency_key"]
        rows.append(row)
    return {"digest": True, "team": digest.team, "channel": channel, "idempotency_key": digest.key,
            "at_stake": {c: _exact(v) for c, v in at_stake(digest.alerts).items()}, "alerts": rows}


def _email(subject: str, sender: str, recipients: list[str], now: datetime, message_id_: str,
           headers: dict[str, str], body: str) -> EmailMessage:
    msg = EmailMessage()
    msg["Subject"] = subject
    msg["From"] = sender
    msg["To"] = ", ".join(recipients)
    msg["Date"] = format_datetime(now)
    msg["Message-ID"] = message_id_
    for name, value in headers.items():
        msg[name] = value
    msg.set_content(body + "\n")
    return msg


def digest_email(digest: Digest, channel: str, sender: str, recipients: list[str], now: datetime) -> EmailMessage:
    domain = sender.rpartition("@")[2] or "gpuledger"
    return _email(f"[gpuledger] {digest_title(digest)}", sender, recipients, now,
                  f"<gpuledger.digest.{digest.key}@{domain}>", {"X-Gpuledger-Digest": digest.key},
                  digest_text(digest))


def email_message(alert: dict, channel: str, sender: str, recipients: list[str], now: datetime) -> EmailMessage:
    return _email(f"[gpuledger][{alert['severity']}] {headline(alert)}", sender, recipients, now,
                  message_id(alert["alert_id"], channel, sender, alert_key(alert, channel)),
                  {"X-Gpuledger-Alert-Id": alert["alert_id"]}, text_body(alert))
