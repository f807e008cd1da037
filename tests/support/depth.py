"""How many examples the expensive property tests draw: each is a pipeline run (~10 s on two cores, ~25 s
while the other test worker runs), so `make test` draws a few, every time the same (derandomized), and
`make test-deep` (GPULEDGER_TEST_DEPTH=4) draws four times as many for a change that touches what they guard."""

from __future__ import annotations

import os

DEPTH_ENV = "GPULEDGER_TEST_DEPTH"


def examples(n: int) -> int:
    """`n` examples, times the depth asked for; a depth that is not a positive whole number is refused."""
    raw = os.environ.get(DEPTH_ENV, "1")
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"${DEPTH_ENV} must be a positive whole number, not {raw!r}")
    return n * int(raw)
