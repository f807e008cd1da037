"""The warehouse lock itself: held by one writer at a time across processes, shared by readers, and
gone with a process killed by SIGKILL, whatever that process left written in the lock file."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from pipelines.lib.warehouse.writer_lock import lock_path, warehouse_lock

PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _holder(warehouse, *, shared=False, run_id="other-run") -> subprocess.Popen:
    """Another process that takes the lock, says so, and keeps it until killed or fed a line."""
    proc = subprocess.Popen(
        [sys.executable, "-c",
         "import sys\n"
         "from pipelines.lib.warehouse.writer_lock import warehouse_lock\n"
         f"with warehouse_lock({str(warehouse)!r}, run_id={run_id!r}, shared={shared!r}):\n"
         "    print('held', flush=True)\n"
         "    sys.stdin.readline()\n"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=PROJECT_ROOT)
    assert proc.stdout.readline().strip() == "held"
    return proc


def _try_lock(warehouse, *, shared=False, within=1.0) -> bool:
    """Whether this process gets the lock within `within` seconds (a thread stops the wait)."""
    import threading

    got = threading.Event()
    give_up = threading.Event()

    def attempt():
        try:
            with warehouse_lock(warehouse, shared=shared, report=lambda _: give_up.is_set() and _stop()):
                got.set()
        except _Stopped:
            pass

    t = threading.Thread(target=attempt)
    t.start()
    t.join(within)
    give_up.set()
    t.join(5)
    return got.is_set()


class _Stopped(Exception):
    pass


def _stop():
    raise _Stopped


def test_a_writer_excludes_another_process_until_it_lets_go(tmp_path, monkeypatch):
    monkeypatch.setenv("GPULEDGER_LOCK_REPORT_SECONDS", "0.1")
    w = tmp_path / "w.duckdb"
    holder = _holder(w)
    try:
        assert not _try_lock(w)
        assert not _try_lock(w, shared=True)  # a reader of the live file waits for the writer too
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.wait(timeout=10) == 0
        assert _try_lock(w)
        assert lock_path(w).read_text() == ""  # let go cleanly: nobody is named
    finally:
        holder.kill()
        holder.wait()


def test_the_lock_goes_with_a_process_killed_by_sigkill(tmp_path):
    w = tmp_path / "w.duckdb"
    holder = _holder(w)
    written = json.loads(lock_path(w).read_text())
    assert (written["run_id"], written["pid"], written["mode"]) == ("other-run", holder.pid, "exclusive")
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait(timeout=10)
    assert json.loads(lock_path(w).read_text())["pid"] == holder.pid  # what the kill leaves behind ...
    started = time.monotonic()
    with warehouse_lock(w, run_id="next-run", report=lambda m: pytest.fail(f"waited: {m}")):
        assert json.loads(lock_path(w).read_text())["run_id"] == "next-run"  # ... held nothing
    assert time.monotonic() - started < 1


def test_readers_share_the_lock_and_a_writer_waits_for_them(tmp_path, monkeypatch):
    monkeypatch.setenv("GPULEDGER_LOCK_REPORT_SECONDS", "0.1")
    w = tmp_path / "w.duckdb"
    reader = _holder(w, shared=True, run_id=None)
    try:
        assert _try_lock(w, shared=True)  # a second reader gets in
        assert not _try_lock(w)  # a writer does not
        messages = []
        with pytest.raises(_Stopped):
            with warehouse_lock(w, report=lambda m: (messages.append(m), len(messages) > 1 and _stop())):
                pass
        assert "held by a reader (pid " in messages[0]  # the last reader to arrive is named
    finally:
        reader.kill()
        reader.wait()


def test_uses_within_one_process_share_its_hold(tmp_path):
    w = tmp_path / "w.duckdb"
    with warehouse_lock(w, run_id="r"):
        with warehouse_lock(w, run_id="r"):  # a check's connection inside its asset's: no deadlock
            pass
        with warehouse_lock(w, shared=True):
            pass
        assert json.loads(lock_path(w).read_text())["run_id"] == "r"  # still held after the inner ones
    assert lock_path(w).read_text() == ""
    with warehouse_lock(w, shared=True), pytest.raises(RuntimeError, match="cannot upgrade"):
        with warehouse_lock(w):
            pass


def _duckdb_reader(warehouse, seconds: float) -> subprocess.Popen:
    """A reader outside gpuledger (a notebook): the file open read-only, DuckDB's lock and not ours,
    for `seconds`."""
    proc = subprocess.Popen(
        [sys.executable, "-c",
         "import time, duckdb\n"
         f"con = duckdb.connect({str(warehouse)!r}, read_only=True)\n"
         "print('open', flush=True)\n"
         f"time.sleep({seconds})\n"
         "con.close()\n"],
        stdout=subprocess.PIPE, text=True, cwd=PROJECT_ROOT)
    assert proc.stdout.readline().strip() == "open"
    return proc


def test_a_writer_waits_for_a_reader_that_holds_the_file_open_then_writes(tmp_path, monkeypatch):
    """DuckDB's "Conflicting lock" from a reader that has the live file open is waited out, said,
    never the writer's failure at the first try."""
    import duckdb

    from pipelines.lib.warehouse.writer_lock import connect_writer

    monkeypatch.setenv("GPULEDGER_LOCK_REPORT_SECONDS", "0.2")
    w = tmp_path / "w.duckdb"
    duckdb.connect(str(w)).close()
    reader = _duckdb_reader(w, 1.5)
    try:
        messages = []
        started = time.monotonic()
        con = connect_writer(w, run_id="r1", report=messages.append, wait_seconds=30)
        con.execute("CREATE TABLE t AS SELECT 1 AS x")
        con.close()
        assert time.monotonic() - started < 15
        assert messages and f"(pid {reader.pid}) to close the warehouse {w}" in messages[0], messages
        assert "run r1" in messages[0]
    finally:
        reader.kill()
        reader.wait()


