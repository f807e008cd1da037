"""Implausible times are quarantined, named, and never stretch the ledger; an empty file is refused as
empty. Through the sources as sync and inspect use them (pipelines/ingest/plausible.py)."""

from __future__ import annotations

import json
from datetime import date
from decimal import Decimal

import pytest

from pipelines.ingest.sources import ALL, DCGM, FOCUS, RUNS, SLURM
from pipelines.lib.config import OrgConfig
from pipelines.cli.inspect import inspect_landing
from tests.support.memory_db import memory_db

HEADER = "JobIDRaw|JobID|JobName|User|Account|Partition|State|ExitCode|Submit|Start|End|AllocTRES|NodeList|Comment|Restarts|QOS"


def _job(job_id: int, start: str, end: str = "2026-11-02T01:00:00") -> str:
    return f"{job_id}|{job_id}|t|u|a|gpu|COMPLETED|0:0|{start}|{start}|{end}|gres/gpu=8,node=1|g1||0|n"


def test_a_1970_start_is_quarantined_and_inspect_stays_sane(tmp_path):
    folder = tmp_path / "scheduler" / "slurm" / "c"
    folder.mkdir(parents=True)
    lines = [_job(i, "2026-11-02T00:00:00") for i in range(1, 5)] + [_job(9, "1970-01-01T00:00:00")]
    (folder / "sacct.psv").write_text(HEADER + "\n" + "\n".join(lines) + "\n")
    parsed = SLURM.parse(memory_db(), folder / "sacct.psv", "scheduler/slurm/c/sacct.psv", OrgConfig())
    assert parsed.rows["job_key"].to_list() == ["1", "2", "3", "4"]
    (reject,) = parsed.rejects.to_dicts()
    assert reject["row_ref"] == "line 6"
    assert reject["reason"].startswith("Start 1970-01-01 00:00:00 is implausible: before 2000-01-01")
    assert json.loads(reject["payload"])["job_key"] == "9"
    slurm = inspect_landing(tmp_path, OrgConfig())["slurm"]
    assert slurm["jobs"] == 4 and slurm["gpu_seconds"] == 4 * 8 * 3600 and slurm["quarantined"] == 1


def test_a_bill_line_far_from_its_file_keeps_its_money_in_quarantine(tmp_path):
    path = tmp_path / "bill.csv"
    rows = ["ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,BillingCurrency"]
    rows += [f"2026-11-02T0{h}:00:00Z,2026-11-02T0{h + 1}:00:00Z,Usage,1.50,1.50,USD" for h in range(5)]
    rows.append("2023-06-02T00:00:00Z,2023-06-02T01:00:00Z,Usage,7.25,7.00,USD")   # three years before the rest
    rows.append("2026-11-02T05:00:00Z,2099-01-01T00:00:00Z,Usage,2.00,2.00,USD")   # a charge period to 2099
    path.write_text("\n".join(rows) + "\n")
    parsed = FOCUS.parse(memory_db(), path, "bills/focus/bill.csv", OrgConfig())
    assert parsed.rows.height == 5
    rejects = {r["row_ref"]: r for r in parsed.rejects.to_dicts()}
    assert set(rejects) == {"row 6", "row 7"}
    assert "ChargePeriodStart 2023-06-02 00:00:00 is implausible: 1249 days from the median time" in rejects["row 6"]["reason"]
    assert (rejects["row 6"]["effective_cost"], rejects["row 6"]["billed_cost"]) == (Decimal("7.00"), Decimal("7.25"))
    assert rejects["row 6"]["billing_currency"] == "USD" and rejects["row 6"]["day"] == date(2023, 6, 2)
    assert rejects["row 7"]["reason"].startswith("ChargePeriodEnd 2099-01-01 00:00:00 is implausible")


