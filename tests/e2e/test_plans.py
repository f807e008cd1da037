"""Run plans through the pipeline (docs/plans.md): plans as a landing source and their quarantine,
marts.dim_run_plans with defaults from the warehouse, marts.fct_run_budget_daily on a hand-built run,
ops.alerts raised once, and the `plan` and `alerts` commands.

The scenario (tests/support/scenario_builder.py), every number worked out by hand:
- node n1, 8 H100 GPUs, billed 36.00 USD an hour on 2 and 3 November: 4.50 USD per GPU-hour;
- run r1 (project p1) on n1: 2 Nov job 1001 00:00–06:00 (NODE_FAIL after its 05:01:40 checkpoint,
  saved 100 s after step 500) and job 1002 06:30–12:00 (restored; first step 06:45), 92 GPU-hours,
  800,000 tokens kept; 3 Nov job 1003 00:00–10:00, 80 GPU-hours, 1,000,000 tokens;
- its plan: 2,000,000 tokens on 8 H100-SXM at 0.02 % MFU (the scenario's model is big for its
  tokens), checkpoint 50 s, restart 0 s, MTBF 8 GPU-hours, redundancy 1.25, price from the warehouse;
- project p1's monthly budget: 1,000 USD;
- plan r5 of a new project on a GPU the catalog lacks (MI355X) at the plan's own peak_flops, 2.3 PFLOP/s.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from datetime import date
from decimal import ROUND_HALF_EVEN, Decimal as D

import duckdb
import pytest

from pipelines.lib.config.strict_yaml import dump_yaml
from tests.support.pipeline import run_pipeline
from tests.support.scenario_builder import Activity, Landing, utc

NOV2, NOV3 = date(2026, 11, 2), date(2026, 11, 3)
RUN_MODEL = {"params": 6.7e9, "active_params": 6.7e9, "layers": 32, "heads": 32, "head_dim": 128, "seq_len": 4096}
PLAN = {"run_id": "r1", "project": "p1", "model": RUN_MODEL, "tokens": 2_000_000, "gpu_model": "H100-SXM", "gpus": 8,
        "dtype": "bf16", "mfu_target": 0.0002, "redundancy": 1.25, "checkpoint_seconds": 50, "restart_seconds": 0,
        "mtbf_gpu_hours": 8, "start": NOV2}

# A GPU outside the catalog, at the plan's peak_flops; the MFU target left to the config (which has none)
NEW_GPU_PLAN = {**{k: v for k, v in PLAN.items() if k != "mfu_target"}, "run_id": "r5", "project": "p9",
                "gpu_model": "MI355X", "peak_flops": 2.3e15, "price_per_gpu_hour": "3.00", "start": date(2026, 12, 1)}

# The estimate by hand (docs/plans.md#the-estimate):
FPT = 6 * 6.7e9 + 12 * 32 * 32 * 128 * 4096        # 40,200,000,000 + 6,442,450,944 = 46,642,450,944
IDEAL = FPT * 2e6 / (989e12 * 0.0002) / 3600       # 9.3284901888e16 / 1.978e11 / 3600 = 131.0034 GPU-hours
# M = 8 GPU-hours / 8 GPUs = 1 h = 3600 s; τ = sqrt(2 · 50 · 3600) = 600 s; overhead = 50/600 + 600/7200 + 0 = 1/6
PLANNED = IDEAL * (1 + 1 / 6)                      # 152.837 GPU-hours
BUDGET = PLANNED * 1.25                            # 191.046 GPU-hours
PRICE = D("4.50")                                  # 36.00 USD / 8 GPU-hours, the fleet's H100 price


def cost_of(hours: float) -> D:
    """Hours to 1e-6 GPU-hour, times the price, to the cent half to even (docs/plans.md#the-estimate)."""
    return (D(repr(hours)).quantize(D("0.000001")) * PRICE).quantize(D("0.01"), ROUND_HALF_EVEN)


def build(root) -> Landing:
    L = Landing(root)
    L.config = {"teams": {"ml": {"projects": ["p1"]}}, "slurm_accounts": {"acct1": "p1"},
                "budgets": {"p1": 1000}}
    L.node("n1", pool="pool-a", team="infra")
    L.node_hours("n1", utc(2026, 11, 2), 48, D("36.00"))
    L.job("c1", "1001", account="acct1", start="2026-11-02T00:00:00", end="2026-11-02T06:00:00",
          state="NODE_FAIL", host="n1", comment="run_id=r1")
    L.job("c1", "1002", account="acct1", start="2026-11-02T06:30:00", end="2026-11-02T12:00:00",
          state="COMPLETED", host="n1", comment="run_id=r1")
    L.job("c1", "1003", account="acct1", start="2026-11-03T00:00:00", end="2026-11-03T10:00:00",
          state="COMPLETED", host="n1", comment="run_id=r1")
    L.telemetry("n1", [NOV2, NOV3], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 6), "1001", True),
                                     Activity(utc(2026, 11, 2, 6, 30), utc(2026, 11, 2, 12), "1002", True),
                                     Activity(utc(2026, 11, 3, 0), utc(2026, 11, 3, 10), "1003", True)])
    L.event("r1", "run_config", utc(2026, 11, 2, 0, 1), job_id="1001", project="p1", model=RUN_MODEL, dtype="bf16")
    for h in range(1, 6):
        L.event("r1", "step", utc(2026, 11, 2, h), job_id="1001", step=100 * h, tokens=100_000)
    L.event("r1", "checkpoint_saved", utc(2026, 11, 2, 5, 1, 40), job_id="1001", step=500)   # saved in 100 s
    L.event("r1", "step", utc(2026, 11, 2, 5, 30), job_id="1001", step=550, tokens=50_000)   # rolled back
    L.event("r1", "checkpoint_loaded", utc(2026, 11, 2, 6, 40), job_id="1002", step=500)
    L.event("r1", "step", utc(2026, 11, 2, 6, 45), job_id="1002", step=510, tokens=10_000)   # restart: 15 min
    L.event("r1", "step", utc(2026, 11, 2, 8), job_id="1002", step=600, tokens=90_000)
    L.event("r1", "step", utc(2026, 11, 2, 10), job_id="1002", step=700, tokens=100_000)
    L.event("r1", "step", utc(2026, 11, 2, 11), job_id="1002", step=800, tokens=100_000)
    for h in range(10):
        L.event("r1", "step", utc(2026, 11, 3, h, 30), job_id="1003", step=900 + 100 * h, tokens=100_000)
    L.plan("r1.yaml", PLAN)
    L.plan("new-gpu.yaml", NEW_GPU_PLAN)
    L.plan("bad.yaml", {**PLAN, "run_id": "r2", "tokens": -5})
    L.plan("typo.yaml", {**PLAN, "run_id": "r3", "gpu": 8})
    L.plan("broken.yaml", "run_id: [r4\n")
    return L


