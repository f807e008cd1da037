"""Great Expectations 1.x suites on the marts, run as blocking Dagster asset checks.

GX 1.x has no DuckDB or polars datasource that works, so a day's partition is read from DuckDB
and handed to GX as a pandas frame. Exact money conservation is not
here: it is the SQL `conservation` check, in DECIMAL, which GX would pass through floats.
"""


from dataclasses import dataclass
from datetime import date
from functools import cache

import dagster as dg
from dagster_duckdb import DuckDBResource

from models.ledger_categories import NAMES as CATEGORIES
from pipelines.lib.dagster_glue.partitions import DAILY



@dataclass(frozen=True)
class MartExpectations:
    table: str                                # "marts/fct_cost_daily"
    key: tuple[str, ...]                      # one row per key
    non_negative: tuple[str, ...] = ()        # GPU-seconds and the like
    between_0_and_1: tuple[str, ...] = ()     # ratios
    category_column: str | None = None        # values in the ledger's category domain
    must_have_rows: bool = False              # day coverage: a billed day always has rows


def _suite(gx, spec: MartExpectations):
    e = gx.expectations
    suite = gx.ExpectationSuite(name=spec.table.replace("/", "__"))
    suite.add_expectation(e.ExpectCompoundColumnsToBeUnique(column_list=list(spec.key)))
    for column in spec.non_negative:
        suite.add_expectation(e.ExpectColumnValuesToBeBetween(column=column, min_value=0))
    for column in spec.between_0_and_1:
        suite.add_expectation(e.ExpectColumnValuesToBeBetween(column=column, min_value=0, max_value=1))
    if spec.category_column:
        suite.add_expectation(e.ExpectColumnValuesToBeInSet(column=spec.category_column, value_set=CATEGORIES))
    if spec.must_have_rows:
        suite.add_expectation(e.ExpectTableRowCountToBeBetween(min_value=1))
    return suite


@cache
def _validation(spec: MartExpectations):
    """The suite's validation definition, built once per process: a GX context and its suites cost
    more to build than a day's validation, and a run checks every mart every day."""
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    ctx = gx.get_context(mode="ephemeral")
    ctx.variables.progress_bars = ProgressBarsConfig(globally=False)
    batch = ctx.data_sources.add_pandas("marts").add_dataframe_asset(spec.table).add_batch_definition_whole_dataframe("day")
    suite = ctx.suites.add(_suite(gx, spec))
    return ctx.validation_definitions.add(gx.ValidationDefinition(name="day", data=batch, suite=suite))


def validate_frame(spec: MartExpectations, frame) -> tuple[bool, dict[str, object]]:
    """Runs the suite on a pandas frame; returns (success, {expectation: unexpected count or 'failed'})."""
    # Pass or fail first, which GX answers in half the time; only a failure is validated again for
    # the counts of what failed (each expectation's unexpected_count).
    if _validation(spec).run(batch_parameters={"dataframe": frame}, result_format="BOOLEAN_ONLY").success:
        return True, {}
    result = _validation(spec).run(batch_parameters={"dataframe": frame})
    failures = {
        f"{r.expectation_config.type}({r.expectation_config.kwargs.get('column') or r.expectation_config.kwargs.get('column_list') or ''})":
            r.result.get("unexpected_count", "failed")
        for r in result.results
        if not r.success
    }
    return bool(result.success), failures


def expectations_check(asset: dg.AssetsDefinition, spec: MartExpectations) -> dg.AssetChecksDefinition:
    schema, table = spec.table.split("/")

    @dg.asset_check(
        asset=asset,
        name="expectations",
        description="Great Expectations suite: " + ", ".join(
            ["one row per " + "×".join(spec.key)]
            + (["non-negative " + ", ".join(spec.non_negative)] if spec.non_negative else [])
            + (["0 ≤ " + ", ".join(spec.between_0_and_1) + " ≤ 1"] if spec.between_0_and_1 else [])
            + (["category in the ledger's domain"] if spec.category_column else [])
            + (["the day has rows"] if spec.must_have_rows else [])
        ),
        blocking=True,
        partitions_def=DAILY,
    )
    def _check(context: dg.AssetCheckExecutionContext, duckdb: DuckDBResource) -> dg.AssetCheckResult:
        day = date.fromisoformat(context.partition_key)
        with duckdb.get_connection() as con:
            # the table name is a constant of this module, the day is bound
            frame = con.sql(f"SELECT * FROM {schema}.{table} WHERE day = $day", params={"day": day}).df()
        success, failures = validate_frame(spec, frame)
        return dg.AssetCheckResult(passed=success, metadata={"rows": len(frame), "failed": dg.MetadataValue.json(failures)})

    return _check
