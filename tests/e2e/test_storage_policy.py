"""storage.policy priced (docs/ledger.md#storage-opportunities), on one hand-built day, 2026-11-02. Every
figure is worked out on paper from the landing's numbers.

lustre1 (a POSIX listing, tier `hot`), 20 GiB; its one bill line of the day is $20.00, so $1.00 a GiB-day:
  run r1, finished (its last event 2026-11-01 05:00, more than 24 h before the day's end):
    10 checkpoints of 1 GiB, steps 1..10; step 10 written 2026-11-01 12:00 (12 h before the snapshot),
    the others before 2026-10-31 00:00
  run r2, running all day on n1: 5 checkpoints of 1 GiB, steps 1..5, written before 2026-10-31 00:00
  datasets of p-data: stale.bin 2 GiB, last read 2026-07-01 and written 2026-06-01; fresh.bin 3 GiB read yesterday
policy: checkpoints hot for 24 h then STANDARD, keep the last 3; datasets stale after 90 days; STANDARD is
$0.03 a GiB-month in the rate card, $0.001 a GiB-day in November.

  prune_checkpoints r1: steps 1..7, their whole cost          7 × $1.00         = $7.00
  tier_down r1: steps 8 and 9 (kept, past 24 h; step 10 is not) 2 × ($1 − $0.001) = $1.998
  tier_down r2: all 5 (a running run is never pruned)          5 × ($1 − $0.001) = $4.995
  stale_datasets p-data: stale.bin                             2 × $1.00         = $2.00

Three more stores show that an object's cost is the least of its share of the bill and its bytes at the
unit price of the lines billed by bytes over time (what fewer bytes save):
fsx2 (tier `hot`) is billed by capacity: 2,400 GB provisioned, one line of $12.00 for 80 GB-Months that day
($0.15 a GB-month, $0.005 a GiB-day), 1,500 GiB used (stale.bin 600 GiB, fresh.bin 600, run r3's one
checkpoint 300, written long ago):
  stale_datasets fsx2: share $12 × 600/1500 = $4.80, at the unit price 600 × $0.005 = $3.00     → $3.00
  tier_down r3: share $2.40, at the unit price 300 × $0.005 = $1.50, less 300 × $0.001 cold    → $1.20
b1 (STANDARD) has a storage line of $0.30 for 10 GB-Mo ($0.001 a GiB-day) and a request line of $0.60,
300 GiB, old.bin 100 GiB stale: share $0.90 × 100/300 = $0.30, at the unit price $0.10 (requests are not
saved by fewer bytes)                                                                           → $0.10
b2 (STANDARD) has a line of $0.30 for 10 GB-Mo but 600 GiB inventoried, old.bin 300 GiB stale: share
$0.15, at the unit price $0.30                                                                  → $0.15
"""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal as D

import duckdb
import pytest

from pipelines.lib.config import OrgConfig
from pipelines.lib.warehouse import bootstrap
from tests.support.pipeline import dict_rows, ledger_of
from tests.support.sql_steps import rows_of
from tests.support.scenario_builder import Landing, utc
from tests.support.storage_landing import posix_listing

DAY = date(2026, 11, 2)
GIB = 1 << 30
OLD = "2026-10-30T00:00:00Z"
CONFIG = {"storage": {
    "rules": [{"pattern": "/lustre/ckpt/{run_id}/step_{step}/", "kind": "checkpoint"},
              {"pattern": "/lustre/datasets/", "kind": "dataset", "project": "p-data"},
              {"pattern": "/fsx2/ckpt/{run_id}/step_{step}/", "kind": "checkpoint"},
              {"pattern": "/fsx2/datasets/", "kind": "dataset", "project": "p-data"},
              {"pattern": "/b*/datasets/", "kind": "dataset", "project": "p-data"}],
    "rate_card": [{"tier": "STANDARD", "price_per_gb_month": "0.03"}],
    "policy": {"checkpoint": {"hot_tiers": ["hot"], "max_hot_age_hours": 24, "cold_tier": "STANDARD",
                              "keep_last": 3},
               "dataset": {"stale_after_days": 90}}}}


