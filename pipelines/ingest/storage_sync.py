"""Storage inventories into staging, a snapshot at a time (docs/ingest/storage.md#deliveries).

A snapshot is a store's day: of the deliveries for one store and snapshot day, the newest whose files
have all landed (the manifest's creationTimestamp, then its path) is current and its rows are the day's
objects; the others count for nothing. A newer manifest that names files not (yet) landed leaves the
earlier delivery current and is quarantined naming them: a snapshot is never half loaded. Loading one
replaces every row the store's day had, in one transaction, so the same manifest landed twice (or under
two paths) is counted once, and a crash leaves the old snapshot or the new one.

A delivery is fingerprinted by its manifest's bytes and the sizes of the files it names (the manifest
carries their checksums): the gigabytes of a day's inventory are hashed once, when it is loaded, not at
every run.
"""

from __future__ import annotations

import hashlib
from datetime import date
from pathlib import Path

import duckdb
import polars as pl

from pipelines.ingest.storage_inventory import SOURCE, Delivery, find_deliveries, read_into
from pipelines.landing import writer
from pipelines.landing.parsed import QUARANTINE_SCHEMA, conform, empty_rejects
from pipelines.landing.source import Source, SyncReport, discover, fingerprint
from pipelines.lib.config import OrgConfig
from pipelines.lib.warehouse import transaction


def sync_storage(con: duckdb.DuckDBPyConnection, root: Path, source: Source, cfg: OrgConfig,
                 day: date | None = None) -> SyncReport:
    """Brings staging.stg_storage__objects in line with the landed deliveries (every day's: a snapshot
    is not under a `day=` folder, and a day's pricing looks back at earlier snapshots)."""
    report = SyncReport()
    files = discover(root, source)
    deliveries = find_deliveries(root, files)
    known = {f: (sha, status) for f, sha, status in con.execute(
        "SELECT file, sha256, status FROM ops.landed_files WHERE source = $s", {"s": SOURCE}).fetchall()}
    present = {rel for _, rel in files}
    gone = sorted(f for f in known if f not in present)
    if gone:
        with transaction(con):
            con.execute("DELETE FROM staging.stg_storage__objects WHERE delivery IN (SELECT unnest($f))", {"f": gone})
            writer.drop_entries(con, source, gone)
        report.files_removed += gone

    digests = {d.rel: _digest(d) for d in deliveries if d.problem is None}
    # each store's day: its complete deliveries, best first — the newest (creationTimestamp; a listing's
    # modification time), then the one current already (a manifest copied under another path changes
    # nothing), then the first in path order
    candidates: dict[tuple[str, date], list[Delivery]] = {}
    for d in deliveries:
        if d.problem is None and not d.missing:
            candidates.setdefault((d.store, d.snapshot_day), []).append(d)
    winners: dict[tuple[str, date], Delivery] = {}
    for key, found in candidates.items():
        found.sort(key=lambda d: d.rel)
        found.sort(key=lambda d: (d.created, known.get(d.rel, ("", ""))[1] == "current"), reverse=True)
        for d in found:
            if known.get(d.rel) == (digests[d.rel], "current"):
                report.files_unchanged += 1 + len(d.files)
            elif not _load(con, source, d, digests[d.rel], report):
                continue  # a data file DuckDB cannot read: the next best delivery stands
            winners[key] = d
            break
    current = {d.rel for d in winners.values()}
    # a delivery current before and no longer (superseded, its files gone): its rows go
    dropped = [f for f, (_, status) in known.items() if status == "current" and f in present
               and f not in current and f in digests]
    with transaction(con):
        if dropped:
            con.execute("DELETE FROM staging.stg_storage__objects WHERE delivery IN (SELECT unnest($f))",
                        {"f": dropped})
        _set_aside(con, source, deliveries, winners, digests, known, report)
    return report


def _digest(d: Delivery) -> str:
    """A listing's SHA-256; a manifest's, with the path and size of each file it names."""
    own = fingerprint(d.path)[1]
    if d.kind == "posix":
        return own
    h = hashlib.sha256(own.encode())
    for path, rel in d.files:
        h.update(f"\0{rel}\0{path.stat().st_size}".encode())
    return h.hexdigest()


def _load(con: duckdb.DuckDBPyConnection, source: Source, d: Delivery, digest: str, report: SyncReport) -> bool:
    """The delivery read and written in place of everything its store's day had, in one transaction, a
    data file at a time; False, nothing changed and the delivery marked unreadable, when DuckDB cannot
    read one of its files (a truncated gzip, a damaged Parquet)."""
    rels = [d.rel] + [rel for _, rel in d.files if rel != d.rel]
    counts: dict[str, tuple[int, int]] = {}
    try:
        with transaction(con):
            con.execute("DELETE FROM staging.stg_storage__objects WHERE (store = $store AND snapshot_day = $day) "
                        "OR delivery = $rel", {"store": d.store, "day": d.snapshot_day, "rel": d.rel})
            writer.forget(con, source, rels, staged=[])
            for file in d.files:
                read_into(con, d, file)
                con.execute("INSERT INTO staging.stg_storage__objects BY NAME "
                            "SELECT * EXCLUDE (bad, reason, payload) FROM storage_read WHERE NOT bad")
                con.execute("""INSERT INTO ops.quarantine BY NAME
                               SELECT $source AS source, _file AS file, 'row ' || _row AS row_ref, reason, payload,
                                      snapshot_day AS day
                               FROM storage_read WHERE reason IS NOT NULL""", {"source": SOURCE})
                counts[file[1]] = con.execute("SELECT count(*) FILTER (WHERE NOT bad), count(*) FILTER "
                                              "(WHERE reason IS NOT NULL) FROM storage_read").fetchall()[0]
            writer.record(con, writer.entries(source, _entries(d, digest, counts)))
    except duckdb.Error as err:
        if isinstance(err, (duckdb.BinderException, duckdb.ParserException, duckdb.CatalogException)):
            raise  # the SQL's fault, not a file's
        d.problem = f"unreadable S3 Inventory data: {str(err).splitlines()[0]}"
        return False
    finally:
        con.execute("DROP TABLE IF EXISTS storage_read")
        con.execute("DROP TABLE IF EXISTS storage_raw")
    report.files_read += rels
    report.rows_staged += sum(s for s, _ in counts.values())
    report.rows_quarantined += sum(q for _, q in counts.values())
    return True


