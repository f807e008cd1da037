"""The live sensor: every `alerts.live_interval_minutes` (default 5) one tick of pipelines/alerts/live.py —
today's newest landing files staged, hung jobs, idle sessions and step-time regressions raised (opened,
updated, resolved) as of now in ops.alerts
(docs/plans.md#hung-jobs-and-slow-runs-within-the-hour)."""

from __future__ import annotations

import os

import dagster as dg

from pipelines.alerts.live import run_live
from pipelines.landing.source import check_landing_root
from pipelines.lib.config import load_config
from pipelines.lib.dagster_glue.resources import LandingZone


def live_interval_seconds() -> int:
    """The sensor's interval: `alerts.live_interval_minutes` of $GPULEDGER_CONFIG (default 5 minutes)."""
    return load_config(os.environ.get("GPULEDGER_CONFIG") or None).alerts.live_interval_minutes * 60


@dg.sensor(minimum_interval_seconds=live_interval_seconds(), default_status=dg.DefaultSensorStatus.RUNNING)
def live_alerts_sensor(context: dg.SensorEvaluationContext, landing: LandingZone) -> dg.SkipReason:
    """Raises hung jobs, idle sessions and step-time regressions from today's newest landing files, as of now."""
    result = run_live(check_landing_root(landing.path), landing.org_config(), run_id=f"sensor live_alerts_sensor {context.cursor or ''}")
    context.update_cursor(result.as_of.isoformat())
    new = ", ".join(f"{n} {kind}" for kind, n in result.raised.items() if n) or "nothing new"
    return dg.SkipReason(f"as of {result.as_of:%Y-%m-%d %H:%M} UTC: {result.files_read} landing files read, raised {new}")
