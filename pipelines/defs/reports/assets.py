import os
from datetime import date
from pathlib import Path

import dagster as dg

from pipelines.lib.dagster_glue.partitions import DAILY
from pipelines.lib.warehouse.publish import published_path
from pipelines.lib.dagster_glue.resources import LandingZone, landing_resource
from pipelines.lib.names import asset_name, file_name
from pipelines.lib.warehouse.sandbox import open_read_only
from pipelines.reports import DEFAULT_REPORTS, write_team_report


def reports_dir() -> Path:
    return Path(os.environ.get("GPULEDGER_REPORTS") or DEFAULT_REPORTS)


def team_report_asset(team: str) -> dg.AssetsDefinition:
    """The day's waste report of one team, read from the published warehouse (no writer lock)."""

    @dg.asset(
        key=["reports", "waste_" + asset_name(team)],
        deps=[dg.AssetKey(["ops", "published_warehouse"])],
        partitions_def=DAILY,
        group_name="reports",
        kinds={"html"},
        description=f"Team {team}'s daily waste report: HTML (self-contained, charts), Markdown and CSV "
                    f"under data/reports/{file_name(team)}/ (or $GPULEDGER_REPORTS).",
    )
    def _asset(context: dg.AssetExecutionContext, landing: LandingZone) -> dg.MaterializeResult:
        day = date.fromisoformat(context.partition_key)
        with open_read_only(published_path()) as con:
            paths = write_team_report(con, team, day, day, day.isoformat(), reports_dir())
        return dg.MaterializeResult(metadata={"html": dg.MetadataValue.path(str(paths[0]))})

    return _asset


@dg.definitions
def team_reports() -> dg.Definitions:
    """One asset per team of the organisation config, read when the definitions load; without a
    config there are no team assets (`gpuledger report` still writes any team's report)."""
    return dg.Definitions(assets=[team_report_asset(t) for t in sorted(landing_resource().org_config().teams)])
