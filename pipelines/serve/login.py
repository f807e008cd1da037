"""Browser login: a team lead's browser cannot send `Authorization: Bearer`, so /login takes the token
once in a plain form (no JavaScript) and answers with a session cookie.

The cookie holds a random session id, never the token nor its hash: the id means something only to this
process, for SESSION_SECONDS, and /logout (or a restart) ends it. The cookie is HttpOnly (no script
reads it), SameSite=Strict (no other site's page sends it, so no cross-site request rides on it) and
Secure when the request came over https. The form's body is parsed here with urllib.parse: Starlette's
form parser needs python-multipart, which gpuledger does not depend on."""

from __future__ import annotations

import secrets
import threading
import time
from urllib.parse import parse_qs, quote

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from pipelines.reports.fmt import esc
from pipelines.reports.html_page import page
from pipelines.serve.auth import Grant

COOKIE = "gpuledger_session"
SESSION_SECONDS = 12 * 3600  # a working day: a lead logs in in the morning, not every hour
MAX_SESSIONS = 10_000  # past this the oldest are dropped: a flood of logins cannot fill the memory
MAX_FORM_BYTES = 4096  # a token is tens of characters; a bigger body is not a login


class Sessions:
    """Session id -> (grant, expiry), in this process's memory."""

    def __init__(self):
        self._lock = threading.Lock()
        self._by_id: dict[str, tuple[Grant, float]] = {}

    def open(self, grant: Grant) -> str:
        sid = secrets.token_urlsafe(32)
        now = time.monotonic()
        with self._lock:
            self._by_id = {k: v for k, v in self._by_id.items() if v[1] > now}
            while len(self._by_id) >= MAX_SESSIONS:
                self._by_id.pop(next(iter(self._by_id)))
            self._by_id[sid] = (grant, now + SESSION_SECONDS)
        return sid

    def grant_for(self, sid: str | None) -> Grant | None:
        if not sid:
            return None
        with self._lock:
            found = self._by_id.get(sid)
            if found is None or found[1] <= time.monotonic():
                self._by_id.pop(sid, None)
                return None
            return found[0]

    def close(self, sid: str | None) -> None:
        with self._lock:
            self._by_id.pop(sid or "", None)


def _form(note: str = "") -> str:
    body = ('<section data-section="login"><h2>Log in</h2>'
            '<p class="note">Paste the token your gpuledger operator gave you. It is checked once; your browser '
            "then keeps a session cookie for 12 hours (Log out ends it).</p>"
            + (f'<p class="empty" data-note="login">{esc(note)}</p>' if note else "")
            + '<form method="post" action="/login"><p><label for="token">Token</label><br>'
              '<input id="token" name="token" type="password" autocomplete="current-password" required size="40">'
              '</p><p><button type="submit">Log in</button></p></form></section>')
    return page("gpuledger: log in", "Log in", body, "The reports and the API of this gpuledger server")


def landing_page(grant: Grant) -> str:
    """Where a login goes: a team token's first team page; a `*` token's organisation overview."""
    return f"/teams/{quote(sorted(grant.teams)[0], safe='')}" if grant.teams else "/"


def login_form(request: Request) -> Response:
    if not request.app.state.tokens.entries:  # nothing to log in to: every page is open on loopback
        return RedirectResponse("/", status_code=303)
    return HTMLResponse(_form())


async def login(request: Request) -> Response:
    tokens = request.app.state.tokens
    if not tokens.entries:
        return RedirectResponse("/", status_code=303)
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            return HTMLResponse(_form("That was not a login form."), status_code=400)
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/x-www-form-urlencoded":
        return HTMLResponse(_form("That was not a login form."), status_code=400)
    fields = parse_qs(body.decode("utf-8", "replace"), max_num_fields=4)
    token = (fields.get("token") or [""])[0].strip()
    grant = tokens.grant_for(f"Bearer {token}") if token else None
    if grant is None:
        return HTMLResponse(_form("That token is not known here. Check it and try again."), status_code=401)
    response = RedirectResponse(landing_page(grant), status_code=303)
    response.set_cookie(COOKIE, request.app.state.sessions.open(grant), max_age=SESSION_SECONDS, path="/",
                        httponly=True, samesite="strict", secure=request.url.scheme == "https")
    return response


def logout(request: Request) -> Response:
    request.app.state.sessions.close(request.cookies.get(COOKIE))
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict", secure=request.url.scheme == "https")
    return response