@pytest.fixture(scope="module")
def ledger(tmp_path_factory):
    L = build(tmp_path_factory.mktemp("plans"))
    L.write()
    failed = run_pipeline(L.landing, L.warehouse, L.config_path, [NOV2, NOV3])
    assert not failed, failed
    return L


def rows(L: Landing, query: str, params: list | None = None) -> list[dict]:
    with duckdb.connect(str(L.warehouse), read_only=True) as con:
        return con.sql(query, params=params or None).pl().to_dicts()


def test_bad_plans_are_quarantined_naming_file_and_key_and_the_good_one_staged(ledger):
    staged = rows(ledger, "SELECT run_id, _file FROM staging.stg_plans__run_plans ORDER BY run_id")
    assert staged == [{"run_id": "r1", "_file": "plans/r1.yaml"}, {"run_id": "r5", "_file": "plans/new-gpu.yaml"}]
    q = {r["file"]: r for r in rows(ledger, "SELECT file, row_ref, reason FROM ops.quarantine WHERE source = 'plans'")}
    assert set(q) == {"plans/bad.yaml", "plans/typo.yaml", "plans/broken.yaml"}
    assert "`tokens`" in q["plans/bad.yaml"]["reason"] and q["plans/bad.yaml"]["row_ref"].startswith("line ")
    assert "unknown key `gpu`" in " ".join(r["reason"] for r in rows(
        ledger, "SELECT reason FROM ops.quarantine WHERE file = 'plans/typo.yaml'"))
    assert "not valid YAML" in q["plans/broken.yaml"]["reason"]


