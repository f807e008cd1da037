"""Property: whatever a sacct file holds — bytes that are not UTF-8 in any field, any GPU count (valid,
negative, fractional, absurd, more than the node has), jobs overlapping on the same GPUs — every job's
GPU-seconds land on the ledger or the job is in ops.quarantine with a reason; no host's GPUs are ever
held twice over (so the day's billed GPU-seconds are conserved: what the jobs hold plus idle is the
node's capacity); and a file refused whole is recorded unreadable with the day its name names.

Runs the landing sync and the ledger's job steps (int_job_allocations, int_job_conflicts with its
quarantine rows, int_gpu_seconds) on an in-memory warehouse: tiny scenarios, a few seconds each."""

from datetime import date, datetime, timedelta

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipelines.landing.sync import sync
from pipelines.ingest.sources import SLURM
from pipelines.lib.config import OrgConfig
from pipelines.lib.warehouse import write_day
from tests.support import sql_steps

pytestmark = pytest.mark.slow

DAY = date(2026, 11, 2)
CAPACITY = {"n1": 8, "n2": 4}
HEADER = b"JobIDRaw|JobID|JobName|User|Account|Partition|State|ExitCode|Submit|Start|End|AllocTRES|NodeList|Comment|Restarts|QOS"
FIELDS = HEADER.split(b"|")
REL = "scheduler/slurm/c1/sacct_2026-11-02.psv"
GPU_COUNTS = ["8", "4", "2", "1", "0", "-4", "16", "1.5", "100000000000000000000", "x"]
BAD_BYTES = [b"\xff", b"\xe9", b"\xc3", b"\x80\x80"]

job = st.fixed_dictionaries({
    "start": st.integers(0, 22), "hours": st.integers(1, 8), "gpus": st.sampled_from(GPU_COUNTS),
    "host": st.sampled_from(sorted(CAPACITY)),
    # which field (if any) carries a byte that is not UTF-8, and which byte
    "bad_field": st.sampled_from([None, None, b"Comment", b"JobName", b"Account", b"Start", b"AllocTRES", b"User"]),
    "bad": st.sampled_from(BAD_BYTES),
})


def _line(i: int, j: dict) -> bytes:
    start = datetime(2026, 11, 2) + timedelta(hours=j["start"])
    end = start + timedelta(hours=j["hours"])
    values = {b"JobIDRaw": str(100 + i), b"JobID": str(100 + i), b"JobName": "train", b"User": "ana",
              b"Account": f"p{i}", b"Partition": "gpu", b"State": "COMPLETED", b"ExitCode": "0:0",
              b"Submit": start.isoformat(), b"Start": start.isoformat(), b"End": end.isoformat(),
              b"AllocTRES": f"cpu=8,gres/gpu={j['gpus']},node=1", b"NodeList": j["host"], b"Comment": "run_id=r",
              b"Restarts": "0", b"QOS": "normal"}
    raw = {k: v.encode() for k, v in values.items()}
    if j["bad_field"]:
        raw[j["bad_field"]] = raw[j["bad_field"]][:2] + j["bad"] + raw[j["bad_field"]][2:]
    return b"|".join(raw[f] for f in FIELDS)


def _ledger(tmp_path, data: bytes):
    root = tmp_path / "landing"
    path = root / REL
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    con = sql_steps.warehouse()
    cfg = OrgConfig()
    sync(con, root, SLURM, cfg)
    sql_steps.given(con, "intermediate.int_nodes", [{"day": DAY, "hostname": h, "gpu_count": n} for h, n in CAPACITY.items()])
    sql_steps.given(con, "intermediate.int_bill_line_hours", [], {"day": pl.Date, "tags": pl.String})
    params = {"day": DAY, **cfg.sql_params()}
    for table in ("intermediate/int_job_allocations", "intermediate/int_job_conflicts", "intermediate/int_gpu_seconds"):
        write_day(con, table, params)
    return con


@settings(max_examples=15, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(jobs=st.lists(job, min_size=1, max_size=6), refuse=st.integers(0, 9))
def test_every_job_lands_or_is_quarantined_with_a_reason_and_no_gpu_counts_twice(tmp_path_factory, jobs, refuse):
    tmp_path = tmp_path_factory.mktemp("sacct")
    header = HEADER.replace(b"Comment", b"Comm\xffent") if refuse == 0 else HEADER  # one in ten refused whole
    con = _ledger(tmp_path, b"\n".join([header, *(_line(i, j) for i, j in enumerate(jobs))]) + b"\n")

    reasons = con.sql("SELECT row_ref, reason, origin FROM ops.quarantine").fetchall()
    assert all(reason for _, reason, _ in reasons), reasons
    status, first_day = con.execute("SELECT status, first_day FROM ops.landed_files WHERE file = $f",
                                    {"f": REL}).fetchall()[0]
    if refuse == 0:  # refused whole: named, with its day, so the day cannot say it is complete
        assert (status, first_day) == ("unreadable", DAY)
        assert [ref for ref, *_ in reasons] == ["file"]
        return
    assert status == "current"

    staged = {r[0] for r in con.sql("SELECT _row FROM staging.stg_scheduler__job_allocations").fetchall()}
    refused = {ref for ref, _, origin in reasons if origin == "landing"}
    for line in range(2, len(jobs) + 2):  # every job: staged, or quarantined by its line when read
        assert (line in staged) != (f"line {line}" in refused), (line, staged, refused)
    quarantined = {ref for ref, _, origin in reasons if origin == "intermediate/int_job_conflicts"}

    left_out = {r[0] for r in con.sql("SELECT job_uid FROM intermediate.int_job_conflicts").fetchall()}
    seconds = dict(con.sql("SELECT job_uid, sum(gpu_seconds) FROM intermediate.int_gpu_seconds GROUP BY 1").fetchall())
    for job_uid, source_row, gpus, start, end in con.sql(
            "SELECT job_uid, source_row, gpus, start_ts, end_eff FROM intermediate.int_job_allocations").fetchall():
        if job_uid in left_out:  # left out of the ledger: quarantined by the conflicts step, with a reason
            assert f"line {source_row}" in quarantined
            assert job_uid not in seconds
        else:  # on the ledger: all its GPU-seconds of the day
            held = gpus * (min(end, datetime(2026, 11, 3)) - max(start, datetime(2026, 11, 2))).total_seconds()
            assert seconds.get(job_uid, 0) == pytest.approx(held), (job_uid, gpus)

    # conservation: in no hour do a host's jobs hold more GPU-seconds than the host has, so its idle
    # (billed less held) is never negative and the categories add up to the billed GPU-seconds
    for host, hour, held in con.sql("SELECT hostname, hour_ts, sum(gpu_seconds) FROM intermediate.int_gpu_seconds "
                                    "GROUP BY 1, 2").fetchall():
        assert held <= CAPACITY[host] * 3600 + 1e-6, (host, hour, held)
