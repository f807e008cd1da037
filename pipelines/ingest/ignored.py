"""Files under the landing root that no source reads. Skipping them without a word hid real mistakes
(a sacct export saved as `.log`, a bill under the wrong folder), so `inspect`, `run` and the ingest
assets list each one with why. Dotfiles and the manifests the delivery rule reads are no one's input
and are not listed."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path, PurePosixPath

from pipelines.landing.deliveries import find_manifests
from pipelines.ingest.sources import ALL
from pipelines.landing.source import Source


def ignored_files(root: Path, within: Sequence[Source] | None = None, outside: bool = True,
                  sources: Sequence[Source] = ALL) -> list[dict]:
    """`{file, reason}` for each file no source reads, in path order: under the whole landing root, or
    only under the folders of `within` (and, with `outside`, anywhere outside every source's folder)."""
    folders = sorted({s.folder for s in sources})
    if within is None:
        rels = _walk(root, "", prune=())
    else:
        rels = [rel for s in within for rel in _walk(root, s.folder, prune=())]
        if outside:
            rels += list(_walk(root, "", prune=folders))
    read, not_delivery = _manifests(root, sources)
    out = []
    for rel in sorted(set(rels)):
        if rel in read or any(_glob(p).match(rel) for s in sources for p in s.patterns) or _sidecar(rel, sources):
            continue
        reason = ("a JSON manifest the delivery rule does not read (no reportKeys or dataFiles)"
                  if rel in not_delivery else _reason(rel, sources))
        out.append({"file": rel, "reason": reason})
    return out


def _sidecar(rel: str, sources: Sequence[Source]) -> bool:
    """Whether `rel` is a source's sidecar (pipelines/landing/source.py): read with the files beside it."""
    name = PurePosixPath(rel).name
    return any(s.sidecar == name and rel.startswith(s.folder + "/") for s in sources)


def _walk(root: Path, start: str, prune: Iterable[str]) -> Iterable[str]:
    """Paths of the files under root/start relative to root, skipping dot folders and dotfiles, and not
    descending into the folders in `prune`."""
    base = root / start if start else root
    prune = set(prune)
    for here, dirs, files in os.walk(base):
        rel_here = Path(here).relative_to(root).as_posix()
        rel_here = "" if rel_here == "." else rel_here
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and _join(rel_here, d) not in prune)
        for name in files:
            if not name.startswith("."):
                yield _join(rel_here, name)


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _manifests(root: Path, sources: Sequence[Source]) -> tuple[set[str], set[str]]:
    """(manifests the delivery rule reads, readable or not; manifest-named JSON it does not read)."""
    read, others = set(), set()
    for s in sources:
        if s.is_bill:
            manifests, bad, not_delivery = find_manifests(root, s.folder)
            read.update(m.rel for m in manifests)
            read.update(bad)
            others.update(not_delivery)
    return read, others


def _reason(rel: str, sources: Sequence[Source]) -> str:
    owners = [s for s in sources if rel.startswith(s.folder + "/")]
    if not owners:
        top = rel.split("/", 1)[0]
        return "no source reads files at the landing root" if "/" not in rel else f"no source reads files under {top}/"
    folder = max(s.folder for s in owners)
    suffix, name = PurePosixPath(rel).suffix, PurePosixPath(rel).name
    wanted = [p for s in owners if s.folder == folder for p in s.patterns]
    if suffix and any(p.endswith(suffix) for p in wanted):
        return f"no source reads it where it is: files here must match {' or '.join(wanted)}"
    return f"no source reads {'*' + suffix if suffix else name} under {folder}/"


@cache
def _glob(pattern: str) -> re.Pattern:
    """A landing glob (`**` any folders, `*` and `?` within a name) as a regular expression."""
    rx = ""
    parts = pattern.split("/")
    for i, part in enumerate(parts):
        if part == "**":
            rx += "(?:[^/]+/)*"
            continue
        rx += "".join("[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch) for ch in part)
        rx += "" if i == len(parts) - 1 else "/"
    return re.compile(rx + r"\Z")