@pytest.fixture(scope="module")
def ledger(tmp_path_factory):
    land = Landing(tmp_path_factory.mktemp("storage_policy"))
    land.config = CONFIG
    land.node("n1")
    land.node_hours("n1", utc(2026, 11, 2), 24, "10.00")
    land.job("c1", "2", account="p-train", start="2026-11-01T00:00:00", end="Unknown", state="RUNNING",
             host="n1")
    land.line(utc(2026, 11, 2), utc(2026, 11, 3), "Usage", "20.00", resource_id="lustre1", service="Storage")
    for store, cost, quantity, unit in (("fsx2", "12.00", "80", "GB-Month"), ("b1", "0.30", "10", "GB-Mo"),
                                        ("b1", "0.60", "600000", "Requests"), ("b2", "0.30", "10", "GB-Mo")):
        land.line(utc(2026, 11, 2), utc(2026, 11, 3), "Usage", cost, resource_id=store, service="Storage",
                  extra={"PricingQuantity": quantity, "PricingUnit": unit})
    for run in ("r1", "r2", "r3"):
        land.event(run, "run_config", utc(2026, 10, 20), project="p-train", job_id="1" if run == "r1" else "2")
    land.event("r1", "checkpoint_saved", utc(2026, 11, 1, 5), job_id="1", step=10)
    land.event("r2", "step", utc(2026, 11, 2, 12), job_id="2", step=6, tokens=1000)
    land.write()
    rows = [(f"/lustre/ckpt/r1/step_{s}/model.pt", GIB, "2026-11-01T12:00:00Z" if s == 10 else OLD, "hot")
            for s in range(1, 11)]
    rows += [(f"/lustre/ckpt/r2/step_{s}/model.pt", GIB, OLD, "hot") for s in range(1, 6)]
    rows += [("/lustre/datasets/stale.bin", 2 * GIB, "2026-06-01T00:00:00Z", "hot", "2026-07-01T00:00:00Z"),
             ("/lustre/datasets/fresh.bin", 3 * GIB, "2026-06-01T00:00:00Z", "hot", "2026-11-01T09:00:00Z")]
    rows = [r if len(r) == 5 else (*r, "") for r in rows]
    posix_listing(land.landing, "lustre1", "2026-11-02", rows, atime=True)
    stale, fresh = ("2026-06-01T00:00:00Z", "2026-07-01T00:00:00Z"), ("2026-06-01T00:00:00Z", "2026-11-01T09:00:00Z")
    for store, tier, files in (
            ("fsx2", "hot", [("datasets/stale.bin", 600, stale), ("datasets/fresh.bin", 600, fresh),
                             ("ckpt/r3/step_1/model.pt", 300, (OLD, ""))]),
            ("b1", "STANDARD", [("datasets/old.bin", 100, stale), ("datasets/new.bin", 200, fresh)]),
            ("b2", "STANDARD", [("datasets/old.bin", 300, stale), ("datasets/new.bin", 300, fresh)])):
        posix_listing(land.landing, store, "2026-11-02",
                      [(f"/{store}/{path}", gib * GIB, mtime, tier, atime) for path, gib, (mtime, atime) in files],
                      atime=True)
    with ledger_of(land, [DAY]) as con:
        yield con


def _storage_opportunities(con) -> dict:
    rows = dict_rows(con, """SELECT kind, subject, team, project, run_id, saving_window, saving_monthly,
                                    days_covered, evidence, action, details
                             FROM marts.fct_savings_opportunities
                             WHERE day = ? AND kind IN ('prune_checkpoints', 'tier_down', 'stale_datasets')""", [DAY])
    return {(r["kind"], r["subject"]): r for r in rows}


def test_the_policy_prices_pruning_tiering_and_stale_datasets_exactly(ledger):
    got = _storage_opportunities(ledger)
    assert {k: r["saving_window"] for k, r in got.items()} == {
        ("prune_checkpoints", "r1"): D("7.00"), ("tier_down", "r1"): D("1.998"), ("tier_down", "r2"): D("4.995"),
        ("stale_datasets", "lustre1"): D("2.00"),
        ("stale_datasets", "fsx2"): D("3.00"), ("tier_down", "r3"): D("1.20"),
        ("stale_datasets", "b1"): D("0.10"), ("stale_datasets", "b2"): D("0.15")}
    # one day of the window in the ledger: a month is 30 of them
    assert all(r["days_covered"] == 1 and r["saving_monthly"] == 30 * r["saving_window"] for r in got.values())
    assert {k: (r["team"], r["project"], r["run_id"]) for k, r in got.items()} == {
        ("prune_checkpoints", "r1"): ("p-train", "p-train", "r1"), ("tier_down", "r1"): ("p-train", "p-train", "r1"),
        ("tier_down", "r2"): ("p-train", "p-train", "r2"), ("stale_datasets", "lustre1"): ("p-data", "p-data", None),
        ("stale_datasets", "fsx2"): ("p-data", "p-data", None), ("tier_down", "r3"): ("p-train", "p-train", "r3"),
        ("stale_datasets", "b1"): ("p-data", "p-data", None), ("stale_datasets", "b2"): ("p-data", "p-data", None)}


