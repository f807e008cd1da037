"""The FOCUS 1.3 split-cost allocation export (pipelines/exports/focus.py, docs/operations.md#the-focus-export).

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
from decimal import localcontext
from fractions import Fraction
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.exports import FOCUS_COLUMNS, export_focus
from tests.support.bill_truth import (UNIT, _ts, bill_lines, day_shares, line_currencies, line_hour_metric_units,
                                      line_hour_units)
from tests.support.pipeline import run_pipeline
from tests.support.scenario_builder import Activity, Landing, utc

NODE_METHOD = "gpuledger-gpu-seconds"
METHODS = {NODE_METHOD, "gpuledger-tag", "gpuledger-proportional-gpu-cost", "gpuledger-proportional-pretax",
           "gpuledger-commitment-owner", "gpuledger-unattributed", "gpuledger-storage-bytes"}
NODE_CATEGORIES = {"productive", "rerun_loss", "allocated_idle", "failed_job", "unmonitored"}

# FOCUS 1.2's Mandatory columns, from the "Feature level" of each column file of the spec (FOCUS_Spec v1.2,
# the FinOps Foundation publishes), not from the code under test.
FOCUS_1_2_MANDATORY = (
    "BilledCost", "BillingAccountId", "BillingAccountName", "BillingCurrency", "BillingPeriodEnd",
    "BillingPeriodStart", "ChargeCategory", "ChargeClass", "ChargeDescription", "ChargePeriodEnd",
    "ChargePeriodStart", "ContractedCost", "EffectiveCost", "InvoiceIssuerName", "ListCost", "PricingQuantity",
    "PricingUnit", "ProviderName", "PublisherName", "ServiceCategory", "ServiceName",
)
# FOCUS 1.3's new Mandatory columns, and the columns of its data generator-calculated split cost allocation
FOCUS_1_3_ADDED = ("HostProviderName", "ServiceProviderName", "AllocatedMethodId", "AllocatedMethodDetails",
                   "AllocatedResourceId", "AllocatedResourceName", "AllocatedTags")
# columns the spec says MUST NOT be null (1.2, and HostProviderName/ServiceProviderName in 1.3)
NOT_NULL = ("BilledCost", "EffectiveCost", "ListCost", "ContractedCost", "BillingAccountId", "BillingCurrency",
            "BillingPeriodStart", "BillingPeriodEnd", "ChargeCategory", "ChargePeriodStart", "ChargePeriodEnd",
            "ProviderName", "PublisherName", "InvoiceIssuerName", "ServiceCategory", "ServiceName",
            "HostProviderName", "ServiceProviderName")
# summable metrics: costs and quantities (DECIMAL(38,18)), and those the ledger does not split itself
METRICS = ("PricingQuantity", "ConsumedQuantity", "ListCost", "ContractedCost", "EffectiveCost", "BilledCost")
SPLIT = ("ListCost", "ContractedCost", "PricingQuantity", "ConsumedQuantity")


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
    schema: pa.Schema


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
            r |= {c: D(r[c]) for c in METRICS if r[c] is not None}
            rows.append(r)
    table = pq.read_table(out_dir / "focus.parquet")
    return Export(rows, header, n_csv, table.to_pylist(), n_pq, table.schema)


@pytest.fixture(scope="module")
def sim(simulated_ledger):
    return simulated_ledger


@pytest.fixture(scope="module")
def sim_export(sim, tmp_path_factory) -> Export:
    with sim.connect() as con:   # read-only: the export writes TEMP tables only
        return _export(con, sim.days, tmp_path_factory.mktemp("focus_sim_out"))


def _bill_rows(rows: list[dict]) -> list[dict]:
    """The rows whose origin is a bill line (not a cost line the config generated)."""
    return [r for r in rows if r["x_CostSource"] == "bill"]


def _assert_origins_exact(export: Export, landing: Path, days: list[date]) -> None:
    want = line_day_shares(landing, days)
    got: dict[tuple[str, date], list[D]] = defaultdict(lambda: [D(0), D(0)])
    for r in _bill_rows(export.rows):
        got[_origin(r)][0] += r["EffectiveCost"]
        got[_origin(r)][1] += r["BilledCost"]
    assert set(got) == set(want)    # one or more rows for every line's piece of every day, nothing else
    for key, (e, b) in want.items():
        assert tuple(got[key]) == (e, b), key


def _units(v: D) -> int:
    with localcontext(prec=100):
        return int(v.scaleb(18))


def _by_origin(export: Export, bill_only: bool = False) -> dict[tuple[str, date], list[dict]]:
    rows: dict[tuple[str, date], list[dict]] = defaultdict(list)
    for r in _bill_rows(export.rows) if bill_only else export.rows:
        rows[_origin(r)].append(r)
    return rows


def _assert_split_metrics_exact(export: Export, landing: Path) -> int:
    """ListCost, ContractedCost, PricingQuantity and ConsumedQuantity of each origin's rows sum exactly to
    the line's share of the day (cut over its hours like EffectiveCost, tests/support/bill_truth.py); NULL on every
    row where the line has none, or is quarantined (its columns are not staged). Returns the sums checked."""
    checked = 0
    for column in SPLIT:
        hours = line_hour_metric_units(landing, column)
        for (key, day), rows in _by_origin(export, bill_only=True).items():
            rel, n = key.rsplit("#", 1)
            line = hours[(rel, int(n))]
            values = [r[column] for r in rows]
            if rows[0]["x_OriginQuarantined"] == "true" or line is None:
                assert values == [None] * len(values), (column, key, day)
                continue
            want = sum(u for h, u in line.items() if h.date() == day)
            assert None not in values and sum(_units(v) for v in values) == want, (column, key, day)
            checked += 1
    return checked


def _assert_split_follows_the_cost(export: Export) -> int:
    """Each row's share of a split metric is its share of the origin's EffectiveCost (BilledCost where
    that is 0): within 2e-18 plus 1e-18 of the metric per piece and per 1e18 of the basis' units; and
    exactly the row's own EffectiveCost (BilledCost) where the metric equals it at the origin. Returns the
    rows checked."""
    checked = 0
    for key, rows in _by_origin(export).items():
        if rows[0]["x_OriginQuarantined"] == "true":
            continue
        basis = next((b for b in ("EffectiveCost", "BilledCost") if sum(r[b] for r in rows) != 0), None)
        if basis is None:
            continue
        total = sum(_units(r[basis]) for r in rows)
        for column in SPLIT:
            if rows[0][column] is None:
                continue
            amount = sum(_units(r[column]) for r in rows)
            slack = 2 + Fraction(abs(amount) * len(rows), 10**18) + Fraction(abs(amount) * len(rows), abs(total))
            for r in rows:
                exact = Fraction(amount * _units(r[basis]), total)
                assert abs(_units(r[column]) - exact) <= slack, (column, key, r)
                if amount == total:
                    assert r[column] == r[basis], (column, key, r)
                checked += 1
    return checked


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
    for r in _bill_rows(sim_export.rows):
        got[(_origin(r)[1], r["BillingCurrency"])][0] += r["EffectiveCost"]
        got[(_origin(r)[1], r["BillingCurrency"])][1] += r["BilledCost"]
    assert {k: tuple(v) for k, v in got.items()} == bill


def test_rows_keep_their_origin_lines_currency(sim, sim_export):
    currencies = {f"{rel}#{n}": c for (rel, n), c in line_currencies(sim.landing).items()}
    for r in _bill_rows(sim_export.rows):
        assert r["BillingCurrency"] == currencies[_origin(r)[0]], r
    assert {r["BillingCurrency"] for r in sim_export.rows} == {"EUR", "USD"}


def test_unallocated_node_rows_are_the_ledgers_idle(sim, sim_export):
    with sim.connect() as con:
        idle = {(d, c): (e, b) for d, c, e, b in con.execute(
            "SELECT day, billing_currency, sum(effective_cost), sum(billed_cost) FROM marts.fct_cost_daily "
            "WHERE category = 'idle_unallocated' AND cost_source = 'bill' GROUP BY ALL").fetchall()}
    assert {c for _, c in idle} == {"EUR", "USD"}
    for day, currency in idle:
        rows = [r for r in _bill_rows(sim_export.rows)
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
    costed_by_config: set[tuple[str, date]] = set()
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
        if r["x_CostSource"] != "bill":
            costed_by_config.add(key)
    assert cost and costed_by_config, "no job rows, or none on the nodes the config costs"
    # and each job's rows add up to the job's cost of the day in the ledger, exactly; BilledCost too on
    # billed nodes (a depreciation row bills nothing, where the ledger keeps billed = effective)
    for key, (e, b) in cost.items():
        assert e == jobs[key][3], key
        if key not in costed_by_config:
            assert b == jobs[key][4], key
    assert all(v[3] == 0 for k, v in jobs.items() if k not in cost)


def test_rows_agree_with_the_ledger_cells(sim, sim_export):
    """Every cell of marts.fct_cost_daily (day, team, project, category, currency, cost source) is the sum of
    the export's rows, exactly: EffectiveCost of every source, BilledCost of the bill's."""
    with sim.connect() as con:
        ledger = {(d, t, p, c, cur, s): (e, b) for d, t, p, c, cur, s, e, b in con.execute(
            "SELECT day, team, project, category, billing_currency, cost_source, sum(effective_cost), "
            "sum(billed_cost) FROM marts.fct_cost_daily GROUP BY ALL").fetchall()}
    assert {k[5] for k in ledger} == {"bill", "rate_card", "amortization", "energy"}
    got: dict[tuple, list[D]] = defaultdict(lambda: [D(0), D(0)])
    for r in sim_export.rows:
        tags = json.loads(r["AllocatedTags"])
        cell = (_origin(r)[1], tags["team"], tags["project"], tags["category"], r["BillingCurrency"],
                r["x_CostSource"])
        got[cell][0] += r["EffectiveCost"]
        got[cell][1] += r["BilledCost"]
    got = {k: (e, b if k[5] == "bill" else None) for k, (e, b) in got.items() if (e, b) != (0, 0)}
    assert got == {k: (e, b if k[5] == "bill" else None) for k, (e, b) in ledger.items() if (e, b) != (0, 0)}


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

    def order(row: tuple) -> tuple:       # NULLs first, never compared with text
        return tuple((v is not None, v or "") for v in row)

    csv_rows = sorted((tuple(text(r[c]) if c not in METRICS or r[c] is None else format(r[c], "f")
                             for c in FOCUS_COLUMNS) for r in sim_export.rows), key=order)
    pq_rows = sorted((tuple(text(r[c]) for c in FOCUS_COLUMNS) for r in sim_export.parquet), key=order)
    assert csv_rows == pq_rows


def test_every_mandatory_focus_column_is_present(sim_export):
    for columns in (sim_export.header, sim_export.schema.names):
        assert [c for c in (*FOCUS_1_2_MANDATORY, *FOCUS_1_3_ADDED) if c not in columns] == []
        # custom columns carry the x_ prefix and come after every FOCUS column
        custom = [i for i, c in enumerate(columns) if c.startswith("x_")]
        assert custom == list(range(len(columns) - len(custom), len(columns)))


def test_parquet_columns_have_focus_types(sim_export):
    for field in sim_export.schema:
        if field.name in METRICS:
            assert field.type == pa.decimal128(38, 18), field        # Decimal, never a float
        elif field.name in ("BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd"):
            assert pa.types.is_timestamp(field.type) and field.type.tz == "UTC", field
        elif field.name != "x_OriginQuarantined":
            assert field.type == pa.string(), field                    # ids like 481516234200 stay text


def test_mandatory_columns_are_filled(sim_export):
    rows = [r for r in sim_export.parquet if not r["x_OriginQuarantined"]]
    assert rows
    for r in rows:
        assert [c for c in NOT_NULL if r[c] is None] == [], r
        # PricingQuantity: null on Tax, present on Usage and Purchase that correct nothing
        if r["ChargeCategory"] == "Tax":
            assert r["PricingQuantity"] is None, r
        elif r["ChargeCategory"] in ("Usage", "Purchase") and r["ChargeClass"] is None:
            assert r["PricingQuantity"] is not None, r


# The simulated bills' spellings FOCUS constrains, and the export's (docs/focus-export.md#values-focus-constrains):
# UnitFormat's `<singular-unit>-<plural-time-units>` and `<plural-units>`, printable ASCII text.
FOCUS_UNITS = {"GB-Month": "GB-Months", "Month": "Months"}


def _focus_description(text: str | None) -> str | None:
    return text and text.replace("€4", "EUR 4")     # the EUR provider's "€40.96575 per On Demand …"


def test_dimensions_are_the_origin_lines(sim, sim_export):
    lines = {f"{rel}#{n}": row for rel, n, row in bill_lines(sim.landing)}
    carried = ("BillingAccountId", "BillingAccountName", "SubAccountId", "SubAccountName", "ProviderName",
               "PublisherName", "InvoiceIssuerName", "InvoiceId", "ServiceCategory", "ServiceName", "RegionId",
               "SkuId", "ChargeFrequency", "PricingCategory")
    bill_rows = _bill_rows(sim_export.parquet)
    respelled = set()
    for r in bill_rows:
        line = lines[r["x_OriginLineKey"]]
        assert {c: r[c] for c in carried} == {c: line[c] or None for c in carried}, r["x_OriginLineKey"]
        # units and descriptions as FOCUS spells them; the bills name no ServiceSubcategory: their
        # category's `Other (…)`
        for c in ("PricingUnit", "ConsumedUnit"):
            assert r[c] == FOCUS_UNITS.get(line[c], line[c] or None), (c, r["x_OriginLineKey"])
        assert r["ChargeDescription"] == _focus_description(line["ChargeDescription"] or None), r["x_OriginLineKey"]
        assert not line.get("ServiceSubcategory") and r["ServiceSubcategory"] == f"Other ({r['ServiceCategory']})"
        if r["PricingUnit"] != (line["PricingUnit"] or None):
            respelled.add(line["PricingUnit"])
        if r["ChargeDescription"] != (line["ChargeDescription"] or None):
            respelled.add("description")
        # the bill names no host provider: the service provider hosts its own services
        assert r["ServiceProviderName"] == r["HostProviderName"] == line["ProviderName"]
    assert respelled == {"GB-Month", "Month", "description"}     # the cases under test are in the simulated bills
    assert {r["InvoiceIssuerName"] for r in bill_rows} == {"AWS", "Kestrel GPU Cloud"}


def test_split_metrics_sum_exactly_to_their_origin(sim, sim_export):
    assert _assert_split_metrics_exact(sim_export, sim.landing) > 0


def test_split_metrics_follow_the_rows_cost(sim_export):
    assert _assert_split_follows_the_cost(sim_export) > 0
    node_rows = [r for r in sim_export.rows if r["AllocatedMethodId"] == NODE_METHOD]
    # committed node hours: ContractedCost is the EffectiveCost, ListCost the on-demand price above it
    assert any(r["ContractedCost"] == r["EffectiveCost"] < r["ListCost"] for r in node_rows)


# --- the config's cost lines of the simulated fleet (its off-bill clusters, simulator/offbill.py) -------

def _config_origins(export: Export) -> dict[tuple[str, date], list[dict]]:
    rows: dict[tuple[str, date], list[dict]] = defaultdict(list)
    for r in export.rows:
        if r["x_CostSource"] != "bill":
            rows[_origin(r)].append(r)
    return rows


def test_config_cost_lines_are_origins_split_exactly(sim, sim_export):
    """Each cost line the config generated (a node's rate card day, an owned node's depreciation and facility
    month, an energy node-hour) is an origin: its rows sum exactly to the line's piece of the day in the
    ledger (BilledCost 0 for depreciation: an amortized purchase is not invoiced again); per day, currency and
    cost source the export is marts.fct_cost_daily exactly; and per day and source it is what the
    simulator says the nodes cost (truth/costs.csv: rate card and amortization to 1e-8, energy within 1 %)."""
    with sim.connect() as con:
        lines = {(k, d): (s, basis, host, e, b) for k, d, s, basis, host, e, b in con.execute(
            "SELECT line_key, day, any_value(cost_source), any_value(cost_basis), any_value(hostname), "
            "sum(effective_cost), sum(billed_cost) FROM intermediate.int_config_cost_lines GROUP BY ALL").fetchall()}
        ledger = {(d, c, s): (e, b) for d, c, s, e, b in con.execute(
            "SELECT day, billing_currency, cost_source, sum(effective_cost), sum(billed_cost) "
            "FROM marts.fct_cost_daily GROUP BY ALL").fetchall()}
        depreciation = dict(con.execute(
            "SELECT day, sum(billed_cost) FROM marts.fct_config_cost_daily WHERE cost_basis = 'depreciation' "
            "GROUP BY ALL").fetchall())
    config = _config_origins(sim_export)
    assert set(config) == set(lines) and {s for s, *_ in lines.values()} == {"rate_card", "amortization", "energy"}
    for key, rows in config.items():
        source, basis, _, e, b = lines[key]
        assert {r["x_CostSource"] for r in rows} == {source}, key
        assert sum(r["EffectiveCost"] for r in rows) == e, key
        assert sum(r["BilledCost"] for r in rows) == (0 if basis == "depreciation" else b), key
    totals: dict[tuple, list[D]] = defaultdict(lambda: [D(0), D(0)])
    for r in sim_export.rows:
        cell = totals[(_origin(r)[1], r["BillingCurrency"], r["x_CostSource"])]
        cell[0] += r["EffectiveCost"]
        cell[1] += r["BilledCost"]
    assert set(totals) == set(ledger)
    for (day, currency, source), (e, b) in ledger.items():
        want_billed = b - depreciation[day] if source == "amortization" else b
        assert tuple(totals[(day, currency, source)]) == (e, want_billed), (day, currency, source)
    truth: dict[tuple[str, str], D] = defaultdict(D)
    with (sim.root / "truth" / "costs.csv").open() as fh:
        for t in csv.DictReader(fh):
            truth[(t["day"], t["cost_source"])] += D(t["cost"])
    for (day, source), want in truth.items():
        have = totals[(date.fromisoformat(day), "USD", source)][0]
        slack = D("0.01") * want if source == "energy" else D("1e-8")
        assert abs(have - want) <= slack, (day, source, want, have)


def test_config_cost_lines_dimensions_and_quantities(sim, sim_export):
    """The config's lines' FOCUS columns (docs/focus-export.md#cost-lines-from-the-config): the config entry as
    the sub-account, the node's cluster as provider, no invoice; list and contracted cost are the cost itself;
    PricingQuantity is what the line prices — a rate card node-day 8 GPUs × 24 h, an owned node's month 24 h
    of the day, an energy node-hour its facility kWh — split over the rows exactly."""
    with sim.connect() as con:
        kwh = {(h, t): k for h, t, k in con.execute(
            "SELECT hostname, hour_ts, kwh FROM intermediate.int_node_hour_energy").fetchall()}
    config = _config_origins(sim_export)
    seen = set()
    for (key, day), rows in config.items():
        first = rows[0]
        basis = json.loads(key)[0]
        host = json.loads(key)[2] if basis != "contract" else None
        cluster = host.split("-gpu-")[0]
        seen.add((basis, first["SubAccountId"], first["PricingUnit"]))
        for r in rows:
            assert r["ListCost"] == r["ContractedCost"] == r["EffectiveCost"], r
            # no provider invoices them: the ledger's monthly statement of them, per currency
            assert (r["ChargeCategory"], r["ChargeClass"], r["InvoiceId"], r["BillingAccountId"]) == \
                ("Usage", None, f"gpuledger-config-{day:%Y-%m}-{r['BillingCurrency']}", "gpuledger-config"), r
            assert r["ProviderName"] == r["ServiceProviderName"] == r["HostProviderName"] == r["PublisherName"] \
                == r["InvoiceIssuerName"] == cluster, r
            assert (r["ResourceId"], r["ResourceName"]) == (host, host), r
            assert r["ConsumedUnit"] == r["PricingUnit"], r
        quantity = sum(r["PricingQuantity"] for r in rows)
        assert quantity == sum(r["ConsumedQuantity"] for r in rows)
        if basis == "energy":
            hour = datetime.strptime(json.loads(key)[3], "%Y-%m-%dT%H")
            assert quantity == kwh[(host, hour)], key
        else:
            assert quantity == {"rate_card": 8 * 24, "depreciation": 24, "facility": 24}[basis], key
    assert seen == {("rate_card", "costs.rate_cards[0]", "GPU-Hours"), ("depreciation", "costs.owned[0]", "Hours"),
                    ("facility", "costs.owned[0]", "Hours"), ("energy", "costs.energy", "kWh")}


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
# row with a bad ChargeCategory (quarantined with its money). Every line names its accounts and issuer
# (`_names`) and carries ListCost, ContractedCost and quantities (`_metrics`): some equal to its
# EffectiveCost, some not, quantities of 1e12 and 1e14 (1e30 units and more) on a line split over hours
# and over projects.

DAY = date(2026, 11, 2)
WEIGHTS = {  # hour → {(job or None, category): GPU-seconds}
    0: {("9001", "productive"): 28800},
    1: {("9001", "productive"): 28800},
    2: {("9001", "productive"): 9600, (None, "idle_unallocated"): 19200},
    3: {("9002", "productive"): 14400, (None, "idle_unallocated"): 14400},
    4: {("9002", "allocated_idle"): 14400, (None, "idle_unallocated"): 14400},
    5: {("9002", "allocated_idle"): 7200, (None, "idle_unallocated"): 21600},
}


ACCOUNT = {"BillingAccountId": "000123456789", "BillingAccountName": "acme-payer", "ProviderName": "Acme Cloud",
           "PublisherName": "Acme Marketplace Seller", "InvoiceIssuerName": "Acme Cloud Inc.",
           "SubAccountId": "0042", "SubAccountName": "ml-sub", "InvoiceId": "INV-000123-2026-11"}


def _metrics(list_cost: str, contracted: str, quantity: str | None = None, consumed: str | None = None) -> dict:
    m = {**ACCOUNT, "ListCost": list_cost, "ContractedCost": contracted}
    quantities = {"PricingQuantity": quantity, "ConsumedQuantity": consumed}
    return m | {k: v for k, v in quantities.items() if v}


def build_multi(root: Path) -> Landing:
    L = Landing(root)
    L.config = {"teams": {"ml": {"projects": ["p1"]}, "research": {"projects": ["p2"]}},
                "slurm_accounts": {"acct1": "p1", "acct2": "p2"}, "clusters": {"c1": {"timezone": "UTC"}},
                "quarantine": {"max_share": 1.0}}
    L.node("m1", pool="pool-m", team="infra")
    node_tags = {"node": "m1", "cluster": "c1"}
    L.node_hours("m1", utc(2026, 11, 2), 6, D("20.000000000000000001"),
                 extra=_metrics("25.000000000000000003", "20.000000000000000001", "1", "1"))
    for h in range(6):
        L.line(utc(2026, 11, 2, h), utc(2026, 11, 2, h + 1), "Usage", D("7.777777777777777777"), D("0"),
               resource_id="i-m1", resource_type="instance", service="Compute", pricing="Committed",
               cd_id="sp-9", cd_status="Used", tags=node_tags,
               extra=_metrics("25.000000000000000003", "25.000000000000000003", "1", "1"))
        L.line(utc(2026, 11, 2, h), utc(2026, 11, 2, h + 1), "Usage", D("0.333333333333333333"), D("0"),
               resource_id="sp-9", resource_type="Savings Plan", service="Compute", pricing="Committed",
               cd_id="sp-9", cd_status="Unused", extra=_metrics("0.333333333333333333", "0.333333333333333333", "0.25"))
    L.line(utc(2026, 11, 2, 3, 30), utc(2026, 11, 2, 5), "Usage", D("1.500000000000000001"),
           resource_id="i-m1", resource_type="instance", service="Compute", tags=node_tags,
           extra=_metrics("2.000000000000000007", "1.500000000000000001", "1.5", "1.5"))
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Purchase", D("0"), D("50"), resource_id="sp-9",
           resource_type="Savings Plan", service="Compute", cd_id="sp-9", extra=_metrics("50", "50", "24"))
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Usage", D("3.000000000000000001"), service="Networking",
           extra=_metrics("4", "3.000000000000000001", "98765432109876.5", "98765432109876.5"))
    L.line(utc(2026, 11, 1, 12), utc(2026, 11, 3, 12), "Usage", D("9.99"), resource_id="vol-1",
           resource_type="volume", service="Storage", tags={"project": "p1"},
           extra=_metrics("12.345678901234567891", "9.99", "1234567890123.5", "1234567890123.5"))
    # from 23:30 the day before: 2 of its 2.5 hours (and of each amount) are the day's
    L.line(utc(2026, 11, 1, 23, 30), utc(2026, 11, 2, 2), "Usage", D("2.5"), resource_id="vol-2",
           resource_type="volume", service="Storage", tags={"project": "p1"},
           extra=_metrics("3.1", "2.5", "2.5", "2.5"))
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Tax", D("5.55"), extra=_metrics("5.55", "5.55"))
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Credit", D("-1.11"), extra=_metrics("-1.11", "-1.11"))
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Credit", D("-0.50"), tags={"project": "p2"},
           extra=_metrics("-0.5", "-0.5"))
    L.line(utc(2026, 11, 2), utc(2026, 11, 2, 6), "Usage", D("4.00"), resource_id="i-unknown",
           resource_type="instance", service="Compute", extra=_metrics("4.4", "4", "6", "6"))
    L.line(utc(2026, 11, 2), utc(2026, 11, 2, 1), "Bogus", D("2.22"), extra=_metrics("2.22", "2.22"))
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
    # tagged: the storage lines' day (half of 48 h; 2 of 2.5 h) to p1, the tagged credit to p2
    assert sorted((r["AllocatedResourceId"], r["ChargeCategory"], r["EffectiveCost"])
                  for r in by_method["gpuledger-tag"]) == [("p1", "Usage", D("2.0")), ("p1", "Usage", D("4.995")),
                                                           ("p2", "Credit", D("-0.50"))]
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


def test_multi_split_metrics_sum_exactly_and_follow_the_cost(multi):
    L, export = multi
    # 27 staged lines with ListCost and ContractedCost; PricingQuantity on all but tax and credits (24),
    # ConsumedQuantity also not on the unused commitment and the purchase (17); the quarantined line: none
    assert _assert_split_metrics_exact(export, L.landing) == 27 + 27 + 24 + 17
    # the line from 23:30 the day before: 2/2.5 of it is the day's, by time as EffectiveCost is
    (late,) = [r for r in export.rows if r["ResourceId"] == "vol-2"]
    assert (late["EffectiveCost"], late["ListCost"], late["PricingQuantity"]) == (D("2"), D("2.48"), D("2"))
    assert _assert_split_follows_the_cost(export) > 0
    # the shared networking line's 98765432109876.5 GB split over the projects by GPU cost, exactly
    shared = [r for r in export.rows if r["AllocatedMethodId"] == "gpuledger-proportional-gpu-cost"
              and r["ChargeCategory"] == "Usage"]
    assert len(shared) == 2 and sum(r["PricingQuantity"] for r in shared) == D("98765432109876.5")
    # the storage line's day is half its hours: half its 1234567890123.5 GB-months and its ListCost, to the
    # 1e-18 of each of its 24 hours (each hour's piece is rounded to 1e-18)
    (storage,) = [r for r in export.rows if r["ResourceId"] == "vol-1"]
    assert abs(storage["PricingQuantity"] - D("617283945061.75")) <= 24 * UNIT
    assert abs(storage["ListCost"] - D("12.345678901234567891") / 2) <= 24 * UNIT


def test_multi_names_and_ids_are_the_bills_text(multi):
    L, export = multi
    for rows in (export.rows, export.parquet):
        for r in rows:
            if r["x_OriginQuarantined"] in (True, "true"):
                assert r["BillingAccountId"] is r["PublisherName"] is r["ListCost"] is None
                # but it is on the bill's invoice: its InvoiceId is the quarantined row's own
                assert r["InvoiceId"] == ACCOUNT["InvoiceId"], r
                continue
            assert {c: r[c] for c in ACCOUNT} == ACCOUNT, r   # 000123456789 stays text, zeros and all
            assert r["HostProviderName"] == r["ServiceProviderName"] == "Acme Cloud"


def test_export_of_an_older_warehouse_says_what_to_do(sim, tmp_path):
    import shutil

    old = tmp_path / "old.duckdb"
    shutil.copy(sim.warehouse, old)
    with duckdb.connect(str(old)) as con:
        con.execute("ALTER TABLE staging.stg_focus__bill_lines DROP COLUMN publisher_name")
    with duckdb.connect(str(old), read_only=True) as con:
        with pytest.raises(ValueError, match=r"lack column\(s\) publisher_name .*`gpuledger run`"):
            export_focus(con, sim.days[0], sim.days[0], tmp_path / "focus.csv")
    assert not (tmp_path / "focus.csv").exists()


@pytest.mark.parametrize("older", ["DROP TABLE ops.landing_sources", "DELETE FROM ops.landing_sources"])
def test_export_of_a_warehouse_that_does_not_say_its_bills_says_what_to_do(sim, tmp_path, older):
    """Quarantined bill rows are found as the rows of a bill source: a warehouse no run has synced since
    ops.landing_sources came cannot say which those are, so it is refused rather than exported without them."""
    import shutil

    old = tmp_path / "old.duckdb"
    shutil.copy(sim.warehouse, old)
    with duckdb.connect(str(old)) as con:
        con.execute(older)
    with duckdb.connect(str(old), read_only=True) as con:
        with pytest.raises(ValueError, match=r"which of its sources are bills .*`gpuledger run` records them"):
            export_focus(con, sim.days[0], sim.days[0], tmp_path / "focus.csv")
    assert not (tmp_path / "focus.csv").exists()
