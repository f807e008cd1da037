"""The GPU-second categories of one job (sql/intermediate/int_gpu_seconds/), on given telemetry minutes:
an idle stretch of 10 minutes or more is `allocated_idle`, its ends refined to the sample; a shorter
one is not; a gap of more than three scrapes is `unmonitored`. Worked by hand below."""

from datetime import date, datetime, timedelta

import polars as pl

from pipelines.lib.config import OrgConfig
from tests.support.sql_steps import given, rows_of, warehouse

DAY = date(2026, 11, 2)
T0 = datetime(2026, 11, 2, 0, 0)
MINUTE_SCHEMA = {"day": pl.Date, "minute_ts": pl.Datetime("us"), "hostname": pl.String, "gpu": pl.Int32,
                 "gpu_instance": pl.String, "hpc_job": pl.String, "first_sample_ts": pl.Datetime("us"),
                 "last_sample_ts": pl.Datetime("us"), "first_busy_ts": pl.Datetime("us"),
                 "last_busy_ts": pl.Datetime("us"), "gpu_util_max": pl.Float64, "sm_active_max": pl.Float64,
                 "gpu_util_avg": pl.Float64, "sm_active_avg": pl.Float64, "tensor_active_avg": pl.Float64,
                 "fb_used_max_mib": pl.Float64}


def _minutes(busy: set[int], missing: set[int] = frozenset()):
    """DCGM minutes 00:00–00:59 of 8 GPUs of h1, no job labels (the job is judged by the whole host),
    samples at :00 and :30 of every minute but the missing ones."""
    rows = []
    for m in range(60):
        if m in missing:
            continue
        start = T0 + timedelta(minutes=m)
        for gpu in range(8):
            rows.append({"day": DAY, "minute_ts": start, "hostname": "h1", "gpu": gpu, "gpu_instance": None,
                         "hpc_job": None, "first_sample_ts": start, "last_sample_ts": start + timedelta(seconds=30),
                         "first_busy_ts": start if m in busy else None,
                         "last_busy_ts": start + timedelta(seconds=30) if m in busy else None,
                         "gpu_util_max": 50.0 if m in busy else 0.0, "sm_active_max": 0.5 if m in busy else 0.0,
                         "gpu_util_avg": 50.0 if m in busy else 0.0, "sm_active_avg": 0.5 if m in busy else 0.0,
                         "tensor_active_avg": None, "fb_used_max_mib": None})
    return rows


def _categories(minutes) -> dict[str, float]:
    con = warehouse()
    given(con, "intermediate.int_job_allocations", [{
        "day": DAY, "job_uid": "c1|7", "job_id": "7", "job_key": "7", "start_ts": T0, "end_eff": T0 + timedelta(hours=1),
        "gpus": 8, "gpu_slices": None, "gpu_index": None, "node_count": 1, "hosts": ["h1"], "lost_from": None,
        "restart_until": None, "failed": False}])
    given(con, "intermediate.int_job_conflicts", [], {"day": pl.Date, "job_uid": pl.String})
    given(con, "intermediate.int_nodes", [{"day": DAY, "hostname": "h1", "gpu_count": 8}])
    given(con, "staging.stg_dcgm__gpu_minutes", minutes, MINUTE_SCHEMA)
    params = {"day": DAY, **OrgConfig().sql_params()}
    rows = rows_of(con, "intermediate/int_gpu_seconds", params)
    out: dict[str, float] = {}
    for r in rows:
        out[r["category"]] = out.get(r["category"], 0) + r["gpu_seconds"]
    return out


def test_a_25_minute_idle_stretch_is_allocated_idle_to_the_sample():
    busy = set(range(60)) - set(range(20, 45)) - set(range(50, 55))   # idle 00:20–00:45 and 00:50–00:55
    # the stretch starts a scrape after the last busy sample (00:19:30 + 30 s) and ends at the first
    # busy sample after it (00:45:00): 25 minutes of 8 GPUs; the 5-minute lull is no stretch
    assert _categories(_minutes(busy)) == {"allocated_idle": 25 * 60 * 8, "productive": 35 * 60 * 8}


def test_a_gap_of_more_than_three_scrapes_is_unmonitored():
    busy = set(range(60))
    # minutes 30–34 have no samples: from 00:29:30 + 30 s to 00:35:00 nothing was seen
    assert _categories(_minutes(busy, missing=set(range(30, 35)))) == {
        "unmonitored": 5 * 60 * 8, "productive": 55 * 60 * 8}


def _without_utilisation(rows, gpus):
    """The minutes with GPUs `gpus` as nvidia-smi shows a MIG-mode GPU: memory and power, and
    `utilization.gpu` `[N/A]` (no GPU_UTIL sample, so no utilisation in the minute at all)."""
    return [{**r, "gpu_util_max": None, "gpu_util_avg": None, "sm_active_max": None, "sm_active_avg": None,
             "first_busy_ts": None, "last_busy_ts": None, "fb_used_max_mib": 4096.0} if r["gpu"] in gpus else r
            for r in rows]


def test_gpus_without_a_utilisation_reading_are_unmonitored_never_idle():
    # every GPU of the host has samples (memory, power) but none reads utilisation: nothing is known of
    # use, so the job's hour is unmonitored, neither idle nor productive
    assert _categories(_without_utilisation(_minutes(busy=set()), gpus=range(8))) == {"unmonitored": 60 * 60 * 8}


def test_one_gpu_without_a_reading_keeps_its_host_from_being_idle():
    # seven GPUs idle all hour, GPU 0 in MIG mode: the host's GPUs are judged together, and a GPU that
    # may be busy is not called idle (docs/ledger.md#which-gpus-a-job-holds)
    assert _categories(_without_utilisation(_minutes(busy=set()), gpus={0})) == {"productive": 60 * 60 * 8}
