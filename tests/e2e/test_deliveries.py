"""Bill deliveries: exporters re-deliver, and each line must count once, leave with its file, and never
go unnoticed. Hand-made landing files; every expected amount is worked out in the comment beside it.

- a legacy CUR month delivered twice (two assembly folders) with its manifests: counted once;
- a FOCUS month-to-date file refreshed: the newer delivery alone is the bill;
- a copied and a renamed bill file: the day's bill does not move;
- a deleted bill file: its money leaves at the next run and the restatement sensor asks for its days;
- a truncated .csv.gz: `finance.reconciliation_daily` says the day is not complete;
- a file no source reads: `inspect` and `run` name it.
"""

from __future__ import annotations

import csv
import gzip
import json
import os
import shutil
import subprocess
import sys
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import dagster as dg
import duckdb
import pytest

from pipelines.ingest.sources import AWS_CUR, FOCUS
from pipelines.landing import source as landing_source, sync as landing, writer
from pipelines.lib.config import OrgConfig
from pipelines.lib.warehouse import bootstrap, connect
from tests.support.pipeline import pipeline_env, run_pipeline
from tests.support.scenario_builder import Landing, utc
from tests.support.memory_db import memory_db

DAY = date(2026, 11, 2)


def _cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "pipelines.cli", *args], capture_output=True, text=True, env=env)


# --- a one-node fleet whose bill files each test lays out itself --------------------------------------

def _fleet(tmp_path: Path) -> Landing:
    L = Landing(tmp_path)
    L.node("n1")
    L.telemetry("n1", [DAY], [])  # no job: every GPU-second is idle_unallocated, the money still all lands
    L.write()
    return L


def _hours(L: Landing, day: date, rate: str) -> list[dict]:
    """24 hourly instance lines of n1 on `day` at `rate` per hour."""
    L.node_hours("n1", utc(day.year, day.month, day.day), 24, rate)
    return L.take_bill_lines()


def _day_money(L: Landing, day: date = DAY) -> tuple[Decimal, Decimal]:
    """(the day's bill, what the ledger allocated on it), EffectiveCost."""
    with duckdb.connect(str(L.warehouse), read_only=True) as con:
        bill = con.execute("SELECT sum(effective_cost) FROM marts.fct_bill_daily WHERE day = $d", {"d": day}).fetchone()[0]
        ledger = con.execute("SELECT sum(effective_cost) FROM marts.fct_cost_daily WHERE day = $d", {"d": day}).fetchone()[0]
    return bill, ledger


def _statuses(con_or_path) -> dict[str, tuple[str, str | None]]:
    con = duckdb.connect(str(con_or_path), read_only=True) if isinstance(con_or_path, Path) else con_or_path
    try:
        return {f: (s, by) for f, s, by in con.execute(
            "SELECT file, status, superseded_by FROM ops.landed_files WHERE source IN ('focus', 'aws_cur')").fetchall()}
    finally:
        if isinstance(con_or_path, Path):
            con.close()


def _sensor_days(L: Landing) -> list[str]:
    from pipelines.definitions import defs
    from pipelines.lib.dagster_glue.resources import landing_resource

    d = defs()
    with pipeline_env(L.landing, L.warehouse, L.config_path):
        sensor = d.resolve_sensor_def("restated_bills_sensor")
        ctx = dg.build_sensor_context(resources={"landing": landing_resource()}, repository_def=d.get_repository_def())
        result = sensor(ctx)
    return sorted({r.partition_key for r in result.run_requests})


# --- FOCUS month-to-date refresh ---------------------------------------------------------------------

