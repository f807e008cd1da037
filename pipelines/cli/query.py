"""`gpuledger query`'s limits and the file it reads (docs/operations.md#query-limits).

SQL typed by people and by the tools that wrap the command must not run for ever, fill the
machine's memory, print a billion rows, or stop the daily run. So each query

- runs under a time limit: the command's main thread waits for the query's thread that long, then
  interrupts DuckDB (`con.interrupt()`), which stops the query wherever it is, cross joins and sorts
  included; SIGINT and SIGTERM interrupt it the same way, so the copy below is always removed;
- runs under DuckDB's memory limit, the smaller of `query.memory_limit` and $GPULEDGER_MEMORY_LIMIT
  (the operator's cap on DuckDB in this deployment, which the writer obeys too);
- is fetched in batches, and fetching stops past the row limit: the rows DuckDB never produced cost
  nothing, where a whole result converted at once (`SELECT * FROM range(5e8)`) took 8 GB;
- never holds DuckDB's lock on the live warehouse: a reader's lock on that file makes the next run's
  connection fail ("Conflicting lock"). The published file is replaced by rename, so reading it
  blocks nobody; the live file is copied, under the shared warehouse lock (a run writing it is
  waited for, no longer than the time limit), and the copy is what is read.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import duckdb
import polars as pl

from pipelines.lib.config import MEMORY_SIZE, OrgConfig

MEMORY_ENV = "GPULEDGER_MEMORY_LIMIT"
BATCH_ROWS = 10_000
_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


class QueryStopped(Exception):
    """A limit stopped the query; the message is the one sentence the command prints."""


@dataclass(frozen=True)
class Limit:
    value: float | int | str
    source: str  # what set it, named in the message: "query.timeout_seconds", "--timeout", …


@dataclass(frozen=True)
class QueryLimits:
    timeout: Limit
    memory: Limit
    rows: Limit

    @classmethod
    def of(cls, cfg: OrgConfig, timeout: float | None = None, max_rows: int | None = None) -> QueryLimits:
        """The config's limits, with the command's flags over them and $GPULEDGER_MEMORY_LIMIT as a cap.
        Raises ValueError, in a sentence, for a $GPULEDGER_MEMORY_LIMIT that is no memory size."""
        memory = Limit(cfg.query.memory_limit, "query.memory_limit")
        if (env := os.environ.get(MEMORY_ENV)) is not None:
            if not MEMORY_SIZE.match(env):
                raise ValueError(f"${MEMORY_ENV}={env!r} is not a memory size: a number and a unit, e.g. 2GB")
            if memory_bytes(env) < memory_bytes(memory.value):
                memory = Limit(env.strip(), f"${MEMORY_ENV}")
        return cls(Limit(timeout, "--timeout") if timeout is not None
                   else Limit(cfg.query.timeout_seconds, "query.timeout_seconds"),
                   memory,
                   Limit(max_rows, "--max-rows") if max_rows is not None else Limit(cfg.query.max_rows, "query.max_rows"))


def memory_bytes(size: str) -> float:
    number, unit = MEMORY_SIZE.match(size).groups()
    return float(number) * _UNITS[unit.lower()]


def run_query(path: Path, text: str, limits: QueryLimits, roots: list[str]) -> tuple[pl.DataFrame | None, bool]:
    """The rows of `text` on the sandboxed file `path` (None for a statement without a result), at
    most the row limit of them, and whether there were more. Raises QueryStopped at the time or
    memory limit, duckdb.Error for SQL that fails, KeyboardInterrupt (after stopping the query) for
    a signal.

    The query runs in a thread of its own while this one waits: DuckDB holds a thread it runs on
    until the query ends, so this one is the thread left free to interrupt it at the time limit or
    when SIGINT or SIGTERM arrives (their handlers run only in the main thread, between bytecodes)."""
    from pipelines.lib.warehouse.sandbox import open_read_only

    max_rows = int(limits.rows.value)
    with open_read_only(path, roots=roots, memory_limit=str(limits.memory.value)) as con:
        outcome: dict[str, object] = {}
        done = threading.Event()  # waited on, not Thread.join: a join a signal interrupts can wrongly
        # report the thread finished (Python before 3.13), and the connection would close under the query

        def fetch() -> None:
            try:
                outcome["rows"] = _fetch(con, text, max_rows)
            except BaseException as err:  # handed to the waiting thread, which raises it
                outcome["error"] = err
            finally:
                done.set()

        threading.Thread(target=fetch, name="gpuledger-query", daemon=True).start()
        try:
            timed_out = not done.wait(float(limits.timeout.value))
        except BaseException:  # a signal while waiting: stop the query, then let the caller unwind
            con.interrupt()
            done.wait()
            raise
        if timed_out:
            con.interrupt()
            done.wait()
    error = outcome.get("error")
    if isinstance(error, duckdb.InterruptException) and timed_out:
        raise QueryStopped(f"query stopped after {_seconds(limits.timeout.value)} s ({limits.timeout.source}); "
                           "narrow it or raise the limit")
    if isinstance(error, duckdb.OutOfMemoryException):
        raise QueryStopped(f"query stopped: it needs more memory than its limit of {limits.memory.value} "
                           f"({limits.memory.source}); narrow it or raise the limit")
    if error is not None:
        raise error
    frame = outcome["rows"]
    if frame is None:
        return None, False
    return frame.head(max_rows), frame.height > max_rows


def _fetch(con: duckdb.DuckDBPyConnection, text: str, max_rows: int) -> pl.DataFrame | None:
    """At most one batch past `max_rows` rows of `text`, pulled from DuckDB a batch at a time:
    stopping here stops the query."""
    import pyarrow as pa

    result = con.sql(text)
    if result is None:
        return None
    reader = result.to_arrow_reader(BATCH_ROWS)
    batches, rows = [], 0
    for batch in reader:
        batches.append(batch)
        rows += batch.num_rows
        if rows > max_rows:
            break
    table = pa.Table.from_batches(batches, schema=reader.schema)
    # polars has no type for an interval with months: its text, as DuckDB writes it
    for i, field in enumerate(table.schema):
        if pa.types.is_interval(field.type):
            text = pa.array([None if v is None else interval_text(v) for v in table.column(i).to_pylist()], pa.string())
            table = table.set_column(i, field.name, text)
    return pl.from_arrow(table)


def interval_text(value) -> str:
    """A month-day-nanosecond interval as DuckDB prints it: `1 year 2 months 3 days 04:05:06.5`."""
    months, days, nanos = value.months, value.days, value.nanoseconds
    parts = []
    years, months = divmod(months, 12) if months >= 0 else (-((-months) // 12), -((-months) % 12))
    for n, unit in ((years, "year"), (months, "month"), (days, "day")):
        if n:
            parts.append(f"{n} {unit}{'s' if abs(n) != 1 else ''}")
    if nanos or not parts:
        sign, nanos = ("-" if nanos < 0 else ""), abs(nanos)
        seconds, frac = divmod(nanos, 10**9)
        hours, rest = divmod(seconds, 3600)
        clock = f"{sign}{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"
        parts.append(clock + (f".{frac // 1000:06d}".rstrip("0") if frac else ""))
    return " ".join(parts)


def _seconds(value: float | int | str) -> str:
    return f"{float(value):g}"


def is_live(path: Path) -> bool:
    """Whether `path` is a warehouse that runs write: the live one of this environment, or any file
    with a writer's lock file beside it (published files are never written in place, so have none)."""
    from pipelines.lib.warehouse import warehouse_path
    from pipelines.lib.warehouse.writer_lock import lock_path

    return path.resolve() == warehouse_path().resolve() or lock_path(path).exists()


