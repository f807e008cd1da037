"""The ledger against the simulator's own ground truth and against the bill computed from the files."""

import csv
import json
from datetime import date
from decimal import Decimal

import pytest

from tests.support.bill_truth import day_shares
from tests.support.pipeline import assert_gpu_seconds_match_truth, run_pipeline, simulate_and_run

from simulator import Knobs

# a minute or more: runs in CI too (`-m "not slow"` leaves it out of a quick local run)
pytestmark = pytest.mark.slow

# seed, knobs: the default rates, and rates forced up so that interruptions and stalls surely happen; both
# with the node whose GPUs are split into MIG instances (simulator/mig.py)
CASES = [(3, Knobs(mig_node=True)),
         (11, Knobs(interrupt_rate_per_gpu_day=0.3, stall_rate_per_job_day=1.0, mig_node=True))]


@pytest.fixture(scope="module", params=CASES, ids=["seed3", "seed11-forced"])
def ledger(request, tmp_path_factory):
    seed, knobs = request.param
    # 6 nodes over 3 days from Oct 31: crosses the Los Angeles fall-back on Nov 1
    return simulate_and_run(tmp_path_factory.mktemp(f"seed{seed}"), date(2026, 10, 31), 3, 6, seed, knobs)


def test_ingested_rows_equal_what_the_simulator_wrote(ledger):
    manifest = json.loads((ledger.root / "truth" / "landing_manifest.json").read_text())
    with ledger.connect() as con:
        landed = {s: (f, r, q) for s, f, r, q in con.execute(
            "SELECT source, count(*), sum(rows_staged), sum(rows_quarantined) FROM ops.landed_files GROUP BY source").fetchall()}
        staged_samples = con.execute("SELECT sum(samples) FROM staging.stg_dcgm__gpu_minutes").fetchall()[0][0]
    assert landed["focus"] == (manifest["focus"]["files"], manifest["focus"]["rows"], 0)
    with ledger.connect() as con:
        staged = dict(con.execute(
            "SELECT billing_currency, count(*) FROM staging.stg_focus__bill_lines GROUP BY 1").fetchall())
    assert staged == {c: t["rows"] for c, t in manifest["focus"]["by_currency"].items()}
    assert landed["slurm"][1] == manifest["slurm"]["rows"] and landed["slurm"][2] == 0
    assert landed["dcgm"] == (manifest["dcgm"]["files"], manifest["dcgm"]["rows"], 0)
    assert landed["runs"] == (manifest["runs"]["files"], manifest["runs"]["events"], 0)
    assert landed["inventory"][1] == manifest["inventory"]["rows"]
    assert landed["plans"] == (manifest["plans"]["files"], manifest["plans"]["rows"], 0)
    assert staged_samples == manifest["dcgm"]["samples"]
    assert landed["storage"][1:] == (manifest["storage"]["objects"], 0)


def test_every_day_and_currency_sums_exactly_to_the_bill(ledger):
    expected = {k: v for k, v in day_shares(ledger.landing).items() if k[0] in ledger.days}
    assert {c for _, c in expected} == {"EUR", "USD"}    # west's GPU cloud bills in EUR, AWS in USD
    with ledger.connect() as con:
        got = {(d, c): (e, b) for d, c, e, b in con.execute(
            "SELECT day, billing_currency, sum(effective_cost), sum(billed_cost) FROM marts.fct_cost_daily "
            "WHERE cost_source = 'bill' GROUP BY ALL").fetchall()}
    assert got == expected


def test_gpu_seconds_per_day_team_category_match_truth(ledger):
    assert_gpu_seconds_match_truth(ledger.root, ledger.warehouse)


