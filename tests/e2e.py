"""Shared by the end-to-end tests: simulate a small fleet and run it through the Dagster job."""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import dagster as dg
import duckdb


@dataclass
class LedgerRun:
    root: Path
    landing: Path
    warehouse: Path
    config: Path | None
    days: list[date]

    def connect(self) -> duckdb.DuckDBPyConnection:
        return duckdb.connect(str(self.warehouse), read_only=True)


@contextmanager
def pipeline_env(landing: Path, warehouse: Path, config: Path | None):
    keys = ("GPULEDGER_LANDING", "GPULEDGER_WAREHOUSE", "GPULEDGER_CONFIG", "GPULEDGER_REPORTS")
    saved = {k: os.environ.get(k) for k in keys}
    os.environ.update({"GPULEDGER_LANDING": str(landing), "GPULEDGER_WAREHOUSE": str(warehouse),
                       "GPULEDGER_CONFIG": str(config) if config else "",
                       "GPULEDGER_REPORTS": str(warehouse.parent / "reports")})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_pipeline(landing: Path, warehouse: Path, config: Path | None, days: list[date],
                 instance: dg.DagsterInstance | None = None) -> list:
    from pipelines.lib.run import materialize_days

    with pipeline_env(landing, warehouse, config):
        return materialize_days(days, instance=instance or dg.DagsterInstance.ephemeral(), progress=False)


def simulate_and_run(root: Path, start: date, days: int, nodes: int, seed: int, knobs=None) -> LedgerRun:
    from simulator import simulate

    simulate(root, start, days, nodes=nodes, seed=seed, knobs=knobs)
    day_list = [start + timedelta(days=i) for i in range(days)]
    run = LedgerRun(root, root / "landing", root / "warehouse.duckdb", root / "gpuledger.yaml", day_list)
    failed = run_pipeline(run.landing, run.warehouse, run.config, day_list)
    assert not failed, failed
    return run
