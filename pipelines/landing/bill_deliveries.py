"""A bill source's landing files with the delivery rule (pipelines/landing/deliveries.py) applied: what
sync writes, what `inspect` counts, what the restatement sensor compares.

A file already recorded in ops.landed_files with the same SHA-256 is not read again: its coverage and
per-day digests come from its entry. Sync writes each group of files whose status changes together
(a new delivery and the ones it supersedes, a removed file and the ones it leaves current again, the
deliveries of one manifest group) in one transaction, so a crash never leaves a line counted twice or
a delivery half replaced.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path

import duckdb
import polars as pl

from pipelines.landing.parsed import Parsed, file_reject
from pipelines.landing.deliveries import (
    CURRENT,
    UNREADABLE,
    BillFile,
    Decision,
    Manifest,
    Resolution,
    bill_file,
    days_from_name,
    decide,
    find_manifests,
    modified_time,
)
from pipelines.lib.config import OrgConfig
from pipelines.landing import writer
from pipelines.landing.source import Source, SyncReport, discover, file_span, fingerprint
from pipelines.lib.warehouse import sql, step, transaction

# the table every bill source stages into, whose folder holds the SQL of a bill file's facts
BILL_LINES = "staging/stg_focus__bill_lines"

# Parsed rows of new files are kept for writing up to this many bytes of files; beyond, a file that
# turns out current is parsed again when written, so a first load of a long history stays in memory.
KEEP_PARSED_BYTES = 512 * 1024 * 1024


@dataclass
class Recorded:
    """A bill file as ops.landed_files last recorded it."""

    rel: str
    sha256: str
    status: str
    superseded_by: str | None
    readable: bool | None            # None: recorded before the delivery rule, facts unknown
    scopes: list[str] | None
    first_charge: datetime | None
    last_charge: datetime | None
    first_day: date | None
    last_day: date | None
    digests: dict[str, int] | None
    rows_staged: int
    rows_quarantined: int
    sample: list[int] | None = None
    reason: str | None = None


@dataclass
class Found:
    """A bill file (or an unreadable manifest) on the landing now."""

    rel: str
    path: Path
    size: int
    sha256: str
    facts: BillFile | None           # None for an unreadable manifest
    digests: dict[str, int] | None   # None when unreadable
    days: tuple[date | None, date | None]
    parsed: Parsed | None = None     # kept from this pass, when parsed and within budget
    reason: str = ""                 # why it could not be read


@dataclass
class DeliveryState:
    found: dict[str, Found]
    decisions: dict[str, Decision]
    resolution: Resolution
    manifests: list[Manifest]
    other_manifests: list[str] = field(default_factory=list)  # JSON named like a manifest, not a delivery's

    def set_aside(self) -> list[dict]:
        """Every file that is not current, with its status and why, in path order."""
        return [{"file": rel, "status": d.status, "by": d.superseded_by, "reason": d.reason}
                for rel, d in sorted(self.decisions.items()) if d.status != CURRENT]


def recorded(con: duckdb.DuckDBPyConnection, source: str) -> dict[str, Recorded]:
    rows = con.execute(
        """SELECT file, sha256, coalesce(status, 'current'), superseded_by, readable, billing_scopes, first_charge,
                  last_charge, first_day, last_day, day_digests, rows_staged, rows_quarantined, line_sample,
                  status_reason
           FROM ops.landed_files WHERE source = $source""",
        {"source": source},
    ).fetchall()
    return {r[0]: Recorded(*r[:10], _digests_from_json(r[10]), r[11], r[12], r[13], r[14]) for r in rows}


def delivery_state(
    con: duckdb.DuckDBPyConnection, root: Path, source: Source, cfg: OrgConfig, known: dict[str, Recorded],
    keep_bytes: float = KEEP_PARSED_BYTES,
) -> DeliveryState:
    """Every file of the bill source with its facts (from `known` when its content is unchanged, else
    parsed on `con`, which its digests are taken on too: `line_facts`) and the rule's decision for it. Parsed rows are
    kept for files up to `keep_bytes` in all."""
    found: dict[str, Found] = {}
    budget = keep_bytes
    for path, rel in discover(root, source):
        size, sha = fingerprint(path)
        modified = modified_time(path)
        was = known.get(rel)
        if was and was.sha256 == sha and was.readable is not None:
            facts = BillFile(rel, sha, modified, was.readable, frozenset(was.scopes or ()), was.first_charge,
                             was.last_charge, tuple(was.sample or ()))
            found[rel] = Found(rel, path, size, sha, facts, was.digests, (was.first_day, was.last_day),
                               reason=(was.reason or "") if was.status == UNREADABLE else "")
            continue
        item = read_bill_file(con, path, rel, source, cfg, size, sha, modified)
        if budget >= size:
            budget -= size
        else:
            item.parsed = None
        found[rel] = item

    manifests, bad, others = find_manifests(root, source.folder)
    resolution = decide([f.facts for f in found.values()], manifests, source.folder)
    decisions = dict(resolution.decisions)
    for rel, f in found.items():
        if decisions[rel].status == UNREADABLE:
            decisions[rel] = Decision(UNREADABLE, None, f.reason)
            period = resolution.periods.get(rel)
            if period:
                f.days = (period[0], date.fromordinal(period[1].toordinal() - 1))
    for rel, why in bad.items():  # a manifest that cannot be read leaves its delivery unresolved: say so
        path = root / rel
        size, sha = fingerprint(path)
        found[rel] = Found(rel, path, size, sha, None, None, days_from_name(rel) or (None, None), reason=why)
        decisions[rel] = Decision(UNREADABLE, None, why)
    return DeliveryState(found, decisions, resolution, manifests, others)


def read_bill_file(con: duckdb.DuckDBPyConnection, path: Path, rel: str, source: Source, cfg: OrgConfig,
                   size: int, sha: str, modified: datetime) -> Found:
    parsed = source.parse(con, path, rel, cfg)
    whole = parsed.rejects.filter(pl.col("row_ref") == "file")
    if parsed.rows.height == 0 and whole.height > 0:
        facts = bill_file(rel, sha, modified, parsed.rows, readable=False)
        span = days_from_name(rel) or (source.refused_days(path) if source.refused_days else None) or (None, None)
        return Found(rel, path, size, sha, facts, None, span, parsed, whole["reason"][0])
    digests, sample = line_facts(con, parsed)
    facts = bill_file(rel, sha, modified, parsed.rows, readable=True, sample=sample)
    return Found(rel, path, size, sha, facts, digests, file_span(parsed.rows, source), parsed)


# What identifies a bill line from one delivery to the next: not its amounts or quantities (a
# restatement changes them), nor its tags or description, nor a CUR line id (AWS does not keep it
# between refreshes).
LINE_KEY = ("billing_account_id", "billing_currency", "sub_account_id", "charge_period_start", "charge_period_end",
            "charge_category", "charge_class", "pricing_category", "commitment_discount_id", "commitment_discount_status",
            "provider_name", "region_id", "resource_id", "service_category", "service_name", "sku_id")


def line_facts(con: duckdb.DuckDBPyConnection, parsed: Parsed) -> tuple[dict[str, int], tuple[int, ...]]:
    """(day -> digest of the file's lines touching it, staged and quarantined with a charge period;
    the sample of its line keys), set-wise on `con` (sql/staging/stg_focus__bill_lines/20_day_digests.sql,
    30_line_sample.sql): in sync the warehouse connection that stages the file, so no parser opens a
    DuckDB of its own. The SQL reads only the registered lines, never a warehouse table, on a cursor of
    its own: its `bill_lines_in` is no other file's or thread's, and goes when the cursor closes."""
    rows = parsed.rows
    content = [c for c in rows.columns if c not in ("_file", "_row", "source")]
    lines = [rows.select(_text(content, "line"), _text(LINE_KEY, "key").alias("line_key"),
                         pl.col("charge_period_start").alias("ps"), pl.col("charge_period_end").alias("pe"))]
    money = parsed.rejects.filter(pl.col("charge_period_start").is_not_null())
    if money.height:
        lines.append(money.select(
            _text(["reason", "payload", "effective_cost", "billed_cost", "charge_period_start", "charge_period_end"],
                  "quarantined"),
            pl.lit(None, dtype=pl.String).alias("line_key"),
            pl.col("charge_period_start").alias("ps"),
            pl.coalesce("charge_period_end", "charge_period_start").alias("pe"),
        ))
    lines = [f for f in lines if f.height]
    if not lines:
        return {}, ()
    with con.cursor() as own:
        own.register("bill_lines_in", pl.concat(lines, how="vertical_relaxed"))
        digests = {day: int(digest) for day, digest in own.execute(sql(step(BILL_LINES, "day_digests"))).fetchall()}
        sample = tuple(int(h) for (h,) in own.execute(sql(step(BILL_LINES, "line_sample"))).fetchall())
    return digests, sample


def _text(columns, prefix: str) -> pl.Expr:
    """A line's columns as one text, NULL spelled apart from any value."""
    parts = [pl.lit(prefix)] + [pl.col(c).cast(pl.String).fill_null("\u2205") for c in columns]
    return pl.concat_str(parts, separator="\x1f").alias("line")


