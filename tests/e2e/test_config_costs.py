"""Fleets without a cloud bill, costed from the config (docs/ledger.md#cost-sources), on one hand-built
day, 2026-11-02 (November: 30 days, 720 hours). Every expected figure is worked out on paper below from
the issue's numbers and docs/ledger.md — never from the pipeline's SQL.

node  cluster   pool        costed by                                        jobs (UTC)
op1   onprem    onprem-a    owned: $300,000, 2025-12-01, 36 months, no        1001 (p-a) 00–08 on 8 GPUs,
                            residual; energy 812.5 W × 8 = 6.5 kW,            1002 (p-b) 10–16 on GPUs 0–3,
                            PUE 1.3, $0.12/kWh                                the rest idle
gc1   gpucloud  rented      rate card $2.10 per GPU-hour (power included)    2001 (p-c) all day on 8 GPUs
gc2   gpucloud  rented      the same rate card                               none
rs1   gpucloud  reserved-a  contract $150,000.00 a month                     none
bc1   gpucloud  rented      a bill line every hour ($36) AND the rate card:  none
                            costed once, by the bill
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import date
from decimal import Decimal as D

import duckdb
import pytest

from tests.support.pipeline import run_pipeline
from tests.support.scenario_builder import Activity, Landing, utc

DAY = date(2026, 11, 2)
CENT = D("0.01")
E18 = 10 ** 18

# --- owned node op1: depreciation --------------------------------------------------------------
# (300000 − 0) over 36 months, exactly, in units of 1e-18: 300000·10^18 = 36·q + r with
# q = 8333333333333333333333, r = 12: the 12 earliest months (Dec 2025 … Nov 2026) get q + 1.
Q_MONTH, R_MONTH = divmod(300000 * E18, 36)
assert (Q_MONTH, R_MONTH) == (8333333333333333333333, 12)
NOV_2026 = Q_MONTH + 1            # life month 11 (Dec 2025 is month 0) < 12
# November's 720 equal hours: NOV_2026 = 720·q + r, r = 54: the first 54 hours (Nov 1 00:00 … Nov 3 05:00)
# get q + 1, so every hour of Nov 2 gets q + 1.
Q_HOUR, R_HOUR = divmod(NOV_2026, 720)
assert R_HOUR == 54
DEP_HOUR = Q_HOUR + 1             # 11574074074074074075 units = $11.574074074074074075
DEP_DAY = D(24 * DEP_HOUR) / E18
assert DEP_DAY.quantize(CENT) == (D(300000) / 36 / 30).quantize(CENT) == D("277.78")
# Hours 00–08: job 1001 holds all 8 GPUs → the whole hour. Hours 10–16: job 1002 holds 4 of 8 → half the
# hour, 11574074074074074075 / 2 = 5787037037037037037.5: the odd unit goes to the larger remainder, a tie,
# broken by the piece key — the job's key ('["onprem…') sorts before the idle one ('[null…').
DEP_1001 = D(8 * DEP_HOUR) / E18                       # 92.5925925925925926
DEP_1002 = D(6 * (DEP_HOUR // 2 + 1)) / E18            # 34.722222222222222228
DEP_IDLE = DEP_DAY - DEP_1001 - DEP_1002               # 150.462962962962962972

# --- owned node op1: energy ----------------------------------------------------------------------
# 8 GPUs × 812.5 W = 6.5 kW all day: 6.5 kWh a GPU-hour… of the node, × PUE 1.3 = 8.45 kWh of the
# facility, × $0.12 = $1.014 an hour; the day: 6.5 kW × 24 h × 1.3 × $0.12 = $24.336.
ENERGY_HOUR = D("6.5") * D("1.3") * D("0.12")
assert ENERGY_HOUR == D("1.014")
ENERGY_DAY = 24 * ENERGY_HOUR                          # 24.336
ENERGY_1001 = 8 * ENERGY_HOUR                          # 8.112
ENERGY_1002 = 6 * ENERGY_HOUR / 2                      # 3.042
ENERGY_IDLE = ENERGY_DAY - ENERGY_1001 - ENERGY_1002   # 13.182
KWH_HOUR = 6.5 * 1.3                                   # 8.45 kWh of the facility per node-hour

# --- rate card and contract --------------------------------------------------------------------------
RATE_NODE_DAY = D("2.10") * 8 * 24                     # 403.20 per node
# $150,000.00 over November's 720 hours: 150000·10^18 = 720·q + 240, the first 240 hours get q + 1
Q_C, R_C = divmod(150000 * E18, 720)
assert R_C == 240
CONTRACT_DAY = D(24 * (Q_C + 1)) / E18                 # 5000.000000000000000016
assert CONTRACT_DAY.quantize(CENT) == D("5000.00")
BILL_BC1 = 24 * D("36.00")                             # 864.00


@pytest.fixture(scope="module")
def landing(tmp_path_factory):
    root = tmp_path_factory.mktemp("config_costs")
    land = Landing(root)
    land.node("op1", cluster="onprem", pool="onprem-a", team="infra")
    for host in ("gc1", "gc2", "bc1"):
        land.node(host, cluster="gpucloud", pool="rented", team="cloudops")
    land.node("rs1", cluster="gpucloud", pool="reserved-a", team="cloudops")
    land.node_hours("bc1", utc(2026, 11, 2), 24, "36.00")
    land.job("onprem", "1001", account="p-a", start="2026-11-02T00:00:00", end="2026-11-02T08:00:00",
             state="COMPLETED", host="op1", gpus=8)
    land.job("onprem", "1002", account="p-b", start="2026-11-02T10:00:00", end="2026-11-02T16:00:00",
             state="COMPLETED", host="op1", gpus=4)
    land.job("gpucloud", "2001", account="p-c", start="2026-11-02T00:00:00", end="2026-11-03T00:00:00",
             state="COMPLETED", host="gc1", gpus=8)
    land.telemetry("op1", [DAY], [
        Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 8), "1001", True),
        Activity(utc(2026, 11, 2, 10), utc(2026, 11, 2, 16), "1002", True, gpus=(0, 1, 2, 3)),
    ], power_w=812.5)
    land.telemetry("gc1", [DAY], [Activity(utc(2026, 11, 2), utc(2026, 11, 3), "2001", True)], power_w=500.0)
    land.config = {
        "teams": {"ta": {"projects": ["p-a"]}, "tb": {"projects": ["p-b"]}, "tc": {"projects": ["p-c"]}},
        "costs": {
            "rate_cards": [{"pool": "rented", "price_per_gpu_hour": "2.10", "currency": "USD",
                            "valid_from": "2026-01-01"}],
            "contracts": [{"pool": "reserved-a", "amount_per_month": "150000.00", "currency": "USD",
                           "valid_from": "2026-01-01"}],
            "owned": [{"cluster": "onprem", "purchase_price": "300000", "purchase_date": "2025-12-01",
                       "depreciation_months": 36, "residual": "0", "facility_per_node_month": "0",
                       "currency": "USD"}],
            "energy": {"price_per_kwh": "0.12", "pue": 1.3, "kg_co2e_per_kwh": 0.4, "currency": "USD"},
        },
    }
    land.write()
    return land


@pytest.fixture(scope="module")
def ledger(landing):
    failed = run_pipeline(landing.landing, landing.warehouse, landing.config_path, [DAY])
    assert not failed, failed
    con = duckdb.connect(str(landing.warehouse), read_only=True)
    yield con
    con.close()


def _cost(con, where: str = "TRUE") -> dict[tuple[str, str, str], list]:
    """fct_cost_daily of the day as {(cost_source, team, category): [effective, billed, gpu_seconds, kwh, co2e]}."""
    out: dict[tuple, list] = defaultdict(lambda: [D(0), D(0), 0.0, 0.0, 0.0])
    for source, team, category, e, b, s, kwh, co2 in con.execute(
            "SELECT cost_source, team, category, effective_cost, billed_cost, gpu_seconds, kwh, co2e_kg "
            f"FROM marts.fct_cost_daily WHERE day = ? AND {where}", [DAY]).fetchall():
        row = out[(source, team, category)]
        row[0] += e
        row[1] += b
        row[2] += s
        row[3] += kwh
        row[4] += co2
    return dict(out)


def test_owned_node_is_depreciated_and_its_energy_priced(ledger):
    cost = _cost(ledger, "team IN ('ta', 'tb', 'infra')")
    assert {k: v[0] for k, v in cost.items()} == {
        ("amortization", "ta", "productive"): DEP_1001,
        ("amortization", "tb", "productive"): DEP_1002,
        ("amortization", "infra", "idle_unallocated"): DEP_IDLE,
        ("energy", "ta", "productive"): ENERGY_1001,
        ("energy", "tb", "productive"): ENERGY_1002,
        ("energy", "infra", "idle_unallocated"): ENERGY_IDLE,
    }
    # to the cent, as finance reads it
    assert [cost[("amortization", t, c)][0].quantize(CENT) for t, c in
            (("ta", "productive"), ("tb", "productive"), ("infra", "idle_unallocated"))] == \
        [D("92.59"), D("34.72"), D("150.46")]
    assert sum(v[0] for k, v in cost.items() if k[0] == "amortization") == DEP_DAY
    assert sum(v[0] for k, v in cost.items() if k[0] == "energy") == D("24.336")
    # generated lines: billed = effective
    assert all(v[0] == v[1] for v in cost.values())
    # GPU-seconds: 8 GPUs × 8 h, 4 GPUs × 6 h, the rest of 8 × 24 h idle; counted once (on amortization)
    assert cost[("amortization", "ta", "productive")][2] == 8 * 8 * 3600
    assert cost[("amortization", "tb", "productive")][2] == 4 * 6 * 3600
    assert cost[("amortization", "infra", "idle_unallocated")][2] == 8 * 24 * 3600 - 8 * 8 * 3600 - 4 * 6 * 3600
    assert all(v[2] == 0 and v[3] == 0 for k, v in cost.items() if k[0] == "energy")
    # kWh of the facility: 8.45 an hour, shared by GPU-seconds; CO2e at 0.4 kg/kWh
    assert cost[("amortization", "ta", "productive")][3] == pytest.approx(8 * KWH_HOUR)
    assert cost[("amortization", "tb", "productive")][3] == pytest.approx(6 * KWH_HOUR / 2)
    assert sum(v[3] for v in cost.values()) == pytest.approx(24 * KWH_HOUR)          # 202.8 kWh
    assert sum(v[4] for v in cost.values()) == pytest.approx(24 * KWH_HOUR * 0.4)    # 81.12 kg


def test_rate_card_pool_costs_its_gpu_hours_busy_or_idle(ledger):
    cost = _cost(ledger, "cost_source = 'rate_card' AND category <> 'unattributed'")
    rate = {k: v for k, v in cost.items() if k[1] in ("tc",) or k == ("rate_card", "cloudops", "idle_unallocated")}
    assert rate[("rate_card", "tc", "productive")][0] == RATE_NODE_DAY                  # gc1, job 2001 all day
    # the pool owner's idle GPUs: gc2 all day (403.20) + rs1 on its contract all day (5000.000000000000000016)
    assert rate[("rate_card", "cloudops", "idle_unallocated")][0] == RATE_NODE_DAY + CONTRACT_DAY
    lines = dict(ledger.execute(
        "SELECT cost_basis, sum(effective_cost) FROM intermediate.int_config_cost_lines WHERE day = ? GROUP BY 1",
        [DAY]).fetchall())
    assert lines == {"rate_card": 2 * RATE_NODE_DAY, "contract": CONTRACT_DAY, "depreciation": DEP_DAY,
                     "energy": ENERGY_DAY}
    # no energy line for the rented pool (its price includes power), but its kWh is reported:
    # 8 GPUs × 0.5 kW × 24 h × PUE 1.3 = 124.8 kWh on gc1
    assert rate[("rate_card", "tc", "productive")][3] == pytest.approx(8 * 0.5 * 24 * 1.3)


def test_a_node_with_a_bill_line_is_costed_once_by_the_bill(ledger):
    rows = ledger.execute(
        "SELECT cost_source, sum(effective_cost) FROM intermediate.int_cost_allocations WHERE day = ? "
        "AND hostname = 'bc1' GROUP BY 1", [DAY]).fetchall()
    assert rows == [("bill", BILL_BC1)]
    assert ledger.execute("SELECT count(*) FROM intermediate.int_config_cost_lines WHERE hostname = 'bc1'"
                          ).fetchall() == [(0,)]


def test_conservation_against_bill_and_generated_lines(ledger):
    by_source = dict(ledger.execute(
        "SELECT cost_source, sum(effective_cost) FROM marts.fct_cost_daily WHERE day = ? GROUP BY 1",
        [DAY]).fetchall())
    assert by_source == {"bill": BILL_BC1, "rate_card": 2 * RATE_NODE_DAY + CONTRACT_DAY,
                         "amortization": DEP_DAY, "energy": ENERGY_DAY}
    # fct_bill_daily stays the bill; the generated lines are beside it
    assert ledger.execute("SELECT sum(effective_cost) FROM marts.fct_bill_daily WHERE day = ?",
                          [DAY]).fetchall() == [(BILL_BC1,)]
    assert dict(ledger.execute(
        "SELECT cost_source, sum(effective_cost) FROM marts.fct_config_cost_daily WHERE day = ? GROUP BY 1",
        [DAY]).fetchall()) == {k: v for k, v in by_source.items() if k != "bill"}


def test_jobs_carry_their_energy(ledger):
    got = {job: (kwh, co2) for job, kwh, co2 in ledger.execute(
        "SELECT job_id, kwh, co2e_kg FROM marts.fct_job_cost WHERE day = ?", [DAY]).fetchall()}
    assert got["1001"] == (pytest.approx(8 * KWH_HOUR), pytest.approx(8 * KWH_HOUR * 0.4))
    assert got["1002"] == (pytest.approx(6 * KWH_HOUR / 2), pytest.approx(6 * KWH_HOUR / 2 * 0.4))
    assert got["2001"][0] == pytest.approx(8 * 0.5 * 24 * 1.3)


def test_a_day_with_no_cost_source_says_so_and_keeps_its_gpu_seconds(tmp_path):
    land = Landing(tmp_path)
    land.node("op1", cluster="onprem", pool="onprem-a", team="infra")
    land.job("onprem", "1001", account="p-a", start="2026-11-02T00:00:00", end="2026-11-02T08:00:00",
             state="COMPLETED", host="op1", gpus=8)
    land.telemetry("op1", [DAY], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 8), "1001", True)])
    land.write()
    failed = run_pipeline(land.landing, land.warehouse, land.config_path, [DAY])
    assert [d for d, _ in failed] == [DAY]
    assert any(f"no bill and no rate card covers {DAY}" in reason for reason in failed[0][1]), failed
    with duckdb.connect(str(land.warehouse), read_only=True) as con:
        assert con.execute("SELECT gpu_seconds FROM marts.fct_job_cost WHERE job_id = '1001'").fetchall() \
            == [(8 * 8 * 3600,)]


def test_inspect_says_which_source_costs_which_node(landing):
    from pipelines.cli.inspect import inspect_landing
    from pipelines.lib.config import load_config

    costing = inspect_landing(landing.landing, load_config(landing.config_path))["costing"]
    assert costing["as_of"] == DAY.isoformat()
    assert {n["hostname"]: (n["source"], n.get("entry")) for n in costing["nodes"]} == {
        "op1": ("owned", "costs.owned[0]"), "gc1": ("rate_card", "costs.rate_cards[0]"),
        "gc2": ("rate_card", "costs.rate_cards[0]"), "rs1": ("contract", "costs.contracts[0]"),
        "bc1": ("bill", None)}
    assert costing["by_pool"] == {"onprem-a": {"owned": 1}, "rented": {"bill": 1, "rate_card": 2},
                                  "reserved-a": {"contract": 1}}


# the simulator's off-bill clusters and the cost source that carries their GPU-seconds (simulator/offbill.py):
# the owned on-prem nodes' GPU-seconds sit on their amortization rows, the GPU cloud's on its rate card's
CLUSTER_OF_SOURCE = {"amortization": "onprem", "rate_card": "gpucloud"}


def test_simulated_fleet_without_a_bill_matches_its_truth(simulated_ledger):
    """The simulator's on-prem (owned) and GPU-cloud (rate card) nodes, no bill lines, running jobs: per day
    and cluster, each category's GPU-seconds within 1 % of the cluster's day of the simulator's truth
    (truth/offbill_gpu_seconds.csv, painted from the jobs' own phases), and each team's and project's within
    1 % or 8 GPU-minutes; what each project costs per day and source against truth/costs.csv (computed by the
    simulator from its own prices, jobs and the power it wrote) — rate card and amortization to 1e-8,
    energy within 1 % or a cent —; the day conserved against bill plus generated lines."""
    import csv

    from tests.support.pipeline import assert_gpu_seconds_match_truth

    root = simulated_ledger.root
    with (root / "truth" / "offbill_gpu_seconds.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    by_category: dict[tuple, float] = defaultdict(float)
    by_project: dict[tuple, float] = defaultdict(float)
    day_total: dict[tuple, float] = defaultdict(float)
    for r in rows:
        by_category[(r["day"], r["cluster"], r["category"])] += float(r["gpu_seconds"])
        by_project[(r["day"], r["cluster"], r["team"], r["project"], r["category"])] += float(r["gpu_seconds"])
        day_total[(r["day"], r["cluster"])] += float(r["gpu_seconds"])
    # the simulation has what the test is for: jobs on both clusters, hung and failed ones among them
    for cluster in CLUSTER_OF_SOURCE.values():
        cats = {c for _, cl, c in by_category if cl == cluster}
        assert {"productive", "allocated_idle", "failed_job", "idle_unallocated"} <= cats, (cluster, cats)
    assert set(day_total.values()) == {2 * 8 * 86400}      # two nodes of 8 GPUs per cluster, every second

    truth_cost = defaultdict(D)
    with (root / "truth" / "costs.csv").open() as fh:
        for r in csv.DictReader(fh):
            truth_cost[(r["day"], r["cost_source"], r["team"], r["project"])] += D(r["cost"])
    assert {k[1] for k in truth_cost} == {"rate_card", "amortization", "energy"}
    with simulated_ledger.connect() as con:
        gpu = con.execute(
            """SELECT strftime(day, '%Y-%m-%d'), cost_source, team, project, category, sum(gpu_seconds)
               FROM marts.fct_cost_daily WHERE cost_source IN ('amortization', 'rate_card') AND gpu_seconds > 0
               GROUP BY ALL""").fetchall()
        cost = {(d.isoformat(), s, t, p): e for d, s, t, p, e in con.execute(
            "SELECT day, cost_source, team, project, sum(effective_cost) FROM marts.fct_cost_daily "
            "WHERE cost_source <> 'bill' GROUP BY ALL").fetchall()}
        conserved = con.execute(
            """SELECT l.day, l.cost_source, l.e, c.e FROM
                 (SELECT day, cost_source, sum(effective_cost) AS e FROM marts.fct_cost_daily
                  WHERE cost_source <> 'bill' GROUP BY ALL) l
               FULL JOIN (SELECT day, cost_source, sum(effective_cost) AS e FROM marts.fct_config_cost_daily
                          GROUP BY ALL) c USING (day, cost_source)""").fetchall()
        recon = con.execute("SELECT count(*), max(abs(difference_effective_cost)), sum(config_effective_cost) "
                            "FROM finance.reconciliation_daily").fetchall()[0]

    got_category: dict[tuple, float] = defaultdict(float)
    got_project: dict[tuple, float] = defaultdict(float)
    for d, source, team, project, category, seconds in gpu:
        got_category[(d, CLUSTER_OF_SOURCE[source], category)] += seconds
        got_project[(d, CLUSTER_OF_SOURCE[source], team, project, category)] += seconds
    for key in by_category.keys() | got_category.keys():
        want, have = by_category.get(key, 0.0), got_category.get(key, 0.0)
        assert abs(have - want) <= 0.01 * day_total[key[:2]], (key, want, have)
    for key in by_project.keys() | got_project.keys():
        want, have = by_project.get(key, 0.0), got_project.get(key, 0.0)
        assert abs(have - want) <= max(0.01 * want, 8 * 60), (key, want, have)

    assert cost.keys() == truth_cost.keys()
    for key, want in truth_cost.items():
        if key[1] == "energy":
            assert abs(cost[key] - want) <= max(D("0.01") * want, CENT), (key, want, cost[key])
        else:
            assert abs(cost[key] - want) < D("1e-8"), (key, want, cost[key])
    # conservation: every day and source, the ledger's pieces are the generated lines exactly
    assert conserved and all(e == c for _, _, e, c in conserved), conserved
    assert recon[0] > 0 and recon[1] == 0 and recon[2] == sum(cost.values())
    assert_gpu_seconds_match_truth(root, simulated_ledger.warehouse)


def test_a_day_costed_by_the_config_alone_passes_its_checks(tmp_path):
    """No bill file at all: an owned node costs the day, and no check fails for want of a bill."""
    land = Landing(tmp_path)
    land.node("op1", cluster="onprem", pool="onprem-a", team="infra")
    land.job("onprem", "1001", account="p-a", start="2026-11-02T00:00:00", end="2026-11-02T08:00:00",
             state="COMPLETED", host="op1", gpus=8)
    land.telemetry("op1", [DAY], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 8), "1001", True)], power_w=812.5)
    land.config = {"costs": {"owned": [{"cluster": "onprem", "purchase_price": "300000",
                                        "purchase_date": "2025-12-01", "depreciation_months": 36}],
                             "energy": {"price_per_kwh": "0.12", "pue": 1.3}}}
    land.write()
    assert run_pipeline(land.landing, land.warehouse, land.config_path, [DAY]) == []
    with duckdb.connect(str(land.warehouse), read_only=True) as con:
        assert dict(con.execute("SELECT cost_source, sum(effective_cost) FROM marts.fct_cost_daily GROUP BY 1"
                                ).fetchall()) == {"amortization": DEP_DAY, "energy": ENERGY_DAY}
        assert con.execute("SELECT difference_effective_cost, config_effective_cost FROM finance.reconciliation_daily"
                           ).fetchall() == [(0, DEP_DAY + ENERGY_DAY)]


def test_focus_export_carries_the_bill_and_the_config_lines(ledger, tmp_path):
    """`gpuledger export focus` of the hand-built day: every cost line is an origin — the bill's line of
    bc1 and the config's lines — its rows summing exactly to the hand-computed amounts above; per cost
    source the export is the day's cost; depreciation bills nothing
    (docs/focus-export.md#cost-lines-from-the-config)."""
    import csv

    from pipelines.exports import export_focus

    out = tmp_path / "focus.csv"
    n = export_focus(ledger, DAY, DAY, out)
    with out.open(newline="") as fh:
        rows = [{k: (v if v != "" else None) for k, v in r.items()} for r in csv.DictReader(fh)]
    assert n == len(rows) > 0
    money = ("EffectiveCost", "BilledCost", "ListCost", "ContractedCost", "PricingQuantity")
    rows = [r | {c: D(r[c]) for c in money if r[c] is not None} for r in rows]
    by_source: dict[str, list] = defaultdict(lambda: [D(0), D(0)])
    origins: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_source[r["x_CostSource"]][0] += r["EffectiveCost"]
        by_source[r["x_CostSource"]][1] += r["BilledCost"]
        origins[r["x_OriginLineKey"]].append(r)
    assert {s: tuple(v) for s, v in by_source.items()} == {
        "bill": (BILL_BC1, BILL_BC1), "rate_card": (2 * RATE_NODE_DAY + CONTRACT_DAY,) * 2,
        "amortization": (DEP_DAY, 0), "energy": (ENERGY_DAY, ENERGY_DAY)}

    def origin(basis: str, host: str | None = None) -> list[list[dict]]:
        return [rs for key, rs in origins.items() if not key.startswith("bills/")
                and json.loads(key)[0] == basis and (host is None or json.loads(key)[2] == host)]

    # the owned node's depreciation month: one origin, its rows the jobs' and the idle rest's pieces
    (dep,) = origin("depreciation")
    assert sorted(r["EffectiveCost"] for r in dep) == sorted([DEP_1001, DEP_1002, DEP_IDLE])
    assert {(r["BilledCost"], r["SubAccountId"], r["ProviderName"], r["ResourceId"], r["PricingUnit"]) for r in dep} \
        == {(0, "costs.owned[0]", "onprem", "op1", "Hours")}
    assert sum(r["PricingQuantity"] for r in dep) == 24          # the day's 24 hours of the node's month
    # energy: an origin per node-hour, $1.014 for 8.45 kWh of the facility each
    energy = origin("energy")
    assert len(energy) == 24
    for rs in energy:
        assert sum(r["EffectiveCost"] for r in rs) == sum(r["BilledCost"] for r in rs) == ENERGY_HOUR
        assert sum(r["PricingQuantity"] for r in rs) == D("8.45") and rs[0]["PricingUnit"] == "kWh"
    # the rate card node-days: 8 GPUs × 24 h at $2.10, gc1 to its job, gc2 idle
    for host in ("gc1", "gc2"):
        (rc,) = origin("rate_card", host)
        assert sum(r["EffectiveCost"] for r in rc) == RATE_NODE_DAY and sum(r["PricingQuantity"] for r in rc) == 192
        assert {(r["SubAccountId"], r["ProviderName"], r["PricingUnit"]) for r in rc} == \
            {("costs.rate_cards[0]", "gpucloud", "GPU-Hours")}
    # the contract's month: one origin over its node, no one resource
    (contract,) = origin("contract")
    assert sum(r["EffectiveCost"] for r in contract) == sum(r["BilledCost"] for r in contract) == CONTRACT_DAY
    assert sum(r["PricingQuantity"] for r in contract) == 8 * 24
    assert {(r["SubAccountId"], r["ResourceId"], r["ProviderName"]) for r in contract} == \
        {("costs.contracts[0]", None, "gpucloud")}
    # list and contracted cost are the cost itself on every config row
    assert all(r["ListCost"] == r["ContractedCost"] == r["EffectiveCost"] for r in rows if r["x_CostSource"] != "bill")
