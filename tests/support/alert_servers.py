"""Real receivers on 127.0.0.1 for the alert-delivery tests: an HTTP server that records each POST
(and can be told to answer 500 for the next n requests, to redirect, or to answer late), an SMTP
server (aiosmtpd) that records each message (and can answer late, or refuse a login echoing it), a
raw TCP server that trickles its answer a byte at a time, and a warehouse holding hand-written
ops.alerts rows."""

from __future__ import annotations

import json
import socket
import threading
import time
from datetime import date, datetime
from decimal import Decimal
from email import message_from_bytes
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from pipelines.lib.warehouse import bootstrap, connect


class RecordingHttp:
    """POSTs land in `requests` as (path, parsed JSON body), their headers in `headers`; `fail_next`
    requests get a 500 first; with `redirect_to` every POST is answered 302 to it; `answer_after`
    seconds pass between reading a POST and answering it. A GET (a client that followed a redirect)
    lands in `gets`."""

    def __init__(self, port: int = 0) -> None:
        self.requests: list[tuple[str, dict]] = []
        self.headers: list[dict[str, str]] = []
        self.gets: list[str] = []
        self.fail_next = 0
        self.redirect_to: str | None = None
        self.answer_after = 0.0
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with owner._lock:
                    failing = owner.fail_next > 0
                    if failing:
                        owner.fail_next -= 1
                    elif not owner.redirect_to:
                        owner.requests.append((self.path, json.loads(body)))
                        owner.headers.append(dict(self.headers.items()))
                time.sleep(owner.answer_after)
                self.send_response(500 if failing else 302 if owner.redirect_to else 200)
                if owner.redirect_to and not failing:
                    self.send_header("Location", owner.redirect_to)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def do_GET(self) -> None:  # noqa: N802
                owner.gets.append(self.path)
                self.send_response(200)
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
    """An aiosmtpd server; each message received lands in `messages` as an email.message.Message.
    `answer_after`: seconds between taking a message and answering 250. With `refuse_logins_echoing`,
    it offers AUTH without TLS and refuses every login with a 535 that quotes the password back
    (as a hostile or careless server may)."""

    def __init__(self, refuse_logins_echoing: bool = False) -> None:
        import asyncio

        from aiosmtpd.controller import Controller
        from aiosmtpd.smtp import AuthResult

        self.messages: list = []
        self.answer_after = 0.0
        owner = self

        class Handler:
            async def handle_DATA(self, server, session, envelope):  # noqa: N802 (aiosmtpd's name)
                msg = message_from_bytes(envelope.original_content or envelope.content)
                owner.messages.append((list(envelope.rcpt_tos), msg))
                await asyncio.sleep(owner.answer_after)
                return "250 OK"

        def echoing_refusal(server, session, envelope, mechanism, auth_data):
            password = auth_data.password.decode(errors="replace")
            return AuthResult(success=False, handled=False, message=f"535 5.7.8 password {password} is wrong")

        auth = {"authenticator": echoing_refusal, "auth_require_tls": False} if refuse_logins_echoing else {}
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=free_port(), **auth)
        self.controller.start()
        self.port = self.controller.port

    def stop(self) -> None:
        self.controller.stop()


class TricklingServer:
    """A TCP server on 127.0.0.1 that reads what a client sends (an HTTP request with its body, or
    nothing for SMTP, whose server speaks first) and then trickles `answer` a byte every `every`
    seconds: each read of the client gets a byte well within any per-read timeout. `answered`: how
    many connections it has trickled to."""

    def __init__(self, answer: bytes, every: float = 0.5, reads_request: bool = True) -> None:
        self.answer, self.every, self.reads_request = answer, every, reads_request
        self.answered = 0
        self._stop = threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._trickle, args=(conn,), daemon=True).start()

    def _trickle(self, conn: socket.socket) -> None:
        with conn:
            if self.reads_request:
                _read_http_request(conn)
            self.answered += 1
            for byte in self.answer:
                if self._stop.wait(self.every):
                    return
                try:
                    conn.sendall(bytes([byte]))
                except OSError:  # the client gave up: what the test wants
                    return

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(5)
        self.sock.close()


def _read_http_request(conn: socket.socket) -> None:
    conn.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":", 1)[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return
        body += chunk


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
