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
    # (sql/intermediate/int_gpu_seconds). None: no rule of a job's GPU time gives it (for a GPU category:
    # time no job held, which the SQL takes it to mean).
    precedence: int | None = None
    # The kind of a run's badput a job's GPU-second of this category is (docs/ledger.md#the-badput-of-a-run);
    # None: productive time, which the run's phases divide, or time no job held.
    badput_kind: str | None = None
    # GPU time no work ran on, whoever held it: what the idle reports and fct_idle_waste_daily count
    is_idle: bool = False
    # How a bill line placed in this category is allocated (int_cost_allocations), its piece's `method`:
    # `tag` to the project it is tagged with; `commitment_owner` to the team owning the pool the
    # commitment covered; `unattributed` to _unallocated; `gpu_weight` over the projects by their GPU
    # cost (or GPU-seconds) of the day; `pretax_cost` over the projects by their pre-tax cost;
    # `tag_else_pretax_cost` by its tag when it has one, else by pre-tax cost. None: a GPU category,
    # allocated by node-hour.
    allocation: str | None = None
    # Where cost the ledger could not place goes (quarantined lines, instances of no known node, nothing to
    # split by): the SQL's pieces of such cost take this category and its allocation as their method
    is_unplaced: bool = False


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
             precedence=4, badput_kind="idle", is_idle=True),
    Category("idle_unallocated", "Idle GPUs, no job", "#f6ad55", True, True,
             "Billed GPUs of the team's pool that no job held: nodes to fill or release (idle GPUs of a pool "
             "no team owns go to _unallocated).", is_idle=True),
    Category("unmonitored", "Unmonitored (no telemetry)", "#b7791f", True, True,
             "GPUs a job held with no telemetry covering them: not known to be used, so not counted as "
             "productive.",
             precedence=2, badput_kind="unmonitored"),
    Category("productive", "Productive GPU time", "#2f855a", True, False,
             "GPU time a job held that showed activity and was not lost to an interruption.",
             precedence=1),
    Category("storage", "Storage", "#3182ce", False, False, "Storage bill lines tagged with the project.",
             allocation="tag"),
    Category("network", "Network", "#90cdf4", False, False, "Networking bill lines tagged with the project.",
             allocation="tag"),
    Category("compute_other", "Other compute", "#5a67d8", False, False,
             "Compute bill lines tagged with the project that are no GPU node (CPU instances, managed services).",
             allocation="tag"),
    Category("shared", "Shared costs", "#9f7aea", False, False,
             "Untagged lines (network, support, shared storage), shared by each project's GPU cost of the day.",
             allocation="gpu_weight"),
    Category("unused_commitment", "Unused commitment", "#553c9a", False, False,
             "The unused part of a savings plan or reservation, charged to the team owning the pool it covers.",
             allocation="commitment_owner"),
    Category("other", "Other", "#a0aec0", False, False, "Other bill lines tagged with the project.",
             allocation="tag"),
    Category("unattributed", "Unattributed", "#718096", False, False,
             "Cost that could not be placed (quarantined lines, instances of no known node, nothing to split "
             "by), charged to _unallocated.", allocation="unattributed", is_unplaced=True),
    Category("tax", "Tax", "#cbd5e0", False, False, "Tax, shared by each project's pre-tax cost.",
             allocation="pretax_cost"),
    Category("credit", "Credits", "#38b2ac", False, False,
             "Credits, to their project when tagged, else shared by each project's pre-tax cost.",
             allocation="tag_else_pretax_cost"),
)


@dataclass(frozen=True)
class LineRule:
    """A bill line that is not a GPU node-hour is placed in the category of the first rule it meets
    (sql/intermediate/int_bill_line_placements.sql joins them as intermediate.ref_line_placements); a
    condition left None meets every line."""
    category: str
    quarantined: bool | None = None        # the line was quarantined (its money kept, its facts not trusted)
    commitment_status: str | None = None   # its CommitmentDiscountStatus
    charge_category: str | None = None     # its ChargeCategory
    project_tagged: bool | None = None     # it carries a project tag (config project_tag_keys)
    service_category: str | None = None    # its ServiceCategory
    node_like: bool | None = None          # a node tag, or a ResourceType naming an instance


LINE_RULES: tuple[LineRule, ...] = (
    LineRule("unattributed", quarantined=True),
    LineRule("unused_commitment", commitment_status="Unused"),
    LineRule("tax", charge_category="Tax"),
    LineRule("credit", charge_category="Credit"),
    LineRule("storage", project_tagged=True, service_category="Storage"),
    LineRule("network", project_tagged=True, service_category="Networking"),
    LineRule("compute_other", project_tagged=True, service_category="Compute"),
    LineRule("other", project_tagged=True),
    # an instance of no known node, without a project: nobody to charge
    LineRule("unattributed", node_like=True),
    LineRule("shared"),
)
BY_NAME = {c.name: c for c in CATEGORIES}
assert all(r.category in BY_NAME and BY_NAME[r.category].allocation for r in LINE_RULES), \
    "a line rule names a category that is not a line category"
# the SQL takes these categories by their attributes, so each must be one category (sql/: no category names)
assert sum(c.is_unplaced for c in CATEGORIES) == 1, "one category takes the cost the ledger could not place"
assert sum(c.is_gpu and c.precedence is None for c in CATEGORIES) == 1, "one category is GPU time no job held"
assert sum(c.is_gpu and not c.is_waste for c in CATEGORIES) == 1, "one category is productive GPU time"
assert len({c.badput_kind for c in CATEGORIES if c.badput_kind}) == sum(bool(c.badput_kind) for c in CATEGORIES), \
    "a badput kind is one category's"
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