def per_day(digests: list[dict[str, int]]) -> dict[str, int]:
    """The digests of several files summed per day (mod 2^64): what the day's bill is made of."""
    out: dict[str, int] = {}
    for d in digests:
        for day, value in d.items():
            out[day] = (out.get(day, 0) + value) % (1 << 64)
    return out


# --- sync ----------------------------------------------------------------------------------------

def sync_bills(con: duckdb.DuckDBPyConnection, root: Path, source: Source, cfg: OrgConfig,
               day: date | None = None) -> SyncReport:
    """Brings staging, quarantine and ops.landed_files in line with the landing's bill files and the
    delivery rule: current files' rows in, every other file's rows out, removed files forgotten. The
    rule decides over all of the source's files, whatever `day` is."""
    known = recorded(con, source.name)
    state = delivery_state(con, root, source, cfg, known)
    changed = _changed(known, state)
    report = SyncReport(files_unchanged=sum(1 for rel in state.found if rel not in changed))
    for component in _components(changed, known, state):
        _write(con, root, source, cfg, component, known, state, report)
    counts: dict[str, int] = {}
    for d in state.decisions.values():
        counts[d.status] = counts.get(d.status, 0) + 1
    report.files_by_status = counts
    report.set_aside = state.set_aside()
    report.missing_from_manifests = state.resolution.missing
    return report


