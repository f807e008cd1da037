"""The config's cost lines (sql/intermediate/int_config_cost_lines/), day by day on given nodes: a
contract's month and an owned node's whole life sum exactly to the configured amounts, nothing is
costed before purchase_date or after the last month of depreciation, the most specific entry wins, and
a node-hour a bill line covers takes no config line."""

from datetime import date, datetime, timedelta
from decimal import Decimal

import pytest

from pipelines.lib.config import OrgConfig
from tests.support.sql_steps import given, rows_of, warehouse

NODE = {"hostname": "n1", "cluster": "onprem", "resource_id": None, "gpu_model": "NVIDIA H100 80GB HBM3",
        "gpu_count": 8, "pool": "p", "pool_team": "infra", "known_from": "inventory"}


def _days(first: date, last: date) -> list[date]:
    return [first + timedelta(days=i) for i in range((last - first).days + 1)]


def _lines(costs: dict, days: list[date], nodes=(NODE,), bill_hours=()) -> list[dict]:
    """int_config_cost_lines of every day, on `nodes` known every day, with `bill_hours` (host, hour)
    covered by a bill line."""
    con = warehouse()
    given(con, "intermediate.int_nodes", [{"day": d, **n} for d in days for n in nodes])
    given(con, "intermediate.int_node_hours", [{"day": h.date(), "hostname": host, "hour_ts": h}
                                               for host, h in bill_hours],
          schema={"day": date, "hostname": str, "hour_ts": datetime})
    given(con, "intermediate.int_node_hour_energy", [],
          schema={"day": date, "hostname": str, "hour_ts": datetime, "gpu_kwh": float})
    params = OrgConfig.model_validate({"costs": costs}).sql_params()
    out = []
    for d in days:
        out += rows_of(con, "intermediate/int_config_cost_lines", {"day": d, **params})
    return out


def test_a_contract_month_sums_to_its_amount_exactly():
    # 100.00 over February 2026's 672 hours and two nodes of 8 and 3 GPUs: neither divides evenly
    small = {**NODE, "hostname": "n2", "gpu_count": 3}
    rows = _lines({"contracts": [{"pool": "p", "amount_per_month": "100.00"}]},
                  _days(date(2026, 2, 1), date(2026, 2, 28)), nodes=(NODE, small))
    assert sum(r["effective_cost"] for r in rows) == Decimal("100.00")
    assert {r["hostname"] for r in rows} == {"n1", "n2"} and {r["cost_basis"] for r in rows} == {"contract"}
    by_node = {h: sum(r["effective_cost"] for r in rows if r["hostname"] == h) for h in ("n1", "n2")}
    assert by_node["n1"] == pytest.approx(Decimal("100") * 8 / 11, abs=Decimal("1e-15"))


def test_an_owned_node_is_depreciated_over_its_life_exactly_and_no_longer():
    owned = {"owned": [{"cluster": "onprem", "purchase_price": "1000", "residual": "100",
                        "purchase_date": "2026-01-15", "depreciation_months": 2,
                        "facility_per_node_month": "31"}]}
    # life: [Jan 15, Feb 15) and [Feb 15, Mar 15); facility goes on after
    rows = _lines(owned, _days(date(2026, 1, 14), date(2026, 3, 15)))
    dep = [r for r in rows if r["cost_basis"] == "depreciation"]
    assert sum(r["effective_cost"] for r in dep) == Decimal("900")
    assert min(r["hour_ts"] for r in rows) == datetime(2026, 1, 15)           # nothing before purchase_date
    assert max(r["hour_ts"] for r in dep) == datetime(2026, 3, 14, 23)        # nothing after the last month
    # each month of life: 450 over its hours (Jan 15 – Feb 15: 31 days; Feb 15 – Mar 15: 28 days)
    first = sum(r["effective_cost"] for r in dep if r["hour_ts"] < datetime(2026, 2, 15))
    assert first == Decimal("450")
    fac = [r for r in rows if r["cost_basis"] == "facility"]
    assert sum(r["effective_cost"] for r in fac if r["hour_ts"] < datetime(2026, 2, 15)) == Decimal("31")
    assert {r["cost_source"] for r in rows} == {"amortization"}


def test_the_bill_wins_and_the_most_specific_entry_costs_the_node():
    day = date(2026, 11, 2)
    costs = {"rate_cards": [{"cluster": "onprem", "price_per_gpu_hour": "1.00"},
                            {"hostname": "n1", "price_per_gpu_hour": "2.00", "valid_from": "2026-11-01"},
                            {"hostname": "n1", "price_per_gpu_hour": "9.00", "valid_to": "2026-10-31"}]}
    bill = [("n1", datetime(2026, 11, 2, h)) for h in (3, 4)]
    rows = _lines(costs, [day], bill_hours=bill)
    assert len(rows) == 22 and {r["entry_key"] for r in rows} == {'["rate_card","1"]'}
    assert all(r["effective_cost"] == Decimal("16.00") for r in rows)          # $2.00 × 8 GPUs an hour
    assert not {r["hour_ts"] for r in rows} & {h for _, h in bill}


@pytest.mark.parametrize("unknown", ["pool", "cluster", "gpu_model"])
def test_a_matcher_fits_only_a_node_whose_value_is_known(unknown):
    # a node of unknown pool (cluster, GPU model) is not in the pool a rate card names: no cost at all
    node = {**NODE, unknown: None}
    entry = {"pool": "p", "cluster": "onprem", "gpu_model": "NVIDIA H100 80GB HBM3"}
    rows = _lines({"rate_cards": [{unknown: entry[unknown], "price_per_gpu_hour": "2.10"}]},
                  [date(2026, 10, 29)], nodes=(node,))
    assert rows == []


def test_a_host_known_from_telemetry_alone_is_priced_only_when_the_config_names_it():
    day = date(2026, 10, 29)
    ghost = {**NODE, "hostname": "ghost-gpu-999", "cluster": None, "pool": None, "known_from": "telemetry"}
    twin = {**NODE, "hostname": "n1.ec2.internal", "known_from": "telemetry"}  # n1 spelt by its exporter
    by_model = {"rate_cards": [{"gpu_model": "NVIDIA H100 80GB HBM3", "price_per_gpu_hour": "2.10"}]}
    rows = _lines(by_model, [day], nodes=(NODE, ghost, twin))
    assert {r["hostname"] for r in rows} == {"n1"}
    named = {"rate_cards": [{"hostname": "ghost-gpu-999", "price_per_gpu_hour": "1.00"}]}
    assert {r["hostname"] for r in _lines(named, [day], nodes=(ghost,))} == {"ghost-gpu-999"}
