"""Which days the books hold, and how each day's last run ended (ops.ledger_days).

A day whose run failed or never finished may hold part of the new run and part of the old in its
marts: finance.reconciliation_daily marks it incomplete with the run's reason instead of publishing it
as complete. And a published file is never replaced by one with fewer days: a live warehouse that lost
days (deleted, or replaced by an older copy) must rebuild them before it publishes
(docs/operations.md#lost-days).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import duckdb

# The days after the one running that the same `gpuledger run` will run: a day the live warehouse lacks
# but that is among them is being rebuilt, so its publish waits for it rather than refusing.
PENDING_DAYS_ENV = "GPULEDGER_PENDING_DAYS"

# every mart that has a row for each day the books cover
_DAYS_OF_BOOKS = """
SELECT day FROM marts.fct_cost_daily UNION SELECT day FROM marts.fct_bill_daily
UNION SELECT day FROM marts.fct_config_cost_daily"""


class PublishWouldLoseDays(Exception):
    """The live warehouse lacks days the published file has: publishing it would drop them."""

    def __init__(self, lost: list[date], live: Path | str, published: Path | str):
        self.lost = lost
        super().__init__(
            f"the published warehouse {published} has {describe_days(lost)} but the live warehouse {live} does "
            f"not (was it deleted, or replaced by an older copy?): publishing would drop those days, so nothing "
            f"was published. Rebuild them from the landing zone with `gpuledger run --start {lost[0]} --end "
            f"<last day>` (a run that includes them publishes once they are all back), or move {published} "
            f"away to start a new published history")


def describe_days(days: Iterable[date]) -> str:
    """'2026-10-29 to 2026-10-31, 2026-11-04': runs of consecutive days."""
    spans: list[list[date]] = []
    for d in sorted(set(days)):
        if spans and d - spans[-1][1] == timedelta(days=1):
            spans[-1][1] = d
        else:
            spans.append([d, d])
    return ", ".join(str(a) if a == b else f"{a} to {b}" for a, b in spans)


def days_of_books(con: duckdb.DuckDBPyConnection, catalog: str | None = None) -> set[date]:
    """The days with a row in the day marts of `catalog` (the connection's own by default); none
    before the marts exist."""
    query = _DAYS_OF_BOOKS if catalog is None else _DAYS_OF_BOOKS.replace("marts.", f"{catalog}.marts.")
    try:
        return {d for (d,) in con.execute(query).fetchall()}
    except duckdb.CatalogException:
        return set()


def pending_days() -> set[date]:
    return {date.fromisoformat(d) for d in os.environ.get(PENDING_DAYS_ENV, "").split(",") if d}


def mark_day(con: duckdb.DuckDBPyConnection, day: date, status: str, run_id: str | None = None,
             reason: str | None = None) -> None:
    con.execute(
        """INSERT OR REPLACE INTO ops.ledger_days (day, status, run_id, reason, updated_at)
           VALUES ($day, $status, $run_id, $reason, $at)""",
        {"day": day, "status": status, "run_id": run_id, "reason": reason,
         "at": datetime.now(timezone.utc).replace(tzinfo=None)})


def mark_live_day(day: date, status: str, run_id: str | None = None, reason: str | None = None) -> None:
    """Writes the day's status in the live warehouse, under its writer lock (bootstrapping it)."""
    from pipelines.lib.dagster_glue.resources import warehouse_resource
    from pipelines.lib.warehouse import bootstrap

    with warehouse_resource().get_connection() as con:
        bootstrap(con)
        mark_day(con, day, status, run_id, reason)
