"""The Dagster code location: every module under pipelines/defs/ is loaded (one folder per domain).

Before they load, the ledger's first day is fixed for the daily partitions: the config's
`ledger.start`, else the earliest day the landing files cover (see pipelines/lib/dagster_glue/partitions.py)."""

import os
from pathlib import Path

import dagster as dg

from pipelines.lib.dagster_glue.resources import LEDGER_START_ENV


def _fix_ledger_start() -> None:
    # before anything imports pipelines.lib.dagster_glue.partitions, which reads it
    if os.environ.get(LEDGER_START_ENV):
        return
    from pipelines.ingest.coverage import ledger_start
    from pipelines.lib.dagster_glue.resources import landing_resource

    landing = landing_resource()
    start = ledger_start(landing.path, landing.org_config()) if landing.path.is_dir() else None
    if start is not None:
        os.environ[LEDGER_START_ENV] = start.isoformat()


@dg.definitions
def defs() -> dg.Definitions:
    _fix_ledger_start()
    return dg.load_from_defs_folder(path_within_project=Path(__file__).parent)