def test_dim_run_plans_estimates_with_the_warehouse_price(ledger):
    (p,) = rows(ledger, "SELECT * FROM marts.dim_run_plans WHERE day = ? AND run_id = 'r1'", [NOV3])
    assert p["flops_per_token"] == FPT and p["flops"] == FPT * 2e6
    assert p["ideal_gpu_hours"] == pytest.approx(IDEAL, rel=1e-12)
    assert p["checkpoint_interval_seconds"] == pytest.approx(600, rel=1e-12)
    assert p["failure_overhead"] == pytest.approx(1 / 6, rel=1e-12)
    assert p["planned_gpu_hours"] == pytest.approx(PLANNED, rel=1e-12)
    assert p["budget_gpu_hours"] == pytest.approx(BUDGET, rel=1e-12)
    # (36.00 USD × 48 node-hours) / (8 GPUs × 48 h) = 4.50 USD per GPU-hour
    assert (p["price_per_gpu_hour"], p["billing_currency"]) == (PRICE, "USD")
    assert p["price_source"].startswith("fleet H100 SXM effective cost per GPU-hour, 2026-11-02..2026-11-03")
    assert p["planned_cost"] == cost_of(PLANNED) and p["budget_cost"] == cost_of(BUDGET)
    assert (p["team"], p["missing_inputs"]) == ("ml", [])
    assert (p["peak_flops"], p["peak_flops_source"]) == (989e12, "GPU catalog: H100 SXM bf16 (models/gpu_catalog.py)")


def test_dim_run_plans_plans_a_gpu_outside_the_catalog_at_its_peak_flops_and_names_built_in_defaults(ledger):
    (p,) = rows(ledger, "SELECT * FROM marts.dim_run_plans WHERE day = ? AND run_id = 'r5'", [NOV3])
    assert (p["gpu_model_canonical"], p["peak_flops"], p["peak_flops_source"]) == (None, 2.3e15, "plan")
    # the config file sets no mfu_target: the built-in 0.40, said so (not "config")
    assert (p["mfu_target"], p["mfu_target_source"]) == (0.4, "built-in (0.4)")
    # FPT · 2e6 / (2.3e15 · 0.40) / 3600 = 9.3284901888e16 / 9.2e14 / 3600 = 101.397 s / 3600 = 0.0281657 GPU-hours
    assert p["ideal_gpu_hours"] == pytest.approx(FPT * 2e6 / 9.2e14 / 3600, rel=1e-12)
    assert p["ideal_gpu_hours"] == pytest.approx(0.0281657, rel=1e-5)
    assert p["missing_inputs"] == [] and p["price_source"] == "plan (currency: built-in USD)"