def test_each_opportunity_names_the_objects_it_rests_on(ledger):
    got = _storage_opportunities(ledger)
    prune = json.loads(got[("prune_checkpoints", "r1")]["details"])
    assert (prune["objects"], prune["checkpoints"], prune["bytes"], prune["keep_last"]) == (7, 7, 7 * GIB, 3)
    assert got[("prune_checkpoints", "r1")]["action"] == (
        "Delete run r1's checkpoints up to step 7 and keep the last 3: 0.01 TB.")
    assert "keeps 10 checkpoints" in got[("prune_checkpoints", "r1")]["evidence"]
    tier = json.loads(got[("tier_down", "r1")]["details"])
    assert sorted(tier["largest"]) == ["/lustre/ckpt/r1/step_8/model.pt", "/lustre/ckpt/r1/step_9/model.pt"]
    assert tier["cold_tier"] == "STANDARD"
    stale = json.loads(got[("stale_datasets", "lustre1")]["details"])
    assert stale["largest"] == ["/lustre/datasets/stale.bin"]
    assert got[("stale_datasets", "lustre1")]["evidence"] == (
        "1 dataset object of p-data (0.00 TB) in lustre1 was neither read nor written for 90 days or more")


def test_the_storage_opportunities_stay_within_the_storage_cost(ledger):
    (storage,) = ledger.execute("SELECT sum(effective_cost) FROM marts.fct_storage_daily WHERE day = ?",
                                [DAY]).fetchone()
    assert storage == D("33.20")
    assert sum(r["saving_window"] for r in _storage_opportunities(ledger).values()) <= storage


def _savings_with(ledger, overhead: dict, storage_tier: str) -> dict:
    """The day's savings mart rebuilt over a copy of the fixture's warehouse in which run r2 saved a
    checkpoint every `overhead["checkpoint_interval_s"]` against the Young–Daly `young_daly_interval_s`,
    its interval's excess costing $50.00 within $100.00 of save and disruption badput, and its
    checkpoints costing $10.00 stored on `storage_tier` that day: the checkpoint_interval rows by run."""

    (path,) = [r[2] for r in ledger.execute("PRAGMA database_list").fetchall()
               if r[1] == ledger.execute("SELECT current_database()").fetchone()[0]]
    con = duckdb.connect()
    con.execute(f"ATTACH '{path}' AS src (READ_ONLY)")
    for schema, table in con.execute("SELECT table_schema, table_name FROM information_schema.tables "
                                     "WHERE table_catalog = 'src' AND table_type = 'BASE TABLE'").fetchall():
        con.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
        con.execute(f"CREATE TABLE {schema}.{table} AS SELECT * FROM src.{schema}.{table}")
    con.execute("DETACH src")
    bootstrap(con)  # the macros the SQL calls
    con.execute("""INSERT INTO marts.fct_run_overhead_daily BY NAME
                   SELECT ?::DATE AS day, 'r2' AS run_id, 'p-train' AS team, 'p-train' AS project, 'USD' AS billing_currency,
                          ?::DOUBLE AS checkpoint_interval_s, 60.0 AS checkpoint_save_s, 86400.0 AS mtbf_s,
                          ?::DOUBLE AS young_daly_interval_s, 50.00::DECIMAL(38, 10) AS checkpoint_interval_cost""",
                [DAY, overhead["checkpoint_interval_s"], overhead["young_daly_interval_s"]])
    con.execute("""INSERT INTO marts.fct_run_badput_daily BY NAME
                   SELECT ?::DATE AS day, 'r2' AS run_id, 'USD' AS billing_currency, 'disruption' AS kind,
                          100.00::DECIMAL(38, 18) AS effective_cost, 0.0 AS gpu_seconds""", [DAY])
    con.execute("""INSERT INTO intermediate.int_storage_costs BY NAME
                   SELECT ?::DATE AS day, 'l9' AS line_key, 'bucket9' AS store, ? AS tier, 'checkpoint' AS kind,
                          'r2' AS run_id, 'p-train' AS project, 'p-train' AS team, 1 AS object_count,
                          1073741824::DECIMAL(38, 0) AS bytes, 'USD' AS billing_currency, 'bill' AS priced_by,
                          10.00::DECIMAL(38, 18) AS effective_cost, 10.00::DECIMAL(38, 18) AS billed_cost""",
                [DAY, storage_tier])
    cfg = OrgConfig.model_validate(CONFIG)
    rows = rows_of(con, "marts/fct_savings_opportunities", {"day": DAY, **cfg.sql_params()})
    return {r["run_id"]: r["saving_window"] for r in rows if r["kind"] == "checkpoint_interval"}


def test_checkpointing_more_often_is_worth_only_what_its_extra_storage_leaves(ledger):
    # twice as often: twice the checkpoints in the bucket, $10.00 more a day to store: $50 − $10
    assert _savings_with(ledger, {"checkpoint_interval_s": 7200, "young_daly_interval_s": 3600}, "STANDARD") == {
        "r2": D("40.00")}
    # on the policy's hot tier (a file system's provisioned capacity) more checkpoints cost nothing more
    assert _savings_with(ledger, {"checkpoint_interval_s": 7200, "young_daly_interval_s": 3600}, "hot") == {
        "r2": D("50.00")}
    # half as often: fewer checkpoints, and their storage saved is the storage opportunities' to claim
    assert _savings_with(ledger, {"checkpoint_interval_s": 3600, "young_daly_interval_s": 7200}, "STANDARD") == {
        "r2": D("50.00")}
