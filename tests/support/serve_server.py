"""`gpuledger serve` as the tests start it: the real server (uvicorn) in a subprocess on 127.0.0.1."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.support.prometheus import _free_port

ROOT = Path(__file__).resolve().parents[2]


def start_server(work: Path, published: Path, config: Path, name: str = "serve"):
    """`gpuledger serve` over `published`, once it answers /healthz: (url, process, log file)."""
    port = _free_port()
    log = (work / f"{name}.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "pipelines.cli", "serve", "--port", str(port), "--config",
                             str(config), "--warehouse", str(published)], cwd=ROOT, stdout=log,
                            stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        assert proc.poll() is None, (work / f"{name}.log").read_text()
        try:
            if urllib.request.urlopen(f"{url}/healthz", timeout=2).status == 200:
                return url, proc, log
        except OSError:
            assert time.monotonic() < deadline, "the server did not answer /healthz in 60 s"
            time.sleep(0.2)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # a redirect is an answer the test reads (its status and Location), not followed


_OPENER = urllib.request.build_opener(_NoRedirects)


def send(url: str, headers: dict | None = None, data: bytes | None = None) -> tuple[int, dict, bytes]:
    """Status, headers and body of one request; an error status or a redirect is an answer, not an
    exception, and a redirect is not followed."""
    req = urllib.request.Request(url, headers=headers or {}, data=data)
    try:
        with _OPENER.open(req, timeout=30) as resp:
            return resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.headers, err.read()


def fetch(url: str, headers: dict | None = None, data: bytes | None = None) -> tuple[int, bytes]:
    """Status and body of one request (see send)."""
    status, _, body = send(url, headers, data)
    return status, body
