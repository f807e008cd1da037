"""A landing zone that is missing, empty, or has lost a whole source at once is a wrong path far more
often than a deliberate removal: sync and the bill sensor refuse it by name and remove nothing."""

from decimal import Decimal

import pytest

from pipelines.landing import sync as landing
from pipelines.landing.source import ACCEPT_REMOVED_ENV, LandingUnusable
from pipelines.ingest.sources import FOCUS, SLURM
from pipelines.lib.config import OrgConfig
from pipelines.lib.warehouse import bootstrap, connect

BILL = ("ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,ResourceId,Tags\n"
        "2026-11-02T00:00:00Z,2026-11-02T01:00:00Z,Usage,4.5,4.5,i-1,\n")
SACCT = ("JobIDRaw|JobID|JobName|User|Account|Partition|State|ExitCode|Submit|Start|End|AllocTRES|NodeList\n"
         "{0}|{0}|t|u|a|gpu|COMPLETED|0:0|2026-11-02T00:00:00|2026-11-02T00:00:00|2026-11-02T01:00:00|gres/gpu=8|g1\n")


@pytest.fixture
def synced(tmp_path, monkeypatch):
    """A landing zone with one bill and two sacct files, synced once."""
    monkeypatch.delenv(ACCEPT_REMOVED_ENV, raising=False)
    root = tmp_path / "landing"
    (root / "bills" / "focus").mkdir(parents=True)
    (root / "bills" / "focus" / "a.csv").write_text(BILL)
    (root / "scheduler" / "slurm" / "c1").mkdir(parents=True)
    for job in (1, 2):
        (root / "scheduler" / "slurm" / "c1" / f"{job}.psv").write_text(SACCT.format(job))
    con = connect(tmp_path / "w.duckdb")
    bootstrap(con)
    for source in (FOCUS, SLURM):
        landing.sync(con, root, source, OrgConfig())
    yield root, con
    con.close()


def _counts(con):
    return (con.execute("SELECT count(*) FROM ops.landed_files").fetchone()[0],
            con.execute("SELECT count(*) FROM staging.stg_scheduler__job_allocations").fetchone()[0],
            con.execute("SELECT sum(effective_cost) FROM staging.stg_focus__bill_lines").fetchone()[0])


def test_a_missing_or_empty_landing_root_is_refused_by_name_and_removes_nothing(synced, tmp_path):
    root, con = synced
    before = _counts(con)
    assert before == (3, 2, Decimal("4.5"))
    for wrong, words in ((tmp_path / "data" / "landing", "does not exist"), (tmp_path / "empty", "holds no file")):
        if words == "holds no file":
            (wrong / "bills" / "focus").mkdir(parents=True)   # folders, but not a file in them
        for source in (FOCUS, SLURM):
            with pytest.raises(LandingUnusable, match=f"the landing zone {wrong} {words}.*GPULEDGER_LANDING"):
                landing.sync(con, wrong, source, OrgConfig())
    assert _counts(con) == before


def test_a_source_whose_every_file_is_gone_keeps_its_rows_until_the_removal_is_accepted(synced, monkeypatch):
    root, con = synced
    (root / "scheduler" / "slurm" / "c1" / "1.psv").unlink()
    (root / "scheduler" / "slurm" / "c1" / "2.psv").unlink()
    with pytest.raises(LandingUnusable, match=r"every file of source slurm .*\(2, e\.g\. scheduler/slurm/c1/1\.psv\)"
                                              r".*--accept-removed-sources"):
        landing.sync(con, root, SLURM, OrgConfig())
    assert _counts(con) == (3, 2, Decimal("4.5"))
    (root / "bills" / "focus" / "a.csv").unlink()   # the bills' only file: the same rule for deliveries
    (root / "notes.txt").write_text("the landing zone is not empty")
    with pytest.raises(LandingUnusable, match="every file of source focus"):
        landing.sync(con, root, FOCUS, OrgConfig())
    monkeypatch.setenv(ACCEPT_REMOVED_ENV, "1")
    for source in (FOCUS, SLURM):
        assert landing.sync(con, root, source, OrgConfig()).files_removed
    assert _counts(con) == (0, 0, None)


def test_one_file_gone_of_several_is_a_removal_as_before(synced):
    root, con = synced
    (root / "scheduler" / "slurm" / "c1" / "2.psv").unlink()
    assert landing.sync(con, root, SLURM, OrgConfig()).files_removed == ["scheduler/slurm/c1/2.psv"]
    assert _counts(con) == (2, 1, Decimal("4.5"))


def test_the_bill_sensor_refuses_a_missing_landing_root(tmp_path, monkeypatch):
    from pipelines.landing.restatements import bill_days_to_rerun

    monkeypatch.setenv("GPULEDGER_WAREHOUSE", str(tmp_path / "w.duckdb"))
    with pytest.raises(LandingUnusable, match="does not exist"):
        bill_days_to_rerun(tmp_path / "nowhere", FOCUS, OrgConfig())