def test_a_month_to_date_refresh_supersedes_the_earlier_delivery(tmp_path):
    L = _fleet(tmp_path)
    t = utc(2026, 11, 3, 6)
    # the export on Nov 3: Nov 1 and Nov 2 at $10/h
    L.bill_file("bills/focus/acme/acme-mtd-1.csv", _hours(L, date(2026, 11, 1), "10") + _hours(L, DAY, "10"), mtime=t)
    # the refresh a day later repeats every line, restates Nov 2 at $12/h and adds Nov 3
    later = _hours(L, date(2026, 11, 1), "10") + _hours(L, DAY, "12") + _hours(L, date(2026, 11, 3), "10")
    L.bill_file("bills/focus/acme/acme-mtd-2.csv", later, mtime=t + timedelta(days=1))

    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [DAY])
    # Nov 2 once, as restated: 24 h × $12 = $288 (both deliveries counted would be $528)
    assert _day_money(L) == (Decimal("288"), Decimal("288"))
    assert _statuses(L.warehouse) == {
        "bills/focus/acme/acme-mtd-1.csv": ("superseded", "bills/focus/acme/acme-mtd-2.csv"),
        "bills/focus/acme/acme-mtd-2.csv": ("current", None),
    }
    with duckdb.connect(str(L.warehouse), read_only=True) as con:
        assert con.execute("SELECT DISTINCT _file FROM staging.stg_focus__bill_lines").fetchall() == [
            ("bills/focus/acme/acme-mtd-2.csv",)]
        assert con.execute("SELECT rows_staged FROM ops.landed_files WHERE file LIKE '%mtd-1.csv'").fetchone() == (0,)


# --- copies, renames, deletions ----------------------------------------------------------------------

def test_a_copied_or_renamed_bill_file_changes_nothing(tmp_path):
    L = _fleet(tmp_path)
    a = L.bill_file("bills/focus/a.csv", _hours(L, DAY, "10"))
    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [DAY])
    assert _day_money(L) == (Decimal("240"), Decimal("240"))  # 24 h × $10

    copy = L.landing / "bills" / "focus" / "copies" / "a (1).csv"
    copy.parent.mkdir()
    shutil.copy(a, copy)  # a new modification time, the same bytes
    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [DAY])
    assert _day_money(L) == (Decimal("240"), Decimal("240"))
    assert _statuses(L.warehouse)["bills/focus/copies/a (1).csv"] == ("duplicate", "bills/focus/a.csv")

    copy.unlink()
    a.rename(L.landing / "bills" / "focus" / "z.csv")
    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [DAY])
    assert _day_money(L) == (Decimal("240"), Decimal("240"))
    assert _statuses(L.warehouse) == {"bills/focus/z.csv": ("current", None)}


def test_a_deleted_bill_file_takes_its_money_out_and_reruns_its_days(tmp_path):
    L = _fleet(tmp_path)
    L.bill_file("bills/focus/compute.csv", _hours(L, DAY, "10"))
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Usage", "100", service="Storage", tags={"project": "p1"})
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Usage", "7", service="Storage", tags={"project": "p1"})
    rows = L.take_bill_lines()
    rows[1]["BilledCost"] = "x"  # quarantined, its EffectiveCost of $7 kept as unattributed
    storage = L.bill_file("bills/focus/storage.csv", rows)
    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [DAY])
    assert _day_money(L) == (Decimal("347"), Decimal("347"))  # $240 of node hours, $100 + $7 of storage
    assert _sensor_days(L) == []

    storage.unlink()
    assert _sensor_days(L) == ["2026-11-02"]
    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [DAY])
    assert _day_money(L) == (Decimal("240"), Decimal("240"))
    with duckdb.connect(str(L.warehouse), read_only=True) as con:
        left = [con.execute(f"SELECT count(*) FROM {t} WHERE {c} = 'bills/focus/storage.csv'").fetchone()[0]
                for t, c in (("ops.landed_files", "file"), ("ops.quarantine", "file"),
                             ("staging.stg_focus__bill_lines", "_file"))]
    assert left == [0, 0, 0]
    assert _sensor_days(L) == []


# --- unreadable files ----------------------------------------------------------------------------------

