"""A team's digest (docs/plans.md#delivery) against a real HTTP receiver on 127.0.0.1: each pass sends one
message per team and channel with all the team's due alerts and the total at stake per currency, an
alert of an `alerts.immediate` kind alone; a failing channel is retried after the backoff without
sending anything twice; a digest goes at most once per `alerts.digest_hours` unless it holds a critical
alert; an escalated alert is due again, once."""

from __future__ import annotations

from decimal import Decimal

import duckdb
import pytest

from pipelines.alerts.deliver import delivery_pass
from pipelines.lib.config import load_config
from tests.e2e.test_alert_delivery import T0, Clock, _alerts, _deliveries
from tests.support.alert_servers import RecordingHttp, alert, warehouse_with_alerts
from pipelines.lib.config.strict_yaml import dump_yaml


@pytest.fixture
def http():
    server = RecordingHttp()
    yield server
    server.stop()


def _cfg(tmp_path, http, **alerts):
    path = tmp_path / "gpuledger.yaml"
    path.write_text(dump_yaml({"alerts": {
        "channels": [{"name": "hook", "type": "webhook", "url": http.url("/json"), "timeout_seconds": 2},
                     {"name": "chat", "type": "slack", "url": http.url("/slack"), "timeout_seconds": 2}],
        "retry": {"initial_seconds": 60, "max_seconds": 600}, **alerts}}))
    return load_config(path).alerts


ALERTS = [
    alert("p1", team="pretrain", kind="idle_session", subject_type="job", subject="c1/201", cost="10.25"),
    alert("p2", team="pretrain", kind="hung_job", subject_type="job", subject="c1/301", cost="100.5",
          severity="critical"),
    alert("p3", team="pretrain", subject="llm-8b", cost="7", currency="EUR"),
    alert("i1", team="inference", kind="idle_session", subject_type="job", subject="c2/9", cost="1.5"),
]


def test_one_digest_per_team_and_channel_with_all_its_alerts_and_totals_per_currency(tmp_path, http):
    wh = warehouse_with_alerts(tmp_path / "w.duckdb", ALERTS)
    cfg = _cfg(tmp_path, http)
    result = delivery_pass(wh, cfg, clock=Clock(T0))
    assert len(result.delivered) == 8 and result.failed == []
    hooks = {b["team"]: b for b in http.bodies("/json")}
    assert len(http.bodies("/json")) == 2 and sorted(hooks) == ["inference", "pretrain"]
    pretrain = hooks["pretrain"]
    assert pretrain["digest"] is True and sorted(a["alert_id"] for a in pretrain["alerts"]) == ["p1", "p2", "p3"]
    # two currencies, never added
    assert pretrain["at_stake"] == {"EUR": "7", "USD": "110.75"}
    assert pretrain["idempotency_key"] and pretrain["idempotency_key"] != hooks["inference"]["idempotency_key"]
    slack = [b["text"] for b in http.bodies("/slack")]
    assert len(slack) == 2
    [text] = [t for t in slack if "pretrain" in t.splitlines()[0]]
    lines = text.splitlines()
    assert "pretrain: 3 alerts opened or escalated, at stake 7.00 EUR + 110.75 USD" in lines[0]
    assert lines[1].startswith("- CRITICAL hung_job: job c1/301")  # the most critical first, a line each
    assert len(lines) == 5
    assert {r["status"] for r in _alerts(wh).values()} == {"delivered"}
    assert {d["digest_key"] for k, d in _deliveries(wh).items() if k[1] == "hook" and k[0].startswith("p")} == \
        {pretrain["idempotency_key"]}


