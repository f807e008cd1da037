"""Inventoried storage end to end (docs/ingest/storage.md), on one hand-built day, 2026-11-02. Every
expected figure is worked out on paper below from the landing's numbers, never from the pipeline's SQL.

ckpt-bucket (S3 Inventory, CSV.gz; its manifest landed twice: the copy changes nothing)
  runs/r1/step_100/model.pt  3,000,000,000 B  STANDARD     run r1 (project p-train)
  runs/r1/step_200/model.pt  1,000,000,000 B  STANDARD     run r1
  runs/r2/step_50/model.pt   2,000,000,000 B  STANDARD     run r2 (project p-eval)
  runs/r3/step_10/model.pt   4,000,000,000 B  STANDARD_IA  run r3 (project p-train)
  misc/notes one.txt         1,000,000,000 B  STANDARD     no rule: kind other, the lines are untagged -> _unallocated
  runs/r9/step_1/bad.pt      size 'oops'                   quarantined (file and row), not staged
its bill lines of the day, all untagged (without an inventory they would be `shared`):
  L1 TimedStorage-ByteHrs (STANDARD)        $10.00  over the STANDARD bytes, 7e9: r1 4/7, r2 2/7, other 1/7
  L2 Standard-Infrequent Access              $1.00  over the STANDARD_IA bytes: r3 alone
  L3 Requests-Tier1 (no tier)                $0.33  over all 11e9 bytes: r1 .12, r2 .06, r3 .12, other .03
archive-bucket (Parquet): one GLACIER object of 1 GiB, no bill line: the rate card, $0.0036 a GiB-month
lustre1 (POSIX listing): two dataset files, nothing prices them: unpriced, counted
a node n1 ($10 an hour) runs job 1 of run r1 (p-train) all day; a network line of $5 is shared by GPU cost.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal as D

import duckdb
import pytest

from tests.support.pipeline import dict_rows, ledger_of
from tests.support.scenario_builder import Landing, utc
from tests.support.storage_landing import posix_listing, s3_inventory

DAY = date(2026, 11, 2)
E18 = 10 ** 18
CENT = D("0.01")

# L1, $10.00 = 10·10^18 units over 4e9 : 2e9 : 1e9 by largest remainder:
#   r1 40/7 = 5714285714285714285.714…, r2 20/7 = 2857142857142857142.857…, other 10/7 = 1428571428571428571.428…
#   the floors sum to 9999999999999999998; the 2 units left go to the largest remainders, r2 (.857) and r1 (.714)
L1_R1, L1_R2, L1_OTHER = D(5714285714285714286) / E18, D(2857142857142857143) / E18, D(1428571428571428571) / E18
assert L1_R1 + L1_R2 + L1_OTHER == D("10.00")
# L3, $0.33 over 4 : 2 : 4 : 1 (of 11): .12, .06, .12, .03 exactly
R1 = L1_R1 + D("0.12")                 # 5.834285714285714286
R2 = L1_R2 + D("0.06")                 # 2.917142857142857143
R3 = D("1.00") + D("0.12")             # 1.12
OTHER = L1_OTHER + D("0.03")           # 1.458571428571428571
assert R1 + R2 + R3 + OTHER == D("11.33")
assert (R1.quantize(CENT), R2.quantize(CENT), R3.quantize(CENT)) == (D("5.83"), D("2.92"), D("1.12"))
# 1 GiB of GLACIER at $0.0036 a GiB-month, November's 30 days: $0.00012 a day
GLACIER_DAY = D("0.0036") / 30

# two of the ten rows are quarantined on purpose, past the default 5 % the contract check allows
CONFIG = {"quarantine": {"max_share": 0.5}, "storage": {
    "rules": [{"pattern": "s3://ckpt-bucket/runs/{run_id}/step_{step}/", "kind": "checkpoint"},
              {"pattern": "/lustre/datasets/", "store": "lustre1", "kind": "dataset", "project": "p-data"}],
    "rate_card": [{"tier": "GLACIER", "price_per_gb_month": "0.0036"}]}}


@pytest.fixture(scope="module")
def storage_landing(tmp_path_factory):
    land = Landing(tmp_path_factory.mktemp("storage"))
    land.config = CONFIG
    land.node("n1")
    land.node_hours("n1", utc(2026, 11, 2), 24, "10.00")
    land.job("c1", "1", account="p-train", start="2026-11-02T00:00:00", end="2026-11-03T00:00:00",
             state="COMPLETED", host="n1")
    start, end = utc(2026, 11, 2), utc(2026, 11, 3)
    for usage, amount in (("TimedStorage-ByteHrs", "10.00"), ("Standard-Infrequent Access storage used", "1.00"),
                          ("Requests-Tier1", "0.33")):
        land.line(start, end, "Usage", amount, resource_id="ckpt-bucket", service="Storage",
                  extra={"ChargeDescription": usage})
    land.line(start, end, "Usage", "5.00", resource_id="vpc-1", service="Networking")
    for run, project in (("r1", "p-train"), ("r2", "p-eval"), ("r3", "p-train")):
        land.event(run, "run_config", utc(2026, 11, 1), project=project)
    land.event("r1", "step", utc(2026, 11, 2, 1), job_id="1", step=100, tokens=1000)
    land.write()
    objects = [("runs/r1/step_100/model.pt", "3000000000", "2026-11-01T10:00:00.000Z", "STANDARD"),
               ("runs/r1/step_200/model.pt", "1000000000", "2026-11-01T20:00:00.000Z", "STANDARD"),
               ("runs/r2/step_50/model.pt", "2000000000", "2026-10-30T08:00:00.000Z", "STANDARD"),
               ("runs/r3/step_10/model.pt", "4000000000", "2026-10-01T00:00:00.000Z", "STANDARD_IA"),
               ("misc/notes one.txt", "1000000000", "2026-09-01T00:00:00.000Z", "STANDARD"),
               ("runs/r9/step_1/bad.pt", "oops", "2026-11-01T00:00:00.000Z", "STANDARD")]
    manifest = s3_inventory(land.landing, "ckpt-bucket", utc(2026, 11, 2, 0, 5), objects)
    copy = land.landing / "inventory" / "storage" / "copies" / "2026-11-02" / "manifest.json"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(manifest.read_bytes())
    s3_inventory(land.landing, "archive-bucket", utc(2026, 11, 2, 0, 5),
                 [("old/run0.tar", str(1 << 30), "2025-01-01T00:00:00.000Z", "GLACIER")], fmt="Parquet")
    posix_listing(land.landing, "lustre1", "2026-11-02",
                  [("/lustre/datasets/web/shard-0.bin", 500, 1793500000, "hot"),
                   ("/lustre/datasets/web/shard-1.bin", 700, "yesterday", "hot")])
    return land


@pytest.fixture(scope="module")
def ledger(storage_landing):
    with ledger_of(storage_landing, [DAY]) as con:
        yield con


def test_each_runs_checkpoints_cost_exactly_their_share_of_the_bucket_lines(ledger):
    rows = dict_rows(ledger, """SELECT store, project, run_id, kind, tier, priced_by, object_count, bytes,
                                       effective_cost, billed_cost, bill_lines
                                FROM marts.fct_storage_daily WHERE day = ? AND store = 'ckpt-bucket'
                                ORDER BY project, run_id""", [DAY])
    got = {(r["project"], r["run_id"], r["kind"], r["tier"]): (r["object_count"], r["bytes"], r["effective_cost"])
           for r in rows}
    assert got == {("_unallocated", None, "other", "STANDARD"): (1, 1_000_000_000, OTHER),
                   ("p-eval", "r2", "checkpoint", "STANDARD"): (1, 2_000_000_000, R2),
                   ("p-train", "r1", "checkpoint", "STANDARD"): (2, 4_000_000_000, R1),
                   ("p-train", "r3", "checkpoint", "STANDARD_IA"): (1, 4_000_000_000, R3)}
    assert all(r["priced_by"] == "bill" and r["billed_cost"] == r["effective_cost"] for r in rows)
    assert {r["run_id"]: r["bill_lines"] for r in rows} == {None: 2, "r1": 2, "r2": 2, "r3": 2}


def test_the_day_is_conserved_and_the_storage_lines_go_by_objects(ledger):
    total = ledger.execute("SELECT sum(effective_cost), sum(billed_cost) FROM marts.fct_cost_daily WHERE day = ?",
                           [DAY]).fetchall()[0]
    assert total == (D("256.33"), D("256.33"))  # 24 × $10 + $11.33 of storage + $5 of network
    storage = dict(ledger.execute("""SELECT project, sum(effective_cost) FROM marts.fct_cost_daily
                                     WHERE day = ? AND category = 'storage' GROUP BY 1""", [DAY]).fetchall())
    assert storage == {"p-train": R1 + R3, "p-eval": R2, "_unallocated": OTHER}
    # nothing else moved: the network line is still shared by GPU cost, all to p-train
    shared = ledger.execute("SELECT project, sum(effective_cost) FROM marts.fct_cost_daily "
                            "WHERE day = ? AND category = 'shared' GROUP BY 1", [DAY]).fetchall()
    assert shared == [("p-train", D("5.00"))]


def test_a_store_without_bill_lines_is_priced_by_the_rate_card_and_one_without_a_price_is_counted(ledger):
    rows = dict_rows(ledger, """SELECT store, kind, project, tier, priced_by, object_count, bytes, gb_days,
                                       effective_cost, billing_currency
                                FROM marts.fct_storage_daily WHERE day = ? AND store <> 'ckpt-bucket'
                                ORDER BY store""", [DAY])
    assert [(r["store"], r["priced_by"], r["object_count"], r["bytes"], r["effective_cost"], r["billing_currency"])
            for r in rows] == [("archive-bucket", "rate_card", 1, 1 << 30, GLACIER_DAY, "USD"),
                               ("lustre1", "unpriced", 2, 1200, None, None)]
    assert rows[0]["gb_days"] == 1.0
    assert (rows[1]["kind"], rows[1]["project"]) == ("dataset", "p-data")
    # rate-card storage is priced, not billed: it is in no fct_cost_daily row
    assert ledger.execute("SELECT count(*) FROM marts.fct_cost_daily WHERE day = ? AND cost_source <> 'bill'",
                          [DAY]).fetchall() == [(0,)]


def test_checkpoint_storage_per_run_in_run_efficiency(ledger):
    rows = ledger.execute("""SELECT run_id, checkpoint_storage_cost, checkpoint_bytes
                             FROM marts.fct_run_efficiency_daily WHERE day = ?""", [DAY]).fetchall()
    assert rows == [("r1", R1, 4_000_000_000)]


def test_objects_classified_with_run_and_step(ledger):
    rows = ledger.execute("""SELECT key, kind, run_id, step, project, age_days FROM intermediate.int_storage_objects
                             WHERE day = ? AND store = 'ckpt-bucket' ORDER BY key""", [DAY]).fetchall()
    assert rows == [("misc/notes one.txt", "other", None, None, None, 62),
                    ("runs/r1/step_100/model.pt", "checkpoint", "r1", 100, "p-train", 1),
                    ("runs/r1/step_200/model.pt", "checkpoint", "r1", 200, "p-train", 1),
                    ("runs/r2/step_50/model.pt", "checkpoint", "r2", 50, "p-eval", 3),
                    ("runs/r3/step_10/model.pt", "checkpoint", "r3", 10, "p-train", 32)]


def test_malformed_rows_are_quarantined_with_file_and_row(ledger):
    rows = ledger.execute("""SELECT file, row_ref, reason FROM ops.quarantine WHERE source = 'storage'
                             ORDER BY file""").fetchall()
    assert rows == [
        ("inventory/storage/ckpt-bucket/daily/data/2026-11-02T00-05Z-part0.csv.gz", "row 6",
         "size 'oops' is not an integer"),
        ("inventory/storage/lustre1/2026-11-02.csv", "row 2",
         "last modified 'yesterday' is not a time: staged without one")]


def test_a_late_inventory_is_said_and_stops_nothing(tmp_path):
    """A day whose only manifest names a file not landed yet: the day runs (its objects are the earlier
    snapshot's, here none), and the manifest is in ops.quarantine naming the missing file."""
    land = Landing(tmp_path)
    land.node("n1")
    land.node_hours("n1", utc(2026, 11, 2), 24, "10.00")
    land.write()
    manifest = s3_inventory(land.landing, "ckpt-bucket", utc(2026, 11, 2, 0, 5),
                            [("runs/r1/step_1/a.pt", "5", "2026-11-01T00:00:00.000Z", "STANDARD")],
                            extra_keys=("part1.csv.gz",))
    with ledger_of(land, [DAY]) as con:
        (reason,), = con.execute("SELECT reason FROM ops.quarantine WHERE source = 'storage' AND row_ref = 'file' "
                                 "AND file = ?", [manifest.relative_to(land.landing).as_posix()]).fetchall()
        assert "part1.csv.gz" in reason
        assert con.execute("SELECT count(*) FROM staging.stg_storage__objects").fetchall() == [(0,)]
        assert con.execute("SELECT sum(effective_cost) FROM marts.fct_cost_daily").fetchall() == [(D("240.00"),)]


# What the storage lines reach, in the order Spark computes them: the split of each line over the objects
# (int_storage_costs), the storage mart, the ledger that places the lines, its mart, and the runs' rows.
STORAGE_STEPS = ["intermediate/int_storage_costs", "marts/fct_storage_daily", "intermediate/int_cost_allocations",
                 "marts/fct_cost_daily", "marts/fct_run_efficiency_daily"]


@pytest.mark.spark
def test_the_storage_steps_on_spark_give_duckdbs_rows(ledger, storage_landing, tmp_path):
    """The steps the storage lines reach, run on Spark as a `--engine spark` day runs them
    (daily.compute: the same SQL, transpiled, on a local session), over DuckDB's rows of every other
    table they read, copied to Parquet as a Spark run copies staging (mirror): each gives DuckDB's rows,
    every column, cent for cent — the rate card's integer division, the unpriced NULLs, a line of one
    tier and one of every tier, largest remainders. The whole day on Spark through the Dagster job is
    test_spark_equal.py's, on the simulated fleet, whose stores are all priced by their bill lines (none
    by the rate card, none unpriced, no line of one tier beside others): only here are those on Spark."""
    from pipelines.engines.spark import daily
    from pipelines.engines.spark.mirror import mirror
    from pipelines.engines.spark.runner import SparkLedger, day_params, in_dependency_order
    from pipelines.lib.config import load_config
    from pipelines.lib.warehouse.sql_lineage import tables_named
    from tests.e2e.test_spark_equal import _spark_or_skip
    from tests.support.spark_compare import compare_table

    _spark_or_skip()
    cfg = load_config(storage_landing.config_path)
    root = tmp_path / "spark"
    steps = in_dependency_order(STORAGE_STEPS)
    given = set().union(*(tables_named(step) for step in steps)) - set(steps) | set(daily.REFERENCE)
    mirror(ledger, root, sorted(given))
    spark = SparkLedger(daily.shared_session(cfg), root)
    compared = {}
    try:
        for step in steps:  # each reads the Spark rows of the steps before it
            for read in sorted(tables_named(step) | set(daily.REFERENCE)):
                if (root / read).is_dir():
                    spark.register(read)
            spark.write_day(step, day_params(DAY, cfg.sql_params()))
            result = compare_table(ledger, root, step)
            assert not result.problems, f"{step}: " + "; ".join(result.problems)
            compared[step] = result.rows
    finally:
        daily.stop_sessions()  # the JVM's 1.5 GB go with it, not with the worker
    assert all(compared[step] > 0 for step in STORAGE_STEPS), compared
