"""Alert delivery against hostile or broken receivers on 127.0.0.1 (docs/plans.md#delivery): secrets in
channel URLs and SMTP logins never stored, published, printed or logged; redirects not followed; a
deadline per send however slowly a receiver trickles; a receiver that answers after the deadline gets
the resend under the same Idempotency-Key, and the outcome is recorded `unknown`, not `failed`.

Timing bounds are generous (a 2 s deadline must return in under 6 s) and depend on no clock resolution."""

from __future__ import annotations

import base64
import logging
import os
import shutil
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import dagster as dg
import duckdb
import pytest
import yaml

from pipelines.lib.config.strict_yaml import dump_yaml
from pipelines.alerts.deliver import delivery_pass
from pipelines.lib.config import load_config
from tests.e2e.test_alert_delivery import T0, Clock, _alerts, _config, _deliveries
from tests.support.alert_servers import RecordingHttp, RecordingSmtp, TricklingServer, alert, warehouse_with_alerts

HTTP_PASSWORD = "pw-Hunter2-Secret"
SMTP_PASSWORD = "smtp-Hunter3-Secret"
PATH_TOKENS = ("T0SECRETA1", "B0SECRETB2", "XXSECRETC3")
QUERY_TOKEN = "QSECRETD4"
SPACED_TOKEN = "ZZSECRET E5ZZ"   # a URL with a space: http.client's InvalidURL quotes its path
SECRETS = (HTTP_PASSWORD, SMTP_PASSWORD, *PATH_TOKENS, QUERY_TOKEN, "ZZSECRET", "E5ZZ",
           base64.b64encode(f"\0alice\0{SMTP_PASSWORD}".encode()).decode(),
           base64.b64encode(f"alice:{HTTP_PASSWORD}".encode()).decode())


@pytest.fixture
def http():
    server = RecordingHttp()
    yield server
    server.stop()


def _secret_channels(http: RecordingHttp, smtp: RecordingSmtp) -> list[dict]:
    a, b, c = PATH_TOKENS
    return [
        {"name": "hook-auth", "type": "webhook", "timeout_seconds": 2,
         "url": f"http://alice:{HTTP_PASSWORD}@127.0.0.1:{http.port}/hooks/{a}/{b}?token={QUERY_TOKEN}"},
        {"name": "slack-env", "type": "slack", "url_env": "SECRET_SLACK_URL", "timeout_seconds": 2},
        {"name": "slack-spaced", "type": "slack", "url_env": "SECRET_SPACED_URL", "timeout_seconds": 2},
        {"name": "mail", "type": "email", "timeout_seconds": 2,
         "smtp": {"host": "127.0.0.1", "port": smtp.port, "starttls": False, "username": "alice",
                  "password_env": "SECRET_SMTP_PASSWORD"},
         "from": "gpuledger@example.com", "to": ["finops@example.com"]},
    ]


def _secret_env(http: RecordingHttp) -> dict[str, str]:
    a, b, c = PATH_TOKENS
    return {"SECRET_SLACK_URL": f"http://127.0.0.1:{http.port}/services/{a}/{b}/{c}",
            "SECRET_SPACED_URL": f"http://127.0.0.1:{http.port}/services/{a}/{SPACED_TOKEN}",
            "SECRET_SMTP_PASSWORD": SMTP_PASSWORD}


