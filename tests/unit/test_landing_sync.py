from datetime import date
from decimal import Decimal

import pytest

from pipelines.ingest.sources import FOCUS
from pipelines.landing import source as landing_source, sync as landing, writer
from pipelines.lib.config import OrgConfig
from pipelines.lib.warehouse import bootstrap, connect

HEADER = "ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,ResourceId,Tags\n"
LINE = "2026-11-0{d}T00:00:00Z,2026-11-0{d}T01:00:00Z,Usage,{c},{c},i-{n},\n"


@pytest.fixture
def env(tmp_path):
    root = tmp_path / "landing"
    (root / "bills" / "focus").mkdir(parents=True)
    con = connect(tmp_path / "w.duckdb")
    bootstrap(con)
    yield root, con
    con.close()


def _write(root, name, lines):
    (root / "bills" / "focus" / name).write_text(HEADER + "".join(lines))


def _state(con):
    return (
        con.execute("SELECT * EXCLUDE (loaded_at) FROM ops.landed_files ORDER BY ALL").fetchall(),
        con.execute("SELECT * FROM staging.stg_focus__bill_lines ORDER BY ALL").fetchall(),
        con.execute("SELECT * FROM ops.quarantine ORDER BY ALL").fetchall(),
    )


def test_same_files_twice_change_nothing(env):
    root, con = env
    _write(root, "a.csv", [LINE.format(d=1, c="1.5", n=1), LINE.format(d=2, c="x", n=2)])
    first = landing.sync(con, root, FOCUS, OrgConfig())
    assert (first.files_read, first.rows_staged, first.rows_quarantined) == (["bills/focus/a.csv"], 1, 1)
    before = _state(con)
    again = landing.sync(con, root, FOCUS, OrgConfig())
    assert again.files_read == [] and again.files_unchanged == 1
    assert _state(con) == before


def test_a_restated_file_replaces_its_rows(env):
    root, con = env
    _write(root, "a.csv", [LINE.format(d=1, c="1.5", n=1), LINE.format(d=2, c="x", n=2)])
    _write(root, "b.csv", [LINE.format(d=3, c="7", n=3)])
    landing.sync(con, root, FOCUS, OrgConfig())
    _write(root, "a.csv", [LINE.format(d=2, c="2.25", n=2), LINE.format(d=4, c="4", n=4)])
    report = landing.sync(con, root, FOCUS, OrgConfig())
    assert report.files_read == ["bills/focus/a.csv"] and report.files_unchanged == 1
    rows = con.execute("SELECT resource_id, effective_cost FROM staging.stg_focus__bill_lines ORDER BY 1").fetchall()
    assert rows == [("i-2", Decimal("2.25")), ("i-3", Decimal("7")), ("i-4", Decimal("4"))]
    assert con.execute("SELECT count(*) FROM ops.quarantine").fetchone()[0] == 0  # the old bad row went with its file


def test_a_crash_mid_file_leaves_the_previous_state(env, monkeypatch):
    root, con = env
    _write(root, "a.csv", [LINE.format(d=1, c="1.5", n=1)])
    landing.sync(con, root, FOCUS, OrgConfig())
    before = _state(con)
    _write(root, "a.csv", [LINE.format(d=1, c="9", n=9)])

    def boom(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(writer, "put_rows", boom)
    with pytest.raises(RuntimeError):
        landing.sync(con, root, FOCUS, OrgConfig())
    assert _state(con) == before
    monkeypatch.undo()
    landing.sync(con, root, FOCUS, OrgConfig())  # the next run picks the new content up
    assert con.execute("SELECT resource_id FROM staging.stg_focus__bill_lines").fetchall() == [("i-9",)]


def test_hive_day_folders_limit_a_daily_read(tmp_path):
    from pipelines.ingest.sources import DCGM

    root = tmp_path
    for day in ("2026-10-31", "2026-11-01", "2026-11-02", "2026-11-03", "2026-11-04"):
        (root / "telemetry" / "dcgm" / f"day={day}").mkdir(parents=True)
        (root / "telemetry" / "dcgm" / f"day={day}" / "h1.parquet").write_bytes(b"")
    (root / "telemetry" / "dcgm" / "loose.csv").write_text("")
    found = [rel for _, rel in landing_source.discover(root, DCGM, date(2026, 11, 2))]
    assert found == [f"telemetry/dcgm/day=2026-11-0{d}/h1.parquet" for d in (1, 2, 3)] + ["telemetry/dcgm/loose.csv"]


def test_a_removed_scheduler_file_takes_its_rows_out_and_a_far_day_folder_is_not_removed(tmp_path):
    from pipelines.ingest.sources import DCGM, SLURM

    root = tmp_path / "landing"
    folder = root / "scheduler" / "slurm" / "c1"
    folder.mkdir(parents=True)
    header = "JobIDRaw|JobID|JobName|User|Account|Partition|State|ExitCode|Submit|Start|End|AllocTRES|NodeList"
    row = "{0}|{0}|t|u|a|gpu|COMPLETED|0:0|2026-11-02T00:00:00|2026-11-02T00:00:00|2026-11-02T01:00:00|gres/gpu=8|g1"
    (folder / "a.psv").write_text(header + "\n" + row.format(1) + "\n")
    (folder / "b.psv").write_text(header + "\n" + row.format(2) + "\n" + "1|1|x\n")   # a broken line: quarantined
    con = connect(tmp_path / "w.duckdb")
    bootstrap(con)
    landing.sync(con, root, SLURM, OrgConfig())
    (folder / "b.psv").unlink()
    report = landing.sync(con, root, SLURM, OrgConfig())
    assert report.files_removed == ["scheduler/slurm/c1/b.psv"]
    assert con.execute("SELECT job_key FROM staging.stg_scheduler__job_allocations").fetchall() == [("1",)]
    assert con.execute("SELECT count(*) FROM ops.quarantine").fetchone()[0] == 0
    assert con.execute("SELECT file FROM ops.landed_files").fetchall() == [("scheduler/slurm/c1/a.psv",)]
    # telemetry of a day far from the one running is only not looked at: it stays
    far = root / "telemetry" / "dcgm" / "day=2026-10-01"
    far.mkdir(parents=True)
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"timestamp": pa.array([1_759_276_800_000_000], pa.timestamp("us", tz="UTC")),
                             "hostname": ["h1"], "gpu": pa.array([0], pa.int32()),
                             "metric": ["DCGM_FI_DEV_GPU_UTIL"], "value": [1.0]}), far / "h1.parquet")
    landing.sync(con, root, DCGM, OrgConfig())
    landing.sync(con, root, DCGM, OrgConfig(), day=date(2026, 11, 2))
    assert con.execute("SELECT count(*) FROM staging.stg_dcgm__gpu_minutes").fetchone()[0] == 1
    con.close()