def test_an_unreadable_bill_file_marks_the_days_its_name_says_incomplete(tmp_path):
    L = _fleet(tmp_path)
    L.bill_file("bills/focus/a.csv", _hours(L, DAY, "10"))
    gz = L.bill_file("bills/focus/daily/focus_2026-11-03.csv.gz", _hours(L, date(2026, 11, 3), "10"))
    gz.write_bytes(gz.read_bytes()[: gz.stat().st_size // 2])  # cut off in transfer
    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [DAY])

    def reconciliation():
        with duckdb.connect(str(L.root / "warehouse.published.duckdb"), read_only=True) as con:
            return {d: (n, names, complete, diff) for d, n, names, complete, diff in con.execute(
                """SELECT day, unreadable_bill_files, unreadable_bill_file_names, complete, difference_effective_cost
                   FROM finance.reconciliation_daily""").fetchall()}

    got = reconciliation()
    assert got[DAY] == (0, [], True, 0)
    # Nov 3 was never run and has no readable line: the day is there, and not complete
    assert got[date(2026, 11, 3)] == (1, ["bills/focus/daily/focus_2026-11-03.csv.gz"], False, 0)

    # a file whose name tells no day is reported on every day
    (L.landing / "bills" / "focus" / "export.parquet").write_bytes(b"PAR1 this is not parquet")
    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [DAY])
    got = reconciliation()
    assert got[DAY] == (1, ["bills/focus/export.parquet"], False, 0)
    assert got[date(2026, 11, 3)][:3] == (
        2, ["bills/focus/daily/focus_2026-11-03.csv.gz", "bills/focus/export.parquet"], False)


def test_the_days_of_an_unreadable_file_come_from_its_name(tmp_path):
    root = tmp_path / "landing"
    con = connect(tmp_path / "w.duckdb")
    bootstrap(con)
    names = {
        "bills/focus/daily/focus_2026-11-03.csv.gz": (date(2026, 11, 3), date(2026, 11, 3)),
        "bills/focus/export_20261104.csv": (date(2026, 11, 4), date(2026, 11, 4)),
        "bills/focus/cur/20261001-20261101/asm/x-1.csv.gz": (date(2026, 10, 1), date(2026, 10, 31)),
        "bills/focus/export/data/BILLING_PERIOD=2026-09/x-00001.parquet": (date(2026, 9, 1), date(2026, 9, 30)),
        "bills/focus/mystery.parquet": (None, None),
    }
    for rel in names:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(b"\x1f\x8b broken " + rel.encode())  # distinct: copies would be duplicates
    landing.sync(con, root, FOCUS, OrgConfig())
    got = {f: (s, a, b) for f, s, a, b in con.execute(
        "SELECT file, status, first_day, last_day FROM ops.landed_files").fetchall()}
    assert got == {rel: ("unreadable", *days) for rel, days in names.items()}
    con.close()


# --- hand-made files at the sync level ------------------------------------------------------------------

HEADER = "BillingAccountId,BillingPeriodStart,ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,ResourceId\n"


def _line(start: datetime, end: datetime, cost: str, resource: str = "i-1", account: str = "acct-1") -> str:
    return f"{account},2026-11-01T00:00:00Z,{start:%Y-%m-%dT%H:%M:%SZ},{end:%Y-%m-%dT%H:%M:%SZ},Usage,{cost},{cost},{resource}\n"


def _day_lines(day: int, cost: str = "1") -> list[str]:
    return [_line(utc(2026, 11, day, h), utc(2026, 11, day, h + 1) if h < 23 else utc(2026, 11, day + 1), cost)
            for h in range(24)]


def _write(root: Path, rel: str, lines: list[str], mtime: datetime) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(HEADER + "".join(lines))
    os.utime(p, (mtime.timestamp(), mtime.timestamp()))
    return p


@pytest.fixture
def env(tmp_path):
    con = connect(tmp_path / "w.duckdb")
    bootstrap(con)
    yield tmp_path / "landing", con
    con.close()


def _staged_total(con, source: str = "focus") -> Decimal:
    return con.execute("SELECT coalesce(sum(effective_cost), 0) FROM staging.stg_focus__bill_lines WHERE source = $s",
                       {"s": source}).fetchone()[0]


def test_daily_files_of_one_month_never_supersede_each_other(env):
    root, con = env
    # Nov 1's file also carries the month's support fee (charge period: the whole month), and it is the newest
    fee = _line(utc(2026, 11, 1), utc(2026, 12, 1), "300", resource="support")
    _write(root, "bills/focus/focus_2026-11-02.csv", _day_lines(2), utc(2026, 11, 3))
    _write(root, "bills/focus/focus_2026-11-01.csv", _day_lines(1) + [fee], utc(2026, 11, 4))
    landing.sync(con, root, FOCUS, OrgConfig())
    assert set(_statuses(con).values()) == {("current", None)}
    assert _staged_total(con) == Decimal(24 + 24 + 300)