def _hits(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def _file_hits(path: Path) -> list[str]:
    """Secrets in the file's bytes (and its WAL), and in every text value of every table in it: the
    bytes alone could miss a string DuckDB stored compressed."""
    found = []
    for part in (path, path.with_name(path.name + ".wal")):
        if part.exists():
            raw = part.read_bytes()
            found += [s for s in SECRETS if s.encode() in raw]
    with duckdb.connect(str(path), read_only=True) as con:
        columns = con.execute("SELECT schema_name, table_name, column_name FROM duckdb_columns() "
                              "WHERE database_name = current_database() AND data_type = 'VARCHAR'").fetchall()
        for schema, table, column in columns:
            values = con.execute(f'SELECT DISTINCT "{column}" FROM {schema}."{table}" '
                                 f'WHERE "{column}" IS NOT NULL').fetchall()
            found += [s for (v,) in values for s in SECRETS if s in v]
    return found


def test_no_secret_of_a_channel_is_stored_published_printed_or_logged(tmp_path, http, monkeypatch, caplog, capfd,
                                                                    simulated_ledger):
    from pipelines.definitions import defs
    from pipelines.lib.warehouse.publish import publish
    from pipelines.lib.dagster_glue.resources import landing_resource, warehouse_resource
    from pipelines.lib.warehouse import connect
    from tests.support.alert_servers import add_alerts
    from tests.support.pipeline import pipeline_env

    smtp = RecordingSmtp(refuse_logins_echoing=True)
    http.fail_next = 1000  # every POST is answered 500: each error ends up in last_error
    try:
        # the simulated fleet's config and ledger (publishing needs its marts), with the channels added
        org = yaml.safe_load(simulated_ledger.config.read_text()) if simulated_ledger.config else {}
        config = tmp_path / "gpuledger.yaml"
        config.write_text(dump_yaml({**org, "alerts": {**org.get("alerts", {}),
                                                            "channels": _secret_channels(http, smtp)}}))
        env = _secret_env(http)
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        a1 = alert("a1", severity="critical")

        # the command line: one pass, its console output
        by_cli = tmp_path / "cli.duckdb"
        shutil.copyfile(simulated_ledger.warehouse, by_cli)
        con = connect(by_cli)
        try:
            con.execute("DELETE FROM ops.alert_deliveries")
            con.execute("UPDATE ops.alerts SET status = 'delivered'")  # the fleet's own alerts are not the test's
            add_alerts(con, [a1])
        finally:
            con.close()
        run = subprocess.run([sys.executable, "-m", "pipelines.cli", "alerts", "--deliver"], capture_output=True,
                             text=True, env={**os.environ, "GPULEDGER_CONFIG": str(config),
                                             "GPULEDGER_WAREHOUSE": str(by_cli)}, timeout=120)
        assert run.returncode == 1, run.stderr  # every channel failed
        assert "4 failed" in run.stdout
        assert _hits(run.stdout + run.stderr) == []
        assert "127.0.0.1" in run.stderr and "…(redacted)" in run.stderr  # the errors are there, redacted

        # the daemon's sensor: its logs
        by_sensor = warehouse_with_alerts(tmp_path / "sensor.duckdb", [a1])
        (tmp_path / "landing").mkdir()
        d = defs()
        caplog.set_level(logging.DEBUG)
        with pipeline_env(tmp_path / "landing", by_sensor, config), dg.build_sensor_context(
                resources={"landing": landing_resource(), "duckdb": warehouse_resource()},
                repository_def=d.get_repository_def()) as ctx:
            result = d.resolve_sensor_def("alert_delivery_sensor")(ctx)
        assert "4 failed" in result.skip_reason.skip_message
        # the receiving server's own log (mail.log) is the receiver's, not ours
        logged = "\n".join(r.getMessage() for r in caplog.records if not r.name.startswith("mail"))
        logged += "\n".join(capfd.readouterr())  # Dagster's handler writes the sensor's log to stderr
        assert "hook-auth" in logged and _hits(logged + result.skip_reason.skip_message) == []

        errors = {k[1]: d["last_error"] for k, d in _deliveries(by_cli).items()}
        assert "HTTP 500" in errors["hook-auth"] and "535" in errors["mail"]
        assert errors["slack-env"].startswith("HTTP 500 Internal Server Error from http://127.0.0.1:")
        assert "/services/…(redacted)" in errors["slack-env"]

        # the warehouses and the published copy of one
        published = tmp_path / "published.duckdb"
        with duckdb.connect(str(by_cli)) as con:
            publish(con, load_config(config), published)
        for path in (by_cli, by_sensor, published):
            assert _file_hits(path) == [], path
    finally:
        smtp.stop()


def test_a_redirect_is_a_failed_delivery_naming_status_and_location(tmp_path, http):
    elsewhere = RecordingHttp()
    http.redirect_to = elsewhere.url(f"/in?token={QUERY_TOKEN}")
    try:
        wh = warehouse_with_alerts(tmp_path / "w.duckdb", [alert(f"a{i}", subject=f"r{i}") for i in range(3)])
        cfg = load_config(_config(tmp_path, {"channels": [
            {"name": "hook", "type": "webhook", "url": http.url("/hook"), "timeout_seconds": 2}]})).alerts
        result = delivery_pass(wh, cfg, clock=Clock(T0))
        assert result.delivered == [] and len(result.failed) == 3
        reason = result.failed[0][2]
        assert reason.startswith(f"HTTP 302 Found from {http.url('/hook')}") and "not followed" in reason
        assert f"Location: http://127.0.0.1:{elsewhere.port}/in?…(redacted)" in reason and QUERY_TOKEN not in reason
        assert elsewhere.gets == [] and elsewhere.requests == []  # nothing followed the redirect
        rows = _deliveries(wh)
        assert {(d["status"], d["attempts"], d["last_outcome"]) for d in rows.values()} == {("pending", 1, "failed")}
        assert {a["status"] for a in _alerts(wh).values()} == {"pending"}  # retried after the backoff
    finally:
        elsewhere.stop()


def test_a_trickling_receiver_fails_the_send_at_its_deadline(tmp_path):
    # 40 bytes of a 200 at two a second: every read gets a byte within any per-read timeout
    trickler = TricklingServer(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok" + b" " * 4, every=0.5)
    try:
        wh = warehouse_with_alerts(tmp_path / "w.duckdb", [alert("a1"), alert("a2", subject="other")])
        cfg = load_config(_config(tmp_path, {"channels": [
            {"name": "hook", "type": "webhook", "url": trickler.url("/in"), "timeout_seconds": 2}]})).alerts
        started = time.monotonic()
        result = delivery_pass(wh, cfg, clock=Clock(T0))
        took = time.monotonic() - started
        assert took < 6, f"the pass took {took:.1f} s against a 2 s deadline"
        assert result.delivered == [] and trickler.answered == 1  # the second is not tried after the first failed
        [(alert_id, channel, reason)] = result.unknown  # the request went out whole: it may have arrived
        assert "within 2 s" in reason and "outcome unknown" in reason
        assert [f[2] for f in result.failed] == [f"not tried: the channel failed earlier in this pass ({reason})"]
        assert _deliveries(wh)[(alert_id, "hook")]["last_outcome"] == "unknown"
    finally:
        trickler.stop()


def test_an_answer_after_the_deadline_is_unknown_and_the_resend_has_the_same_key(tmp_path, http):
    """The receiver takes the POST and answers 200 a second after the deadline: the outcome is unknown,
    the delivery is due again after the backoff, and the second copy carries the first's key."""
    wh = warehouse_with_alerts(tmp_path / "w.duckdb", [alert("a1")])
    cfg = load_config(_config(tmp_path, {"channels": [
        {"name": "hook", "type": "webhook", "url": http.url("/in"), "timeout_seconds": 1},
        {"name": "other-hook", "type": "webhook", "url": http.url("/other"), "timeout_seconds": 1}],
        "retry": {"initial_seconds": 60}})).alerts
    clock = Clock(T0)
    http.answer_after = 2.0
    first = delivery_pass(wh, cfg, clock=clock)
    assert first.delivered == [] and first.failed == []
    assert sorted(u[1] for u in first.unknown) == ["hook", "other-hook"]
    d = _deliveries(wh)[("a1", "hook")]
    assert (d["status"], d["last_outcome"], d["next_attempt_at"]) == ("pending", "unknown", T0 + timedelta(seconds=60))
    assert d["last_error"].startswith("outcome unknown:")

    http.answer_after = 0
    clock.advance(60)
    assert sorted(delivery_pass(wh, cfg, clock=clock).delivered) == [("a1", "hook"), ("a1", "other-hook")]
    got = [(h["Idempotency-Key"], body["idempotency_key"], path) for h, (path, body) in zip(http.headers, http.requests)]
    assert len(got) == 4 and all(header == body for header, body, _ in got)
    keys = {path: {k for k, _, p in got if p == path} for path in ("/in", "/other")}
    assert len(keys["/in"]) == 1 and len(keys["/other"]) == 1 and keys["/in"] != keys["/other"]
    # a receiver that keeps the keys it has seen drops the repeat: one alert per channel
    assert len({k for k, _, _ in got}) == 2
    d = _deliveries(wh)[("a1", "hook")]
    assert (d["status"], d["last_outcome"], d["attempts"]) == ("delivered", "delivered", 2)


def test_smtp_has_a_deadline_and_an_answer_after_it_is_unknown(tmp_path):
    # a greeting trickled a byte at a time, as an SMTP tarpit does
    tarpit = TricklingServer(b"220-" + b"x" * 40 + b"\r\n220 ready\r\n", every=0.5, reads_request=False)
    slow = RecordingSmtp()
    slow.answer_after = 2.0
    try:
        wh = warehouse_with_alerts(tmp_path / "w.duckdb", [alert("a1", severity="critical")])
        mail = {"type": "email", "timeout_seconds": 1, "from": "g@example.com", "to": ["f@example.com"]}
        cfg = load_config(_config(tmp_path, {"channels": [
            {**mail, "name": "tarpit", "smtp": {"host": "127.0.0.1", "port": tarpit.port, "starttls": False}},
            {**mail, "name": "slow", "smtp": {"host": "127.0.0.1", "port": slow.port, "starttls": False}}]})).alerts
        started = time.monotonic()
        result = delivery_pass(wh, cfg, clock=Clock(T0))
        assert time.monotonic() - started < 6  # two sends of a 1 s deadline each
        assert [(f[1], "unreachable" in f[2]) for f in result.failed] == [("tarpit", True)]  # never got the message
        assert [(u[1], "outcome unknown" in u[2]) for u in result.unknown] == [("slow", True)]
        assert len(slow.messages) == 1  # it has the message, and answered too late
        outcomes = {k[1]: d["last_outcome"] for k, d in _deliveries(wh).items()}
        assert outcomes == {"tarpit": "failed", "slow": "unknown"}
    finally:
        tarpit.stop()
        slow.stop()