def _changed(known: dict[str, Recorded], state: DeliveryState) -> set[str]:
    changed = {rel for rel in known if rel not in state.found}
    for rel, f in state.found.items():
        was, now = known.get(rel), state.decisions[rel]
        if (was is None or was.sha256 != f.sha256 or was.readable is None
                or (was.status, was.superseded_by) != (now.status, now.superseded_by)):
            changed.add(rel)
    return changed


def _components(changed: set[str], known: dict[str, Recorded], state: DeliveryState) -> list[list[str]]:
    """The changed files grouped so that files whose statuses depend on each other are written
    together: linked through what superseded them before and after, and through their manifest group."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: str, b: str) -> None:
        parent[find(a)] = find(b)

    groups = state.resolution.groups
    for m in state.manifests:
        if m.rel in groups:
            union(m.rel, "group:" + groups[m.rel])
    for rel in changed:
        find(rel)
        was, now = known.get(rel), state.decisions.get(rel)
        for other in (was.superseded_by if was else None, now.superseded_by if now else None):
            if other:
                union(rel, other)
        if rel in groups:
            union(rel, "group:" + groups[rel])
    by_root: dict[str, list[str]] = {}
    for rel in sorted(changed):
        by_root.setdefault(find(rel), []).append(rel)
    return list(by_root.values())


def _holds_rows(status: str) -> bool:
    return status in (CURRENT, UNREADABLE)


def _write(con, root: Path, source: Source, cfg: OrgConfig, component: list[str], known: dict[str, Recorded],
           state: DeliveryState, report: SyncReport) -> None:
    rewrite = {}
    for rel in component:
        was, f = known.get(rel), state.found.get(rel)
        if f is None:
            continue
        status = state.decisions[rel].status
        rewrite[rel] = was is None or was.sha256 != f.sha256 or was.status != status
        if rewrite[rel] and _holds_rows(status) and f.parsed is None and f.facts is not None:
            f.parsed = source.parse(con, f.path, rel, cfg)  # outside the transaction: parsing can take a while
    with transaction(con):
        for rel in component:
            f = state.found.get(rel)
            if f is None:
                writer.drop_entries(con, source, [rel])
                report.files_removed.append(rel)
                continue
            decision = state.decisions[rel]
            was = known.get(rel)
            staged, quarantined = (was.rows_staged, was.rows_quarantined) if was else (0, 0)
            if rewrite[rel]:
                writer.forget(con, source, [rel])
                staged, quarantined = _insert(con, source, f, decision)
                if _holds_rows(decision.status):
                    report.files_read.append(rel)
                    report.rows_staged += staged
                    report.rows_quarantined += quarantined
            _record(con, source, f, decision, staged, quarantined)
        for rel in component:  # parsed rows are written: let them go
            if rel in state.found:
                state.found[rel].parsed = None


def _insert(con, source: Source, f: Found, decision: Decision) -> tuple[int, int]:
    """Writes the rows a file contributes under its status; returns (staged, quarantined)."""
    if decision.status == CURRENT:
        rows, rejects = f.parsed.rows, f.parsed.rejects
    elif decision.status == UNREADABLE:
        rows = None
        rejects = f.parsed.rejects if f.parsed is not None else file_reject(source.name, f.rel, f.reason)
    else:
        return 0, 0
    if rows is not None:
        writer.put_rows(con, source, rows, f.rel)
    writer.put_rejects(con, rejects)
    return (rows.height if rows is not None else 0), rejects.height


def _record(con, source: Source, f: Found, decision: Decision, staged: int, quarantined: int) -> None:
    facts = f.facts
    writer.record(con, writer.entries(source, [{
        "file": f.rel, "size_bytes": f.size, "sha256": f.sha256, "rows_staged": staged,
        "rows_quarantined": quarantined, "first_day": f.days[0], "last_day": f.days[1], "status": decision.status,
        "superseded_by": decision.superseded_by, "status_reason": decision.reason or None,
        "modified_at": facts.modified if facts else None, "readable": facts.readable if facts else False,
        "billing_scopes": sorted(facts.scopes) if facts else [],
        "first_charge": facts.first_charge if facts else None, "last_charge": facts.last_charge if facts else None,
        "line_sample": list(facts.sample) if facts else [],
        "day_digests": json.dumps({d: str(v) for d, v in sorted(f.digests.items())}) if f.digests is not None else None,
    }]))


def _digests_from_json(text: str | None) -> dict[str, int] | None:
    return {d: int(v) for d, v in json.loads(text).items()} if text else None
