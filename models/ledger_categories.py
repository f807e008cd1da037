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
    help: str


CATEGORIES: tuple[Category, ...] = (
    Category("rerun_loss", "Work lost to interruptions", "#9b2c2c", True, True,
             "compute since the last checkpoint before a crash, plus restart time until training resumed"),
    Category("failed_job", "Failed jobs", "#e53e3e", True, True,
             "jobs that ended failed, timed out, cancelled or out of memory and were not resumed"),
    Category("allocated_idle", "Hung / idle jobs", "#dd6b20", True, True,
             "GPUs a job held at 0 % activity for 10+ minutes: hung jobs, idle notebooks, stalled loaders"),
    Category("idle_unallocated", "Idle GPUs, no job", "#f6ad55", True, True,
             "billed GPUs of the team's pool that no job held"),
    Category("unmonitored", "Unmonitored (no telemetry)", "#b7791f", True, True,
             "allocated GPUs with no telemetry: not known to be used, so not counted as productive"),
    Category("productive", "Productive GPU time", "#2f855a", True, False,
             "allocated GPU time that showed activity and was not lost to an interruption"),
    Category("storage", "Storage", "#3182ce", False, False, "storage lines tagged with the project"),
    Category("network", "Network", "#90cdf4", False, False, "networking lines tagged with the project"),
    Category("compute_other", "Other compute", "#5a67d8", False, False,
             "compute lines tagged with the project that are no GPU node (CPU instances, managed services)"),
    Category("shared", "Shared costs", "#9f7aea", False, False,
             "untagged lines (network, support, shared storage) shared by each project's GPU cost of the day"),
    Category("unused_commitment", "Unused commitment", "#553c9a", False, False,
             "the unused part of a savings plan or reservation, to the team owning the pool it covers"),
    Category("other", "Other", "#a0aec0", False, False, "other lines tagged with the project"),
    Category("unattributed", "Unattributed", "#718096", False, False,
             "what cannot be placed: quarantined lines, instances of no known node, nothing to split by"),
    Category("tax", "Tax", "#cbd5e0", False, False, "tax, shared by each project's pre-tax cost"),
    Category("credit", "Credits", "#38b2ac", False, False,
             "credits: to their project when tagged, else by each project's pre-tax cost"),
)
BY_NAME = {c.name: c for c in CATEGORIES}
NAMES = tuple(c.name for c in CATEGORIES)
GPU = tuple(c.name for c in CATEGORIES if c.is_gpu)
WASTE = tuple(c.name for c in CATEGORIES if c.is_waste)
