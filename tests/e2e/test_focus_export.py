"""The FOCUS 1.3 split-cost allocation export (pipelines/exports/focus.py, DESIGN §6 `export focus`).

Every exported row is checked against what the landing files say, computed here without the pipeline:
a bill line's share of a UTC day is its hourly pieces by time, split in units of 1e-18 by largest
remainder (tests/support/bill_truth.py), and the rows of each origin charge (line × day) must sum to it exactly.
Two warehouses: a simulated fleet (`simulate_and_run`), and a hand-built day on one node whose hours are
priced by two or three bill lines at once, with every kind of non-node line beside it.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal as D
from fractions import Fraction
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from pipelines.exports import FOCUS_COLUMNS, export_focus
from tests.support.bill_truth import UNIT, _ts, day_shares, line_currencies, line_hour_units
from tests.support.pipeline import run_pipeline
from tests.support.scenario_builder import Activity, Landing, utc

NODE_METHOD = "gpuledger-gpu-seconds"
METHODS = {NODE_METHOD, "gpuledger-tag", "gpuledger-proportional-gpu-cost", "gpuledger-proportional-pretax",
           "gpuledger-commitment-owner", "gpuledger-unattributed"}
NODE_CATEGORIES = {"productive", "rerun_loss", "allocated_idle", "failed_job", "unmonitored"}


# --- the landing side, independent of the pipeline ------------------------------------------------

line_hour_shares = line_hour_units


def line_day_shares(landing: Path, days: list[date]) -> dict[tuple[str, date], tuple[D, D]]:
    """(line key, day) → the line's share of the day, for the exported days."""
    out = {}
    for (rel, n), hours in line_hour_shares(landing).items():
        for day in days:
            parts = [v for h, v in hours.items() if h.date() == day]
            if parts:
                out[(f"{rel}#{n}", day)] = (sum(p[0] for p in parts) * UNIT, sum(p[1] for p in parts) * UNIT)
    return out


# --- the export side ---------------------------------------------------------------------------------

@dataclass
class Export:
    rows: list[dict]            # CSV rows: money as Decimal, NULL as None
    header: list[str]
    count: int                  # what export_focus returned for the CSV
    parquet: list[dict]
    parquet_count: int


def _origin(row: dict) -> tuple[str, date]:
    # a quarantined line's key names its row as `row N`; the landing side counts rows alike
    return row["x_OriginLineKey"].replace("#row ", "#"), date.fromisoformat(row["ChargePeriodStart"][:10])


def _export(con: duckdb.DuckDBPyConnection, days: list[date], out_dir: Path) -> Export:
    n_csv = export_focus(con, days[0], days[-1], out_dir / "focus.csv")
    n_pq = export_focus(con, days[0], days[-1], out_dir / "focus.parquet")
    with (out_dir / "focus.csv").open(newline="") as fh:
        reader = csv.DictReader(fh)
        header = list(reader.fieldnames or [])
        rows = []
        for r in reader:
            r = {k: (v if v != "" else None) for k, v in r.items()}
            r["EffectiveCost"], r["BilledCost"] = D(r["EffectiveCost"]), D(r["BilledCost"])
            rows.append(r)
    return Export(rows, header, n_csv, pq.read_table(out_dir / "focus.parquet").to_pylist(), n_pq)


@pytest.fixture(scope="module")
def sim(simulated_ledger):
    return simulated_ledger


@pytest.fixture(scope="module")
def sim_export(sim, tmp_path_factory) -> Export:
    with sim.connect() as con:   # read-only: the export writes TEMP tables only
        return _export(con, sim.days, tmp_path_factory.mktemp("focus_sim_out"))


def _assert_origins_exact(export: Export, landing: Path, days: list[date]) -> None:
    want = line_day_shares(landing, days)
    got: dict[tuple[str, date], list[D]] = defaultdict(lambda: [D(0), D(0)])
    for r in export.rows:
        got[_origin(r)][0] += r["EffectiveCost"]
        got[_origin(r)][1] += r["BilledCost"]
    assert set(got) == set(want)    # one or more rows for every line's piece of every day, nothing else
    for key, (e, b) in want.items():
        assert tuple(got[key]) == (e, b), key


# --- the simulated fleet -----------------------------------------------------------------------------

