"""Which days a landing zone covers: the ledger's first day, when the config does not set it.

The ledger's days are the days with cost or with jobs, so the bills and the scheduler exports decide;
telemetry and trainer events only add detail to those days. A timestamp a parser refuses (quarantined
as implausible, a 1970 Start say) never moves the start, because only staged rows count.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import duckdb

from pipelines.ingest.sources import ALL
from pipelines.lib.config import OrgConfig
from pipelines.landing.source import discover, file_span

DECIDING = tuple(s for s in ALL if s.decides_start)


def earliest_day(root: Path, cfg: OrgConfig) -> date | None:
    """The first UTC day any bill line or job of the landing zone covers, or None without any."""
    first: date | None = None
    # run before there is a warehouse (the code location's partitions start here): the parsers' SQL runs
    # on one in-memory DuckDB for the pass
    with duckdb.connect() as con:
        for source in DECIDING:
            for path, rel in discover(root, source):
                start, _ = file_span(source.parse(con, path, rel, cfg).rows, source)
                if start is not None and (first is None or start < first):
                    first = start
    return first


def ledger_start(root: Path, cfg: OrgConfig) -> date | None:
    """The ledger's first day: `ledger.start` in the config, else the earliest day the landing covers."""
    return cfg.ledger.start or earliest_day(root, cfg)
