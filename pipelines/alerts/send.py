"""Sending one alert to one channel, with the standard library only, a timeout on every network call.
Any failure raises DeliveryFailed with a one-line reason, which the pass records and retries."""

from __future__ import annotations

import json
import os
import smtplib
import ssl
import urllib.error
import urllib.request
from datetime import datetime

from pipelines.alerts.messages import email_message, slack_payload, webhook_payload
from pipelines.lib.alert_channels import Channel


class DeliveryFailed(Exception):
    """The channel did not take the message; the reason is one line, kept in last_error."""


def send(channel: Channel, alert: dict, now: datetime) -> str | None:
    """Delivers `alert` (an ops.alerts row) to `channel`; returns only once the receiver took it, with
    a note when it took it only in part (a mail server refusing some recipients: sending again would
    repeat it to the others, so it counts as delivered)."""
    if channel.type == "email":
        return _send_email(channel, alert, now)
    if channel.type == "slack":
        _post_json(_url(channel), slack_payload(alert), channel.timeout_seconds)
    else:
        _post_json(_url(channel), webhook_payload(alert, channel.name), channel.timeout_seconds)
    return None


def _url(channel: Channel) -> str:
    if channel.url:
        return channel.url
    url = os.environ.get(channel.url_env or "")
    if not url:
        raise DeliveryFailed(f"environment variable {channel.url_env} (url_env) is not set")
    if not url.startswith(("http://", "https://")):
        raise DeliveryFailed(f"environment variable {channel.url_env} does not hold an http(s) URL")
    return url


def _post_json(url: str, payload: dict, timeout: float) -> None:
    body = json.dumps(payload, ensure_ascii=False).encode()
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "application/json; charset=utf-8",
                                              "User-Agent": "gpuledger-alerts"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read(65536)
            status = response.status
    except urllib.error.HTTPError as err:
        raise DeliveryFailed(f"HTTP {err.code} {err.reason} from {_where(url)}") from None
    except (urllib.error.URLError, OSError) as err:
        reason = getattr(err, "reason", err)
        raise DeliveryFailed(f"{_where(url)} unreachable: {reason}") from None
    if not 200 <= status < 300:
        raise DeliveryFailed(f"HTTP {status} from {_where(url)}")


def _where(url: str) -> str:
    # the scheme and host only: a webhook's path is often its secret, and errors end up in tables and logs
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _send_email(channel: Channel, alert: dict, now: datetime) -> str | None:
    smtp = channel.smtp
    assert smtp is not None and channel.from_  # the config requires both for an email channel
    msg = email_message(alert, channel.name, channel.from_, channel.to, now)
    password = None
    if smtp.password_env:
        password = os.environ.get(smtp.password_env)
        if password is None:
            raise DeliveryFailed(f"environment variable {smtp.password_env} (smtp.password_env) is not set")
    where = f"smtp://{smtp.host}:{smtp.port}"
    try:
        if smtp.ssl:
            server = smtplib.SMTP_SSL(smtp.host, smtp.port, timeout=channel.timeout_seconds,
                                      context=ssl.create_default_context())
        else:
            server = smtplib.SMTP(smtp.host, smtp.port, timeout=channel.timeout_seconds)
        with server:
            if smtp.starttls:
                server.starttls(context=ssl.create_default_context())
            if smtp.username:
                server.login(smtp.username, password or "")
            refused = server.send_message(msg)
    except smtplib.SMTPResponseException as err:
        raise DeliveryFailed(f"{where} answered {err.smtp_code}: {_text(err.smtp_error)}") from None
    except (smtplib.SMTPException, OSError) as err:
        raise DeliveryFailed(f"{where}: {err}") from None
    return f"{where} refused recipient(s) {sorted(refused)}" if refused else None


def _text(raw: bytes | str) -> str:
    return raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)