def test_columns_and_row_count(sim_export):
    assert sim_export.header == list(FOCUS_COLUMNS)
    assert sim_export.count == len(sim_export.rows) == sim_export.parquet_count > 0


def test_every_origin_sums_exactly_to_its_line_share(sim, sim_export):
    _assert_origins_exact(sim_export, sim.landing, sim.days)


def test_each_day_and_currency_sums_to_the_bill(sim, sim_export):
    bill = {k: v for k, v in day_shares(sim.landing).items() if k[0] in sim.days}
    assert {c for _, c in bill} == {"EUR", "USD"}
    got: dict[tuple[date, str], list[D]] = defaultdict(lambda: [D(0), D(0)])
    for r in sim_export.rows:
        got[(_origin(r)[1], r["BillingCurrency"])][0] += r["EffectiveCost"]
        got[(_origin(r)[1], r["BillingCurrency"])][1] += r["BilledCost"]
    assert {k: tuple(v) for k, v in got.items()} == bill


def test_rows_keep_their_origin_lines_currency(sim, sim_export):
    currencies = {f"{rel}#{n}": c for (rel, n), c in line_currencies(sim.landing).items()}
    for r in sim_export.rows:
        assert r["BillingCurrency"] == currencies[_origin(r)[0]], r
    assert {r["BillingCurrency"] for r in sim_export.rows} == {"EUR", "USD"}


def test_unallocated_node_rows_are_the_ledgers_idle(sim, sim_export):
    with sim.connect() as con:
        idle = {(d, c): (e, b) for d, c, e, b in con.execute(
            "SELECT day, billing_currency, sum(effective_cost), sum(billed_cost) FROM marts.fct_cost_daily "
            "WHERE category = 'idle_unallocated' GROUP BY ALL").fetchall()}
    assert {c for _, c in idle} == {"EUR", "USD"}
    for day, currency in idle:
        rows = [r for r in sim_export.rows
                if _origin(r)[1] == day and r["BillingCurrency"] == currency and r["AllocatedMethodId"] == NODE_METHOD
                and r["AllocatedResourceId"] is None]
        assert {json.loads(r["AllocatedTags"])["category"] for r in rows} == {"idle_unallocated"}
        assert (sum(r["EffectiveCost"] for r in rows), sum(r["BilledCost"] for r in rows)) == idle[(day, currency)]
    # the unallocated portion is exactly the rows without a resource: idle GPUs and `_unallocated` shares
    for r in sim_export.rows:
        tags = json.loads(r["AllocatedTags"])
        unplaced = tags["category"] in ("idle_unallocated", "unattributed") or (
            tags["project"] == "_unallocated" and tags["category"] != "unused_commitment")
        assert (r["AllocatedResourceId"] is None) == unplaced, r


def test_job_rows_carry_the_jobs_team_and_project(sim, sim_export):
    with sim.connect() as con:
        jobs = {(u, d): (j, t, p, e, b) for u, d, j, t, p, e, b in con.execute(
            "SELECT job_uid, day, job_id, team, project, effective_cost, billed_cost "
            "FROM marts.fct_job_cost").fetchall()}
    cost: dict[tuple[str, date], list[D]] = defaultdict(lambda: [D(0), D(0)])
    for r in sim_export.rows:
        if r["AllocatedMethodId"] != NODE_METHOD or r["AllocatedResourceId"] is None:
            continue
        key = (r["AllocatedResourceId"], _origin(r)[1])
        job_id, team, project, _, _ = jobs[key]
        tags = json.loads(r["AllocatedTags"])
        assert (r["AllocatedResourceName"], tags["team"], tags["project"]) == (job_id, team, project), r
        assert tags["category"] in NODE_CATEGORIES
        cost[key][0] += r["EffectiveCost"]
        cost[key][1] += r["BilledCost"]
    assert cost, "no job rows"
    # and each job's rows add up to the job's cost of the day in the ledger, exactly
    for key, (e, b) in cost.items():
        assert (e, b) == jobs[key][3:], key
    assert all(v[3] == 0 for k, v in jobs.items() if k not in cost)


