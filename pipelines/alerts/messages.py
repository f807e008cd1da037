"""What each kind of channel receives for one alert (docs/plans.md#delivery). Every message carries
the alert_id and a key of the alert and channel (`delivery_key`: the HTTP `Idempotency-Key` and the
webhook body's `idempotency_key`, the e-mail's Message-ID), the same on every attempt, so a receiver
can drop the second copy a send whose outcome was unknown (no answer in time, a crash between send
and record) leaves.

An alert here is a row of ops.alerts as a dict (column -> value, money as Decimal)."""

from __future__ import annotations

import hashlib
import json
from datetime import date, datetime
from decimal import Decimal
from email.message import EmailMessage
from email.utils import format_datetime

# the row's delivery bookkeeping says nothing to a receiver (it is 'pending' while being sent)
NOT_SENT = ("status", "delivered_at", "channel")


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


def text_body(alert: dict) -> str:
    """The alert in a few lines of plain text (Slack's text and the e-mail body)."""
    return "\n".join([
        f"[gpuledger] {alert['severity'].upper()} {headline(alert)}",
        alert["message"],
        f"team: {alert.get('team') or '–'}   day: {alert['day']}   threshold: {alert.get('threshold') or '–'}",
        f"cost at stake: {money(alert.get('cost_at_stake'), alert.get('billing_currency'))}",
        f"alert_id: {alert['alert_id']}",
    ])


def slack_payload(alert: dict) -> dict:
    """A Slack-compatible incoming webhook's body. &, < and > are escaped as Slack asks, so a run or
    team name from the data can never become a link or an @channel mention."""
    text = text_body(alert).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return {"text": text}


def webhook_payload(alert: dict, channel: str) -> dict:
    """The alert row as JSON: money as exact decimal text, times in ISO 8601, `details` parsed."""
    out = {k: _exact(v) for k, v in alert.items() if k not in NOT_SENT}
    if isinstance(out.get("details"), str):
        try:  # decimals in the details stay exact text too
            out["details"] = json.loads(out["details"], parse_float=str)
        except ValueError:
            pass
    out["channel"] = channel
    out["idempotency_key"] = delivery_key(alert["alert_id"], channel)
    return out


def delivery_key(alert_id: str, channel: str) -> str:
    """The key of one alert's delivery to one channel: 32 hex digits of SHA-256 of alert_id NUL channel,
    the same on every attempt (a receiver keeps the keys it has seen and drops a repeat)."""
    return hashlib.sha256(f"{alert_id}\x00{channel}".encode()).hexdigest()[:32]


def message_id(alert_id: str, channel: str, sender: str) -> str:
    """The same alert to the same channel always has the same Message-ID, so mail clients drop a resend."""
    domain = sender.rpartition("@")[2] or "gpuledger"
    return f"<gpuledger.{alert_id}.{delivery_key(alert_id, channel)[:16]}@{domain}>"


def email_message(alert: dict, channel: str, sender: str, recipients: list[str], now: datetime) -> EmailMessage:
    msg = EmailMessage()
    msg["Subject"] = f"[gpuledger][{alert['severity']}] {headline(alert)}"
    msg["From"] = sender
    msg["To"] = ", ".join(recipients)
    msg["Date"] = format_datetime(now)
    msg["Message-ID"] = message_id(alert["alert_id"], channel, sender)
    msg["X-Gpuledger-Alert-Id"] = alert["alert_id"]
    msg.set_content(text_body(alert) + "\n")
    return msg