def test_ledger_start_sets_the_earliest_plausible_day(tmp_path):
    path = tmp_path / "r.jsonl"
    events = [{"event": "step", "run_id": "r", "step": i, "tokens": 10, "ts": f"2024-0{i}-01T00:00:00Z"}
              for i in range(1, 4)]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    assert RUNS.parse(memory_db(), path, "runs/r.jsonl", OrgConfig()).rejects.height == 0     # 2024 is after 2000
    late = OrgConfig.model_validate({"ledger": {"start": "2026-01-01"}})
    parsed = RUNS.parse(memory_db(), path, "runs/r.jsonl", late)
    assert parsed.rows.height == 0 and parsed.rejects.height == 3
    assert parsed.rejects["reason"][0] == (
        "ts 2024-01-01 00:00:00 is implausible: before 2025-01-01 (a year before ledger.start 2026-01-01)")


@pytest.mark.parametrize("source", ALL, ids=lambda s: s.name)
def test_an_empty_file_is_refused_as_empty(tmp_path, source):
    rel = {"slurm": "scheduler/slurm/c/x.psv", "kubernetes": "scheduler/kubernetes/c/x.jsonl",
           "dcgm": "telemetry/dcgm/x.parquet", "runs": "runs/x.jsonl", "inventory": "inventory/nodes.csv"}.get(
        source.name, f"bills/{source.name}/x.csv")
    path = tmp_path / rel
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    parsed = source.parse(memory_db(), path, rel, OrgConfig())
    assert parsed.rows.height == 0
    assert parsed.rejects.select("file", "row_ref", "reason").to_dicts() == [{
        "file": rel, "row_ref": "file",
        "reason": "empty file (0 bytes): nothing to read, the export probably failed; re-export it or delete it"}]


def test_telemetry_with_an_unset_clock_names_the_sample(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    ts = [1_762_041_600_000_000 + i * 30_000_000 for i in range(4)] + [0]
    table = pa.table({"timestamp": pa.array(ts, pa.timestamp("us", tz="UTC")), "hostname": ["h1"] * 5,
                      "gpu": pa.array([0] * 5, pa.int32()), "metric": ["DCGM_FI_DEV_GPU_UTIL"] * 5,
                      "value": [50.0] * 5})
    path = tmp_path / "t.parquet"
    pq.write_table(table, path)
    parsed = DCGM.parse(memory_db(), path, "telemetry/dcgm/t.parquet", OrgConfig())
    assert parsed.rows.height == 4
    assert parsed.rejects["row_ref"].to_list() == ["h1 gpu 0 at 1970-01-01 00:00:00.000000"]


def test_a_dump_of_several_years_keeps_its_rows_and_the_outlier_still_goes(tmp_path):
    folder = tmp_path / "scheduler" / "slurm" / "c"
    folder.mkdir(parents=True)
    starts = [f"{y}-{m:02d}-01T00:00:00" for y in (2022, 2023, 2024, 2025) for m in (1, 4, 7, 10)]
    lines = [_job(i, s, end=s.replace("T00", "T05")) for i, s in enumerate(starts, start=1)]
    (folder / "sacct.psv").write_text(HEADER + "\n" + "\n".join(lines) + "\n")
    parsed = SLURM.parse(memory_db(), folder / "sacct.psv", "scheduler/slurm/c/sacct.psv", OrgConfig())
    assert parsed.rejects.height == 0 and parsed.rows.height == 16
    # two rows, one of them 1970: the other is the file's bulk, and stays
    (folder / "sacct.psv").write_text(HEADER + "\n" + _job(1, "2018-06-18T00:00:00", "2018-06-18T12:00:00") + "\n"
                                      + _job(2, "1970-01-01T00:00:00", "2018-06-18T13:00:00") + "\n")
    parsed = SLURM.parse(memory_db(), folder / "sacct.psv", "scheduler/slurm/c/sacct.psv", OrgConfig())
    assert parsed.rows["job_key"].to_list() == ["1"] and parsed.rejects["row_ref"].to_list() == ["line 3"]