def test_rows_agree_with_the_ledger_cells(sim, sim_export):
    with sim.connect() as con:
        ledger = {(d, t, p, c, cur): (e, b) for d, t, p, c, cur, e, b in con.execute(
            "SELECT day, team, project, category, billing_currency, sum(effective_cost), sum(billed_cost) "
            "FROM marts.fct_cost_daily GROUP BY ALL").fetchall()}
    got: dict[tuple, list[D]] = defaultdict(lambda: [D(0), D(0)])
    for r in sim_export.rows:
        tags = json.loads(r["AllocatedTags"])
        cell = (_origin(r)[1], tags["team"], tags["project"], tags["category"], r["BillingCurrency"])
        got[cell][0] += r["EffectiveCost"]
        got[cell][1] += r["BilledCost"]
    got = {k: tuple(v) for k, v in got.items() if v != [0, 0]}
    assert got == {k: v for k, v in ledger.items() if v != (0, 0)}


def test_allocation_columns_are_well_formed(sim_export):
    ratios: dict[tuple, float] = defaultdict(float)
    for r in sim_export.rows:
        assert r["AllocatedMethodId"] in METHODS
        details = json.loads(r["AllocatedMethodDetails"])
        (element,) = details["Elements"]
        ratios[_origin(r)] += element["AllocatedRatio"]
        if r["AllocatedMethodId"] == NODE_METHOD:
            assert element["UsageUnit"] == "GPU-Hours" and element["UsageQuantity"] >= 0
        assert set(json.loads(r["AllocatedTags"])) == {"team", "project", "category"}
        day = _origin(r)[1]
        start, end = _ts(r["ChargePeriodStart"]), _ts(r["ChargePeriodEnd"])
        assert r["ChargePeriodStart"].endswith("Z") and start.date() == day
        assert start <= end <= datetime(day.year, day.month, day.day) + timedelta(days=1)
        assert r["ChargeCategory"] is not None and r["BillingCurrency"] in ("EUR", "USD")
    assert all(abs(s - 1) < 1e-9 for s in ratios.values()), ratios


def test_parquet_and_csv_hold_the_same_rows(sim_export):
    def text(v) -> str | None:
        if v is None:
            return None
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, datetime):
            assert v.utcoffset() == timedelta(0)
            return v.strftime("%Y-%m-%dT%H:%M:%SZ")
        if isinstance(v, D):
            assert v.as_tuple().exponent == -18     # DECIMAL(38,18), never a float
            return format(v, "f")
        return str(v)

    csv_rows = sorted(tuple(text(r[c]) if c not in ("EffectiveCost", "BilledCost") else format(r[c], "f")
                            for c in FOCUS_COLUMNS) for r in sim_export.rows)
    pq_rows = sorted(tuple(text(r[c]) for c in FOCUS_COLUMNS) for r in sim_export.parquet)
    assert csv_rows == pq_rows


def test_bad_arguments_and_read_only_use(sim, tmp_path):
    with sim.connect() as con:
        with pytest.raises(ValueError, match=r"\.csv or \.parquet"):
            export_focus(con, sim.days[0], sim.days[0], tmp_path / "focus.json")
        with pytest.raises(ValueError, match="empty date range"):
            export_focus(con, sim.days[1], sim.days[0], tmp_path / "focus.csv")
        with pytest.raises(ValueError, match="2026-11-04"):
            export_focus(con, sim.days[0], date(2026, 11, 4), tmp_path / "focus.csv")
        assert not (tmp_path / "focus.csv").exists()
        # one day alone gives that day's rows; the temp tables are gone afterwards
        n = export_focus(con, sim.days[1], sim.days[1], tmp_path / "one.parquet")
        assert n == pq.read_metadata(tmp_path / "one.parquet").num_rows > 0
        temps = con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall()
        assert temps == []


# --- one node whose hours are priced by several lines, and every kind of other line ------------------
#
# Node m1 (8 GPUs, pool-m owned by team infra), 2026-11-02 00:00–06:00. Each hour is priced by an
# on-demand line ($20.000000000000000001) and a committed line (EffectiveCost $7.777777777777777777,
# BilledCost 0, savings plan sp-9); hours 03 and 04 also by a line covering 03:30–05:00
# ($1.500000000000000001). Job 9001 (p1 → ml) holds all 8 GPUs 00:00–02:20, busy; job 9002 (p2 →
# research) holds GPUs 0–3 03:00–05:30, busy until 04:00, then idle. So per hour the GPU-seconds are
#   00, 01: 9001 28800 | 02: 9001 9600, idle 19200 | 03: 9002 14400 productive, idle 14400
#   04: 9002 14400 allocated_idle, idle 14400       | 05: 9002 7200 allocated_idle, idle 21600
# Beside it: sp-9's Unused rows and its Purchase, an untagged networking line (shared), a two-day
# storage line of p1, tax, an untagged and a p2-tagged credit, an instance of no known node, and a
# row with a bad ChargeCategory (quarantined with its money).

