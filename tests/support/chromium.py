"""Headless Chromium for the tests that look at pages as a person would: a screenshot, the DOM after
layout, and what runs past its container (tests/support/overflow_probe.js). `make system-deps` (which
.ci/run calls) installs Chromium; the tests install nothing and skip without it."""

from __future__ import annotations

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


