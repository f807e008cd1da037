"""The Dagster UI as `make ui` opens it: the real webserver and daemon (`gpuledger ui`, which becomes
`dagster dev`) over a copy of a run ledger, read through the webserver's GraphQL API as the UI reads it.

Opened on the right landing zone, the bill sensor's first tick finds nothing changed: no run is queued
and no row leaves the warehouse; started with SIGINT ignored, as a shell starts a background job, Ctrl-C
still stops it. On a landing root that is gone (an unset GPULEDGER_LANDING, an unmounted share), the
sensors, evaluated as the daemon does, fail naming the folder, and nothing is removed."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import duckdb
import pytest

from tests.conftest import PROJECT_ROOT
from tests.support.alert_servers import free_port

pytestmark = pytest.mark.slow

SENSOR_TICKS = """{ sensorOrError(sensorSelector: {repositoryLocationName: "gpuledger",
  repositoryName: "__repository__", sensorName: "%s"}) {
  __typename ... on Sensor { sensorState { status ticks(limit: 5) { status skipReason error { message } } } }
  ... on PythonError { message } }
  runsOrError { ... on Runs { results { runId status } } } }"""


@pytest.fixture
def ledger_copy(simulated_ledger, tmp_path):
    root = tmp_path / "ledger"
    shutil.copytree(simulated_ledger.landing, root / "landing")
    shutil.copy(simulated_ledger.config, root / "gpuledger.yaml")
    for f in simulated_ledger.warehouse.parent.glob(f"{simulated_ledger.warehouse.stem}*.duckdb"):
        shutil.copy(f, root / f.name)
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(PROJECT_ROOT / "dagster_home" / "dagster.yaml", home / "dagster.yaml")
    return root, home


def _rows(warehouse: Path) -> dict[str, int]:
    with duckdb.connect(str(warehouse), read_only=True) as con:
        tables = [f"{s}.{t}" for s, t in con.execute(
            "SELECT schema_name, table_name FROM duckdb_tables() WHERE schema_name IN ('staging', 'ops') "
            "AND table_name NOT IN ('alerts', 'alert_deliveries', 'actions')").fetchall()]
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def _graphql(port: int, sensor: str = "restated_bills_sensor") -> dict:
    """The sensor's last ticks and the instance's runs, as the UI reads them."""
    query = SENSOR_TICKS % sensor  # our own sensor names, never input
    req = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", data=json.dumps({"query": query}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())["data"]


def _finished_ticks(proc: subprocess.Popen, port: int, log: Path, limit: float = 240,
                    sensor: str = "restated_bills_sensor") -> list[dict]:
    """The sensor's ticks that have ended, once there is one (a tick being evaluated reads STARTED)."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()[-3000:]
        try:
            data = _graphql(port, sensor)
            ended = [t for t in data["sensorOrError"]["sensorState"]["ticks"] if t["status"] != "STARTED"]
            if ended:
                return ended
        except (OSError, KeyError, TypeError):
            pass
        time.sleep(2)
    raise AssertionError(f"no finished {sensor} tick within {limit} s:\n{log.read_text()[-3000:]}")


def _start(cmd: list[str], env: dict, log: Path) -> subprocess.Popen:
    # SIGINT ignored, as a shell hands it to a command started with `&`
    return subprocess.Popen(cmd, cwd=PROJECT_ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
                            start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))


def _stop(proc: subprocess.Popen) -> float:
    """Ctrl-C: SIGINT to the process group. Seconds it took; what lingers is killed after."""
    t0 = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=90)
        return time.monotonic() - t0
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _env(home: Path, root: Path, landing: Path) -> dict:
    env = {**os.environ, "DAGSTER_HOME": str(home), "GPULEDGER_LANDING": str(landing),
           "GPULEDGER_CONFIG": str(root / "gpuledger.yaml"), "GPULEDGER_WAREHOUSE": str(root / "warehouse.duckdb")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), env.get("PYTHONPATH")]))
    return env


def test_make_ui_on_the_demo_queues_no_run_removes_no_row_and_stops_on_ctrl_c(ledger_copy, tmp_path):
    root, home = ledger_copy
    before = _rows(root / "warehouse.duckdb")
    port, log = free_port(), tmp_path / "ui.log"
    # what `make ui` runs, with this copy's files
    proc = _start([sys.executable, "-m", "pipelines.cli", "ui", "--landing", str(root / "landing"),
                   "--config", str(root / "gpuledger.yaml"), "--warehouse", str(root / "warehouse.duckdb"),
                   "--port", str(port)], {**_env(home, root, root / "landing"), "GPULEDGER_LANDING": ""}, log)
    try:
        ticks = _finished_ticks(proc, port, log)
        assert {(t["status"], t["skipReason"]) for t in ticks} == {("SKIPPED", "no bill file changed")}
        # the other running sensors' first ticks have ended too (freshness is off in the demo), and
        # none of them queued a run either
        for sensor in ("live_alerts_sensor", "alert_delivery_sensor"):
            failed = [t["error"] for t in _finished_ticks(proc, port, log, sensor=sensor) if t["status"] == "FAILURE"]
            assert not failed, f"{sensor} failed on the demo: {failed}"
        assert _graphql(port)["runsOrError"]["results"] == []
    finally:
        seconds = _stop(proc)
    assert seconds < 60, f"Ctrl-C took {seconds:.0f} s"
    assert _rows(root / "warehouse.duckdb") == before
    assert "Dagster UI on http://127.0.0.1:" in log.read_text()


def test_a_landing_root_that_is_gone_fails_each_sensor_by_name_and_removes_nothing(ledger_copy, monkeypatch):
    """The sensors evaluated as the daemon does, on the landing an unset GPULEDGER_LANDING points to."""
    import dagster as dg

    from pipelines.defs.alerts.live import live_alerts_sensor
    from pipelines.defs.daily.sensors import restated_bills_sensor
    from pipelines.lib.dagster_glue.resources import LandingZone

    root, home = ledger_copy
    before = _rows(root / "warehouse.duckdb")
    gone = root / "data" / "landing"
    monkeypatch.setenv("GPULEDGER_WAREHOUSE", str(root / "warehouse.duckdb"))
    landing = LandingZone(root=str(gone), config_file=str(root / "gpuledger.yaml"))
    for sensor in (restated_bills_sensor, live_alerts_sensor):
        with pytest.raises(Exception, match=f"the landing zone {gone} does not exist"):
            sensor(dg.build_sensor_context(resources={"landing": landing}))
    assert _rows(root / "warehouse.duckdb") == before
    # and `gpuledger ui` refuses to start on it, naming it
    out = subprocess.run([sys.executable, "-m", "pipelines.cli", "ui", "--landing", str(gone)],
                         env=_env(home, root, gone), capture_output=True, text=True)
    assert out.returncode == 2 and f"the landing zone {gone} does not exist" in out.stderr