def test_the_older_delivery_is_current_again_when_the_newer_one_leaves(env):
    root, con = env
    _write(root, "bills/focus/mtd-a.csv", _day_lines(1), utc(2026, 11, 2))
    newer = _write(root, "bills/focus/mtd-b.csv", _day_lines(1, "2") + _day_lines(2, "2"), utc(2026, 11, 3))
    landing.sync(con, root, FOCUS, OrgConfig())
    assert _statuses(con)["bills/focus/mtd-a.csv"] == ("superseded", "bills/focus/mtd-b.csv")
    assert _staged_total(con) == Decimal(96)  # 48 lines × 2
    newer.unlink()
    landing.sync(con, root, FOCUS, OrgConfig())
    assert _statuses(con) == {"bills/focus/mtd-a.csv": ("current", None)}
    assert _staged_total(con) == Decimal(24)


def test_a_newer_delivery_for_another_account_or_month_supersedes_nothing(env):
    root, con = env
    _write(root, "bills/focus/a.csv", _day_lines(1), utc(2026, 11, 2))
    _write(root, "bills/focus/b.csv", [l.replace("acct-1", "acct-2") for l in _day_lines(1) + _day_lines(2)],
           utc(2026, 11, 3))
    landing.sync(con, root, FOCUS, OrgConfig())
    assert set(_statuses(con).values()) == {("current", None)}
    assert _staged_total(con) == Decimal(72)


# --- legacy CUR: assembly folders and their manifests ----------------------------------------------------

CUR_COLUMNS = ["identity/LineItemId", "identity/TimeInterval", "bill/PayerAccountId", "bill/BillingPeriodStartDate",
               "bill/BillingPeriodEndDate", "lineItem/UsageAccountId", "lineItem/LineItemType",
               "lineItem/UsageStartDate", "lineItem/UsageEndDate", "lineItem/ProductCode", "lineItem/ResourceId",
               "lineItem/CurrencyCode", "lineItem/UnblendedCost"]
PERIOD = "bills/aws_cur/cur/gpu-cur/20261101-20261201"


def _cur_rows(days: dict[int, str]) -> list[list[str]]:
    rows = []
    for day, rate in days.items():
        for h in range(24):
            a = utc(2026, 11, day, h)
            b = a + timedelta(hours=1)
            rows.append([f"line-{day}-{h}", f"{a:%Y-%m-%dT%H:%M:%SZ}/{b:%Y-%m-%dT%H:%M:%SZ}", "123456789012",
                         "2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z", "123456789012", "Usage",
                         f"{a:%Y-%m-%dT%H:%M:%SZ}", f"{b:%Y-%m-%dT%H:%M:%SZ}", "AmazonEC2", "i-0abc", "USD", rate])
    return rows