DAY = date(2026, 11, 2)
WEIGHTS = {  # hour → {(job or None, category): GPU-seconds}
    0: {("9001", "productive"): 28800},
    1: {("9001", "productive"): 28800},
    2: {("9001", "productive"): 9600, (None, "idle_unallocated"): 19200},
    3: {("9002", "productive"): 14400, (None, "idle_unallocated"): 14400},
    4: {("9002", "allocated_idle"): 14400, (None, "idle_unallocated"): 14400},
    5: {("9002", "allocated_idle"): 7200, (None, "idle_unallocated"): 21600},
}


def build_multi(root: Path) -> Landing:
    L = Landing(root)
    L.config = {"teams": {"ml": {"projects": ["p1"]}, "research": {"projects": ["p2"]}},
                "slurm_accounts": {"acct1": "p1", "acct2": "p2"}, "clusters": {"c1": {"timezone": "UTC"}},
                "quarantine": {"max_share": 1.0}}
    L.node("m1", pool="pool-m", team="infra")
    node_tags = {"node": "m1", "cluster": "c1"}
    L.node_hours("m1", utc(2026, 11, 2), 6, D("20.000000000000000001"))
    for h in range(6):
        L.line(utc(2026, 11, 2, h), utc(2026, 11, 2, h + 1), "Usage", D("7.777777777777777777"), D("0"),
               resource_id="i-m1", resource_type="instance", service="Compute", pricing="Committed",
               cd_id="sp-9", cd_status="Used", tags=node_tags)
        L.line(utc(2026, 11, 2, h), utc(2026, 11, 2, h + 1), "Usage", D("0.333333333333333333"), D("0"),
               resource_id="sp-9", resource_type="Savings Plan", service="Compute", pricing="Committed",
               cd_id="sp-9", cd_status="Unused")
    L.line(utc(2026, 11, 2, 3, 30), utc(2026, 11, 2, 5), "Usage", D("1.500000000000000001"),
           resource_id="i-m1", resource_type="instance", service="Compute", tags=node_tags)
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Purchase", D("0"), D("50"), resource_id="sp-9",
           resource_type="Savings Plan", service="Compute", cd_id="sp-9")
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Usage", D("3.000000000000000001"), service="Networking")
    L.line(utc(2026, 11, 1, 12), utc(2026, 11, 3, 12), "Usage", D("9.99"), resource_id="vol-1",
           resource_type="volume", service="Storage", tags={"project": "p1"})
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Tax", D("5.55"))
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Credit", D("-1.11"))
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Credit", D("-0.50"), tags={"project": "p2"})
    L.line(utc(2026, 11, 2), utc(2026, 11, 2, 6), "Usage", D("4.00"), resource_id="i-unknown",
           resource_type="instance", service="Compute")
    L.line(utc(2026, 11, 2), utc(2026, 11, 2, 1), "Bogus", D("2.22"))
    L.job("c1", "9001", account="acct1", start="2026-11-02T00:00:00", end="2026-11-02T02:20:00",
          state="COMPLETED", host="m1")
    L.job("c1", "9002", account="acct2", start="2026-11-02T03:00:00", end="2026-11-02T05:30:00",
          state="COMPLETED", host="m1", gpus=4)
    L.telemetry("m1", [DAY], [
        Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 2, 20), "9001", True),
        Activity(utc(2026, 11, 2, 3), utc(2026, 11, 2, 4), "9002", True, gpus=(0, 1, 2, 3)),
        Activity(utc(2026, 11, 2, 4), utc(2026, 11, 2, 5, 30), "9002", False, gpus=(0, 1, 2, 3)),
    ])
    return L


@pytest.fixture(scope="module")
def multi(tmp_path_factory):
    L = build_multi(tmp_path_factory.mktemp("focus_multi"))
    L.write()
    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [DAY])
    with duckdb.connect(str(L.warehouse), read_only=True) as con:
        assert max(n for (n,) in con.execute(
            "SELECT len(line_keys) FROM intermediate.int_node_hours").fetchall()) == 3   # the case under test
        quarantined = con.execute("SELECT count(*) FROM ops.quarantine").fetchall()[0][0]
        assert quarantined == 1
        export = _export(con, [DAY], L.root)
    return L, export


