"""The team report's "Storage" section: the team's inventoried storage (marts.fct_storage_daily,
docs/ingest/storage.md) by kind and tier, its bytes per day, the runs whose checkpoints cost most to keep,
and what storage.policy would save a month (the storage rows of "What to do").

The rows come from sql/reports/storage_*.sql, one currency's at a time (data.py); this module turns them
into plain objects and the plain-text tables both renderers (html_page, markdown) show.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from pipelines.reports.fmt import money

KIND_COLOURS = {"checkpoint": "#3182ce", "dataset": "#90cdf4", "log": "#a0aec0", "other": "#cbd5e0"}
POLICY_KINDS = {"prune_checkpoints": "prune old checkpoints", "tier_down": "move to a colder tier",
                "stale_datasets": "archive stale datasets"}


@dataclass
class StorageSection:
    by_kind_tier: list[tuple[str, str, float, float, Decimal, str]]  # kind, tier, bytes a day, GiB-days, cost, priced by
    daily: list[tuple[date, str, float]]  # trend window: (day, kind, bytes)
    runs: list[tuple[str, float, date, Decimal, str]]  # run, checkpoint bytes last day, that day, cost, stores
    policy: list[tuple[str, int, Decimal]] = field(default_factory=list)  # opportunity kind, count, a month


def terabytes(n: float | None) -> str:
    """Decimal terabytes (10^12 bytes, as storage is sold): 12.34 TB; under 10 GB in GB."""
    n = n or 0
    return f"{n / 1e9:,.1f} GB" if n < 1e10 else f"{n / 1e12:,.2f} TB"


KIND_TIER_HEADERS = ["kind", "tier", "average a day", "GiB-days", "cost", "priced by"]


def kind_tier_rows(s: StorageSection, currency: str) -> list[list[str]]:
    return [[k, t, terabytes(b), f"{g:,.0f}", money(c, currency), p] for k, t, b, g, c, p in s.by_kind_tier]


RUN_HEADERS = ["run", "checkpoints stored", "as of", "stored in", "cost"]


def run_rows(s: StorageSection, currency: str) -> list[list[str]]:
    return [[r, terabytes(b), d.isoformat(), stores, money(c, currency)] for r, b, d, c, stores in s.runs]


def policy_text(s: StorageSection, currency: str) -> str:
    """One sentence: what following storage.policy would save a month, by what."""
    if not s.policy:
        return "The storage policy finds nothing to prune, tier down or archive."
    total = sum((m for _, _, m in s.policy), Decimal(0))
    parts = ", ".join(f"{POLICY_KINDS.get(k, k)} {money(m, currency)}" for k, _, m in s.policy)
    return f"Following the storage policy would save {money(total, currency)} a month: {parts} (see What to do)."


NOTE = ("Inventoried buckets and file systems: each object's share of its store's storage bill lines by bytes "
        "(or the config's rate card where no line prices it); an unpriced store's objects are counted, not priced.")
