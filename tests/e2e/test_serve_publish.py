"""A real `gpuledger run` publishes a new day while `gpuledger serve` answers: every answer is one
published file's, whole — the old one's or the new one's, never a mix, never an error."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from datetime import date

import duckdb
import pytest

from tests.support.pipeline import run_pipeline
from tests.support.serve_server import ROOT, fetch, start_server

pytestmark = pytest.mark.world
WINDOW = "/api/v1/allocation?window=2026-11-01,2026-11-30&aggregate=team"


def _sums(published) -> dict[tuple[str, str], str]:
    """The window's cost per team and currency in a published file, as the API spells them."""
    from pipelines.serve.db import jsonable

    with duckdb.connect(str(published), read_only=True) as con:
        return {(t, c): jsonable(v) for t, c, v in con.execute(
            "SELECT team, billing_currency, sum(effective_cost) FROM marts.fct_cost_daily "
            "WHERE day BETWEEN '2026-11-01' AND '2026-11-30' GROUP BY ALL").fetchall()}


def _totals(body: bytes) -> dict[tuple[str, str], str]:
    return {(r["team"], r["billing_currency"]): r["effective_cost"] for r in json.loads(body)["data"]}


def test_a_real_run_publishing_a_day_during_requests_leaves_every_answer_whole(tmp_path):
    from simulator import simulate

    simulate(tmp_path, date(2026, 11, 2), 2, nodes=4, seed=5)
    landing, warehouse, config = tmp_path / "landing", tmp_path / "warehouse.duckdb", tmp_path / "gpuledger.yaml"
    assert not run_pipeline(landing, warehouse, config, [date(2026, 11, 2)])  # the first day, in this process
    published = warehouse.with_name("warehouse.published.duckdb")
    old = _sums(published)
    home = tmp_path / "dagster_home"  # the run's Dagster instance, not the repository's
    home.mkdir()
    shutil.copy(ROOT / "dagster_home" / "dagster.yaml", home)
    url, server, log = start_server(tmp_path, published, config)
    answers, done = [], threading.Event()

    def ask():
        while not done.is_set() or len(answers) < 100:
            answers.append(fetch(url + WINDOW))
            time.sleep(0.02)  # leave the run its share of the two cores

    try:
        assert _totals(fetch(url + WINDOW)[1]) == old
        askers = [threading.Thread(target=ask) for _ in range(2)]
        for t in askers:
            t.start()
        run = subprocess.run([sys.executable, "-m", "pipelines.cli", "run", "--landing", str(landing), "--warehouse",
                              str(warehouse), "--config", str(config), "--start", "2026-11-03"], cwd=ROOT,
                             env={**os.environ, "DAGSTER_HOME": str(home)}, capture_output=True, text=True, timeout=300)
        done.set()
        for t in askers:
            t.join()
        assert run.returncode == 0, run.stderr[-3000:]
        new = _sums(published)
        assert new != old, "the run published a new day"
        assert _totals(fetch(url + WINDOW)[1]) == new
    finally:
        done.set()
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=20)
        log.close()
    assert len(answers) >= 100
    seen = defaultdict(int)
    for status, body in answers:
        assert status == 200, body[:300]
        totals = _totals(body)  # complete JSON, or this raises
        assert totals in (old, new), "an answer mixed two published files"
        seen["old" if totals == old else "new"] += 1
    assert seen["old"] and seen["new"], f"the requests did not straddle the publish: {dict(seen)}"
    assert "Traceback" not in (tmp_path / "serve.log").read_text()