def test_fct_run_budget_daily_by_hand(ledger):
    got = {r["day"]: r for r in rows(ledger, "SELECT * FROM marts.fct_run_budget_daily WHERE run_id = 'r1'")}
    assert set(got) == {NOV2, NOV3}
    d2, d3 = got[NOV2], got[NOV3]
    # 2 Nov: jobs 1001 (6 h) and 1002 (5.5 h) on 8 GPUs = 92 GPU-hours, 414.00 USD; 800,000 tokens kept
    assert (d2["gpu_hours"], d2["gpu_hours_to_date"], d2["cost_to_date"]) == (92.0, 92.0, D("414"))
    assert d2["tokens_kept_to_date"] == 800_000
    assert d2["burn_pct"] == pytest.approx(100 * 92 / BUDGET, rel=1e-12)                 # 48.2 %
    assert d2["progress_pct"] == pytest.approx(40.0, rel=1e-12)                         # 800k of 2M
    assert d2["burn_ahead_pct"] == pytest.approx(100 * 92 / PLANNED - 40, rel=1e-12)    # 60.2 - 40
    assert d2["projected_gpu_hours"] == pytest.approx(92 * 2e6 / 8e5, rel=1e-12)       # 230 GPU-hours
    # 414 USD × 2.5 = 1035.00 USD at the current pace, against the budget
    assert d2["projected_cost"] == D("1035.00")
    assert d2["projected_overrun_cost"] == D("1035.00") - cost_of(BUDGET)
    # 3 Nov: job 1003, 10 h on 8 GPUs = 80 GPU-hours, 360.00 USD; 1,000,000 tokens
    assert (d3["gpu_hours"], d3["gpu_hours_to_date"], d3["cost_to_date"]) == (80.0, 172.0, D("774"))
    assert d3["tokens_kept_to_date"] == 1_800_000
    assert d3["burn_pct"] == pytest.approx(100 * 172 / BUDGET, rel=1e-12)                # 90.0 %
    assert d3["progress_pct"] == pytest.approx(90.0, rel=1e-12)
    assert d3["projected_gpu_hours"] == pytest.approx(172 * 2e6 / 1.8e6, rel=1e-12)    # 191.1: just over budget
    assert d3["projected_overrun_gpu_hours"] == pytest.approx(172 * 2e6 / 1.8e6 - BUDGET, rel=1e-9)
    # 774 × (2,000,000 / 1,800,000 to 1e-9 = 1.111111111) = 859.999999914 -> 860.00
    assert d3["projected_cost"] == D("860.00")
    assert (d3["planned_cost"], d3["budget_cost"], d3["billing_currency"]) == (cost_of(PLANNED), cost_of(BUDGET), "USD")


EXPECTED_ALERTS = {
    # one episode per subject, opened 2 Nov and updated 3 Nov: the run at 48.2 % of its budget, then 90.0 %
    # (30 % -> 80 %, info -> warning); burning 60.2 %, then 112.5 %, of plan for 40 %, then 90 %, of its
    # tokens (ahead); p1 at 414, then 774, of its 1000 USD (30 % -> 50 %)
    (NOV2, "run", "r1", "80%", "warning", D("774")),
    (NOV2, "run_pace", "r1", "burn_ahead", "warning", D("774")),
    (NOV2, "project_month", "p1 2026-11", "50%", "info", D("774")),
}


def alert_set(L: Landing) -> set[tuple]:
    return {(r["day"], r["subject_type"], r["subject"], r["threshold"], r["severity"], r["cost_at_stake"])
            for r in rows(L, "SELECT * FROM ops.alerts")}


def test_alerts_are_one_episode_per_subject_updated_as_thresholds_are_crossed(ledger, tmp_path):
    assert alert_set(ledger) == EXPECTED_ALERTS
    every = rows(ledger, "SELECT * FROM ops.alerts")
    assert {(r["kind"], r["status"], r["billing_currency"], r["team"]) for r in every} == {
        ("budget_threshold", "pending", "USD", "ml")}
    # still holding at 3 Nov's end; the run's and the project's crossed a higher threshold: escalated once
    assert {(r["subject_type"], r["resolved_at"], r["revision"]) for r in every} == {
        ("run", None, 1), ("run_pace", None, 0), ("project_month", None, 1)}
    ids = {r["alert_id"] for r in every}
    # re-running the days (on a copy) raises nothing new, and the ids are the same
    copy = Landing(tmp_path)
    shutil.copytree(ledger.landing, copy.landing)
    shutil.copy(ledger.warehouse, copy.warehouse)
    shutil.copy(ledger.config_path, copy.config_path)
    assert not run_pipeline(copy.landing, copy.warehouse, copy.config_path, [NOV3, NOV2])
    assert alert_set(copy) == EXPECTED_ALERTS and {r["alert_id"] for r in rows(copy, "SELECT * FROM ops.alerts")} == ids
    # a re-delivered plan replaces the old one: a bigger budget raises nothing new on a day already over 80 %
    (copy.landing / "plans" / "r1.yaml").write_text(
        (copy.landing / "plans" / "r1.yaml").read_text().replace("redundancy: 1.25", "redundancy: 1.5"))
    assert not run_pipeline(copy.landing, copy.warehouse, copy.config_path, [NOV3])
    (p,) = rows(copy, "SELECT redundancy, budget_gpu_hours FROM marts.dim_run_plans WHERE day = ? AND run_id = 'r1'",
                [NOV3])
    assert p["redundancy"] == 1.5 and p["budget_gpu_hours"] == pytest.approx(PLANNED * 1.5, rel=1e-12)
    assert rows(copy, "SELECT count(*) AS n FROM staging.stg_plans__run_plans WHERE run_id = 'r1'") == [{"n": 1}]
    assert alert_set(copy) == EXPECTED_ALERTS