def _entries(d: Delivery, digest: str, counts: dict[str, tuple[int, int]]) -> list[dict]:
    """ops.landed_files entries of a loaded delivery: its manifest (or listing) and each data file, with
    the rows each staged and quarantined."""
    staged, bad = counts.get(d.rel, (0, 0))
    entries = [{"file": d.rel, "size_bytes": d.path.stat().st_size, "sha256": digest, "rows_staged": staged,
                "rows_quarantined": bad, "first_day": d.snapshot_day, "last_day": d.snapshot_day,
                "status_reason": f"current snapshot of {d.store} for {d.snapshot_day}"}]
    for path, rel in d.files:
        if rel == d.rel:
            continue
        size, sha = fingerprint(path)
        staged, bad = counts.get(rel, (0, 0))
        entries.append({"file": rel, "size_bytes": size, "sha256": sha, "rows_staged": staged,
                        "rows_quarantined": bad, "first_day": d.snapshot_day, "last_day": d.snapshot_day,
                        "status_reason": f"data file of {d.rel}"})
    return entries


def _set_aside(con: duckdb.DuckDBPyConnection, source: Source, deliveries: list[Delivery],
               winners: dict[tuple[str, date], Delivery], digests: dict[str, str],
               known: dict[str, tuple[str, str]], report: SyncReport) -> None:
    """Every delivery that is not current, recorded with why; one that cannot be used (unreadable, or
    naming files that have not landed) is quarantined as a file, replacing what an earlier run said."""
    entries, rejects = [], []
    # the data files of the current deliveries are theirs; those only an older delivery named go with it
    in_use = {rel for w in winners.values() for _, rel in w.files}
    for d in deliveries:
        win = winners.get((d.store, d.snapshot_day))
        if win is not None and win.rel == d.rel:
            continue
        if d.problem is not None:
            status, why = "unreadable", d.problem
        elif d.missing:
            status = "incomplete"
            shown = ", ".join(d.missing[:5]) + (f" and {len(d.missing) - 5} more" if len(d.missing) > 5 else "")
            kept = f"{win.rel} stays the current snapshot" if win else "no snapshot of that day is loaded"
            why = (f"manifest names {len(d.missing)} file(s) not landed (or not yet whole): {shown}; "
                   f"{kept} of {d.store} for {d.snapshot_day}")
        else:
            status, why = "superseded", f"a newer delivery of {d.store} for {d.snapshot_day} is current"
        entries.append({"file": d.rel, "size_bytes": d.path.stat().st_size,
                        "sha256": digests.get(d.rel) or fingerprint(d.path)[1], "rows_staged": 0,
                        # its quarantine row stands for a whole file, no share of the day's rows: a late
                        # or broken inventory is said (the contract check lists it), never a stopped day
                        "rows_quarantined": 0, "first_day": d.snapshot_day,
                        "last_day": d.snapshot_day, "status": status, "status_reason": why,
                        "superseded_by": win.rel if win and status != "unreadable" else None})
        if status != "superseded":
            rejects.append({"source": SOURCE, "file": d.rel, "row_ref": "file", "reason": why,
                            "day": d.snapshot_day})
        report.set_aside.append({"file": d.rel, "status": status, "reason": why})
        if d.missing:
            report.missing_from_manifests[d.rel] = list(d.missing)
        for path, rel in d.files:
            if rel not in in_use and rel != d.rel and known.get(rel, ("", ""))[1] != "superseded":
                entries.append({"file": rel, "size_bytes": path.stat().st_size, "sha256": known.get(rel, ("-",))[0],
                                "rows_staged": 0, "rows_quarantined": 0, "first_day": d.snapshot_day,
                                "last_day": d.snapshot_day, "status": "superseded",
                                "status_reason": f"data file of {d.rel}, which is not current"})
    if entries:
        files = [e["file"] for e in entries]
        writer.forget(con, source, files, staged=[])
        writer.put_rejects(con, _rejects(rejects))
        writer.record(con, writer.entries(source, entries))


def _rejects(rows: list[dict]) -> pl.DataFrame:
    if not rows:
        return empty_rejects()
    return conform(pl.DataFrame(rows, infer_schema_length=None), QUARANTINE_SCHEMA)
