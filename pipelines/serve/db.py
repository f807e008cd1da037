"""One read-only connection per request to the published file. A publish renames a new file over the old
one; a connection keeps the inode it opened, so an answer computed on one connection is a whole run's, and
the next request opens the new file. Nothing here ever opens the file for writing: the writer never waits."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

from pipelines.lib.warehouse.sandbox import open_read_only


# open_read_only locks a DuckDB instance down after connecting, and a process's connections to a file
# share one instance: two requests opening at once raced (one saw it not yet locked, then failed to SET
# what the other had locked: a 500 in the publish test). Opening is serialised; the queries are not.
_OPENING = threading.Lock()


@contextmanager
def reading(path: Path):
    with _OPENING:
        con = open_read_only(path)
    try:
        yield con
    finally:
        con.close()


def jsonable(value):
    """Money stays exact: DECIMAL becomes a decimal string, never a float."""
    if isinstance(value, Decimal):
        return format(value.normalize(), "f") if value == value.to_integral() else format(value, "f").rstrip("0")
    if isinstance(value, (date, datetime)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value


def rows(con, sql: str, params: list | dict) -> list[dict]:
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [{n: jsonable(v) for n, v in zip(names, r)} for r in cur.fetchall()]
