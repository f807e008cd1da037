"""What `collect slurm` writes, through the ledger: a job running across three days is in each day's
file, and a day's file outside the last look-back still holds the job as it was then (running); the
ledger has the job once per day it held GPUs, with the end the later files give. sacct is a script
printing recorded output (tests/support/fake_sacct.py); the real cluster is test_collect_slurm.py."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from decimal import Decimal

import duckdb
import pytest

from pipelines.collect.slurm import collect
from pipelines.lib.config.collect import CollectSlurmConfig
from tests.support import fake_sacct
from tests.support.pipeline import run_pipeline
from tests.support.scenario_builder import Landing

pytestmark = pytest.mark.slow  # three days through the pipeline: about a minute

TODAY = datetime.now(timezone.utc).date()
D1, D2, D3 = (TODAY - timedelta(days=n) for n in (3, 2, 1))


def _epoch(day: date, hour: int) -> int:
    return int(datetime(day.year, day.month, day.day, hour, tzinfo=timezone.utc).timestamp())


def _job(end: int | None, state: str) -> dict:
    """Job 101: 4 GPUs of gpu-001 from D1 22:00."""
    return {"JobIDRaw": "101", "JobID": "101", "JobName": "train", "User": "alice", "Account": "llm",
            "Partition": "gpu", "State": state, "ExitCode": "0:0", "Submit": _epoch(D1, 21), "Start": _epoch(D1, 22),
            "End": end if end is not None else "Unknown", "AllocTRES": "cpu=8,gres/gpu=4,node=1",
            "NodeList": "gpu-001", "QOS": "normal"}


def test_a_job_across_days_is_one_job_with_its_latest_record(tmp_path):
    L = Landing(tmp_path)
    L.node("gpu-001", cluster="east", gpu_count=4)
    L.node_hours("gpu-001", datetime(D1.year, D1.month, D1.day, tzinfo=timezone.utc), 72, "4")  # $1 a GPU-hour
    L.write()
    sacct_dir = tmp_path / "sacct"
    cfg = CollectSlurmConfig(sacct=(str(fake_sacct.install(sacct_dir)),))

    # collected on D2: the job is running
    running = _job(None, "RUNNING")
    fake_sacct.record(sacct_dir, D1.isoformat(), [running])
    fake_sacct.record(sacct_dir, D2.isoformat(), [running])
    collect(L.landing, "east", cfg, since=D1, until=datetime.combine(D2, datetime.min.time()) + timedelta(hours=12))
    # collected again later, the look-back reaching back to D2 only: D1's file keeps the running record
    ended = _job(_epoch(D3, 2), "COMPLETED")
    for day in (D2, D3):
        fake_sacct.record(sacct_dir, day.isoformat(), [ended])
    result = collect(L.landing, "east", cfg, since=D2)
    assert [f.name for f in result.files] == [f"sacct-{d}.psv" for d in (D2, D3, TODAY)]
    assert "Unknown" in (L.landing / "scheduler/slurm/east" / f"sacct-{D1}.psv").read_text()

    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [D1, D2, D3])
    with duckdb.connect(str(L.warehouse), read_only=True) as con:
        rows = con.execute("""SELECT day, job_id, state, end_ts, gpu_seconds, effective_cost
                              FROM marts.fct_job_cost ORDER BY day""").fetchall()
    end = datetime(D3.year, D3.month, D3.day, 2)
    assert rows == [
        (D1, "101", "COMPLETED", end, 4 * 2 * 3600.0, Decimal("8")),
        (D2, "101", "COMPLETED", end, 4 * 24 * 3600.0, Decimal("96")),
        (D3, "101", "COMPLETED", end, 4 * 2 * 3600.0, Decimal("8")),
    ]