def test_a_writer_gives_up_on_a_reader_that_stays_with_a_sentence_naming_it(tmp_path):
    import duckdb

    from pipelines.lib.warehouse.writer_lock import LockBusy, connect_writer

    w = tmp_path / "w.duckdb"
    duckdb.connect(str(w)).close()
    reader = _duckdb_reader(w, 60)
    try:
        with pytest.raises(LockBusy) as busy:
            connect_writer(w, report=lambda _: None, wait_seconds=0.5)
        assert f"the warehouse {w} stayed open in " in str(busy.value)
        assert f"(pid {reader.pid}) for 0.5 s" in str(busy.value) and "GPULEDGER_READER_WAIT_SECONDS" in str(busy.value)
    finally:
        reader.kill()
        reader.wait()


def test_a_run_holds_the_warehouse_open_and_its_writers_share_that_connection(tmp_path):
    """`held_open` (a run, first step to last): each writer's connection is a cursor of the held one,
    sees what the others wrote and closes without closing the file; another process waits for the run."""
    from pipelines.lib.warehouse.writer_lock import connect_writer, held_open

    w = tmp_path / "w.duckdb"
    with held_open(w, {"threads": 1}, run_id="this-run") as held:
        first = connect_writer(w, {"threads": 2})  # the run's config rules: no "different configuration"
        first.execute("CREATE TABLE t AS SELECT 1 AS x")
        first.close()
        second = connect_writer(w)
        assert second.execute("SELECT x FROM t").fetchall() == [(1,)]
        second.close()
        assert held.execute("SELECT count(*) FROM t").fetchall() == [(1,)]  # still open
        waiter = subprocess.run(
            [sys.executable, "-c",
             "from pipelines.lib.warehouse.writer_lock import warehouse_lock, LockBusy\n"
             f"try:\n    with warehouse_lock({str(w)!r}, wait_seconds=0.5): print('got it')\n"
             "except LockBusy as busy: print(busy)\n"],
            capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=60)
        assert "held by run this-run" in waiter.stdout, waiter.stdout + waiter.stderr
    import duckdb

    with duckdb.connect(str(w)) as after:  # let go: checkpointed and closed, anyone may open it
        assert after.execute("SELECT x FROM t").fetchall() == [(1,)]
