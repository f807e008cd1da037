"""Alert delivery against real receivers on 127.0.0.1: an HTTP server (Slack-compatible and plain JSON
webhooks) and an SMTP server (aiosmtpd). The clock is injected, so backoffs of minutes take no time.

What must hold (docs/plans.md#delivery): one message per alert per channel, routed by team and
severity; a refusal leaves the alert pending with its next attempt after the backoff, and the pass
after it delivers it exactly once; a receiver that is down for a while loses nothing and gets nothing
twice; a pass with nothing due sends nothing; actions run once per alert, dry runs never."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from pipelines.lib.config.strict_yaml import dump_yaml
from pipelines.alerts.deliver import delivery_pass
from pipelines.lib.config.alert_channels import ALERT_KINDS
from pipelines.lib.config import load_config
from tests.support.alert_servers import RecordingHttp, RecordingSmtp, alert, free_port, warehouse_with_alerts

T0 = datetime(2026, 12, 1, 7, 0)


class Clock:
    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += timedelta(seconds=seconds)


@pytest.fixture
def http():
    server = RecordingHttp()
    yield server
    server.stop()


@pytest.fixture
def smtp():
    server = RecordingSmtp()
    yield server
    server.stop()


def _config(tmp_path: Path, alerts: dict) -> Path:
    """These tests are of one message per alert: every kind is `immediate` unless a test says otherwise
    (a team's digest: tests/e2e/test_alert_digests.py)."""
    path = tmp_path / "gpuledger.yaml"
    path.write_text(dump_yaml({"alerts": {"immediate": list(ALERT_KINDS), **alerts}}))
    return path


def _channels(http: RecordingHttp, smtp: RecordingSmtp | None = None) -> list[dict]:
    out = [
        {"name": "finops-slack", "type": "slack", "url": http.url("/slack"), "teams": ["pretrain"],
         "min_severity": "warning"},
        {"name": "oncall-json", "type": "webhook", "url": http.url("/json"), "timeout_seconds": 2},
    ]
    if smtp:
        out.append({"name": "finance-mail", "type": "email", "min_severity": "critical",
                    "smtp": {"host": "127.0.0.1", "port": smtp.port, "starttls": False},
                    "from": "gpuledger@example.com", "to": ["finops@example.com", "cfo@example.com"]})
    return out


def _alerts(con_path: Path) -> dict[str, dict]:
    with duckdb.connect(str(con_path), read_only=True) as con:
        cur = con.execute("SELECT * FROM ops.alerts")
        names = [d[0] for d in cur.description]
        return {r[0]: dict(zip(names, r)) for r in cur.fetchall()}


def _deliveries(con_path: Path) -> dict[tuple[str, str], dict]:
    with duckdb.connect(str(con_path), read_only=True) as con:
        cur = con.execute("SELECT * FROM ops.alert_deliveries")
        names = [d[0] for d in cur.description]
        return {(r[0], r[1]): dict(zip(names, r)) for r in cur.fetchall()}


ALERTS = [
    alert("a_pretrain_warn", team="pretrain", severity="warning"),
    alert("a_pretrain_info", team="pretrain", severity="info", threshold="30%"),
    alert("a_infer_crit", team="inference", severity="critical", subject="llm-70b", threshold="100%",
          cost="98765.432100000000000001", currency="EUR"),
]


def test_one_message_per_alert_per_channel_routed_by_team_and_severity(tmp_path, http, smtp):
    wh = warehouse_with_alerts(tmp_path / "w.duckdb", ALERTS)
    cfg = load_config(_config(tmp_path, {"channels": _channels(http, smtp)})).alerts
    clock = Clock(T0)

    result = delivery_pass(wh, cfg, clock=clock)

    # slack: pretrain, warning and above; json: everything; mail: critical only
    assert sorted(result.delivered) == sorted([
        ("a_pretrain_warn", "finops-slack"), ("a_pretrain_warn", "oncall-json"),
        ("a_pretrain_info", "oncall-json"), ("a_infer_crit", "oncall-json"), ("a_infer_crit", "finance-mail")])
    slack = http.bodies("/slack")
    assert len(slack) == 1 and set(slack[0]) == {"text"}
    text = slack[0]["text"]
    for part in ("budget_threshold", "WARNING", "llm-8b-v2", "pretrain", "2026-11-30", "1,234.50 USD",
                 "a_pretrain_warn", "burnt 80%"):
        assert part in text, part
    posted = {b["alert_id"]: b for b in http.bodies("/json")}
    assert sorted(posted) == ["a_infer_crit", "a_pretrain_info", "a_pretrain_warn"]
    # money exact, as text: the 1e-18 survives, which no float would carry
    assert posted["a_infer_crit"]["cost_at_stake"] == "98765.432100000000000001"
    assert Decimal(posted["a_infer_crit"]["cost_at_stake"]) == Decimal("98765.432100000000000001")
    assert posted["a_pretrain_warn"]["details"] == {"burn_pct": "80.25"}
    assert posted["a_pretrain_warn"]["channel"] == "oncall-json" and "status" not in posted["a_pretrain_warn"]
    assert len(smtp.messages) == 1
    rcpts, mail = smtp.messages[0]
    assert sorted(rcpts) == ["cfo@example.com", "finops@example.com"]
    assert mail["Subject"] == "[gpuledger][critical] budget_threshold: run llm-70b"
    assert "a_infer_crit" in mail["Message-ID"] and "98,765.43 EUR" in mail.get_payload()

    rows = _alerts(wh)
    assert {k: (r["status"], r["channel"]) for k, r in rows.items()} == {
        "a_pretrain_warn": ("delivered", "finops-slack,oncall-json"),
        "a_pretrain_info": ("delivered", "oncall-json"),
        "a_infer_crit": ("delivered", "finance-mail,oncall-json"),
    }
    assert all(r["delivered_at"] == T0 for r in rows.values())

    # a second pass, now and much later, sends nothing new
    clock.advance(86400)
    again = delivery_pass(wh, cfg, clock=clock)
    assert again.delivered == [] and again.failed == []
    assert len(http.requests) == 4 and len(smtp.messages) == 1


def test_a_refusal_backs_off_and_the_pass_after_the_backoff_delivers_once(tmp_path, http):
    wh = warehouse_with_alerts(tmp_path / "w.duckdb", [alert("a1")])
    cfg = load_config(_config(tmp_path, {"channels": _channels(http)[1:],
                                         "retry": {"initial_seconds": 60, "max_seconds": 3600}})).alerts
    clock = Clock(T0)
    http.fail_next = 1

    first = delivery_pass(wh, cfg, clock=clock)
    assert first.delivered == [] and [f[:2] for f in first.failed] == [("a1", "oncall-json")]
    assert "HTTP 500" in first.failed[0][2]
    d = _deliveries(wh)[("a1", "oncall-json")]
    assert (d["status"], d["attempts"], d["next_attempt_at"]) == ("pending", 1, T0 + timedelta(seconds=60))
    assert "HTTP 500" in d["last_error"] and _alerts(wh)["a1"]["status"] == "pending"

    clock.advance(59)  # not due yet
    assert delivery_pass(wh, cfg, clock=clock).delivered == [] and http.requests == []

    clock.advance(1)
    assert delivery_pass(wh, cfg, clock=clock).delivered == [("a1", "oncall-json")]
    clock.advance(3600)
    assert delivery_pass(wh, cfg, clock=clock).delivered == []
    assert [b["alert_id"] for b in http.bodies("/json")] == ["a1"]
    d = _deliveries(wh)[("a1", "oncall-json")]
    assert (d["status"], d["attempts"], d["delivered_at"], d["first_attempt_at"]) == (
        "delivered", 2, T0 + timedelta(seconds=60), T0)
    assert _alerts(wh)["a1"]["status"] == "delivered"


def test_a_receiver_down_for_a_while_loses_nothing_and_gets_nothing_twice(tmp_path):
    port = free_port()
    wh = warehouse_with_alerts(tmp_path / "w.duckdb", [alert(f"a{i}", subject=f"run{i}") for i in range(5)])
    cfg = load_config(_config(tmp_path, {
        "channels": [{"name": "hook", "type": "webhook", "url": f"http://127.0.0.1:{port}/in", "timeout_seconds": 2}],
        "retry": {"initial_seconds": 60, "max_seconds": 300}})).alerts
    clock = Clock(T0)
    waits = []
    for _ in range(5):  # port closed: every pass fails, the backoff doubles up to its cap
        result = delivery_pass(wh, cfg, clock=clock)
        assert result.delivered == [] and len(result.failed) == 5
        # one connection tried per pass: the others are not tried against a channel that just failed
        assert sum(not e.startswith("not tried") for *_, e in result.failed) == 1
        due = {d["next_attempt_at"] for d in _deliveries(wh).values()}
        assert len(due) == 1
        waits.append((due.pop() - clock()).total_seconds())
        clock.at = min(d["next_attempt_at"] for d in _deliveries(wh).values())
    assert waits == [60, 120, 240, 300, 300]
    assert {a["status"] for a in _alerts(wh).values()} == {"pending"}

    server = RecordingHttp(port)
    try:
        back = delivery_pass(wh, cfg, clock=clock)
        assert len(back.delivered) == 5
        clock.advance(3600)
        assert delivery_pass(wh, cfg, clock=clock).delivered == []
        assert sorted(b["alert_id"] for b in server.bodies("/in")) == [f"a{i}" for i in range(5)]
    finally:
        server.stop()
    assert {a["status"] for a in _alerts(wh).values()} == {"delivered"}
    assert {d["attempts"] for d in _deliveries(wh).values()} == {6}


def test_a_crash_between_sending_and_recording_resends_once_after_the_backoff(tmp_path, http):
    """At least once: the process dies after the receiver took the message, before it is recorded."""
    from pipelines.alerts.send import send

    wh = warehouse_with_alerts(tmp_path / "w.duckdb", [alert("a1")])
    cfg = load_config(_config(tmp_path, {"channels": _channels(http)[1:]})).alerts
    clock = Clock(T0)

    def send_then_die(channel, a, now):
        send(channel, a, now)
        raise KeyboardInterrupt("killed")  # not an Exception: nothing after it runs, as with a kill

    with pytest.raises(KeyboardInterrupt):
        delivery_pass(wh, cfg, clock=clock, sender=send_then_die)
    assert len(http.requests) == 1 and _alerts(wh)["a1"]["status"] == "pending"
    assert delivery_pass(wh, cfg, clock=clock).delivered == []  # claimed: not due before the backoff
    clock.advance(60)
    assert delivery_pass(wh, cfg, clock=clock).delivered == [("a1", "oncall-json")]
    clock.advance(86400)
    assert delivery_pass(wh, cfg, clock=clock).delivered == []
    assert [b["alert_id"] for b in http.bodies("/json")] == ["a1", "a1"]  # once more, never again


def test_an_unforeseen_error_fails_one_delivery_and_the_others_are_recorded(tmp_path, http):
    from pipelines.alerts.send import send

    wh = warehouse_with_alerts(tmp_path / "w.duckdb", [alert("a1"), alert("a2", team="other", severity="info")])
    cfg = load_config(_config(tmp_path, {"channels": _channels(http)})).alerts

    def slack_bug(channel, a, now):
        if channel.name == "finops-slack":
            raise RuntimeError("a bug")
        return send(channel, a, now)

    result = delivery_pass(wh, cfg, clock=Clock(T0), sender=slack_bug)
    assert sorted(result.delivered) == [("a1", "oncall-json"), ("a2", "oncall-json")]
    assert result.failed == [("a1", "finops-slack", "RuntimeError: a bug")]
    assert {k: r["status"] for k, r in _alerts(wh).items()} == {"a1": "pending", "a2": "delivered"}
    assert _alerts(wh)["a1"]["channel"] == "oncall-json"


def test_max_attempts_gives_up_as_failed(tmp_path):
    wh = warehouse_with_alerts(tmp_path / "w.duckdb", [alert("a1")])
    cfg = load_config(_config(tmp_path, {
        "channels": [{"name": "hook", "type": "webhook", "url": f"http://127.0.0.1:{free_port()}/in", "timeout_seconds": 2}],
        "retry": {"initial_seconds": 1, "max_seconds": 1, "max_attempts": 2}})).alerts
    clock = Clock(T0)
    delivery_pass(wh, cfg, clock=clock)
    assert _alerts(wh)["a1"]["status"] == "pending"
    clock.advance(1)
    delivery_pass(wh, cfg, clock=clock)
    clock.advance(1)
    assert delivery_pass(wh, cfg, clock=clock).failed == []  # given up: no third attempt
    assert _deliveries(wh)[("a1", "hook")]["status"] == "failed"
    assert _alerts(wh)["a1"]["status"] == "failed"


def test_an_alert_no_channel_routes_stays_pending_until_one_does(tmp_path, http):
    wh = warehouse_with_alerts(tmp_path / "w.duckdb", [alert("a1", team="other", severity="info")])
    slack_only = load_config(_config(tmp_path, {"channels": _channels(http)[:1]})).alerts
    clock = Clock(T0)
    assert delivery_pass(wh, slack_only, clock=clock).delivered == []
    assert _alerts(wh)["a1"]["status"] == "pending" and _deliveries(wh) == {}
    both = load_config(_config(tmp_path, {"channels": _channels(http)})).alerts
    assert delivery_pass(wh, both, clock=clock).delivered == [("a1", "oncall-json")]
    assert _alerts(wh)["a1"]["status"] == "delivered"


def test_actions_dry_run_is_recorded_never_run_and_an_enabled_one_runs_once(tmp_path):
    marker = tmp_path / "ran"
    wh = warehouse_with_alerts(tmp_path / "w.duckdb", [
        alert("hung1", kind="hung_job", subject_type="job", subject="4242", threshold="hung"),
        alert("budget1"),
    ])
    dry = load_config(_config(tmp_path, {"actions": {
        "hung_job": {"command": ["touch", str(marker)], "enabled": True}}})).alerts
    clock = Clock(T0)
    result = delivery_pass(wh, dry, clock=clock)
    assert result.actions == [] and not marker.exists()
    with duckdb.connect(str(wh), read_only=True) as con:
        rows = con.execute("SELECT alert_id, kind, command, dry_run, exit_code, output FROM ops.actions").fetchall()
    assert rows == [("hung1", "hung_job", json.dumps(["touch", str(marker)]), True, None, "dry run: not executed")]

    # enabled for real: another warehouse, an echo of the job id; once per alert, however many passes
    wh2 = warehouse_with_alerts(tmp_path / "w2.duckdb", [
        alert("hung1", kind="hung_job", subject_type="job", subject="4242", threshold="hung"),
        alert("hung_old", kind="hung_job", subject_type="job", subject="17", threshold="hung",
              raised_at=T0 - timedelta(days=3)),
        alert("hung_bad", kind="hung_job", subject_type="job", subject="--all", threshold="hung")])
    live = load_config(_config(tmp_path, {"actions": {
        "hung_job": {"command": ["echo", "cancel", "{job_id}", "for {team}"], "enabled": True, "dry_run": False}}})).alerts
    first = delivery_pass(wh2, live, clock=clock)
    assert first.actions == [("hung1", ["echo", "cancel", "4242", "for pretrain"], False, 0)]
    clock.advance(3600)
    assert delivery_pass(wh2, live, clock=clock).actions == []
    with duckdb.connect(str(wh2), read_only=True) as con:
        rows = {r[0]: r[1:] for r in con.execute(
            "SELECT alert_id, command, dry_run, exit_code, output FROM ops.actions").fetchall()}
    assert rows["hung1"] == (json.dumps(["echo", "cancel", "4242", "for pretrain"]), False, 0, "cancel 4242 for pretrain\n")
    assert "hung_old" not in rows  # raised three days ago: older than max_age_hours
    assert rows["hung_bad"][2] is None and "read as an option" in rows["hung_bad"][3]


def test_the_sensor_delivers(tmp_path, http):
    from pipelines.definitions import defs
    from pipelines.lib.dagster_glue.resources import landing_resource, warehouse_resource
    from tests.support.pipeline import pipeline_env

    wh = warehouse_with_alerts(tmp_path / "w.duckdb", [alert("a1")])
    config = _config(tmp_path, {"channels": _channels(http)})
    (tmp_path / "landing").mkdir()
    d = defs()
    with pipeline_env(tmp_path / "landing", wh, config):
        sensor = d.resolve_sensor_def("alert_delivery_sensor")
        assert sensor.minimum_interval_seconds == 60
        with dg.build_sensor_context(resources={"landing": landing_resource(), "duckdb": warehouse_resource()},
                                     repository_def=d.get_repository_def()) as ctx:
            result = sensor(ctx)
            again = sensor(ctx)
        assert [b["alert_id"] for b in http.bodies("/json")] == ["a1"]
        assert len(http.bodies("/slack")) == 1 and "a1" in http.bodies("/slack")[0]["text"]
        assert "2 delivered" in result.skip_reason.skip_message  # no run to request: it delivered itself
        assert "nothing due" in again.skip_reason.skip_message
    assert _alerts(wh)["a1"]["status"] == "delivered"


def test_the_sensor_skips_a_tick_while_a_run_holds_the_warehouse(tmp_path, http):
    import subprocess
    import time

    from pipelines.definitions import defs
    from pipelines.lib.dagster_glue.resources import landing_resource, warehouse_resource
    from pipelines.lib.warehouse.writer_lock import warehouse_lock
    from tests.support.pipeline import pipeline_env

    wh = warehouse_with_alerts(tmp_path / "w.duckdb", [alert("a1")])
    config = _config(tmp_path, {"channels": _channels(http)})
    (tmp_path / "landing").mkdir()
    d = defs()
    # another process holds the writer lock, as a daily run does
    holder = subprocess.Popen([sys.executable, "-c", (
        "import time; from pipelines.lib.warehouse.writer_lock import warehouse_lock\n"
        f"with warehouse_lock({str(wh)!r}):\n    print('held', flush=True); time.sleep(30)")],
        stdout=subprocess.PIPE, text=True)
    with pipeline_env(tmp_path / "landing", wh, config), dg.build_sensor_context(
            resources={"landing": landing_resource(), "duckdb": warehouse_resource()},
            repository_def=d.get_repository_def()) as ctx:
        sensor = d.resolve_sensor_def("alert_delivery_sensor")
        try:
            assert holder.stdout.readline().strip() == "held"
            started = time.monotonic()
            result = sensor(ctx)
            assert time.monotonic() - started < 5  # skipped at once, not queued behind the run
            assert "busy" in result.skip_reason.skip_message and http.requests == []
        finally:
            holder.kill()
            holder.wait()
        with warehouse_lock(wh, wait_seconds=5):
            pass
        sensor(ctx)  # the next tick delivers
        assert len(http.requests) == 2


def test_the_cli_runs_one_pass_and_lists_compatibly(tmp_path, http):
    import os
    import subprocess

    wh = warehouse_with_alerts(tmp_path / "w.duckdb", [alert("a1"), alert("a2", team="other", severity="info")])
    config = _config(tmp_path, {"channels": _channels(http)[:1]})  # slack: pretrain, warning+
    env = {**os.environ, "GPULEDGER_CONFIG": str(config), "GPULEDGER_WAREHOUSE": str(wh)}
    run = subprocess.run([sys.executable, "-m", "pipelines.cli", "alerts", "--deliver"],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert "1 delivered" in run.stdout and len(http.requests) == 1
    listed = subprocess.run([sys.executable, "-m", "pipelines.cli", "alerts", "--undelivered", "--json", "--warehouse", str(wh)],
                            capture_output=True, text=True, env=env)
    assert listed.returncode == 0, listed.stderr
    assert [a["alert_id"] for a in json.loads(listed.stdout)] == ["a2"]


def test_a_warehouse_made_before_delivery_gains_its_tables(tmp_path, http):
    wh = warehouse_with_alerts(tmp_path / "w.duckdb", [alert("a1")])
    with duckdb.connect(str(wh)) as con:  # as an older version left it: ops.alerts only
        con.execute("DROP TABLE ops.alert_deliveries")
        con.execute("DROP TABLE ops.actions")
    cfg = load_config(_config(tmp_path, {"channels": _channels(http)[1:]})).alerts
    assert delivery_pass(wh, cfg, clock=Clock(T0)).delivered == [("a1", "oncall-json")]
    assert list(_deliveries(wh)) == [("a1", "oncall-json")]
