"""A run plan's estimate against a hand computation (docs/plans.md#the-estimate).

Every expected number is worked out below from the formulas with Python's float arithmetic and
`decimal`, written as a literal with its arithmetic beside it — never by calling the code under test.
The estimate itself is `gpuledger plan`'s: the mart's SQL steps run on the plan in memory.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal as D

import polars as pl
import pytest

from pipelines.cli.plan import DEFAULT_COLUMNS, DEFAULTS_STEP, KEYS_STEP, as_json, estimate
from pipelines.ingest.plans import plan_frame, plan_row, read_plan
from pipelines.lib.config import OrgConfig
from pipelines.lib.warehouse import run_sql, sql
from tests.support.sql_steps import given, warehouse

EXAMPLE = """\
run_id: llm-8b-pretrain-v2
project: llm-8b
model: {params: 8.0e9, active_params: 8.0e9, layers: 32, heads: 32, head_dim: 128, seq_len: 8192}
tokens: 1.5e12
gpu_model: H100-SXM
gpus: 1024
dtype: bf16
mfu_target: 0.40
redundancy: 1.3
price_per_gpu_hour: 3.12
checkpoint_seconds: 60
restart_seconds: 600
mtbf_gpu_hours: 50000
start: 2026-12-01
"""


def plan_of(text: str):
    plan, problems = read_plan(text)
    assert plan is not None, problems
    return plan


def test_the_example_plan_is_exact_against_a_hand_computation():
    row = estimate(plan_of(EXAMPLE), "example.yaml", OrgConfig(), None)

    # flops_per_token = 6·N + 12·L·H·Q·T = 6·8e9 + 12·32·32·128·8192 = 48,000,000,000 + 12,884,901,888
    assert row["flops_per_token"] == 60_884_901_888
    # flops = 60,884,901,888 · 1.5e12 = 9.1327352832e22 (exact in a double)
    assert row["flops"] == 9.1327352832e22
    # ideal = 9.1327352832e22 / (989e12 · 0.40) / 3600 = 9.1327352832e22 / 3.956e14 / 3600
    #       = 230,857,818.08 s / 3600 = 64,127.17168857432 GPU-hours
    assert row["ideal_gpu_hours"] == pytest.approx(64_127.17168857432, rel=1e-13)
    # M = 50,000 GPU-hours / 1024 GPUs = 48.828125 h = 175,781.25 s
    assert row["run_mtbf_hours"] == 48.828125
    # τ = sqrt(2 · 60 · 175,781.25) = sqrt(21,093,750) = 4,592.793267718459 s
    assert row["checkpoint_interval_seconds"] == pytest.approx(4_592.793267718459, rel=1e-13)
    # overhead = 60/4592.793 + 4592.793/(2·175,781.25) + 600/175,781.25
    #          = 0.0130640... + 0.0130640... + 0.0034133... = 0.029541223923020568
    assert row["failure_overhead"] == pytest.approx(0.029541223923020568, rel=1e-12)
    # planned = 64,127.17168857432 · 1.029541223923 = 66,021.56682697649 GPU-hours
    assert row["planned_gpu_hours"] == pytest.approx(66_021.56682697649, rel=1e-12)
    # budget = 66,021.56682697649 · 1.3 = 85,828.03687506943 GPU-hours
    assert row["budget_gpu_hours"] == pytest.approx(85_828.03687506943, rel=1e-12)
    # wall clock = 66,021.5668 / 1024 / 24 = 2.6864244314362176 days
    assert row["wall_clock_days"] == pytest.approx(2.6864244314362176, rel=1e-12)
    # money: hours to 1e-6 GPU-hour times the exact price, to the cent half to even
    # 66,021.566827 · 3.12 = 205,987.28850024 -> 205,987.29
    assert row["planned_cost"] == D("205987.29")
    # 85,828.036875 · 3.12 = 267,783.47505000 -> 267,783.48
    assert row["budget_cost"] == D("267783.48")
    assert row["billing_currency"] == "USD" and row["missing_inputs"] == []

    out = as_json(row)
    assert out["planned_cost"] == "205987.29" and out["budget_cost"] == "267783.48"
    assert set(out) >= {"flops", "ideal_gpu_hours", "run_mtbf_hours", "checkpoint_interval_seconds",
                        "failure_overhead", "planned_gpu_hours", "budget_gpu_hours", "planned_cost", "budget_cost",
                        "wall_clock_days", "inputs"}
    # no config file: the currency is the built-in one, and said so
    assert out["inputs"]["price_per_gpu_hour"] == {"value": "3.12", "source": "plan (currency: built-in USD)",
                                                   "currency": "USD"}
    assert out["inputs"]["peak_flops"] == {"value": 989e12, "source": "GPU catalog: H100 SXM bf16 (models/gpu_catalog.py)"}


def test_the_causal_convention_halves_the_attention_term_and_the_config_fills_what_the_plan_leaves_out():
    text = EXAMPLE.replace("mfu_target: 0.40\n", "").replace("redundancy: 1.3\n", "").replace("dtype: bf16\n", "")
    cfg = OrgConfig(attention_flops="causal", mfu_target=0.5)
    row = estimate(plan_of(text), "example.yaml", cfg, None)
    # 6·8e9 + 6·32·32·128·8192 = 48,000,000,000 + 6,442,450,944
    assert row["flops_per_token"] == 54_442_450_944
    # 54,442,450,944 · 1.5e12 / (989e12 · 0.5) / 3600 = 165,144,136.13 s / 3600 = 45,873.3156 GPU-hours
    assert row["ideal_gpu_hours"] == pytest.approx(8.1663676416e22 / 4.945e14 / 3600, rel=1e-13)
    assert row["ideal_gpu_hours"] == pytest.approx(45_873.3156, abs=1e-4)
    sources = as_json(row)["inputs"]
    assert sources["mfu_target"] == {"value": 0.5, "source": "org config mfu_target"}
    assert sources["redundancy"] == {"value": 1.3, "source": "built-in (1.3)"}
    assert sources["dtype"] == {"value": "bf16", "source": "built-in (bf16)"}


def test_an_input_nobody_has_is_named_and_leaves_what_needs_it_null():
    text = EXAMPLE.replace("price_per_gpu_hour: 3.12\n", "").replace("mtbf_gpu_hours: 50000\n", "")
    row = estimate(plan_of(text), "example.yaml", OrgConfig(), None)
    assert row["missing_inputs"] == ["price_per_gpu_hour", "mtbf_gpu_hours"]
    assert row["ideal_gpu_hours"] == pytest.approx(64_127.17168857432, rel=1e-13)  # needs neither
    assert row["planned_gpu_hours"] is None and row["planned_cost"] is None
    reasons = as_json(row)["missing_inputs"]
    assert "set price_per_gpu_hour" in reasons["price_per_gpu_hour"]
    assert "no warehouse" in reasons["mtbf_gpu_hours"]


@pytest.mark.parametrize("amount, cents", [("0.125", "0.12"), ("0.135", "0.14"), ("-0.125", "-0.12"),
                                           ("2.675", "2.68"), ("2.665", "2.66"), ("1.004999", "1.00"),
                                           ("12345678901.994999999999999999", "12345678901.99")])
def test_money_rounds_to_the_cent_half_to_even(amount, cents):
    con = warehouse()
    assert con.execute("SELECT cents_half_even($x::DECIMAL(38, 18))", {"x": amount}).fetchall()[0][0] == D(cents)


def _marts(con) -> None:
    """The marts step 20 reads, with given rows: 2 days of one H100 node billed in USD (and a few
    hours in EUR), two interruptions, three checkpoint saves."""
    given(con, "marts.dim_nodes", [(date(2026, 11, 1), "h1", "H100 SXM"), (date(2026, 11, 2), "h1", "H100 SXM")],
          schema={"day": pl.Date, "hostname": pl.String, "gpu_model_canonical": pl.String})
    given(con, "marts.fct_node_hourly", [
        # day 1: 8 GPUs × 24 h = 192 GPU-hours for 600.00 USD; day 2: 192 GPU-hours for 648.00 USD
        (date(2026, 11, 1), "h1", "USD", 192 * 3600.0, D("600.00")),
        (date(2026, 11, 2), "h1", "USD", 192 * 3600.0, D("648.00")),
        # fewer GPU-hours in EUR: the plan without a currency takes USD, the one asking for EUR gets EUR
        (date(2026, 11, 2), "h1", "EUR", 10 * 3600.0, D("25.00")),
    ], schema={"day": pl.Date, "hostname": pl.String, "billing_currency": pl.String, "gpu_seconds": pl.Float64,
               "effective_cost": pl.Decimal(38, 18)})
    # the price of a GPU-hour is its own mart, computed here by its SQL from the rows above
    con.execute("CREATE TABLE marts.fct_gpu_price_daily AS " + sql("marts/fct_gpu_price_daily"),
                {"day": date(2026, 11, 2)})
    given(con, "marts.fct_run_efficiency_daily", [(date(2026, 11, 1), 3000 * 3600.0), (date(2026, 11, 2), 1000 * 3600.0)],
          schema={"day": pl.Date, "gpu_seconds": pl.Float64})
    given(con, "marts.fct_rerun_loss", [
        # interruption a: 16 GPUs, restart 16 × 300 s; b: 32 GPUs, restart 32 × 900 s over two days
        (date(2026, 11, 1), "a", 16 * 300.0), (date(2026, 11, 1), "b", 32 * 400.0), (date(2026, 11, 2), "b", 32 * 500.0),
    ], schema={"day": pl.Date, "interrupted_job_uid": pl.String, "restart_gpu_seconds": pl.Float64})
    given(con, "marts.fct_job_cost", [(date(2026, 11, 1), "a", 16), (date(2026, 11, 1), "b", 32)],
          schema={"day": pl.Date, "job_uid": pl.String, "gpus": pl.Int32})
    given(con, "marts.fct_checkpoint_saves", [
        (date(2026, 11, 1), "llm-8b", 60.0), (date(2026, 11, 2), "llm-8b", 100.0), (date(2026, 11, 2), "other", 400.0),
        (date(2026, 11, 2), "llm-8b", None),  # no step event to time it from: not counted
    ], schema={"day": pl.Date, "project": pl.String, "save_seconds": pl.Float64})


def test_the_warehouse_defaults_over_the_last_30_days_by_hand():
    con = warehouse()
    _marts(con)
    plans = [plan_row(plan_of(EXAMPLE.replace("price_per_gpu_hour: 3.12\n", "")), "a.yaml"),
             plan_row(plan_of(EXAMPLE.replace("run_id: llm-8b-pretrain-v2", "run_id: eur")
                              .replace("project: llm-8b", "project: new").replace("price_per_gpu_hour: 3.12", "currency: EUR")),
                      "b.yaml")]
    con.register("plans_in", plan_frame(plans))
    con.execute("INSERT INTO staging.stg_plans__run_plans BY NAME SELECT * FROM plans_in")
    params = {"day": date(2026, 11, 2), **OrgConfig().sql_params()}
    run_sql(con, KEYS_STEP, params)
    run_sql(con, DEFAULTS_STEP, params)
    got = {r["run_id"]: r for r in con.sql("SELECT * FROM plan_defaults").pl().to_dicts()}
    usd, eur = got["llm-8b-pretrain-v2"], got["eur"]
    # (600 + 648) USD / 384 GPU-hours = 3.25 USD per GPU-hour
    assert (usd["observed_price_per_gpu_hour"], usd["price_currency"]) == (D("3.25"), "USD")
    # 25 EUR / 10 GPU-hours
    assert (eur["observed_price_per_gpu_hour"], eur["price_currency"]) == (D("2.5"), "EUR")
    # 4000 training-run GPU-hours / 2 interruptions
    assert (usd["observed_mtbf_gpu_hours"], usd["mtbf_interruptions"]) == (2000.0, 2)
    # restarts: a 4800/16 = 300 s, b (12800 + 16000)/32 = 900 s; median of the two = 600 s
    assert usd["observed_restart_seconds"] == 600.0
    # the project's own saves: median(60, 100) = 80 s; a project without saves takes every run's: median(60, 100, 400)
    assert (usd["observed_checkpoint_seconds"], usd["checkpoint_scope"], usd["checkpoint_saves"]) == (80.0, "project", 2)
    assert (eur["observed_checkpoint_seconds"], eur["checkpoint_scope"], eur["checkpoint_saves"]) == (100.0, "fleet", 3)
    assert (usd["window_first_day"], usd["window_last_day"]) == (date(2026, 10, 4), date(2026, 11, 2))
    # the columns `gpuledger plan` gives a plan estimated without a warehouse are this step's
    columns = {name: dtype for name, dtype, *_ in con.execute("DESCRIBE plan_defaults").fetchall()}
    assert columns == {"run_id": "VARCHAR", **{c: t.replace(", ", ",") for c, t in DEFAULT_COLUMNS.items()}}
