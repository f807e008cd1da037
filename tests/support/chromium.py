"""Headless Chromium for the tests that look at pages as a person would: a screenshot, the DOM after
layout, and what runs past its container (tests/support/overflow_probe.js). `make system-deps` (which
.ci/run calls) installs Chromium; the tests install nothing and skip without it."""

from __future__ import annotations

import contextlib
import html
import json
import re
import shutil
import subprocess
from pathlib import Path


def chromium_path() -> str | None:
    for candidate in ("chromium", "/usr/bin/chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(candidate)
        if found:
            return found
    return None   # `make system-deps` (which .ci/run calls) installs it; the tests install nothing


def headless(chromium: str, profile: Path, *args: str, width: int = 1400, height: int = 3000) -> subprocess.CompletedProcess:
    return subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         f"--user-data-dir={profile}", f"--window-size={width},{height}", *args],
        capture_output=True, text=True, timeout=90)


PROBE = Path(__file__).with_name("overflow_probe.js")


def overflows(chromium: str, page: str, width: int, folder: Path) -> list[str]:
    """What runs past its container or out of its chart when Chromium lays `page` out `width` px wide:
    a copy of it with tests/support/overflow_probe.js (and without the CSP that forbids scripts) is
    loaded, and the probe's findings read back from the DOM once it ran."""
    probed = folder / f"probed_{width}.html"
    without_csp = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", page)
    assert without_csp != page
    probed.write_text(without_csp.replace("</body>", f"<script>{PROBE.read_text()}</script></body>"))
    dom = headless(chromium, folder / f"profile-probe-{width}", "--virtual-time-budget=10000", "--dump-dom",
                    f"file://{probed}", width=width, height=2000)
    found = re.findall(r'<pre id="overflow-probe">(.*?)</pre>', dom.stdout, flags=re.S)
    assert found, f"the probe did not run: {dom.stderr[-2000:]}"
    return json.loads(html.unescape(found[-1]))




class DevTools:
    """One headless Chromium driven over its DevTools protocol (a websocket), for what a page must be
    used to show: a form filled in and sent, a cookie kept. `with DevTools(chromium, profile) as tab:`."""

    def __init__(self, chromium: str, profile: Path, width: int = 1280, height: int = 1600):
        self.args = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--hide-scrollbars", f"--user-data-dir={profile}", f"--window-size={width},{height}",
                     "--remote-debugging-port=0", "about:blank"]
        self.next_id, self.events = 0, []

    def __enter__(self):
        import time
        import urllib.request

        from websockets.sync.client import connect

        self.proc = subprocess.Popen(self.args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        for line in self.proc.stderr:  # "DevTools listening on ws://127.0.0.1:PORT/devtools/browser/…"
            found = re.search(r"ws://127\.0\.0\.1:(\d+)/", line)
            if found or time.monotonic() > deadline:
                break
        assert found, "Chromium did not open its DevTools port"
        targets = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{found.group(1)}/json", timeout=10).read())
        page = next(t for t in targets if t["type"] == "page")
        self.stack = contextlib.ExitStack()
        self.ws = self.stack.enter_context(connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=10))
        self.call("Page.enable")
        return self

    def __exit__(self, *exc):
        self.stack.close()
        self.proc.terminate()
        self.proc.wait(timeout=20)

    def call(self, method: str, **params) -> dict:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv(timeout=60))
            if message.get("id") == self.next_id:
                assert "error" not in message, message
                return message.get("result", {})
            self.events.append(message.get("method"))  # kept: a load may fire before the call's answer

    def wait_for_load(self) -> None:
        while "Page.loadEventFired" not in self.events:
            self.events.append(json.loads(self.ws.recv(timeout=60)).get("method"))
        self.events.clear()

    def open(self, url: str) -> None:
        self.events.clear()
        self.call("Page.navigate", url=url)
        self.wait_for_load()

    def evaluate(self, expression: str):
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True)["result"].get("value")

    def screenshot(self, png: Path) -> None:
        import base64

        png.write_bytes(base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"]))
