"""Property: whatever stray telemetry hosts, matchers a node cannot answer (its pool or cluster
unknown), unreadable bill amounts or failed runs a day has, the published day either reconciles with
all landed money accounted for, or is marked incomplete naming the file or the run — never complete at
a 0 difference and wrong. Costing is checked on its own step with many examples (fast), and the whole
published day with a few (each is a pipeline run)."""

import tempfile
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from unittest import mock

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.lib.config import OrgConfig
from pipelines.lib.warehouse.publish import published_path
from tests.support import sql_steps
from tests.support.pipeline import pipeline_env, run_pipeline
from tests.support.scenario_builder import Activity, Landing, utc

DAY = date(2026, 11, 2)
H100 = "NVIDIA H100 80GB HBM3"
MATCHERS = ("hostname", "cluster", "pool", "gpu_model")
VALUES = {"hostname": ["n1", "ghost", "n1.ec2.internal"], "cluster": ["c1", "c2"], "pool": ["p", "q"],
          "gpu_model": [H100, "NVIDIA A100-SXM4-80GB"]}

node_st = st.fixed_dictionaries({
    "hostname": st.sampled_from(["n1", "n2", "ghost", "n1.ec2.internal", "N1"]),
    "cluster": st.sampled_from(["c1", "c2", None]), "pool": st.sampled_from(["p", "q", None]),
    "gpu_model": st.sampled_from([H100, None]),
    "known_from": st.sampled_from(["inventory", "bill_tags", "telemetry"]),
})
entry_st = st.lists(st.sampled_from(MATCHERS), min_size=1, max_size=2, unique=True).flatmap(
    lambda keys: st.fixed_dictionaries({k: st.sampled_from(VALUES[k]) for k in keys}))


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nodes=st.lists(node_st, min_size=1, max_size=4, unique_by=lambda n: n["hostname"]),
       entries=st.lists(entry_st, min_size=1, max_size=3))
def test_config_cost_goes_only_to_nodes_every_given_matcher_knows(nodes, entries):
    con = sql_steps.warehouse()
    sql_steps.given(con, "intermediate.int_nodes", [
        {"day": DAY, **n, "resource_id": None, "gpu_count": 8, "pool_team": None} for n in nodes])
    sql_steps.given(con, "intermediate.int_node_hours", [], schema={"day": date, "hostname": str, "hour_ts": datetime})
    sql_steps.given(con, "intermediate.int_node_hour_energy", [],
                    schema={"day": date, "hostname": str, "hour_ts": datetime, "gpu_kwh": float})
    cards = [{**e, "price_per_gpu_hour": "1.00"} for e in entries]
    params = OrgConfig.model_validate({"costs": {"rate_cards": cards}}).sql_params()
    rows = sql_steps.rows_of(con, "intermediate/int_config_cost_lines", {"day": DAY, **params})
    by_host = {n["hostname"]: n for n in nodes}
    for host in {r["hostname"] for r in rows}:
        node = by_host[host]
        fits = [e for e in entries if all(node[k] is not None and node[k].lower() == v.lower() for k, v in e.items())]
        assert fits, f"{host} ({node}) costed by no entry that fits it: {entries}"
        # a host only telemetry knows is priced only by an entry naming it
        assert node["known_from"] != "telemetry" or any("hostname" in e for e in fits), (node, entries)
    for host in {r["hostname"] for r in rows}:  # 8 GPUs × 24 h × $1, once per node: never twice
        assert sum(r["effective_cost"] for r in rows if r["hostname"] == host) == Decimal("192")


@pytest.mark.slow
@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(stray=st.sampled_from([None, "ghost-gpu-999", "n1.ec2.internal", "N1"]), pool_known=st.booleans(),
       moneyless=st.booleans(), fails=st.booleans())
def test_a_published_day_reconciles_or_says_why_not(stray, pool_known, moneyless, fails):
    from pipelines.engines import sql_asset

    with tempfile.TemporaryDirectory() as tmp:
        L = Landing(Path(tmp))
        # n1 is billed $36 an hour; n2 is priced by its pool's rate card when its pool is known; a card
        # for a cluster no node is in must price nothing (a host of unknown cluster is in none)
        L.config = {"costs": {"rate_cards": [{"pool": "rented", "price_per_gpu_hour": "1.00"},
                                             {"cluster": "east", "price_per_gpu_hour": "5.00"}]}}
        L.node("n1")
        L.node("n2", pool="rented" if pool_known else "")
        L.node_hours("n1", utc(2026, 11, 2), 24, "36")
        if moneyless:
            L.line(utc(2026, 11, 2, 3), utc(2026, 11, 2, 4), "Usage", "1", extra={"EffectiveCost": "n/a"})
        for host in ("n1", "n2") + ((stray,) if stray else ()):
            L.telemetry(host, [DAY], [Activity(utc(2026, 11, 2), utc(2026, 11, 2, 6), None, True)])
        L.write()
        real_write = sql_asset.write_day

        def write_day(warehouse, table, params, cfg):
            if fails and table == "marts/fct_cost_daily":
                raise RuntimeError("injected failure")
            return real_write(warehouse, table, params, cfg)

        with mock.patch.object(sql_asset, "write_day", write_day):
            failed = run_pipeline(L.landing, L.warehouse, L.config_path, [DAY])
        assert bool(failed) == fails
        with pipeline_env(L.landing, L.warehouse, L.config_path):
            path = published_path()
        if not path.exists():  # nothing ever succeeded: nothing published, nothing to lie about
            assert fails
            return
        with duckdb.connect(str(path), read_only=True) as con:
            rows = con.sql("SELECT * FROM finance.reconciliation_daily").pl().to_dicts()
        assert rows
        for r in rows:
            if r["complete"]:
                assert r["difference_effective_cost"] == 0 and r["difference_billed_cost"] == 0
                assert r["bill_effective_cost"] == Decimal("864")                    # every landed line
                assert r["config_effective_cost"] == (Decimal("192") if pool_known else 0)  # n2 only, once
                assert not (moneyless or fails)
            else:
                reason = r["incomplete_reason"]
                assert reason
                if fails:
                    assert "last run failed" in reason and "injected failure" in reason
                if moneyless:
                    assert "bills/focus/bill.csv: 1 quarantined bill line(s) whose money is on no day" in reason