def _assembly(root: Path, assembly: str, days: dict[int, str], mtime: datetime, manifest: bool = True) -> str:
    """One CUR delivery: `<period>/<assembly>/gpu-cur-1.csv.gz`, with the assembly's manifest beside it."""
    key = f"{PERIOD}/{assembly}/gpu-cur-1.csv.gz"
    p = root / key
    p.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(p, "wt", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(CUR_COLUMNS)
        w.writerows(_cur_rows(days))
    os.utime(p, (mtime.timestamp(), mtime.timestamp()))
    if manifest:
        _cur_manifest(root, f"{PERIOD}/{assembly}/gpu-cur-Manifest.json", assembly, mtime)
    return key


def _cur_manifest(root: Path, rel: str, assembly: str, mtime: datetime) -> None:
    # the shape AWS writes (legacy CUR): reportKeys are S3 keys under the bucket, billingPeriod in basic ISO
    body = {"assemblyId": assembly, "account": "123456789012", "reportName": "gpu-cur", "bucket": "acme-billing",
            "billingPeriod": {"start": "20261101T000000.000Z", "end": "20261201T000000.000Z"},
            "reportKeys": [f"cur/gpu-cur/20261101-20261201/{assembly}/gpu-cur-1.csv.gz"],
            "compression": "GZIP", "contentType": "text/csv", "columns": [{"category": "identity", "name": "LineItemId"}]}
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(json.dumps(body))
    os.utime(root / rel, (mtime.timestamp(), mtime.timestamp()))


def test_a_legacy_cur_month_delivered_twice_is_counted_once(env, tmp_path):
    root, con = env
    t = utc(2026, 11, 2, 8)
    first = _assembly(root, "4f1c2d3e-aaaa", {1: "1.25"}, t)
    second = _assembly(root, "9b8a7c6d-bbbb", {1: "1.25", 2: "1.5"}, t + timedelta(days=1))
    # the billing period's own manifest names the current assembly
    _cur_manifest(root, f"{PERIOD}/gpu-cur-Manifest.json", "9b8a7c6d-bbbb", t + timedelta(days=1))
    # a third assembly whose manifest has not landed yet is not current, however new its files are
    third = _assembly(root, "0c0c0c0c-cccc", {1: "1.25", 2: "1.5", 3: "1.5"}, t + timedelta(days=2), manifest=False)

    landing.sync(con, root, AWS_CUR, OrgConfig())
    # the second assembly alone: 24 × 1.25 + 24 × 1.5 = 66 (every delivery counted: 30 + 66 + 102 = 198)
    assert _staged_total(con, "aws_cur") == Decimal("66")
    statuses = _statuses(con)
    assert statuses[second] == ("current", None)
    assert statuses[first][0] == statuses[third][0] == "superseded"
    assert statuses[first][1].endswith("Manifest.json") and statuses[third][1].endswith("Manifest.json")

    from pipelines.cli.inspect import inspect_landing

    report = inspect_landing(root, OrgConfig())
    assert Decimal(report["aws_cur"]["effective_cost"]) == Decimal("66")
    assert report["aws_cur"]["rows"] == 48 and report["aws_cur"]["files"] == 3
    assert "ignored_files" not in report  # the manifests are read, not ignored


# --- files no source reads ------------------------------------------------------------------------------

def test_inspect_names_files_no_source_reads(tmp_path):
    log = tmp_path / "scheduler" / "slurm" / "c1" / "sacct.log"
    log.parent.mkdir(parents=True)
    log.write_text("JobID|State\n1|COMPLETED\n")
    (tmp_path / ".DS_Store").write_bytes(b"\0")  # dotfiles are no one's input
    proc = _cli("inspect", "--landing", str(tmp_path), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {"ignored_files": [
        {"file": "scheduler/slurm/c1/sacct.log", "reason": "no source reads *.log under scheduler/slurm/"}]}
    text = _cli("inspect", "--landing", str(tmp_path)).stdout
    assert "scheduler/slurm/c1/sacct.log" in text and "no source reads *.log under scheduler/slurm/" in text


def test_run_names_files_no_source_reads(tmp_path):
    L = _fleet(tmp_path)
    L.bill_file("bills/focus/a.csv", _hours(L, DAY, "10"))
    log = L.landing / "scheduler" / "slurm" / "c1" / "sacct.log"
    log.parent.mkdir(parents=True)
    log.write_text("JobID|State\n1|COMPLETED\n")
    home = tmp_path / "dagster_home"
    home.mkdir()
    proc = _cli("run", "--landing", str(L.landing), "--config", str(L.config_path), "--warehouse", str(L.warehouse),
                "--start", DAY.isoformat(), env={**os.environ, "DAGSTER_HOME": str(home)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "scheduler/slurm/c1/sacct.log" in proc.stdout and "no source reads *.log under scheduler/slurm/" in proc.stdout
    with dg.DagsterInstance.local_temp(str(home)) as instance:
        event = instance.get_latest_materialization_event(dg.AssetKey(["staging", "stg_scheduler__job_allocations"]))
    ignored = event.asset_materialization.metadata["ignored_files"].value
    assert {"file": "scheduler/slurm/c1/sacct.log", "reason": "no source reads *.log under scheduler/slurm/"} in ignored


def test_a_crash_while_a_delivery_supersedes_another_leaves_the_older_one_whole(env, monkeypatch):
    root, con = env
    _write(root, "bills/focus/mtd-a.csv", _day_lines(1), utc(2026, 11, 2))
    landing.sync(con, root, FOCUS, OrgConfig())
    before = con.execute("SELECT * EXCLUDE (loaded_at) FROM ops.landed_files ORDER BY ALL").fetchall()
    _write(root, "bills/focus/mtd-b.csv", _day_lines(1, "2") + _day_lines(2, "2"), utc(2026, 11, 3))

    def boom(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(writer, "put_rows", boom)
    with pytest.raises(RuntimeError):
        landing.sync(con, root, FOCUS, OrgConfig())
    # the newer delivery and the supersession it causes are one transaction: neither happened
    assert con.execute("SELECT * EXCLUDE (loaded_at) FROM ops.landed_files ORDER BY ALL").fetchall() == before
    assert _staged_total(con) == Decimal(24)
    monkeypatch.undo()
    landing.sync(con, root, FOCUS, OrgConfig())
    assert _staged_total(con) == Decimal(96)


def test_each_ignored_file_says_why(tmp_path):
    from pipelines.ingest.ignored import ignored_files

    files = {
        "notes.txt": "no source reads files at the landing root",
        "misc/x.csv": "no source reads files under misc/",
        "scheduler/slurm/sacct.psv": "no source reads it where it is: files here must match "
                                     "scheduler/slurm/*/**/*.psv or scheduler/slurm/*/**/*.txt",
        "bills/aws_cur/cur/RedshiftManifest.json": "a JSON manifest the delivery rule does not read "
                                                   "(no reportKeys or dataFiles)",
        "inventory/nodes.csv.bak": "no source reads *.bak under inventory/",
        "telemetry/dcgm/day=2026-11-02/README": "no source reads README under telemetry/dcgm/",
    }
    for rel in files:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text('{"entries": []}')
    (tmp_path / "inventory" / "nodes.csv").write_text("hostname\n")        # read by a source
    (tmp_path / ".git" / "config").parent.mkdir()
    (tmp_path / ".git" / "config").write_text("")                         # a dot folder: no one's input
    assert ignored_files(tmp_path) == [{"file": f, "reason": r} for f, r in sorted(files.items())]


def test_a_newer_assembly_still_arriving_leaves_the_earlier_one_current(env):
    root, con = env
    t = utc(2026, 11, 2, 8)
    first = _assembly(root, "4f1c2d3e-aaaa", {1: "1.25"}, t)
    # the next refresh's manifest has landed, its data file not yet
    _cur_manifest(root, f"{PERIOD}/9b8a7c6d-bbbb/gpu-cur-Manifest.json", "9b8a7c6d-bbbb", t + timedelta(days=1))
    report = landing.sync(con, root, AWS_CUR, OrgConfig())
    assert _statuses(con) == {first: ("current", None)}
    assert _staged_total(con, "aws_cur") == Decimal("30")
    assert report.missing_from_manifests == {
        f"{PERIOD}/9b8a7c6d-bbbb/gpu-cur-Manifest.json": ["cur/gpu-cur/20261101-20261201/9b8a7c6d-bbbb/gpu-cur-1.csv.gz"]}


def test_an_unreadable_manifest_is_a_bill_file_that_could_not_be_read(env):
    root, con = env
    first = _assembly(root, "4f1c2d3e-aaaa", {1: "1.25"}, utc(2026, 11, 2, 8))
    (root / PERIOD / "gpu-cur-Manifest.json").write_text('{"assemblyId": "9b8a7c6d-bbbb", "reportKe')  # cut off
    landing.sync(con, root, AWS_CUR, OrgConfig())
    got = {f: (s, a, b) for f, s, a, b in con.execute(
        "SELECT file, status, first_day, last_day FROM ops.landed_files").fetchall()}
    # the readable manifest still decides; the broken one marks its billing period's days incomplete
    assert got == {first: ("current", date(2026, 11, 1), date(2026, 11, 1)),
                   f"{PERIOD}/gpu-cur-Manifest.json": ("unreadable", date(2026, 11, 1), date(2026, 11, 30))}
    (reason,) = con.execute("SELECT reason FROM ops.quarantine WHERE row_ref = 'file'").fetchone()
    assert reason.startswith("unreadable manifest:")
    (root / PERIOD / "gpu-cur-Manifest.json").unlink()
    landing.sync(con, root, AWS_CUR, OrgConfig())
    assert con.execute("SELECT count(*) FROM ops.quarantine").fetchone() == (0,)


def test_a_data_exports_manifest_names_the_current_files_of_its_partition(env):
    """CUR 2.0 written over in place: data/BILLING_PERIOD=2026-11/ holds the latest execution's parts,
    and a part left from an earlier, larger execution that the manifest no longer names counts for nothing."""
    root, con = env
    export = "bills/aws_cur/exports/cur2"
    data = root / export / "data" / "BILLING_PERIOD=2026-11"
    data.mkdir(parents=True)
    for name, days in (("cur2-00001.csv.gz", {1: "1.25", 2: "1.5"}), ("cur2-00002.csv.gz", {3: "9"})):
        with gzip.open(data / name, "wt", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(CUR_COLUMNS)
            w.writerows(_cur_rows(days))
    meta = root / export / "metadata" / "BILLING_PERIOD=2026-11"
    meta.mkdir(parents=True)
    (meta / "cur2-Manifest.json").write_text(json.dumps({
        "executionId": "e-77", "exportArn": "arn:aws:bcm-data-exports:us-east-1:123456789012:export/cur2-1",
        "columns": [], "dataFiles": ["s3://acme-billing/exports/cur2/data/BILLING_PERIOD=2026-11/cur2-00001.csv.gz"]}))
    landing.sync(con, root, AWS_CUR, OrgConfig())
    assert _staged_total(con, "aws_cur") == Decimal("66")  # 24 × 1.25 + 24 × 1.5; not the stale part's 216
    assert _statuses(con)[f"{export}/data/BILLING_PERIOD=2026-11/cur2-00002.csv.gz"] == (
        "superseded", f"{export}/metadata/BILLING_PERIOD=2026-11/cur2-Manifest.json")


OLD_LANDED_FILES = """CREATE TABLE ops.landed_files (
    source VARCHAR NOT NULL, file VARCHAR NOT NULL, size_bytes BIGINT NOT NULL, sha256 VARCHAR NOT NULL,
    rows_staged BIGINT NOT NULL, rows_quarantined BIGINT NOT NULL, first_day DATE, last_day DATE,
    loaded_at TIMESTAMP NOT NULL, PRIMARY KEY (source, file))"""


def test_a_warehouse_made_before_deliveries_takes_them_in_place(tmp_path):
    root = tmp_path / "landing"
    a = _write(root, "bills/focus/mtd-a.csv", _day_lines(1), utc(2026, 11, 2))
    con = connect(tmp_path / "w.duckdb")
    con.execute("CREATE SCHEMA ops")
    con.execute(OLD_LANDED_FILES)
    bootstrap(con)
    # what the earlier sync left: the file's rows staged and its entry, without any delivery facts
    parsed = FOCUS.parse(memory_db(), a, "bills/focus/mtd-a.csv", OrgConfig())
    writer.put_rows(con, FOCUS, parsed.rows, "bills/focus/mtd-a.csv")
    size, sha = landing_source.fingerprint(a)
    con.execute("INSERT INTO ops.landed_files (source, file, size_bytes, sha256, rows_staged, rows_quarantined, loaded_at) "
                "VALUES ('focus', 'bills/focus/mtd-a.csv', $size, $sha, 24, 0, now())", {"size": size, "sha": sha})
    bootstrap(con)  # twice: the columns are added once
    assert _statuses(con) == {"bills/focus/mtd-a.csv": ("current", None)}

    _write(root, "bills/focus/mtd-b.csv", _day_lines(1, "2") + _day_lines(2, "2"), utc(2026, 11, 3))
    landing.sync(con, root, FOCUS, OrgConfig())
    assert _statuses(con)["bills/focus/mtd-a.csv"] == ("superseded", "bills/focus/mtd-b.csv")
    assert _staged_total(con) == Decimal(96)
    con.close()