def gpuledger(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pipelines.cli", *args], capture_output=True, text=True)


def test_alerts_json_prints_the_rows_of_ops_alerts(ledger):
    published = ledger.warehouse.with_name("warehouse.published.duckdb")
    out = gpuledger("alerts", "--json", "--warehouse", str(published))
    assert out.returncode == 0, out.stderr
    printed = json.loads(out.stdout)
    assert len(printed) == len(EXPECTED_ALERTS)
    assert set(printed[0]) >= {"alert_id", "kind", "severity", "subject_type", "subject", "team", "day", "raised_at",
                               "message", "cost_at_stake", "billing_currency", "status", "delivered_at", "channel"}
    assert {(a["subject"], a["threshold"]) for a in printed} == {(s, t) for _, _, s, t, _, _ in EXPECTED_ALERTS}
    table = gpuledger("alerts", "--open", "--warehouse", str(published))
    assert table.returncode == 0 and "burn_ahead" in table.stdout


def test_plan_command_takes_what_the_plan_leaves_out_from_the_published_warehouse(ledger, tmp_path):
    plan = {k: v for k, v in PLAN.items() if k not in ("checkpoint_seconds", "restart_seconds", "mtbf_gpu_hours")}
    path = tmp_path / "r1.yaml"
    path.write_text(json.dumps(plan, default=str))  # JSON is YAML
    published = ledger.warehouse.with_name("warehouse.published.duckdb")
    out = gpuledger("plan", str(path), "--json", "--warehouse", str(published), "--config", str(ledger.config_path))
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    inputs = got["inputs"]
    # the save of step 500 took 100 s (05:00:00 -> 05:01:40); the restart 06:30 -> 06:45 = 900 s;
    # 172 training-run GPU-hours over 1 interruption
    assert inputs["checkpoint_seconds"]["value"] == 100.0
    assert inputs["checkpoint_seconds"]["source"].startswith("median of 1 checkpoint saves of project p1, 2026-11-02..")
    assert inputs["restart_seconds"]["value"] == 900.0
    assert inputs["mtbf_gpu_hours"]["value"] == 172.0
    assert inputs["price_per_gpu_hour"] == {"value": "4.50", "currency": "USD", "source": inputs["price_per_gpu_hour"]["source"]}
    # M = 172 / 8 = 21.5 h = 77,400 s; τ = sqrt(2 · 100 · 77,400) = sqrt(15,480,000) = 3,934.46 s
    assert got["run_mtbf_hours"] == 21.5
    assert got["checkpoint_interval_seconds"] == pytest.approx(math.sqrt(15_480_000), rel=1e-12)
    tau = math.sqrt(15_480_000)
    assert got["failure_overhead"] == pytest.approx(100 / tau + tau / (2 * 77_400) + 900 / 77_400, rel=1e-12)
    text = gpuledger("plan", str(path), "--warehouse", str(published), "--config", str(ledger.config_path))
    assert text.returncode == 0 and "Young–Daly" in text.stdout and "marts.fct_node_hourly" in text.stdout


def line_of(path, text: str) -> int:
    return path.read_text().splitlines().index(text) + 1


def test_plan_checks_the_names_it_types_against_the_published_warehouse(ledger, tmp_path):
    published = ledger.warehouse.with_name("warehouse.published.duckdb")
    path = tmp_path / "plan.yaml"
    # a typo of the ledger's project: a warning naming the closest, and the estimate all the same
    path.write_text(dump_yaml({**PLAN, "project": "p11"}))
    out = gpuledger("plan", str(path), "--warehouse", str(published))
    assert out.returncode == 0, out.stderr
    assert out.stderr == (f"warning: {path}:{line_of(path, 'project: p11')}: `project`: no project 'p11' in the "
                          "ledger — did you mean 'p1'? "
                          "(estimated as a new project)\n")
    # without a config, the team is not the project's name: none for the new project ...
    assert out.stdout.splitlines()[0] == "plan r1: project p11, no team"
    # ... and for p1 the team the ledger charged it to, said to come from there
    path.write_text(dump_yaml(PLAN))
    got = json.loads(gpuledger("plan", str(path), "--json", "--warehouse", str(published)).stdout)
    assert (got["team"], got["team_source"]) == ("ml", "marts.dim_projects (the team the ledger charged project p1 "
                                                       "to lately)")
    assert got["defaults"]["config"] is None
    # a GPU the catalog lacks, without peak_flops: refused, naming the file, the line and the closest
    path.write_text(dump_yaml({**PLAN, "gpu_model": "A10O"}))
    out = gpuledger("plan", str(path), "--warehouse", str(published))
    assert (out.returncode, out.stdout) == (2, "")
    line = line_of(path, "gpu_model: A10O")
    assert out.stderr == (f"plan {path} names what is not there:\n  {path}:{line}: `gpu_model`: no GPU model 'A10O' "
                          "in the GPU catalog (models/gpu_catalog.py) — did you mean 'A100'? (a GPU outside it "
                          "needs peak_flops: per GPU, FLOP/s, dense bf16)\n")


def test_config_check_names_budgets_pools_and_clusters_the_ledger_lacks(ledger, tmp_path):
    published = ledger.warehouse.with_name("warehouse.published.duckdb")
    config = tmp_path / "org.yaml"
    config.write_text(dump_yaml({**ledger.config, "budgets": {"p1": 1000, "p2": 50}, "pools": {"pool-b": "infra"}}))
    out = gpuledger("config", "check", str(config), "--warehouse", str(published))
    assert out.returncode == 0 and out.stdout.startswith(f"# {config}: valid."), out.stderr
    assert out.stderr.splitlines() == [
        f"warning: {config}:{line_of(config, '  p2: 50')}: `budgets.p2`: no project 'p2' in the ledger ({published}); "
        "it has: p1",
        f"warning: {config}:{line_of(config, '  pool-b: infra')}: `pools.pool-b`: no pool 'pool-b' in the ledger "
        f"({published}) — did you mean 'pool-a'?",
    ]
    # the names are the ledger's: the config the ledger was run with has none it lacks
    assert gpuledger("config", "check", str(ledger.config_path), "--warehouse", str(published)).stderr == ""


def test_the_team_report_shows_plan_against_actual(ledger, tmp_path):
    published = ledger.warehouse.with_name("warehouse.published.duckdb")
    out = gpuledger("report", "--team", "ml", "--day", "2026-11-03", "--out", str(tmp_path), "--warehouse", str(published))
    assert out.returncode == 0, out.stderr
    md = (tmp_path / "ml" / "2026-11-03.md").read_text()
    assert "Plan against actual" in md
    # 172.0 of 191.0 GPU-hours used, 90.0 % of the tokens done, at this pace 191.1 GPU-hours
    row = next(line for line in md.splitlines() if line.startswith("| r1 (as of 2026-11-03) "))
    assert f"172.0 / {BUDGET:,.1f}" in row and "90.0 %" in row and f"{172 * 2e6 / 1.8e6:,.1f}" in row
    html = (tmp_path / "ml" / "2026-11-03.html").read_text()
    assert "Plan against actual" in html and "r1 (as of 2026-11-03)" in html
