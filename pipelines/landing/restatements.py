"""Which days a change in the landing's bill files forces to be re-run.

The landing's bill files are resolved with the delivery rule (new, re-delivered, superseded, copied,
removed files alike) and compared with what the published warehouse last took in, day by day: a day
re-runs when what its share of the bill is made of changed (sql/staging/stg_focus__bill_lines/20_day_digests.sql). A new
month-to-date delivery that repeats every earlier line therefore re-runs only the days whose lines
are new or restated, not the whole month.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import duckdb

from pipelines.landing.deliveries import CURRENT
from pipelines.landing.bill_deliveries import Recorded, delivery_state, per_day, recorded
from pipelines.lib.config import OrgConfig
from pipelines.landing.source import Source, check_landing_root, check_not_vanished
from pipelines.lib.warehouse.publish import published_path
from pipelines.lib.warehouse.sandbox import open_read_only


@dataclass(frozen=True)
class DayChange:
    day: date
    key: str                   # one per change of the day's bill: the run key
    files: tuple[str, ...]     # the files whose change touches the day


def bill_days_to_rerun(root: Path, source: Source, cfg: OrgConfig) -> list[DayChange]:
    """Each day whose bill, by the landing's bill files now, differs from what the published warehouse
    took in; with the files whose arrival, change, supersession or removal touches it. A missing or
    empty landing zone, or a source whose every file is gone, raises LandingUnusable: no day re-runs."""
    check_landing_root(root)
    known = _published(source)
    check_not_vanished(root, source, known)
    # the sensor holds no warehouse connection (the live one is the writer's; the published one is
    # read-only and sandboxed), and writes no rows: the files are parsed, and their digests taken, on a
    # DuckDB of its own, one per pass, by the same SQL sync runs
    with duckdb.connect() as con:
        state = delivery_state(con, root, source, cfg, known, keep_bytes=0)
    now = {rel: f for rel, f in state.found.items() if state.decisions[rel].status == CURRENT}

    before_digests, forced = [], set()
    for r in known.values():
        if r.status != CURRENT:
            continue
        f = state.found.get(r.rel)
        if r.digests is not None:
            before_digests.append(r.digests)
        elif f is not None and f.sha256 == r.sha256 and f.digests is not None:
            before_digests.append(f.digests)  # recorded before digests were: unchanged content, same days
        else:
            forced |= _days(r.first_day, r.last_day)
    before = per_day(before_digests)
    after = per_day([f.digests for f in now.values() if f.digests])
    days = {d for d in before.keys() | after.keys() if before.get(d) != after.get(d)} | forced

    touched: dict[str, set[str]] = {}
    for rel in known.keys() | state.found.keys():
        r, f = known.get(rel), state.found.get(rel)
        was = (r.sha256, r.status) if r else None
        is_ = (f.sha256, state.decisions[rel].status) if f else None
        if was != is_:
            touched[rel] = set((r.digests or {}) if r else {}) | set((f.digests or {}) if f else {})
    changes = []
    for day in sorted(days):
        key = hashlib.sha256(f"{source.name}|{day}|{before.get(day)}|{after.get(day)}".encode()).hexdigest()[:16]
        files = tuple(sorted(rel for rel, ds in touched.items() if day in ds))
        changes.append(DayChange(date.fromisoformat(day), key, files))
    return changes


def _published(source: Source) -> dict[str, Recorded]:
    if not published_path().exists():
        return {}
    with open_read_only(published_path()) as con:
        try:
            return recorded(con, source.name)
        except duckdb.BinderException:
            # published before ops.landed_files had the delivery columns: every file it took in was read
            # whole, and its per-day digests are unknown (an unchanged file's are read from it now)
            rows = con.execute(
                "SELECT file, sha256, first_day, last_day, rows_staged, rows_quarantined FROM ops.landed_files "
                "WHERE source = $s", {"s": source.name}).fetchall()
            return {f: Recorded(f, sha, CURRENT, None, None, None, None, None, a, b, None, n, q)
                    for f, sha, a, b, n, q in rows}


def _days(first: date | None, last: date | None) -> set[str]:
    if not first or not last:
        return set()
    return {(first + timedelta(days=i)).isoformat() for i in range((last - first).days + 1)}
