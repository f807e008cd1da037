"""Scheduler input that used to move money while the day said complete: a byte that is not UTF-8 in
one Comment, a sacct file refused whole, a GPU count no node has, and a job left out that still held its
GPUs. Each through the whole ledger, on a hand-built landing zone."""

from datetime import date
from decimal import Decimal

import duckdb

from tests.support.pipeline import run_pipeline
from tests.support.scenario_builder import Activity, Landing, utc

DAY = date(2026, 11, 2)
H = 3600.0


def _landing(tmp_path):
    L = Landing(tmp_path)
    L.node("n1")
    L.node_hours("n1", utc(2026, 11, 2), 24, "36")  # $36/h: $1.50 a GPU-hour
    L.telemetry("n1", [DAY], [Activity(utc(2026, 11, 2), utc(2026, 11, 2, 12), "10", True)])
    return L


def _ledger(L):
    with duckdb.connect(str(L.warehouse), read_only=True) as con:
        seconds = dict(con.execute("SELECT project, sum(gpu_seconds) FROM marts.fct_cost_daily GROUP BY 1").fetchall())
        quarantined = con.execute("SELECT file, row_ref, reason, day FROM ops.quarantine ORDER BY row_ref").fetchall()
        complete = con.execute("SELECT bool_and(complete), sum(difference_effective_cost) "
                               "FROM finance.reconciliation_daily WHERE day = $d", {"d": DAY}).fetchone()
        files = con.execute("SELECT file, status, status_reason, first_day, last_day FROM ops.landed_files "
                            "WHERE source = 'slurm'").fetchall()
    return seconds, quarantined, complete, files


def test_a_bad_byte_in_one_comment_costs_nothing_but_that_byte(tmp_path):
    """Was: the whole sacct file refused, rc 0 and the day complete with the job's $216 moved to idle."""
    L = _landing(tmp_path)
    L.job("c1", "10", account="p1", start="2026-11-02T00:00:00", end="2026-11-02T12:00:00", state="COMPLETED",
          host="n1", comment="BADBYTE run_id=r1")
    L.write()
    sacct = L.landing / "scheduler" / "slurm" / "c1" / "sacct.psv"
    sacct.write_bytes(sacct.read_bytes().replace(b"BADBYTE", b"caf\xe9"))
    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [DAY])
    seconds, quarantined, complete, files = _ledger(L)
    assert quarantined == []
    assert seconds == {"p1": 8 * 12 * H, "_unallocated": 8 * 12 * H}
    assert complete == (True, Decimal(0))
    assert [(f, s) for f, s, *_ in files] == [("scheduler/slurm/c1/sacct.psv", "current")]


def test_a_refused_sacct_file_makes_the_days_it_names_incomplete(tmp_path):
    L = _landing(tmp_path)
    L.job("c1", "10", account="p1", start="2026-11-02T00:00:00", end="2026-11-02T12:00:00", state="COMPLETED",
          host="n1")
    L.write()
    written = L.landing / "scheduler" / "slurm" / "c1" / "sacct.psv"
    sacct = written.with_name("sacct_2026-11-02.psv")
    sacct.write_bytes(written.read_bytes().replace(b"Comment", b"Comm\xffent", 1))
    written.unlink()
    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [DAY])
    seconds, quarantined, complete, files = _ledger(L)
    rel = "scheduler/slurm/c1/sacct_2026-11-02.psv"
    [(file, row_ref, reason, day)] = quarantined
    assert (file, row_ref, day) == (rel, "file", DAY)
    assert reason.startswith("unreadable sacct file: header line 1 has a byte that is not UTF-8 at byte offset")
    assert files == [(rel, "unreadable", reason, DAY, DAY)]
    # the money still balances (the node's time is idle), but the day does not say it is complete
    assert seconds == {"_unallocated": 8 * 24 * H}
    assert complete == (False, Decimal(0))


def test_a_job_asking_more_gpus_than_its_node_has_holds_none_and_the_day_runs(tmp_path):
    """Was: `gres/gpu=16` on an 8-GPU node failed the day (`NOT NULL constraint failed: quarantine.reason`);
    and a job left out still held its GPUs, so job 12, which starts after job 10 ended, was left out too."""
    L = _landing(tmp_path)
    L.job("c1", "10", account="p1", start="2026-11-02T00:00:00", end="2026-11-02T12:00:00", state="COMPLETED",
          host="n1")
    L.job("c1", "11", account="p2", start="2026-11-02T06:00:00", end="2026-11-02T18:00:00", state="COMPLETED",
          host="n1")
    L.job("c1", "12", account="p3", start="2026-11-02T13:00:00", end="2026-11-02T15:00:00", state="COMPLETED",
          host="n1")
    L.job("c1", "13", account="p4", start="2026-11-02T16:00:00", end="2026-11-02T17:00:00", state="COMPLETED",
          host="n1", tres="gres/gpu=16,node=1")
    L.job("c1", "14", account="p5", start="2026-11-02T19:00:00", end="2026-11-02T20:00:00", state="COMPLETED",
          host="n1", tres="gres/gpu=-4,node=1")
    L.config = {"quarantine": {"max_share": 0.5}}  # one line in five of a tiny file is quarantined
    L.write()
    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [DAY])
    seconds, quarantined, complete, _ = _ledger(L)
    assert [(ref, reason.split(";")[0]) for _, ref, reason, _ in quarantined] == [
        ("line 3", "claims GPUs of n1 already held: 8 GPU(s) at 2026-11-02T06:00:00Z while 8 of its 8 are held by "
                   "job(s) 10"),
        ("line 5", "AllocTRES asks for 16 GPU(s) on n1 but node n1 has 8 GPUs"),
        ("line 6", "AllocTRES gres/gpu=-4: the count is not a whole number of devices"),
    ]
    assert seconds == {"p1": 8 * 12 * H, "p3": 8 * 2 * H, "_unallocated": 8 * 10 * H}
    assert complete == (True, Decimal(0))
