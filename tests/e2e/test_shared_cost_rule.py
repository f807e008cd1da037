"""`shared_cost_rule` decides how an untagged shared line is split: by the projects' GPU cost of the day
(gpu_cost, the default) or by their GPU-seconds (gpu_seconds). Worked by hand: two nodes, one busy hour
each, node a at $10.00 an hour for p1, node b at $30.00 for p2, and a $4.00 untagged network line."""

from datetime import date
from decimal import Decimal as D

import duckdb
import pytest

from tests.support.pipeline import run_pipeline
from tests.support.scenario_builder import Activity, Landing, utc

DAY = date(2026, 11, 2)


@pytest.mark.parametrize("rule, expected", [
    (None, {"p1": D("1"), "p2": D("3")}),            # 10 : 30
    ("gpu_cost", {"p1": D("1"), "p2": D("3")}),
    ("gpu_seconds", {"p1": D("2"), "p2": D("2")}),   # 28,800 : 28,800 GPU-seconds
])
def test_the_rule_splits_shared_lines(tmp_path, rule, expected):
    L = Landing(tmp_path)
    L.config = {"teams": {"t1": {"projects": ["p1"]}, "t2": {"projects": ["p2"]}},
                "slurm_accounts": {"a1": "p1", "a2": "p2"}}
    if rule:
        L.config["shared_cost_rule"] = rule
    for host, price, job, account in (("a", "10.00", "1", "a1"), ("b", "30.00", "2", "a2")):
        L.node(host)
        L.node_hours(host, utc(2026, 11, 2), 1, D(price))
        L.job("c1", job, account=account, start="2026-11-02T00:00:00", end="2026-11-02T01:00:00",
              state="COMPLETED", host=host)
        L.telemetry(host, [DAY], [Activity(utc(2026, 11, 2), utc(2026, 11, 2, 1), job, True)])
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Usage", D("4.00"), service="Networking")
    L.write()
    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [DAY])
    with duckdb.connect(str(L.warehouse), read_only=True) as con:
        shared = dict(con.execute("SELECT project, sum(effective_cost) FROM marts.fct_cost_daily "
                                  "WHERE category = 'shared' GROUP BY 1").fetchall())
    assert shared == expected
