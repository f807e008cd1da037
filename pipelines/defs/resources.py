import dagster as dg

from pipelines.lib.dagster_glue.resources import landing_resource, warehouse_resource


@dg.definitions
def resources() -> dg.Definitions:
    """The warehouse file (GPULEDGER_WAREHOUSE) and the landing zone (GPULEDGER_LANDING, GPULEDGER_CONFIG)."""
    return dg.Definitions(resources={"duckdb": warehouse_resource(), "landing": landing_resource()})
