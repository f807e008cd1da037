"""The ledger's categories: every cost row is in exactly one. One table for the SQL (loaded as
`marts.dim_ledger_categories`), the data checks (the category domain) and the reports (labels, colours,
help), so a category is named, coloured and explained in one place.

Order: the stacking order of the reports' cost charts, bottom first — waste warm (red to amber) and on
the axis, where its height reads best, then productive green, the costs that are not GPU time cool
(blue, purple, grey), credits teal below zero. GPU categories share every billed GPU-second of a node
(precedence: rerun_loss, allocated_idle, failed_job, unmonitored, productive; idle_unallocated when no
job held the GPU); waste = GPU cost − productive cost, so unmonitored time counts as waste: it is not
known to be used.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Category:
    name: str
    label: str
    colour: str
    is_gpu: bool     # a share of billed GPU node time
    is_waste: bool   # GPU time that produced nothing
    help: str        # one sentence of what the line means, as the reports print it
    # Which category a GPU-second a job held takes when several rules claim it: the highest wins
    # (sql/intermediate/int_gpu_seconds). None: no rule of a job's GPU time gives it.
    precedence: int | None = None
    # The kind of a run's badput a job's GPU-second of this category is (docs/ledger.md#the-badput-of-a-run);
    # None: productive time, which the run's phases divide, or time no job held.
    badput_kind: str | None = None


CATEGORIES: tuple[Category, ...] = (
    Category("rerun_loss", "Work lost to interruptions", "#9b2c2c", True, True,
             "Compute redone after a crash: from the last checkpoint saved before the interruption to the "
             "crash, plus the restart until training resumed.",
             precedence=5, badput_kind="disruption"),
    Category("failed_job", "Failed jobs", "#e53e3e", True, True,
             "GPU time of jobs that ended failed, timed out, cancelled or out of memory and that no later job "
             "resumed, so their work was thrown away.",
             precedence=3, badput_kind="failed"),
    Category("allocated_idle", "Hung / idle jobs", "#dd6b20", True, True,
             "GPUs a job held at 0 % activity for 10 minutes or more in a row (the config's idle stretch): "
             "hung jobs, idle notebooks, stalled data loaders.",
             precedence=4, badput_kind="idle"),
    Category("idle_unallocated", "Idle GPUs, no job", "#f6ad55", True, True,
             "Billed GPUs of the team's pool that no job held: nodes to fill or release (idle GPUs of a pool "
             "no team owns go to _unallocated)."),
    Category("unmonitored", "Unmonitored (no telemetry)", "#b7791f", True, True,
             "GPUs a job held with no telemetry covering them: not known to be used, so not counted as "
             "productive.",
             precedence=2, badput_kind="unmonitored"),
    Category("productive", "Productive GPU time", "#2f855a", True, False,
             "GPU time a job held that showed activity and was not lost to an interruption.",
             precedence=1),
    Category("storage", "Storage", "#3182ce", False, False, "Storage bill lines tagged with the project."),
    Category("network", "Network", "#90cdf4", False, False, "Networking bill lines tagged with the project."),
    Category("compute_other", "Other compute", "#5a67d8", False, False,
             "Compute bill lines tagged with the project that are no GPU node (CPU instances, managed services)."),
    Category("shared", "Shared costs", "#9f7aea", False, False,
             "Untagged lines (network, support, shared storage), shared by each project's GPU cost of the day."),
    Category("unused_commitment", "Unused commitment", "#553c9a", False, False,
             "The unused part of a savings plan or reservation, charged to the team owning the pool it covers."),
    Category("other", "Other", "#a0aec0", False, False, "Other bill lines tagged with the project."),
    Category("unattributed", "Unattributed", "#718096", False, False,
             "Cost that could not be placed (quarantined lines, instances of no known node, nothing to split "
             "by), charged to _unallocated."),
    Category("tax", "Tax", "#cbd5e0", False, False, "Tax, shared by each project's pre-tax cost."),
    Category("credit", "Credits", "#38b2ac", False, False,
             "Credits, to their project when tagged, else shared by each project's pre-tax cost."),
)
BY_NAME = {c.name: c for c in CATEGORIES}
NAMES = tuple(c.name for c in CATEGORIES)
GPU = tuple(c.name for c in CATEGORIES if c.is_gpu)
WASTE = tuple(c.name for c in CATEGORIES if c.is_waste)

# The team and project of what belongs to nobody (docs/ledger.md#teams-and-projects), and what the
# reports and the run's summary say it is.
UNALLOCATED = "_unallocated"
UNALLOCATED_HELP = ("_unallocated is what no team owns: GPUs billed idle in pools without an owning team (the "
                    "config's pools:), unused commitments without an owner, and lines that could not be placed "
                    "(unattributed: quarantined lines, instances of no known node). As a project it is a team's cost "
                    "no project held: its pool's idle GPUs, its unused commitments, jobs without an account. "
                    "Give each pool a team to charge its idle time to it.")