def test_multi_line_node_hours_sum_exactly_per_line(multi):
    L, export = multi
    _assert_origins_exact(export, L.landing, [DAY])
    assert sum(r["EffectiveCost"] for r in export.rows) == day_shares(L.landing)[(DAY, "USD")][0]


def test_multi_line_node_hours_follow_the_gpu_seconds(multi):
    """Each node line's rows are its hourly pieces split by that hour's GPU-seconds: within 2e-18 per
    hour of the exact proportion (largest remainder over running sums of the hour's lines)."""
    L, export = multi
    hours = line_hour_shares(L.landing)
    node_keys = {_origin(r)[0] for r in export.rows if r["AllocatedMethodId"] == NODE_METHOD}
    assert len(node_keys) == 13
    got = {(_origin(r)[0], r["AllocatedResourceName"], json.loads(r["AllocatedTags"])["category"]):
           (r["EffectiveCost"], r["BilledCost"], json.loads(r["AllocatedMethodDetails"])["Elements"][0])
           for r in export.rows if r["AllocatedMethodId"] == NODE_METHOD}
    for key in node_keys:
        rel, n = key.rsplit("#", 1)
        pieces = hours[(rel, int(n))]
        want: dict[tuple, list[Fraction]] = defaultdict(lambda: [Fraction(0), Fraction(0), Fraction(0)])
        for hour, (e, b) in pieces.items():
            w = WEIGHTS[hour.hour]
            total = sum(w.values())
            for (job, category), s in w.items():
                want[(key, job, category)][0] += Fraction(e * s, total)
                want[(key, job, category)][1] += Fraction(b * s, total)
                want[(key, job, category)][2] += Fraction(s, 3600)
        assert {k for k in got if k[0] == key} == set(want), key
        for k, (e, b, hours_used) in want.items():
            ge, gb, element = got[k]
            assert abs(Fraction(ge / UNIT) - e) < 2 * len(pieces), k
            assert abs(Fraction(gb / UNIT) - b) < 2 * len(pieces), k
            assert element["UsageUnit"] == "GPU-Hours" and element["UsageQuantity"] == pytest.approx(float(hours_used))


def test_multi_other_lines_by_method(multi):
    L, export = multi
    by_method = defaultdict(list)
    for r in export.rows:
        if r["AllocatedMethodId"] != NODE_METHOD:
            by_method[r["AllocatedMethodId"]].append(r)
    # sp-9's unused rows go to the team owning the pool its node is in
    owner = by_method["gpuledger-commitment-owner"]
    assert {(r["AllocatedResourceId"], r["CommitmentDiscountStatus"]) for r in owner} == {("infra", "Unused")}
    assert sum(r["EffectiveCost"] for r in by_method["gpuledger-commitment-owner"]) == 6 * D("0.333333333333333333")
    # tagged: the storage line's day (half of 48 h) to p1, the tagged credit to p2
    assert sorted((r["AllocatedResourceId"], r["ChargeCategory"], r["EffectiveCost"])
                  for r in by_method["gpuledger-tag"]) == [("p1", "Usage", D("4.995")), ("p2", "Credit", D("-0.50"))]
    # shared (the networking line and the Purchase's BilledCost) by GPU cost: only p1 and p2 used GPUs
    shared = by_method["gpuledger-proportional-gpu-cost"]
    assert {r["AllocatedResourceId"] for r in shared} == {"p1", "p2"}
    assert sum(r["BilledCost"] for r in shared) == D("53.000000000000000001")
    # tax and the untagged credit by pre-tax cost, including the `_unallocated` shares (NULL resource)
    pretax = by_method["gpuledger-proportional-pretax"]
    assert {r["AllocatedResourceId"] for r in pretax} == {"p1", "p2", None}
    assert sum(r["EffectiveCost"] for r in pretax) == D("5.55") - D("1.11")
    # unknown instance and the quarantined row: one unallocated row each
    unplaced = by_method["gpuledger-unattributed"]
    assert sorted((r["AllocatedResourceId"], r["x_OriginQuarantined"], r["EffectiveCost"]) for r in unplaced) == [
        (None, "false", D("4.00")), (None, "true", D("2.22"))]
