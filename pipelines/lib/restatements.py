"""Which days a new or re-delivered landing file forces to be re-run."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from pipelines.lib.config import OrgConfig
from pipelines.lib.landing import Source, discover, file_span, fingerprint
from pipelines.lib.publish import published_path
from pipelines.lib.sandbox import open_read_only


@dataclass(frozen=True)
class FileChange:
    file: str
    sha256: str
    days: frozenset[date]


def days_to_rerun(root: Path, source: Source, cfg: OrgConfig) -> list[FileChange]:
    """Each file of `source` whose content differs from what the published warehouse last read, with
    the days its earlier version and its new version cover."""
    known: dict[str, tuple[str, date | None, date | None]] = {}
    if published_path().exists():
        with open_read_only(published_path()) as con:
            known = {
                f: (sha, first, last)
                for f, sha, first, last in con.execute(
                    "SELECT file, sha256, first_day, last_day FROM ops.landed_files WHERE source = $s",
                    {"s": source.name},
                ).fetchall()
            }
    changes = []
    for path, rel in discover(root, source):
        _, sha = fingerprint(path)
        before = known.get(rel)
        if before and before[0] == sha:
            continue
        first, last = file_span(source.parse(path, rel, cfg).rows, source)
        days = _days(first, last) | (_days(before[1], before[2]) if before else set())
        if days:
            changes.append(FileChange(rel, sha, frozenset(days)))
    return changes


def _days(first: date | None, last: date | None) -> set[date]:
    if not first or not last:
        return set()
    return {first + timedelta(days=i) for i in range((last - first).days + 1)}
