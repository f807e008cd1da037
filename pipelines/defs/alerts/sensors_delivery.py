"""The sensor that delivers alerts (docs/plans.md#delivery): every minute, one delivery pass.

It delivers in the sensor itself rather than launching a run: a pass is a few short transactions and
a handful of HTTP or SMTP calls, and a run per minute would bury the daily runs in the run history.
It never queues behind a run: if a run holds the warehouse lock, the tick skips and the next one
tries again (alerts a run raises are delivered on the first tick after it lets go). Sends stop
after SEND_BUDGET_SECONDS, and recording waits at most RECORD_WAIT_SECONDS for the lock, so a tick
(plus one send's timeout) stays inside the daemon's 60 s sensor timeout; what is left is due at once
on the next tick."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.alerts.deliver import delivery_pass
from pipelines.lib.dagster_glue.resources import LandingZone
from pipelines.lib.warehouse.writer_lock import LockBusy

SEND_BUDGET_SECONDS = 20
RECORD_WAIT_SECONDS = 15  # past it the sends are not recorded, and repeat after the backoff (at least once)


@dg.sensor(minimum_interval_seconds=60, default_status=dg.DefaultSensorStatus.RUNNING,
           description="Delivers due alerts of ops.alerts to the channels of alerts.channels, and runs alerts.actions.")
def alert_delivery_sensor(context: dg.SensorEvaluationContext, duckdb: DuckDBResource,
                          landing: LandingZone) -> dg.SensorResult:
    cfg = landing.org_config().alerts  # a config that cannot be used fails the tick, naming its keys
    if not cfg.channels and not any(a.enabled for a in cfg.actions.values()):
        return _skip("no alerts.channels or enabled alerts.actions configured")
    if not Path(duckdb.database).exists():
        return _skip(f"no warehouse at {duckdb.database} yet: no alert raised")
    try:
        result = delivery_pass(duckdb.database, cfg, lock_wait_seconds=0, record_wait_seconds=RECORD_WAIT_SECONDS,
                               send_budget_seconds=SEND_BUDGET_SECONDS, log=context.log.info)
    except LockBusy as busy:
        return _skip(f"warehouse busy, next tick: {busy}")
    for alert_id, channel, error in result.failed + result.unknown:  # redacted by the pass
        if not error.startswith("not tried"):  # one line per failing channel, not one per alert it holds back
            context.log.warning(f"alert {alert_id} to {channel}: {error}")
    if not (result.delivered or result.failed or result.unknown or result.unsent or result.actions):
        return _skip("nothing due")
    return _skip(result.summary() + (f"; not recorded: {result.not_recorded}" if result.not_recorded else ""))


def _skip(reason: str) -> dg.SensorResult:
    # a delivery pass requests no run: what it did is the tick's reason, shown in the UI's tick history
    return dg.SensorResult(skip_reason=reason)
