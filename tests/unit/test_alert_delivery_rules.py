"""The parts of alert delivery that need no network (docs/plans.md#delivery): the config keys and what
they refuse, routing by team and severity, the backoff, the messages, and how an action's command is
filled. The real servers are in tests/e2e/test_alert_delivery.py."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from decimal import Decimal as D

import pytest
import yaml

from pipelines.alerts.actions import ActionRefused, command_for
from pipelines.alerts.messages import at_stake, email_message, message_id, slack_payload, webhook_payload
from pipelines.lib.config.alert_channels import AlertAction, Channel, RetryConfig
from pipelines.lib.config import ConfigError, load_config
from tests.support.alert_servers import alert


def _load(tmp_path, alerts: dict):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"alerts": alerts}))
    return load_config(path).alerts


def _refused(tmp_path, alerts: dict) -> str:
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, alerts)
    return str(err.value)


def test_channels_load_with_defaults_and_from_is_the_key(tmp_path):
    cfg = _load(tmp_path, {"channels": [
        {"name": "mail", "type": "email", "smtp": {"host": "smtp.example.com", "username": "u", "password_env": "SMTP_PASSWORD"},
         "from": "g@example.com", "to": ["a@example.com"]},
        {"name": "hook", "type": "webhook", "url_env": "HOOK_URL"}]})
    mail, hook = cfg.channels
    assert (mail.smtp.port, mail.smtp.starttls, mail.from_, mail.min_severity, mail.teams) == (
        587, True, "g@example.com", "info", None)
    assert hook.url is None and hook.url_env == "HOOK_URL"
    assert (cfg.retry.initial_seconds, cfg.retry.max_seconds, cfg.retry.max_attempts) == (60, 3600, None)
    # `config check` prints `from`, which loads again
    dumped = yaml.safe_load(load_config(None).model_copy(update={"alerts": cfg}).as_yaml())
    assert dumped["alerts"]["channels"][0]["from"] == "g@example.com"
    again = tmp_path / "again.yaml"
    again.write_text(yaml.safe_dump(dumped))
    assert load_config(again).alerts == cfg


@pytest.mark.parametrize("alerts, key, problem", [
    ({"channels": [{"name": "s", "type": "slack"}]}, "alerts.channels.0", "needs one of url, url_env"),
    ({"channels": [{"name": "s", "type": "slack", "url": "file:///etc/passwd"}]}, "alerts.channels.0.url", "not an http(s) URL"),
    ({"channels": [{"name": "a,b", "type": "slack", "url": "http://x"}]}, "alerts.channels.0.name", "a channel name is"),
    ({"channels": [{"name": "s", "type": "slack", "url": "http://x"}, {"name": "s", "type": "webhook", "url": "http://y"}]},
     "alerts.channels", "given twice"),
    ({"channels": [{"name": "m", "type": "email", "smtp": {"host": "h"}, "from": "a@b"}]}, "alerts.channels.0",
     "needs smtp, from and to"),
    ({"channels": [{"name": "m", "type": "email", "smtp": {"host": "h", "password": "hunter2"}, "from": "a@b", "to": ["c@d"]}]},
     "alerts.channels.0.smtp.password", "did you mean `password_env`"),
    ({"channels": [{"name": "m", "type": "email", "smtp": {"host": "h", "ssl": True}, "from": "a@b", "to": ["c@d"]}]},
     "alerts.channels.0.smtp", "exclude each other"),
    ({"channels": [{"name": "s", "type": "slack", "url": "http://x", "min_severity": "urgent"}]},
     "alerts.channels.0.min_severity", "info"),
    ({"retry": {"initial_seconds": 600, "max_seconds": 60}}, "alerts.retry", "below initial_seconds"),
    ({"actions": {"hung_jobs": {"command": ["scancel", "{job_id}"]}}}, "alerts.actions", "unknown alert kind"),
    ({"actions": {"hung_job": {"command": ["scancel", "{jobid}"]}}}, "alerts.actions.hung_job.command", "unknown placeholder {jobid}"),
    ({"actions": {"hung_job": {"command": ["scancel", "{subject.__class__}"]}}}, "alerts.actions.hung_job.command", "unknown placeholder"),
    ({"actions": {"hung_job": {"command": ["scancel", "{job_id:>10}"]}}}, "alerts.actions.hung_job.command", "bare {name}"),
    ({"actions": {"hung_job": {"command": ["{subject}", "x"]}}}, "alerts.actions.hung_job.command", "program (first argument) is fixed"),
    ({"actions": {"hung_job": {"command": "scancel {job_id}"}}}, "alerts.actions.hung_job.command", "valid list"),
    ({"severity": {"idle_sessions": "info"}}, "alerts.severity", "unknown alert kind 'idle_sessions' — did you mean 'idle_session'?"),
    ({"severity": {"hung_job": "critcal"}}, "alerts.severity", "unknown severity 'critcal' — did you mean 'critical'?"),
    ({"immediate": ["hung-job"]}, "alerts.immediate", "unknown alert kind 'hung-job' — did you mean 'hung_job'?"),
])
def test_bad_delivery_keys_are_refused_by_name(tmp_path, alerts, key, problem):
    message = _refused(tmp_path, alerts)
    assert f"`{key}" in message and problem in message, message


def test_severity_and_immediate_load_by_kind(tmp_path):
    cfg = _load(tmp_path, {"severity": {"idle_session": "info"}, "immediate": ["hung_job", "hung_job"]})
    assert cfg.severity == {"idle_session": "info"} and cfg.immediate == ["hung_job"] and cfg.digest_hours == 24
    assert _load(tmp_path, {}).immediate == []  # by default every kind goes in its team's digest


def test_routing_by_team_and_severity():
    everyone = Channel(name="all", type="webhook", url="http://x")
    pretrain_warn = Channel(name="p", type="slack", url="http://x", teams=["pretrain"], min_severity="warning")
    assert everyone.routes(None, "info") and everyone.routes("x", "critical")
    assert [pretrain_warn.routes("pretrain", s) for s in ("info", "warning", "critical")] == [False, True, True]
    assert not pretrain_warn.routes("inference", "critical") and not pretrain_warn.routes(None, "critical")


def test_backoff_doubles_from_initial_up_to_max():
    retry = RetryConfig(initial_seconds=60, max_seconds=3600)
    assert [retry.delay_seconds(n) for n in range(1, 9)] == [60, 120, 240, 480, 960, 1920, 3600, 3600]
    assert retry.delay_seconds(10_000) == 3600  # no overflow however long a channel stays down


def test_messages_carry_the_alert_id_and_exact_money():
    a = alert("abc123", cost="1234.565000000000000001", currency="EUR")
    text = slack_payload(a)["text"]
    assert "abc123" in text and "1,234.57 EUR" in text and "WARNING budget_threshold: run llm-8b-v2" in text
    body = webhook_payload(a, "hook")
    assert body["cost_at_stake"] == "1234.565000000000000001" and body["day"] == "2026-11-30"
    assert body["raised_at"] == "2026-12-01T06:00:00" and body["details"] == {"burn_pct": "80.25"}
    assert json.loads(json.dumps(body)) == body  # plain JSON: no Decimal, no float for money
    assert webhook_payload(alert("x", cost=None, currency=None), "h")["cost_at_stake"] is None
    assert "cost at stake: –" in slack_payload(alert("x", cost=None, currency=None))["text"]


def test_slack_text_escapes_what_slack_would_read_as_markup():
    text = slack_payload(alert("a", subject="<!channel> & co"))["text"]
    assert "&lt;!channel&gt; &amp; co" in text and "<!channel>" not in text


def test_email_subject_and_a_message_id_stable_per_alert_and_channel():
    a = alert("abc123", severity="critical")
    msg = email_message(a, "mail", "gpuledger@example.com", ["a@x", "b@x"], datetime(2026, 12, 1, tzinfo=timezone.utc))
    assert msg["Subject"] == "[gpuledger][critical] budget_threshold: run llm-8b-v2"
    assert msg["To"] == "a@x, b@x" and msg["X-Gpuledger-Alert-Id"] == "abc123"
    assert msg["Message-ID"] == message_id("abc123", "mail", "gpuledger@example.com")
    assert msg["Message-ID"].endswith("@example.com>")
    assert message_id("abc123", "mail", "g@example.com") != message_id("abc123", "mail2", "g@example.com")
    assert "abc123" in msg.get_content()


def test_a_header_injection_in_the_subject_is_refused():
    a = alert("abc123", subject="x\r\nBcc: victim@example.com")
    with pytest.raises(ValueError):
        email_message(a, "mail", "g@example.com", ["a@x"], datetime(2026, 12, 1, tzinfo=timezone.utc)).as_bytes()


def test_an_action_is_filled_argument_by_argument_never_through_a_shell():
    action = AlertAction(command=["scancel", "--signal=USR1", "{job_id}", "--comment=gpuledger {alert_id} {{literal}}"])
    hung = alert("a1", kind="hung_job", subject_type="job", subject="123; rm -rf /")
    assert command_for(action, hung) == ["scancel", "--signal=USR1", "123; rm -rf /", "--comment=gpuledger a1 {literal}"]
    with pytest.raises(ActionRefused, match="no value"):
        command_for(action, alert("a2", subject_type="run"))  # no job_id for a run's alert
    with pytest.raises(ActionRefused, match="option"):
        command_for(action, alert("a3", subject_type="job", subject="-u root"))
    assert AlertAction(command=["true"]).enabled is False and AlertAction(command=["true"]).dry_run is True



@pytest.mark.parametrize("units, mig, words", [
    (7000, None, "1 GPU"), (56000, None, "8 GPUs"), (1000, "MIG 1g.10gb", "⅐ of a GPU (MIG 1g.10gb)"),
    (3000, "MIG 3g.40gb", "3/7 of a GPU (MIG 3g.40gb)"), (1750, None, "0.25 of a GPU"), (10500, None, "1.5 GPUs"),
])
def test_alert_messages_say_gpus_as_people_do(units, mig, words):
    from pipelines.lib.warehouse import bootstrap, connect

    con = connect(":memory:")
    bootstrap(con)
    assert con.execute("SELECT gpu_units_text(?::BIGINT, ?)", [units, mig]).fetchone()[0] == words
    assert [con.execute("SELECT duration_text(?::DOUBLE)", [s]).fetchone()[0] for s in (60, 1799, 7200, 36300)] == \
        ["1 minute", "29 minutes", "2 h 00 min", "10 h 05 min"]


def test_a_digests_total_adds_money_two_alerts_name_once():
    """A run's budget and its pace are one run's spend to date: a digest holding both adds it once; other
    runs and currencies add as they are."""
    alerts = [alert("r", subject="llm", cost="1000"), alert("p", subject_type="run_pace", subject="llm", cost="1000"),
              alert("o", subject="other", cost="0.5"), alert("e", subject="eu", cost="7", currency="EUR"),
              alert("n", subject="none", cost=None)]
    assert at_stake(alerts) == {"EUR": D("7"), "USD": D("1000.5")}
