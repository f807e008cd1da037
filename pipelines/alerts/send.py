"""Sending one alert, or one team's digest, to one channel, with the standard library only
(docs/plans.md#delivery).

Each send has a deadline: connect, send and reading the answer together within the channel's
`timeout_seconds` (pipelines/alerts/deadline.py), however slowly a receiver trickles. Redirects are
never followed: a 3xx is a failed delivery (the message reached nothing). Every request carries the
same `Idempotency-Key` each time the same alert goes to the same channel, so a receiver can drop a
repeat. Any failure raises DeliveryFailed with a one-line reason that names no secret: every reason
passes through `redact` with the channel's secrets (its URL's userinfo, path and query, the SMTP
password), because urllib's, http.client's and smtplib's errors echo them."""

from __future__ import annotations

import base64
import http.client
import json
import os
import smtplib
import ssl
from datetime import datetime
from urllib.parse import unquote, urljoin, urlsplit

from pipelines.alerts.deadline import Exchange, Expired, run_within
from pipelines.alerts.messages import (Digest, alert_key, digest_email, digest_slack_payload,
                                       digest_webhook_payload, email_message, slack_payload, webhook_payload)
from pipelines.lib.config.alert_channels import Channel, unusable_in_url
from pipelines.lib.redact import login_secrets, redact, redact_url, url_secrets

ANSWER_BYTES = 65536  # of a receiver's answer body, read and dropped (a receiver's reply says nothing to us)


class DeliveryFailed(Exception):
    """The channel did not take the message; the reason is one line, kept in last_error. `unknown`:
    the message went out whole and no answer came, so the receiver may have taken it."""

    def __init__(self, reason: str, unknown: bool = False) -> None:
        super().__init__(reason)
        self.unknown = unknown


def send(channel: Channel, item: dict | Digest, now: datetime) -> str | None:
    """Delivers `item` — an alert (an ops.alerts row) or a team's Digest — to `channel`; returns only
    once the receiver took it, with a note when it took it only in part (a mail server refusing some
    recipients: sending again would repeat it to the others, so it counts as delivered)."""
    secrets = channel_secrets(channel)
    try:
        if channel.type == "email":
            note = _send_email(channel, item, now)
            return None if note is None else redact(note, secrets)
        if isinstance(item, Digest):
            payload = digest_slack_payload(item) if channel.type == "slack" else digest_webhook_payload(item, channel.name)
            headers = {"Idempotency-Key": item.key, "X-Gpuledger-Digest": item.key,
                       "X-Gpuledger-Alert-Id": ",".join(a["alert_id"] for a in item.alerts)}
        else:
            payload = slack_payload(item) if channel.type == "slack" else webhook_payload(item, channel.name)
            headers = {"Idempotency-Key": alert_key(item, channel.name), "X-Gpuledger-Alert-Id": item["alert_id"]}
        _post_json(_url(channel), payload, headers, channel.timeout_seconds)
        return None
    except DeliveryFailed as err:
        raise DeliveryFailed(redact(str(err), secrets), unknown=err.unknown) from None


def channel_secrets(channel: Channel) -> list[str]:
    """What no error about `channel` may show: the pieces of its URL past host and first segment, its
    userinfo, and its SMTP password in the forms an SMTP exchange carries it."""
    url = channel.url or (os.environ.get(channel.url_env) if channel.url_env else None)
    secrets = url_secrets(url)
    if channel.smtp and channel.smtp.password_env:
        secrets += login_secrets(channel.smtp.username, os.environ.get(channel.smtp.password_env))
    return secrets


def _url(channel: Channel) -> str:
    if channel.url:
        return channel.url
    url = os.environ.get(channel.url_env or "")
    if not url:
        raise DeliveryFailed(f"environment variable {channel.url_env} (url_env) is not set")
    if not url.startswith(("http://", "https://")):
        raise DeliveryFailed(f"environment variable {channel.url_env} does not hold an http(s) URL")
    if unusable_in_url(url.strip()):
        raise DeliveryFailed(f"environment variable {channel.url_env} holds a URL with a space or control "
                             f"character ({redact_url(url)}): percent-encode it (%20)")
    return url.strip()


