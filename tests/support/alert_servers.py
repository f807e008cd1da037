"""Real receivers on 127.0.0.1 for the alert-delivery tests: an HTTP server that records each POST
(and can be told to answer 500 for the next n requests), an SMTP server (aiosmtpd) that records each
message, and a warehouse holding hand-written ops.alerts rows."""

from __future__ import annotations

import json
import socket
import threading
from datetime import date, datetime
from decimal import Decimal
from email import message_from_bytes
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from pipelines.lib.warehouse import bootstrap, connect


class RecordingHttp:
    """POSTs land in `requests` as (path, parsed JSON body); `fail_next` requests get a 500 first."""

    def __init__(self, port: int = 0) -> None:
        self.requests: list[tuple[str, dict]] = []
        self.fail_next = 0
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with owner._lock:
                    failing = owner.fail_next > 0
                    if failing:
                        owner.fail_next -= 1
                    else:
                        owner.requests.append((self.path, json.loads(body)))
                self.send_response(500 if failing else 200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def bodies(self, path: str) -> list[dict]:
        return [body for p, body in self.requests if p == path]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class RecordingSmtp:
    """An aiosmtpd server; each message received lands in `messages` as an email.message.Message."""

    def __init__(self) -> None:
        from aiosmtpd.controller import Controller

        self.messages: list = []
        owner = self

        class Handler:
            async def handle_DATA(self, server, session, envelope):  # noqa: N802 (aiosmtpd's name)
                msg = message_from_bytes(envelope.original_content or envelope.content)
                owner.messages.append((list(envelope.rcpt_tos), msg))
                return "250 OK"

        self.controller = Controller(Handler(), hostname="127.0.0.1", port=free_port())
        self.controller.start()
        self.port = self.controller.port

    def stop(self) -> None:
        self.controller.stop()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def alert(alert_id: str, *, kind: str = "budget_threshold", severity: str = "warning", team: str | None = "pretrain",
          subject_type: str = "run", subject: str = "llm-8b-v2", threshold: str = "80%",
          raised_at: datetime = datetime(2026, 12, 1, 6, 0), cost: str | None = "1234.5",
          currency: str | None = "USD", message: str = "run llm-8b-v2 has burnt 80% of its budget") -> dict:
    return {"alert_id": alert_id, "kind": kind, "severity": severity, "subject_type": subject_type,
            "subject": subject, "threshold": threshold, "team": team, "day": date(2026, 11, 30),
            "raised_at": raised_at, "message": message,
            "cost_at_stake": None if cost is None else Decimal(cost), "billing_currency": currency,
            "status": "pending", "details": json.dumps({"burn_pct": "80.25"})}


def warehouse_with_alerts(path: Path, alerts: list[dict]) -> Path:
    """A warehouse made by the pipeline's own bootstrap, holding these ops.alerts rows."""
    con = connect(path)
    try:
        bootstrap(con)
        add_alerts(con, alerts)
    finally:
        con.close()
    return path


def add_alerts(con, alerts: list[dict]) -> None:
    for a in alerts:
        names = list(a)
        con.execute(f"INSERT INTO ops.alerts ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)})",
                    list(a.values()))
