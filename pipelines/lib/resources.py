"""Resources every domain uses: the DuckDB warehouse and the landing zone with its org config."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
from dagster_duckdb import DuckDBResource

from pipelines.lib.config import OrgConfig, load_config
from pipelines.lib.warehouse import PROJECT_ROOT, warehouse_path

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


def warehouse_resource() -> DuckDBResource:
    # Two threads and a memory cap suit the 2-core machines this runs on; DuckDB spills past the cap.
    return DuckDBResource(
        database=str(warehouse_path()),
        connection_config={"threads": int(os.environ.get("GPULEDGER_THREADS", "2")),
                           "memory_limit": os.environ.get("GPULEDGER_MEMORY_LIMIT", "6GB"),
                           "preserve_insertion_order": False},
    )


def landing_resource() -> LandingZone:
    return LandingZone(
        root=os.environ.get("GPULEDGER_LANDING") or str(PROJECT_ROOT / "data" / "landing"),
        config_file=os.environ.get("GPULEDGER_CONFIG", ""),
    )