def test_run_tokens_and_rerun_loss_match_truth(ledger):
    with (ledger.root / "truth" / "runs.csv").open() as fh:
        truth = {(r["run_id"], r["day"]): r for r in csv.DictReader(fh)}
    with ledger.connect() as con:
        eff = {(r, d): (t, k) for r, d, t, k in con.execute(
            "SELECT run_id, strftime(day, '%Y-%m-%d'), tokens, tokens_kept FROM marts.fct_run_efficiency_daily").fetchall()}
        loss = {(r, d): (lo, rs) for r, d, lo, rs in con.execute(
            """SELECT run_id, strftime(day, '%Y-%m-%d'), sum(lost_gpu_seconds), sum(restart_gpu_seconds)
               FROM marts.fct_rerun_loss GROUP BY ALL""").fetchall()}
    assert truth
    if ledger.root.name.startswith("seed11"):  # the forced case must exercise interruptions
        assert sum(float(t["lost_gpu_seconds"]) for t in truth.values()) > 0
    for key, t in truth.items():
        tokens, kept = eff.get(key, (0, 0))
        assert tokens == pytest.approx(int(t["tokens"]), rel=0.01), key
        assert kept == pytest.approx(int(t["tokens_kept"]), rel=0.01), key
        lost, restart = loss.get(key, (0.0, 0.0))
        assert lost == pytest.approx(float(t["lost_gpu_seconds"]), rel=0.01, abs=8 * 60), key
        assert restart == pytest.approx(float(t["restart_gpu_seconds"]), rel=0.01, abs=8 * 60), key


def test_low_activity_and_never_active_gpus_match_truth(ledger):
    """The under-use lens against truth/efficiency.csv (simulator/efficiency.py), per day and project: the
    low-activity GPU-seconds within 1 % of the project's productive GPU-seconds (a minute mixing a low and
    a busy phase at a boundary goes by its mean), and the GPUs held but never active exactly."""
    with (ledger.root / "truth" / "efficiency.csv").open() as fh:
        truth = {(r["day"], r["project"]): (float(r["low_activity_gpu_seconds"]), int(r["gpus_never_active"]))
                 for r in csv.DictReader(fh)}
    with ledger.connect() as con:
        got = {(d, p): (lo, prod, never) for d, p, lo, prod, never in con.execute(
            """SELECT strftime(day, '%Y-%m-%d'), project, sum(low_activity_gpu_seconds),
                      sum(productive_gpu_seconds), sum(gpus_never_active)
               FROM (SELECT day, job_uid, any_value(project) AS project, sum(low_activity_gpu_seconds) AS
                            low_activity_gpu_seconds, sum(productive_gpu_seconds) AS productive_gpu_seconds,
                            max(gpus_never_active) AS gpus_never_active
                     FROM marts.fct_job_efficiency_daily GROUP BY day, job_uid)
               GROUP BY ALL""").fetchall()}
    assert sum(lo for lo, _ in truth.values()) > 0 and sum(n for _, n in truth.values()) > 0
    for key in set(truth) | set(got):
        low, never = truth.get(key, (0.0, 0))
        got_low, productive, got_never = got.get(key, (0.0, 0.0, 0))
        assert got_low == pytest.approx(low, abs=0.01 * productive + 60), key
        assert got_never == never, key


def test_planned_runs_progress_against_the_simulators_plans_and_tokens(ledger):
    """fct_run_budget_daily of each planned run: kept tokens to date are the truth's, summed day by day, and
    progress is against the tokens the simulator set the run to train on (its plan file)."""
    manifest = json.loads((ledger.root / "truth" / "landing_manifest.json").read_text())
    with (ledger.root / "truth" / "runs.csv").open() as fh:
        truth = list(csv.DictReader(fh))
    with ledger.connect() as con:
        budget = con.execute("""SELECT run_id, strftime(day, '%Y-%m-%d'), tokens_kept_to_date, progress_pct,
                                       planned_tokens FROM marts.fct_run_budget_daily""").fetchall()
    assert {r for r, *_ in budget} == set(manifest["plans"]["runs"]) and budget
    for run_id, day, kept, progress, planned in budget:
        want = sum(int(t["tokens_kept"]) for t in truth if t["run_id"] == run_id and t["day"] <= day)
        assert kept == pytest.approx(want, rel=0.01), (run_id, day)
        assert progress == pytest.approx(100 * kept / planned, rel=1e-12)


MARTS = ["fct_cost_daily", "fct_job_cost", "fct_rerun_loss", "fct_idle_waste_daily", "fct_run_efficiency_daily"]


