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
    from pipelines.cli.materialize import materialize_days

    with pipeline_env(landing, warehouse, config):
        return materialize_days(days, instance=instance or dg.DagsterInstance.ephemeral(), progress=False)


@contextmanager
def ledger_of(landing, days: list[date]):
    """A hand-built landing (scenario_builder.Landing) written, run through the pipeline for `days` (none
    may fail) and its warehouse opened read-only for the test's queries."""
    landing.write()
    failed = run_pipeline(landing.landing, landing.warehouse, landing.config_path, days)
    assert not failed, failed
    con = duckdb.connect(str(landing.warehouse), read_only=True)
    try:
        yield con
    finally:
        con.close()


def dict_rows(con: duckdb.DuckDBPyConnection, query: str, params=None) -> list[dict]:
    """A query's rows as column -> value dicts."""
    cur = con.execute(query, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def simulate_and_run(root: Path, start: date, days: int, nodes: int, seed: int, knobs=None) -> LedgerRun:
    from simulator import simulate

    simulate(root, start, days, nodes=nodes, seed=seed, knobs=knobs)
    day_list = [start + timedelta(days=i) for i in range(days)]
    run = LedgerRun(root, root / "landing", root / "warehouse.duckdb", root / "gpuledger.yaml", day_list)
    failed = run_pipeline(run.landing, run.warehouse, run.config, day_list)
    assert not failed, failed
    return run


def assert_gpu_seconds_match_truth(root: Path, warehouse: Path) -> None:
    """fct_cost_daily's GPU-seconds per day × team × category against the simulator's truth: within
    1 %, or 8 GPU-minutes (a GPU-minute per GPU of a node: telemetry has minute resolution) for small
    cells; per day the totals agree to the second (every billed GPU-second is in one category)."""
    import csv
    from collections import defaultdict

    truth: dict[tuple[str, str, str], float] = defaultdict(float)
    with (root / "truth" / "gpu_seconds.csv").open() as fh:
        for r in csv.DictReader(fh):
            truth[(r["day"], r["team"], r["category"])] += float(r["gpu_seconds"])
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rows = con.execute(
            """SELECT strftime(day, '%Y-%m-%d'), team, category, sum(gpu_seconds) FROM marts.fct_cost_daily
               WHERE gpu_seconds > 0 GROUP BY ALL""").fetchall()
    got = {(d, t, c): s for d, t, c, s in rows}
    for key in truth.keys() | got.keys():
        want, have = truth.get(key, 0.0), got.get(key, 0.0)
        assert abs(have - want) <= max(0.01 * want, 8 * 60), (key, want, have)
    for day in {k[0] for k in truth}:
        have = sum(v for k, v in got.items() if k[0] == day)
        want = sum(v for k, v in truth.items() if k[0] == day)
        assert abs(have - want) < 1e-6, (day, want, have)
