"""Replacing a file so that readers see the old one or the new one, never half of one.

The new content is written to a temp file in the same directory (a rename is only atomic within one
file system), flushed to disk, then renamed over the target; the directory is synced so the rename
itself survives a power cut. The temp name is a dotfile ending in `.tmp` and carrying the writer's
pid: two processes replacing one file at once (two days of a Spark backfill writing one table's
schema) each rename their own whole file and the last rename wins, where a shared temp name let one
writer move the other's away. No landing pattern (`*.parquet`, `*.csv`, …) matches the temp name and
the ignored-files listing skips dotfiles, so a process killed mid-write leaves nothing the ingest
reads. What such a kill left behind is cleared by `remove_stale_temps`, which a writer calls once
per folder (or for its one file) before it writes: a temp is stale when the process its name carries
is gone (or it carries none, as an older version's temps did); a live writer's temp is never touched.
`replace_atomically` itself lists nothing: a collect writing 4,096 files into one folder would list
it 4,096 times (17 s).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

TEMP_SUFFIX = ".tmp"


def temp_path(target: Path) -> Path:
    """Where this process writes `target`'s next version before it is renamed into place."""
    return target.with_name(f".{target.name}.{os.getpid()}{TEMP_SUFFIX}")


def replace_atomically(target: Path, write: Callable[[Path], None]) -> None:
    """Calls `write(temp)` to write the new content, then swaps it in for `target` by rename. A failure
    (or an exception in `write`) removes the temp file and leaves `target` as it was."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(target)
    tmp.unlink(missing_ok=True)  # this process's own, from a write it did not finish
    try:
        write(tmp)
        _fsync(tmp, os.O_RDONLY)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync(target.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))


def remove_stale_temps(directory: Path, of: str | None = None) -> list[Path]:
    """Deletes the temp files killed writers left in `directory` (ours only: `.<name>[.<pid>].tmp`
    whose process is gone; only those of the file named `of`, when given); returns them."""
    if not directory.is_dir():
        return []
    stale = []
    for path in directory.glob(f".*{TEMP_SUFFIX}"):
        target, pid = _temp_parts(path.name)
        if path.is_file() and (of is None or target == of) and not _alive(pid):
            stale.append(path)
    for path in stale:
        path.unlink(missing_ok=True)
    return sorted(stale)


def _temp_parts(temp_name: str) -> tuple[str, int | None]:
    """`.<name>.<pid>.tmp` → (name, pid); `.<name>.tmp`, as an earlier version named them → (name, None)."""
    name = temp_name[1: -len(TEMP_SUFFIX)]
    base, _, pid = name.rpartition(".")
    return (base, int(pid)) if base and pid.isdigit() else (name, None)


def _alive(pid: int | None) -> bool:
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True


def _fsync(path: Path, flags: int) -> None:
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
