"""The Dagster code location: every module under pipelines/defs/ is loaded (one folder per domain)."""

import dagster as dg

import pipelines.defs


@dg.definitions
def defs() -> dg.Definitions:
    return dg.components.load_defs(pipelines.defs)