def test_rerunning_a_day_leaves_every_mart_identical(ledger):
    day = ledger.days[1]

    def snapshot():
        with ledger.connect() as con:
            return {m: con.execute(f"SELECT * FROM marts.{m} ORDER BY ALL").fetchall() for m in MARTS}

    before = snapshot()
    assert not run_pipeline(ledger.landing, ledger.warehouse, ledger.config, [day])
    assert snapshot() == before


def test_run_badput_matches_truth(ledger):
    """fct_run_badput_daily against truth/badput.csv: each kind of each run and day within 1 % of the run's
    GPU-seconds that day (or a GPU-minute per GPU of a node, for a run's small days); the kinds add up
    to the run's GPU-seconds and cost exactly, per currency."""
    with (ledger.root / "truth" / "badput.csv").open() as fh:
        truth = {(r["day"], r["run_id"], r["kind"]): float(r["gpu_seconds"]) for r in csv.DictReader(fh)}
    with ledger.connect() as con:
        got = {(d, r, k): s for d, r, k, s in con.execute(
            """SELECT strftime(day, '%Y-%m-%d'), run_id, kind, sum(gpu_seconds) FROM marts.fct_run_badput_daily
               GROUP BY ALL""").fetchall()}
        runs = {(d, r, c): (s, e) for d, r, c, s, e in con.execute(
            """SELECT strftime(day, '%Y-%m-%d'), run_id, billing_currency, gpu_seconds, effective_cost
               FROM marts.fct_run_efficiency_daily""").fetchall()}
        kinds = {(d, r, c): (s, e) for d, r, c, s, e in con.execute(
            """SELECT strftime(day, '%Y-%m-%d'), run_id, billing_currency, sum(gpu_seconds), sum(effective_cost)
               FROM marts.fct_run_badput_daily GROUP BY ALL""").fetchall()}
    assert {d for d, _, _ in truth} == {d.isoformat() for d in ledger.days}     # three days
    # the logged phases are there to be found: saves, evaluations, step timers, start-ups
    assert {"startup", "checkpoint_save", "evaluation", "data_wait", "exposed_communication", "goodput"} <= {
        k for _, _, k in truth}
    run_seconds = {(d, r): 0.0 for d, r, _ in runs}
    for (d, r, _), (s, _) in runs.items():
        run_seconds[(d, r)] += s
    for key in truth.keys() | got.keys():
        want, have = truth.get(key, 0.0), got.get(key, 0.0)
        assert abs(have - want) <= max(0.01 * run_seconds[key[:2]], 8 * 60), (key, want, have)
    assert kinds == {k: v for k, v in runs.items() if v != (0.0, 0)}


def test_storage_cost_per_run_kind_and_tier_matches_truth(ledger):
    """Each storage line of an inventoried store is split over the store's objects of its day by bytes:
    per day, store, tier, project, run, kind and currency the ledger's bytes equal the simulator's and its
    cost equals the simulator's unrounded share to its 10 places; nothing is left unpriced."""
    with open(ledger.root / "truth" / "storage.csv", newline="") as fh:
        truth = {(date.fromisoformat(r["day"]), r["store"], r["tier"], r["project"], r["run_id"] or None, r["kind"],
                  r["billing_currency"]): (int(r["bytes"]), Decimal(r["effective_cost"])) for r in csv.DictReader(fh)}
    with ledger.connect() as con:
        got = {k[:7]: (int(k[7]), k[8]) for k in con.execute(
            "SELECT day, store, tier, project, run_id, kind, billing_currency, sum(bytes), sum(effective_cost) "
            "FROM marts.fct_storage_daily GROUP BY ALL").fetchall()}
        priced_by = {r[0] for r in con.execute("SELECT DISTINCT priced_by FROM marts.fct_storage_daily").fetchall()}
    assert {k[5] for k in truth} == {"checkpoint", "log", "dataset"} and {k[6] for k in truth} == {"EUR", "USD"}
    assert got.keys() == truth.keys()
    assert priced_by == {"bill"}
    for key, (size, cost) in truth.items():
        assert got[key][0] == size, key
        assert abs(got[key][1] - cost) <= Decimal("1e-9"), (key, got[key][1], cost)
