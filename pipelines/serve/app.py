"""The ASGI app (Starlette): routes, the token check, request logs without tokens, 400s for bad input and
a catch-all 500 that logs the traceback here and tells the client nothing of it."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from pipelines.serve import api, login, pages
from pipelines.serve.auth import Tokens
from pipelines.serve.metrics import render

log = logging.getLogger("gpuledger.serve")
OPEN_PATHS = {"/healthz", "/api/v1/openapi.json", "/login", "/logout"}


def _is_page(path: str) -> bool:
    """A page a browser opens (redirected to /login without a token), not an answer a program reads."""
    return not path.startswith("/api/") and path != "/metrics"


class Guard:
    """Plain ASGI middleware: the grant on request.state (from the bearer token, else the login's session
    cookie), one log line per request (path only: a query string may carry a token, a header the token
    or the cookie), errors as JSON sentences."""

    def __init__(self, app, tokens: Tokens, sessions: login.Sessions):
        self.app, self.tokens, self.sessions = app, tokens, sessions

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        t0, status = time.monotonic(), [500]

        async def sending(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        request = Request(scope)
        try:
            if scope["path"] in OPEN_PATHS:
                scope.setdefault("state", {})["grant"] = None
                await self.app(scope, receive, sending)
            else:
                authorization = request.headers.get("authorization")
                grant = self.tokens.grant_for(authorization)
                if grant is None and authorization is None:
                    grant = self.sessions.grant_for(request.cookies.get(login.COOKIE))
                if grant is None and authorization is None and _is_page(scope["path"]):
                    await RedirectResponse("/login", status_code=303)(scope, receive, sending)
                elif grant is None:
                    await JSONResponse({"error": "a token is needed: Authorization: Bearer <token>, or log in "
                                                 "at /login"}, status_code=401)(scope, receive, sending)
                else:
                    scope.setdefault("state", {})["grant"] = grant
                    await self.app(scope, receive, sending)
        except api.BadRequest as err:
            await JSONResponse({"error": str(err)}, status_code=400)(scope, receive, sending)
        except Exception:  # noqa: BLE001 — the traceback is for the log, never for the client
            log.exception("%s %s failed", scope.get("method"), scope["path"])
            await JSONResponse({"error": "internal error (logged on the server)"},
                               status_code=500)(scope, receive, sending)
        finally:
            log.info("%s %s %d %.1fms", scope.get("method"), scope["path"], status[0],
                     (time.monotonic() - t0) * 1000)


def healthz(request: Request) -> Response:
    ok = request.app.state.path.exists()
    return JSONResponse({"status": "ok" if ok else "no published warehouse"}, status_code=200 if ok else 503)


def metrics(request: Request) -> Response:
    return Response(render(request.app.state.path, request.state.grant),
                    media_type="text/plain; version=0.0.4; charset=utf-8")


def openapi(request: Request) -> Response:
    return JSONResponse(api.openapi())


def build_app(path: Path, tokens: Tokens, *, max_window_days: int, max_rows: int) -> Starlette:
    """The app over the published file at `path`; the limits are the config's (serve.max_window_days, max_rows)."""
    routes = [Route("/healthz", healthz), Route("/metrics", metrics), Route("/api/v1/openapi.json", openapi),
              Route("/login", login.login_form, methods=["GET"]), Route("/login", login.login, methods=["POST"]),
              Route("/logout", login.logout, methods=["GET", "POST"])]
    routes += [Route(p, f) for p, f in {**api.ROUTES, **pages.ROUTES}.items()]
    sessions = login.Sessions()
    app = Starlette(routes=routes, middleware=[Middleware(Guard, tokens=tokens, sessions=sessions)])
    app.state.tokens, app.state.sessions = tokens, sessions
    app.state.path = Path(path)
    app.state.max_window_days, app.state.max_rows = max_window_days, max_rows

    async def not_found(request, exc):
        return JSONResponse({"error": "not found"}, status_code=getattr(exc, "status_code", 404))
    app.add_exception_handler(404, not_found)
    app.add_exception_handler(405, not_found)
    return app