def test_a_failing_channel_is_retried_after_the_backoff_and_nothing_is_sent_twice(tmp_path, http):
    wh = warehouse_with_alerts(tmp_path / "w.duckdb", ALERTS)
    cfg = _cfg(tmp_path, http)
    clock = Clock(T0)
    http.fail_next = 1  # the first POST (a digest to whichever channel comes first) is answered 500
    first = delivery_pass(wh, cfg, clock=clock)
    failed_channel = first.failed[0][1]
    assert {c for _, c, _ in first.failed} == {failed_channel} and len(first.failed) == 4  # both teams' digests
    assert len(http.requests) == 2  # the other channel's two digests went
    clock.advance(30)
    assert delivery_pass(wh, cfg, clock=clock).delivered == []  # backing off
    clock.advance(30)
    again = delivery_pass(wh, cfg, clock=clock)
    assert len(again.delivered) == 4 and {c for _, c in again.delivered} == {failed_channel}
    clock.advance(86400)
    assert delivery_pass(wh, cfg, clock=clock).delivered == []
    path = "/json" if failed_channel == "hook" else "/slack"
    assert len(http.bodies(path)) == 2 and len(http.requests) == 4  # one digest per team per channel, once


def test_immediate_kinds_go_alone_and_a_digest_waits_for_its_day_unless_critical(tmp_path, http):
    wh = warehouse_with_alerts(tmp_path / "w.duckdb", ALERTS)
    cfg = _cfg(tmp_path, http, immediate=["hung_job"])
    clock = Clock(T0)
    delivery_pass(wh, cfg, clock=clock)
    bodies = http.bodies("/json")
    assert sorted(b.get("alert_id") or b["team"] for b in bodies) == ["inference", "p2", "pretrain"]
    assert [len(b["alerts"]) for b in bodies if b.get("digest") and b["team"] == "pretrain"] == [2]
    # an hour later: a new info alert of pretrain waits for the day's digest…
    clock.advance(3600)
    with duckdb.connect(str(wh)) as con:
        from tests.support.alert_servers import add_alerts

        add_alerts(con, [alert("p4", team="pretrain", kind="idle_session", subject_type="job", subject="c1/7",
                               severity="info", cost="1")])
    assert delivery_pass(wh, cfg, clock=clock).delivered == []
    # …until an escalation makes one of pretrain's alerts critical: the digest goes now, with both
    with duckdb.connect(str(wh)) as con:
        con.execute("UPDATE ops.alerts SET severity = 'critical', revision = 1, status = 'pending' WHERE alert_id = 'p1'")
    now = delivery_pass(wh, cfg, clock=clock)
    assert sorted(now.delivered) == [("p1", "chat"), ("p1", "hook"), ("p4", "chat"), ("p4", "hook")]
    [digest] = [b for b in http.bodies("/json")[3:]]
    assert sorted(a["alert_id"] for a in digest["alerts"]) == ["p1", "p4"]
    assert _deliveries(wh)[("p1", "hook")]["revision"] == 1
    # delivered once per revision: nothing more, however long
    clock.advance(7 * 86400)
    assert delivery_pass(wh, cfg, clock=clock).delivered == []
    assert Decimal(digest["at_stake"]["USD"]) == Decimal("11.25")


def test_an_email_digest_is_one_message_per_team_with_a_stable_message_id(tmp_path):
    from tests.support.alert_servers import RecordingSmtp

    smtp = RecordingSmtp()
    try:
        wh = warehouse_with_alerts(tmp_path / "w.duckdb", ALERTS)
        path = tmp_path / "gpuledger.yaml"
        path.write_text(dump_yaml({"alerts": {"channels": [{
            "name": "mail", "type": "email", "smtp": {"host": "127.0.0.1", "port": smtp.port, "starttls": False},
            "from": "gpuledger@example.com", "to": ["leads@example.com"]}]}}))
        result = delivery_pass(wh, load_config(path).alerts, clock=Clock(T0))
        assert len(result.delivered) == 4 and len(smtp.messages) == 2
        subjects = sorted(str(mail["Subject"]).replace("\r\n", "") for _, mail in smtp.messages)  # unfolded
        assert subjects == ["[gpuledger] inference: 1 alert opened or escalated, at stake 1.50 USD",
                            "[gpuledger] pretrain: 3 alerts opened or escalated, at stake 7.00 EUR + 110.75 USD"]
        keys = {d["digest_key"] for d in _deliveries(wh).values()}
        assert {mail["Message-ID"] for _, mail in smtp.messages} == {
            f"<gpuledger.digest.{k}@example.com>" for k in keys}
    finally:
        smtp.stop()