def _post_json(url: str, payload: dict, headers: dict[str, str], timeout: float) -> None:
    where = redact_url(url)
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as err:
        raise DeliveryFailed(f"{where} is not a usable URL: {err}") from None
    body = json.dumps(payload, ensure_ascii=False).encode()
    headers = {"Content-Type": "application/json; charset=utf-8", "User-Agent": "gpuledger-alerts", **headers}
    if parts.username is not None:  # userinfo is the server's Basic credentials, never sent in the request line
        login = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(login.encode()).decode()
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")

    def post(exchange: Exchange) -> tuple[int, str, str | None]:
        if parts.scheme == "https":
            conn = http.client.HTTPSConnection(parts.hostname, port, timeout=timeout,
                                               context=ssl.create_default_context())
        else:
            conn = http.client.HTTPConnection(parts.hostname, port, timeout=timeout)
        exchange.watch(lambda: conn.sock)
        try:
            conn.request("POST", target, body=body, headers=headers)
            exchange.sent = True
            response = conn.getresponse()
            answer = exchange.answered_with((response.status, response.reason, response.getheader("Location")))
            response.read(ANSWER_BYTES)
            return answer
        finally:
            conn.close()

    exchange: Exchange = Exchange()
    try:
        status, reason, location = run_within(timeout, post, exchange)
    except Expired as err:
        raise _expired(where, err) from None
    except (http.client.HTTPException, OSError, ValueError) as err:
        # ValueError: http.client's InvalidURL (a space in the path), which quotes the path: redacted by send
        text = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
        if exchange.sent:
            raise DeliveryFailed(f"outcome unknown: {where} took the whole request, then failed before "
                                 f"answering ({text}); sent again with the same Idempotency-Key", unknown=True) from None
        raise DeliveryFailed(f"{where} unreachable: {text}") from None
    if 300 <= status < 400:
        moved = redact_url(urljoin(url, location)) if location else "none given"
        raise DeliveryFailed(f"HTTP {status} {reason} from {where}: a redirect, not followed (Location: {moved}); "
                             "configure the URL it points to")
    if not 200 <= status < 300:
        raise DeliveryFailed(f"HTTP {status} {reason} from {where}")


def _expired(where: str, err: Expired) -> DeliveryFailed:
    if err.sent:  # the resend carries the same Idempotency-Key (HTTP) or Message-ID (e-mail)
        return DeliveryFailed(f"outcome unknown: {where} took the whole message but gave no answer within "
                              f"{err.seconds:g} s (timeout_seconds); it is sent again, under the same key",
                              unknown=True)
    return DeliveryFailed(f"{where} unreachable: within {err.seconds:g} s (timeout_seconds) the exchange did not get "
                          "as far as sending the message; nothing was delivered")


class _TrackedSmtp(smtplib.SMTP):
    """smtplib.SMTP noting when the message's end (CRLF.CRLF) went out: from then on the outcome of a
    failure is unknown, the server may have queued it."""

    exchange: Exchange

    def send(self, s: bytes | str) -> None:
        super().send(s)
        if (s.encode() if isinstance(s, str) else s).endswith(b"\r\n.\r\n"):
            self.exchange.sent = True


class _TrackedSmtpSsl(_TrackedSmtp, smtplib.SMTP_SSL):
    pass


def _send_email(channel: Channel, item: dict | Digest, now: datetime) -> str | None:
    smtp = channel.smtp
    assert smtp is not None and channel.from_  # the config requires both for an email channel
    if isinstance(item, Digest):
        msg = digest_email(item, channel.name, channel.from_, channel.to, now)
    else:
        msg = email_message(item, channel.name, channel.from_, channel.to, now)
    password = None
    if smtp.password_env:
        password = os.environ.get(smtp.password_env)
        if password is None:
            raise DeliveryFailed(f"environment variable {smtp.password_env} (smtp.password_env) is not set")
    where = f"smtp://{smtp.host}:{smtp.port}"
    timeout = channel.timeout_seconds

    def deliver(exchange: Exchange) -> dict:
        if smtp.ssl:
            server: _TrackedSmtp = _TrackedSmtpSsl(timeout=timeout, context=ssl.create_default_context())
        else:
            server = _TrackedSmtp(timeout=timeout)
        server.exchange = exchange
        server._host = smtp.host  # what STARTTLS checks the certificate against (smtplib sets it only in __init__)
        exchange.watch(lambda: getattr(server, "sock", None))
        try:
            server.connect(smtp.host, smtp.port)
            if smtp.starttls:
                server.starttls(context=ssl.create_default_context())
            if smtp.username:
                server.login(smtp.username, password or "")
            refused = exchange.answered_with(server.send_message(msg))
            try:
                server.quit()
            except (smtplib.SMTPException, OSError):  # the message is taken; a rude goodbye changes nothing
                pass
            return refused
        finally:
            server.close()

    exchange: Exchange = Exchange()
    try:
        refused = run_within(timeout, deliver, exchange)
    except Expired as err:
        raise _expired(where, err) from None
    except smtplib.SMTPResponseException as err:
        raise DeliveryFailed(f"{where} answered {err.smtp_code}: {_text(err.smtp_error)}") from None
    except (smtplib.SMTPException, OSError, ValueError) as err:
        if exchange.sent:
            raise DeliveryFailed(f"outcome unknown: {where} took the whole message, then failed before "
                                 f"answering ({type(err).__name__}: {err}); the resend has the same Message-ID",
                                 unknown=True) from None
        raise DeliveryFailed(f"{where}: {type(err).__name__}: {err}") from None
    return f"{where} refused recipient(s) {sorted(refused)}" if refused else None


def _text(raw: bytes | str) -> str:
    return raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw)