@contextmanager
def readable_copy(path: Path, limits: QueryLimits) -> Iterator[Path]:
    """A file the query may hold open as long as it likes: `path` itself when no run writes it,
    else a copy of the live warehouse (and of its write-ahead log, if any) made under the shared
    warehouse lock, so it is a state a run left whole; removed afterwards."""
    if not is_live(path):
        yield path
        return
    from pipelines.lib.warehouse.writer_lock import LockBusy, warehouse_lock

    with tempfile.TemporaryDirectory(prefix="gpuledger-query-") as folder:
        copy = Path(folder) / path.name
        try:
            with warehouse_lock(path, shared=True, wait_seconds=float(limits.timeout.value)):
                shutil.copyfile(path, copy)
                if (wal := path.with_name(path.name + ".wal")).exists():
                    shutil.copyfile(wal, copy.with_name(copy.name + ".wal"))
        except LockBusy as busy:
            raise QueryStopped(f"query stopped after waiting {_seconds(limits.timeout.value)} s "
                               f"({limits.timeout.source}) to read the live warehouse: {busy}; query the "
                               "published file instead (no --warehouse), or try again when the run is done") from None
        except OSError as err:  # no room for the copy, most likely (LockBusy, a TimeoutError, is one too: above)
            raise OSError(f"the live warehouse {path} could not be copied to {folder} to be read ({err}); "
                          "query the published file instead (no --warehouse), or set TMPDIR to a roomier "
                          "folder") from None
        yield copy
