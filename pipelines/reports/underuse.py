"""The report's "Busy but under-used" section: the jobs whose GPUs were held and busy but barely used,
and the users whose jobs wasted or under-used the most (docs/ledger.md#under-use-a-lens-on-productive-time).

The rows come from sql/reports/waste_underuse_*.sql; this module turns them into plain objects and into
the plain-text tables both renderers (html_page, markdown) show, so they say the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from pipelines.reports.fmt import gpu_hours, money, ratio_pct


@dataclass
class UnderUsedJob:
    job_uid: str
    job_id: str
    cluster: str | None
    project: str | None
    user_name: str | None
    job_name: str | None
    gpus: int | None
    gpu_model: str | None
    productive_gpu_seconds: float  # all of the job's, whatever currency
    low_activity_gpu_seconds: float
    sm_active_avg: float | None
    gpus_never_active: int
    fb_used_max_mib: float | None
    fits_smaller: str | None  # the smaller GPU or MIG profile that held it on every day
    effective_cost: Decimal  # the part billed in the section's currency
    low_activity_cost: Decimal
    fits_smaller_cost: Decimal | None

    @property
    def right_size(self) -> int | None:
        return None if self.gpus is None else self.gpus - self.gpus_never_active


@dataclass
class UserCost:
    user_name: str
    effective_cost: Decimal
    waste_cost: Decimal  # the user's jobs' time in rerun_loss, allocated_idle, failed_job, unmonitored
    low_activity_cost: Decimal
    gpu_seconds: float
    low_activity_gpu_seconds: float


def jobs_of(rows: list[tuple]) -> list[UnderUsedJob]:
    return [UnderUsedJob(*r) for r in rows]


def users_of(rows: list[tuple]) -> list[UserCost]:
    return [UserCost(u, e, w or Decimal(0), lo, g, lg) for u, e, w, lo, g, lg in rows]


JOB_HEADERS = ["job", "user", "GPUs (right size)", "SM activity", "low-activity GPU-h", "low-activity cost",
               "fits on", "cost there", "job cost"]


def job_rows(jobs: list[UnderUsedJob], currency: str) -> list[list[str]]:
    """Plain-text cells of the under-used jobs table, in JOB_HEADERS order."""
    rows = []
    for j in jobs:
        size = "–" if j.gpus is None else (f"{j.gpus} ({j.right_size})" if j.gpus_never_active else str(j.gpus))
        rows.append([
            j.job_id + (f" ({j.cluster})" if j.cluster else "") + (f" {j.job_name}" if j.job_name else ""),
            j.user_name or "–", size, ratio_pct(j.sm_active_avg, 0),
            gpu_hours(j.low_activity_gpu_seconds), money(j.low_activity_cost, currency),
            j.fits_smaller or "–",
            money(j.fits_smaller_cost, currency) if j.fits_smaller_cost is not None else "–",
            money(j.effective_cost, currency)])
    return rows


USER_HEADERS = ["user", "cost", "waste", "low-activity cost", "GPU-hours", "low-activity GPU-h"]


def user_rows(users: list[UserCost], currency: str) -> list[list[str]]:
    return [[u.user_name, money(u.effective_cost, currency), money(u.waste_cost, currency),
             money(u.low_activity_cost, currency), gpu_hours(u.gpu_seconds), gpu_hours(u.low_activity_gpu_seconds)]
            for u in users]


NOTE = ("Productive GPU time at low SM activity (below the config's efficiency.low_activity, 25 % by default) "
        "is paid for and barely used: notebooks left open, jobs waiting on data, requests larger than the work. "
        "\"GPUs (right size)\": GPUs held, and in brackets the GPUs that were ever active. \"Fits on\": the "
        "smallest cheaper GPU or MIG slice whose memory holds the job's peak with headroom, at the fleet's price.")
