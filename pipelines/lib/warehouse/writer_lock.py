"""One writer of the live warehouse at a time, under a lock the operating system releases when its
holder dies, however it dies.

Why a lock of the OS, and not Dagster's concurrency pool. The pool (`pool=` on the assets, a limit
of 1 in dagster.yaml) is a row in the instance's database: a step claims it, and only the same
process frees it, when the step ends. A process that never gets to that point — `kill -9`, the OOM
killer, a reboot, Ctrl-\\ — leaves the claim behind, and every later run waits for it forever. Dagster
can free such claims only for runs it knows have ended (`run_monitoring.free_slots_after_run_end_seconds`
in dagster.yaml), and it cannot tell that a run has ended when its process simply vanished: runs
executed in process (`gpuledger run`) are watched by nobody, and the DefaultRunLauncher that
dagster-daemon uses has no run-worker health check (Dagster 1.13: `supports_check_run_worker_health`
is False) — its code server reports a worker that dies, but not when it goes down with it (the OOM
killer taking the group, a reboot). Such a run stays STARTED, and its claim stays. Freeing claims ourselves would mean
deciding that another process is dead — by pid, host and start time — a guess that can be wrong
(a shared DAGSTER_HOME on two machines, pid reuse) in either direction.

An advisory lock (`flock`) on a file beside the warehouse has none of that state: it belongs to the
open file, and the kernel drops it when the last descriptor closes, which happens when the process
exits — normally, by signal, by the OOM killer — and it does not survive a reboot. A dead process
can never hold it, and there is nothing to clean up. Two live processes still never write the file
at once: each connection that writes (`WarehouseResource.get_connection`, every asset and check of
the daily job, from `gpuledger run` and from runs the daemon's schedules and sensors launch alike)
is taken under the exclusive lock, and readers of the live warehouse (`export focus`) take it
shared, so they never collide with DuckDB's own file lock either. A DuckDB run holds it, with the
file open, from its first step to its last (`held_open`).

Details that matter:
- The lock is on `<warehouse>.lock`, never on the DuckDB file: DuckDB holds a POSIX lock on its own
  file, and POSIX drops all of a process's locks on a file when any descriptor of it is closed.
- The lock file is never deleted: a process that deleted it while another held it would let a third
  lock a new file of the same name.
- flock works on local file systems; on NFS, Linux emulates it with byte-range locks, which need a
  working lock manager (as DuckDB's own lock does).
- Whoever holds the lock writes who it is into the file (run id, pid, host, since), so a process
  that waits can say what it waits for; a holder killed mid-run leaves that text behind, which is
  harmless: it is read only while the lock is actually held.
- Waiting is a loop of non-blocking attempts and short sleeps, so SIGTERM and SIGINT stop it at
  once: inside a Dagster step their handler raises Dagster's interruption, in `gpuledger run`
  outside a step KeyboardInterrupt.
- A reader outside gpuledger (a notebook, a SQL client) may hold the live file open read-only, and
  with it DuckDB's own lock, without this one. A writer that finds the file so held waits for it to
  close (`connect_writer`), saying who holds it, for at most $GPULEDGER_READER_WAIT_SECONDS (600),
  and then fails with a sentence naming the file and the process; it never fails at the first try
  with DuckDB's "Conflicting lock". gpuledger's own readers never hold it: `query` reads a copy of
  the live file, `export focus` takes this lock shared.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import socket
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterator

import duckdb

POLL_SECONDS = 0.2
READER_WAIT_ENV = "GPULEDGER_READER_WAIT_SECONDS"
_DUCKDB_HOLDER = re.compile(r"Conflicting lock is held in (.*?) \(PID (\d+)\)")


class LockBusy(TimeoutError):
    """The lock stayed held by another process for longer than the caller would wait."""


def report_every_seconds() -> float:
    """How often a waiting process repeats that it waits ($GPULEDGER_LOCK_REPORT_SECONDS, default 10)."""
    return float(os.environ.get("GPULEDGER_LOCK_REPORT_SECONDS", "10"))


def lock_path(warehouse: str | Path) -> Path:
    warehouse = Path(warehouse).resolve()
    return warehouse.with_name(f"{warehouse.name}.lock")


@dataclass(frozen=True)
class Holder:
    """Who holds (or last held) the lock, as its holder wrote it."""

    run_id: str | None
    pid: int | None
    host: str | None
    since: str | None
    mode: str | None

    @classmethod
    def read(cls, fd: int) -> Holder:
        try:
            raw = json.loads(os.pread(fd, 4096, 0).decode() or "{}")
        except (OSError, ValueError):
            raw = {}
        return cls(raw.get("run_id"), raw.get("pid"), raw.get("host"), raw.get("since"), raw.get("mode"))

    def describe(self) -> str:
        if self.pid is None:
            return "a process that has not said who it is yet"
        who = f"run {self.run_id}" if self.run_id else ("a reader" if self.mode == "shared" else "a writer")
        where = f"pid {self.pid}" + (f" on {self.host}" if self.host and self.host != socket.gethostname() else "")
        return f"{who} ({where}, since {self.since})"


# What this process holds, per lock file: the lock is the process's, so nested and concurrent uses
# within it (a check opening a connection while its asset's is open) share it rather than deadlock.
@dataclass
class _Held:
    fd: int
    depth: int
    exclusive: bool
    pid: int


_held: dict[Path, _Held] = {}
_held_guard = threading.Lock()


@contextmanager
def warehouse_lock(
    warehouse: str | Path, *, run_id: str | None = None, shared: bool = False,
    report: Callable[[str], None] | None = None, wait_seconds: float | None = None,
) -> Iterator[None]:
    """Holds the lock of `warehouse`: exclusive for a writer, shared for a reader of the live file.
    Waits as long as another process holds it, saying so through `report` (default: stderr) at once
    and then every `report_every_seconds()`; SIGTERM and SIGINT end the wait. With `wait_seconds`,
    gives up after that long (0: one attempt) by raising LockBusy, naming the holder — for callers
    that must not queue behind a run, such as the alert-delivery sensor."""
    path = lock_path(warehouse)
    with _held_guard:
        mine = _held.get(path)
        if mine is not None and mine.pid == os.getpid():
            if not shared and not mine.exclusive:
                raise RuntimeError(f"{path}: this process holds the lock shared and cannot upgrade it")
            mine.depth += 1
            nested = True
        else:
            nested = False
    if nested:
        try:
            yield
        finally:
            _release(path)
        return

    fd = _open(path, shared)
    if fd is None:  # a reader who may not create the lock file: DuckDB's own lock still guards the file
        yield
        return
    try:
        _acquire(fd, Path(warehouse), run_id, shared, report or _to_stderr, wait_seconds)
    except BaseException:
        os.close(fd)
        raise
    with _held_guard:
        _held[path] = _Held(fd, 1, not shared, os.getpid())
    try:
        yield
    finally:
        _release(path)


def _open(path: Path, shared: bool) -> int | None:
    """The lock file, created if need be. A reader without write access to the warehouse's folder
    (an analyst exporting from someone else's warehouse) locks it read-only, or not at all if it is
    not there yet; flock needs no write access."""
    if not shared:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except PermissionError:
        try:
            return os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except (PermissionError, FileNotFoundError):
            return None


def _acquire(fd: int, warehouse: Path, run_id: str | None, shared: bool, report: Callable[[str], None],
             wait_seconds: float | None = None) -> None:
    mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
    started = time.monotonic()
    next_report = started
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            pass
        now = time.monotonic()
        if wait_seconds is not None and now - started >= wait_seconds:
            raise LockBusy(f"the warehouse lock ({warehouse}) is held by {Holder.read(fd).describe()}")
        if now >= next_report:
            me = f"run {run_id}" if run_id else "this process"
            report(f"waiting {now - started:.0f}s for the warehouse lock ({warehouse}): held by "
                   f"{Holder.read(fd).describe()}; {me} (pid {os.getpid()}) goes on when it is released")
            next_report = now + report_every_seconds()
        time.sleep(POLL_SECONDS)  # a signal lands here: its handler raises, and the wait ends
    # Several readers may hold it at once: the last one to arrive is the one named.
    text = json.dumps({"run_id": run_id, "pid": os.getpid(), "host": socket.gethostname(),
                       "since": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
                       "mode": "shared" if shared else "exclusive"})
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, text.encode(), 0)
    except OSError:
        if not shared:
            raise  # a reader on a read-only descriptor stays unnamed


def _release(path: Path) -> None:
    with _held_guard:
        mine = _held[path]
        mine.depth -= 1
        if mine.depth:
            return
        del _held[path]
    if mine.exclusive:
        os.ftruncate(mine.fd, 0)  # released cleanly: nobody to name
    os.close(mine.fd)  # closing the last descriptor releases the lock


# The warehouses this process holds open for a whole run (`held_open`): a writer's connection is a
# cursor of that one, so a step neither reloads the catalog when it opens nor checkpoints when it closes.
_open_for_run: dict[Path, duckdb.DuckDBPyConnection] = {}


@contextmanager
def held_open(warehouse: str | Path, config: dict | None = None, *,
              run_id: str | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """Holds `warehouse`'s exclusive lock and one read-write connection to it for as long as a run
    lasts; every `connect_writer` of this process meanwhile is a cursor of that connection. Opening a
    DuckDB file reads its whole catalog and closing its last connection checkpoints it, ~0.1 s each a
    step paid twice; held, the file is checkpointed once, when the run lets go. The lock held for the
    run, not per step, also means no other writer's step comes between two of the run's."""
    with warehouse_lock(warehouse, run_id=run_id):
        key = Path(warehouse).resolve()
        if key in _open_for_run:  # nested (a run inside a run's process): the outer one holds it
            yield _open_for_run[key]
            return
        con = connect_writer(warehouse, config, run_id=run_id)
        _open_for_run[key] = con
        try:
            yield con
        finally:
            del _open_for_run[key]
            con.close()


def connect_writer(warehouse: str | Path, config: dict | None = None, *, run_id: str | None = None,
                   report: Callable[[str], None] | None = None,
                   wait_seconds: float | None = None) -> duckdb.DuckDBPyConnection:
    """A read-write DuckDB connection to `warehouse`, for a caller under its exclusive lock: a cursor of
    the run's connection where `held_open` holds one. While another process has the file open
    (DuckDB's own lock: "Conflicting lock"), waits, saying so through `report` at once and then every
    `report_every_seconds()`, for at most `wait_seconds` (default $GPULEDGER_READER_WAIT_SECONDS, else
    600), then raises LockBusy naming the file and the process that keeps it open."""
    held = _open_for_run.get(Path(warehouse).resolve())
    if held is not None:
        return held.cursor()
    wait = float(os.environ.get(READER_WAIT_ENV, "600")) if wait_seconds is None else wait_seconds
    report = report or _to_stderr
    started = time.monotonic()
    next_report = started
    while True:
        try:
            return duckdb.connect(str(warehouse), read_only=False, config=config or {})
        except duckdb.IOException as err:
            held = _DUCKDB_HOLDER.search(str(err))
            if held is None:
                raise
        holder = f"{held.group(1)} (pid {held.group(2)})"
        now = time.monotonic()
        if now - started >= wait:
            raise LockBusy(f"the warehouse {warehouse} stayed open in {holder} for {wait:g} s, so it cannot be "
                           f"written: close that reader (readers belong on the published file), or raise "
                           f"${READER_WAIT_ENV}")
        if now >= next_report:
            me = f"run {run_id}" if run_id else "this process"
            report(f"waiting {now - started:.0f}s for {holder} to close the warehouse {warehouse}, which it has "
                   f"open; {me} (pid {os.getpid()}) writes it when that reader is gone")
            next_report = now + report_every_seconds()
        time.sleep(POLL_SECONDS)


def _to_stderr(message: str) -> None:
    from tqdm import tqdm  # writes above a progress bar on stderr (gpuledger run's) instead of into it

    tqdm.write(message, file=sys.stderr)
