"""The body every staging asset shares, and the factory that turns a source's contract, as a pandera
schema, into a blocking asset check on its staging table (after PUDL's asset_check_from_schema)."""


from datetime import date

import dagster as dg
import pandera.polars as pa
import polars as pl
from dagster_duckdb import DuckDBResource

from pipelines.ingest.ignored import ignored_files
from pipelines.landing.source import Source
from pipelines.landing.sync import sync
from pipelines.lib.dagster_glue.partitions import DAILY, daily_duckdb_asset
from pipelines.lib.dagster_glue.resources import LandingZone
from pipelines.lib.warehouse import bootstrap, sql, table_sql


CHECK_BATCH_ROWS = 1_000_000
MAX_LISTED = 200  # files named in an asset's metadata, at most, per list


def ingest_partition(
    context: dg.AssetExecutionContext, duckdb: DuckDBResource, landing: LandingZone, sources: tuple[Source, ...]
) -> dg.MaterializeResult:
    """Reads the sources' new and changed landing files into their (shared) staging table, then
    describes the day."""
    day = date.fromisoformat(context.partition_key)
    cfg = landing.org_config()
    by_source: dict[str, dict] = {}
    with duckdb.get_connection() as con:
        bootstrap(con)
        for source in sources:
            report = sync(con, landing.path, source, cfg, day)
            reasons = con.execute(
                """SELECT reason, count(*) AS n FROM ops.quarantine WHERE source = $source AND day = $day
                   GROUP BY reason ORDER BY n DESC LIMIT 5""",
                {"source": source.name, "day": day},
            ).fetchall()
            by_source[source.name] = {
                "files_read": len(report.files_read),
                "files_unchanged": report.files_unchanged,
                "rows_staged": report.rows_staged,
                "rows_quarantined": report.rows_quarantined,
                "rows_dropped": report.rows_dropped,
                "top_quarantine_reasons_of_day": {r: n for r, n in reasons},
            }
            if source.is_bill:
                by_source[source.name].update({
                    "files_by_status": report.files_by_status,
                    "files_removed": report.files_removed,
                    "not_current": report.set_aside[:MAX_LISTED],
                    "missing_from_manifests": report.missing_from_manifests,
                })
            if report.files_read:
                context.log.info(f"{source.name}: read {len(report.files_read)} new or changed file(s), "
                                 f"{report.rows_staged} rows staged, {report.rows_quarantined} quarantined")
            if report.files_removed:
                context.log.info(f"{source.name}: {len(report.files_removed)} file(s) gone from landing, their rows "
                                 f"removed: {', '.join(report.files_removed[:MAX_LISTED])}")
        day_rows = con.execute(f"SELECT count(*) FROM ({sql(table_sql(sources[0].table).query)})", {"day": day}).fetchall()[0][0]
    totals = {k: sum(v[k] for v in by_source.values())
              for k in ("files_read", "files_unchanged", "rows_staged", "rows_quarantined")}
    # Files under these sources' folders that no source reads (the bills asset also lists those outside
    # every source's folder), so a misnamed export is seen where its data is missing.
    ignored = ignored_files(landing.path, within=sources, outside=any(s.is_bill for s in sources))
    if ignored:
        context.log.warning(f"{len(ignored)} landing file(s) no source reads, e.g. {ignored[0]['file']}: "
                            f"{ignored[0]['reason']}")
    return dg.MaterializeResult(
        metadata={**totals, "day_rows": int(day_rows), "by_source": dg.MetadataValue.json(by_source),
                  "ignored_files": dg.MetadataValue.json(ignored[:MAX_LISTED])}
    )


def contract_check(asset: dg.AssetsDefinition, *sources: Source) -> dg.AssetChecksDefinition:
    """A blocking check: the day's staging rows satisfy the contract, and the share of the day's
    landing rows that went to quarantine stays within the configured limit. Sources that share a
    staging table (FOCUS and CUR, Slurm and Kubernetes) share one check, so the day's rows are read once."""
    assert len({(s.table, s.contract) for s in sources}) == 1, "one table, one contract"
    source = sources[0]
    names = [s.name for s in sources]
    schema = source.contract.to_pandera()

    @dg.asset_check(
        asset=asset,
        name="_".join(names) + "_contract",
        description=f"{source.contract.name} holds for the day's rows; quarantined share within limit",
        blocking=True,
        partitions_def=DAILY,
    )
    def _check(context: dg.AssetCheckExecutionContext, duckdb: DuckDBResource, landing: LandingZone) -> dg.AssetCheckResult:
        day = date.fromisoformat(context.partition_key)
        limit = landing.org_config().quarantine.max_share
        violations: dict[str, int] = {}
        with duckdb.get_connection() as con:
            # Validated a batch at a time: a fleet-day of telemetry minutes does not fit in memory twice.
            rows_of_day = 0
            for batch in con.sql(sql(table_sql(source.table).query), params={"day": day}).to_arrow_reader(CHECK_BATCH_ROWS):
                frame = pl.from_arrow(batch)
                rows_of_day += frame.height
                try:
                    schema.validate(frame, lazy=True)
                except pa.errors.SchemaErrors as err:
                    for check, n in err.failure_cases.group_by("check").len().iter_rows():
                        violations[str(check)] = violations.get(str(check), 0) + int(n)
            # Shares are counted in landing rows over the files that cover the day (for DCGM the
            # staging rows are minutes, not samples, so the manifest is the common unit). A scheduler
            # file refused whole is no share of rows: it is listed below and leaves its days
            # incomplete (finance.reconciliation_daily), so the day still runs and says so.
            accepted, quarantined = con.execute(
                """SELECT coalesce(sum(rows_staged), 0), coalesce(sum(rows_quarantined), 0)
                   FROM ops.landed_files
                   WHERE list_contains($sources, source) AND first_day <= $day AND last_day >= $day
                     AND NOT (status = 'unreadable' AND $allocates)""",
                {"sources": names, "day": day, "allocates": source.allocates},
            ).fetchall()[0]
            unreadable = [f for (f,) in con.execute(
                "SELECT file FROM ops.quarantine WHERE list_contains($sources, source) AND row_ref = 'file' ORDER BY file",
                {"sources": names},
            ).fetchall()]
        total = accepted + quarantined
        share = quarantined / total if total else 0.0
        return dg.AssetCheckResult(
            passed=not violations and share <= limit,
            metadata={
                "rows_of_day": rows_of_day,
                "landing_rows_accepted": int(accepted),
                "landing_rows_quarantined": int(quarantined),
                "quarantined_share": round(share, 6),
                "max_share": limit,
                "contract_violations": dg.MetadataValue.json(violations),
                # Whole files that could not be read: their day is unknown, so they are reported
                # here on every day rather than blocking every day.
                "unreadable_files": dg.MetadataValue.json(unreadable),
            },
        )

    return _check


def staging_asset(*sources: Source, description: str, deps: tuple[str, ...] = ()) -> dg.AssetsDefinition:
    """The daily staging asset of one or more landing sources that share a staging table
    (`staging/<table>`) and an asset group, in the DuckDB writer pool; `deps` are assets that fill its
    landing files."""
    assert len({(s.table, s.group) for s in sources}) == 1, "sources of one staging asset share its table and group"

    @daily_duckdb_asset(sources[0].table, group=sources[0].group, description=description, deps=deps)
    def _asset(context: dg.AssetExecutionContext, duckdb: DuckDBResource, landing: LandingZone) -> dg.MaterializeResult:
        return ingest_partition(context, duckdb, landing, sources)

    return _asset
