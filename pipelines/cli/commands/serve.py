"""`gpuledger serve`: the JSON API, /metrics and /healthz over the published warehouse (docs/serve.md).
Without tokens in the config's `serve:` section it binds only to a loopback address."""

from __future__ import annotations

import argparse
import ipaddress
import logging
import signal
import sys
from pathlib import Path

from pipelines.cli.preflight import readable


def add_parser(sub: argparse._SubParsersAction) -> None:
    serve = sub.add_parser("serve", help="serve the published warehouse: JSON API (/api/v1/), /metrics, /healthz")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1; another than a "
                                                           "loopback one needs serve.tokens in the config)")
    serve.add_argument("--port", type=int, default=8765, help="port (default 8765)")
    serve.add_argument("--config", type=Path, help="the organisation config (default: $GPULEDGER_CONFIG)")
    serve.add_argument("--warehouse", type=Path, help="the published DuckDB file (default: the published warehouse)")
    serve.add_argument("--hash-token", action="store_true",
                       help="read a token from standard input, print its sha256 for serve.tokens, and exit")


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run(args: argparse.Namespace) -> int:
    from pipelines.serve.auth import hash_token
    if args.hash_token:
        token = sys.stdin.readline().strip()
        if not token:
            print("serve failed: no token on standard input", file=sys.stderr)
            return 2
        print(hash_token(token))
        return 0
    import uvicorn

    from pipelines.lib.config import config_file, load_config
    from pipelines.lib.warehouse.publish import published_path
    from pipelines.serve.app import build_app
    from pipelines.serve.auth import Tokens

    try:
        cfg = load_config(config_file(args.config))
    except (ValueError, OSError) as err:
        print(f"serve failed: {err}", file=sys.stderr)
        return 2
    tokens = Tokens.from_config(cfg.serve)
    if not tokens.entries and not _loopback(args.host):
        print(f"serve failed: no serve.tokens in the config, so it binds only to a loopback address, "
              f"not {args.host}: add tokens (docs/serve.md) or use --host 127.0.0.1", file=sys.stderr)
        return 2
    path = args.warehouse or published_path()
    if not readable(path):
        return 2
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if not tokens.entries:
        print(f"serve: no serve.tokens configured: every answer shows every team, on {args.host} only",
              file=sys.stderr)
    app = build_app(path, tokens, max_window_days=cfg.serve.max_window_days, max_rows=cfg.serve.max_rows)
    # uvicorn handles SIGTERM: it stops accepting and finishes the requests in flight; then it re-raises
    # the signal to the handler that was there before it. That one is a no-op, so a stop asked for is a
    # clean exit (status 0), not a death by signal (-15) that a supervisor would count as a crash.
    signal.signal(signal.SIGTERM, lambda *_: None)
    # access_log off: its lines carry the query string; ours (pipelines/serve/app.py) carry the path only.
    uvicorn.run(app, host=args.host, port=args.port, access_log=False, log_level="info",
                timeout_graceful_shutdown=10)
    return 0
