"""Resources every domain uses: the DuckDB warehouse and the landing zone with its org config."""

from __future__ import annotations

import os
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Iterator

import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource
from pydantic import PrivateAttr

from pipelines.lib.config import ConfigError, OrgConfig, engine_of, load_config
from pipelines.lib.warehouse import PROJECT_ROOT, warehouse_path
from pipelines.lib.warehouse.writer_lock import connect_writer, held_open, warehouse_lock

# The ledger's first day (YYYY-MM-DD), fixed before the daily partitions are defined.
LEDGER_START_ENV = "GPULEDGER_LEDGER_START"


class LandingZone(dg.ConfigurableResource):
    """Where exporters drop bills, scheduler logs, telemetry and trainer events, and the org config."""

    root: str
    config_file: str = ""

    @property
    def path(self) -> Path:
        return Path(self.root)

    def org_config(self) -> OrgConfig:
        return load_config(self.config_file or None)


class WarehouseResource(DuckDBResource):
    """The live warehouse, one writing process at a time: every connection is opened under the
    warehouse's exclusive lock (pipelines/lib/warehouse/writer_lock.py), which the OS releases if the process
    dies, and closed before the lock is let go. A DuckDB run holds both, the lock and the file open,
    from its first step to its last."""

    _run_id: str | None = PrivateAttr(default=None)
    _held: ExitStack | None = PrivateAttr(default=None)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        self._run_id = context.run.run_id if context.run else None  # named in the lock, for whoever waits
        if context.run is not None and _engine() == "duckdb":
            # A run holds the warehouse open from its first step to its last (writer_lock.held_open):
            # `gpuledger run` initializes resources once per run; a daemon's run once per step process.
            # Not on Spark: its steps let go of the warehouse while Spark works, so days run at once.
            self._held = ExitStack()
            self._held.enter_context(held_open(self.database, self._config(), run_id=self._run_id))

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._held is not None:
            self._held.close()
            self._held = None

    def _config(self) -> dict:
        return {"custom_user_agent": "dagster", **self.connection_config}

    @contextmanager
    def get_connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with warehouse_lock(self.database, run_id=self._run_id):
            # waits for a reader outside gpuledger to close the file; a cursor where the run holds it open
            con = connect_writer(self.database, self._config(), run_id=self._run_id)
            try:
                yield con
            finally:
                con.close()


def _engine() -> str | None:
    try:
        return engine_of(load_config(os.environ.get("GPULEDGER_CONFIG") or None))
    except (ConfigError, ValueError):
        return None  # the run's first step that reads the config says what is wrong with it


def warehouse_resource() -> WarehouseResource:
    # Two threads and a memory cap suit the 2-core machines this runs on; DuckDB spills past the cap.
    return WarehouseResource(
        database=str(warehouse_path()),
        connection_config={"threads": int(os.environ.get("GPULEDGER_THREADS", "2")),
                           "memory_limit": os.environ.get("GPULEDGER_MEMORY_LIMIT", "4GB"),
                           "preserve_insertion_order": False},
    )


def landing_resource() -> LandingZone:
    return LandingZone(
        root=os.environ.get("GPULEDGER_LANDING") or str(PROJECT_ROOT / "data" / "landing"),
        config_file=os.environ.get("GPULEDGER_CONFIG", ""),
    )
