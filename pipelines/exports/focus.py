"""`gpuledger export focus`: the ledger as FOCUS 1.3 split-cost allocation rows.

Every origin charge — a bill line's piece of a UTC day, as the ledger cuts lines over the hours of
their charge period (`intermediate.int_bill_line_hours`) — becomes one or more allocated rows. The
ledger keeps each piece's origin line (`intermediate.int_cost_allocations.line_key`), so the export is
a read of it, not a second allocation:

- GPU node lines (priced node-hours): one row per job and ledger category that held the node's GPUs,
  split by GPU-seconds, plus an unallocated row (AllocatedResourceId NULL) for the billed
  GPU-seconds no job held (`idle_unallocated`). AllocatedResourceId is the job (`job_uid`),
  AllocatedResourceName its scheduler job id.
- Other lines: one row per project the ledger placed them on (tagged lines, shared lines by GPU cost,
  tax and untagged credits by pre-tax cost, each in the line's currency; unused commitment to its
  owning team), or one unallocated row for what the ledger marks `unattributed`.

Every column FOCUS 1.2 makes mandatory is present, with the 1.3 ones (HostProviderName,
ServiceProviderName, the Allocated* columns) beside them. Dimensions are the origin line's. Summable
metrics of each origin's rows sum exactly (DECIMAL(38,18)) to the origin's, in its BillingCurrency, as
FOCUS 1.3 split cost allocation asks: EffectiveCost and BilledCost as the ledger allocated them;
ListCost, ContractedCost, PricingQuantity and ConsumedQuantity cut over the line's hours as the ledger
cuts EffectiveCost, then split over the origin's rows in proportion to their EffectiveCost, both by
largest remainder. AllocatedRatio in AllocatedMethodDetails is informative (a double). Text cells of the
CSV that a spreadsheet would run as formulas are guarded (pipelines/lib/csv_cells.py).

Only TEMP tables are written: the export runs on a read-only connection to the warehouse (the
sandboxed kind, whose one writable file is `part_file(out)`).
"""

from __future__ import annotations

import os
from datetime import date, timedelta
from pathlib import Path

import duckdb

from models.landing import FocusBillLine
from pipelines.lib.csv_cells import guard_sql
from pipelines.lib.warehouse import has_table, run_sql, sql, table_sql

# The columns of the export, in order: FOCUS columns, then the `x_` ones.
FOCUS_COLUMNS: tuple[str, ...] = (
    "BillingAccountId", "BillingAccountName", "BillingCurrency", "BillingPeriodStart", "BillingPeriodEnd",
    "ChargePeriodStart", "ChargePeriodEnd", "ChargeCategory", "ChargeClass", "ChargeDescription",
    "ChargeFrequency", "PricingCategory", "PricingQuantity", "PricingUnit", "PricingCurrency",
    "ConsumedQuantity", "ConsumedUnit", "ServiceCategory", "ServiceSubcategory", "ServiceName",
    "ProviderName", "PublisherName", "InvoiceIssuerName", "HostProviderName", "ServiceProviderName",
    "InvoiceId", "RegionId", "SubAccountId", "SubAccountName", "ResourceId", "ResourceName", "ResourceType",
    "SkuId", "CommitmentDiscountId", "CommitmentDiscountType", "CommitmentDiscountCategory",
    "CommitmentDiscountStatus", "Tags", "ListCost", "ContractedCost", "EffectiveCost", "BilledCost",
    "AllocatedMethodId", "AllocatedMethodDetails", "AllocatedResourceId", "AllocatedResourceName",
    "AllocatedTags", "x_OriginLineKey", "x_OriginQuarantined", "x_CostSource",
)
_TIMESTAMPS = ("BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd")
# DECIMAL(38,18): summable metrics, each origin's rows summing exactly to the origin's
_DECIMALS = ("PricingQuantity", "ConsumedQuantity", "ListCost", "ContractedCost", "EffectiveCost", "BilledCost")
# the metrics split here (ledger tables hold no pieces of them), as focus_line_day names them
_SPLIT_METRICS = {"list_cost": "ListCost", "contracted_cost": "ContractedCost",
                  "pricing_quantity": "PricingQuantity", "consumed_quantity": "ConsumedQuantity"}

# per day (sql/exports/focus_allocation/): cut the lines' other metrics over their hours, build the
# origins and pieces and split those metrics over the pieces, then the query of the day's rows
_STEPS = table_sql("exports/focus_allocation")
_TEMP_TABLES = ("focus_export", "focus_day", "focus_line_metrics", "focus_line_day", "config_origins", "focus_origins",
                "focus_pieces", "metric_split_input", "metric_splits", "piece_split_input", "piece_splits",
                "focus_service_subcategories")
# and the macros of 00_focus_values.sql (the spellings FOCUS asks for)
_TEMP_MACROS = ("focus_service_subcategory", "focus_unit", "focus_unit_parts", "focus_time_unit", "focus_ascii")
# text columns: guarded against spreadsheet formulas in the CSV
_TEXT = tuple(c for c in FOCUS_COLUMNS if c not in (*_TIMESTAMPS, *_DECIMALS, "x_OriginQuarantined"))


def part_file(out: Path) -> Path:
    """Where the export is written whole before it is renamed over `out`."""
    out = Path(out).resolve()
    return out.with_name(f".{out.name}.part")


def export_focus(con: duckdb.DuckDBPyConnection, start: date, end: date, out: Path) -> int:
    """Writes the FOCUS 1.3 split-cost allocation rows of the UTC days `start`..`end` (inclusive) to
    `out` — CSV (money as exact decimal strings, times as `YYYY-MM-DDTHH:MM:SSZ`) or Parquet (money
    DECIMAL(38,18), times TIMESTAMP WITH TIME ZONE), by its suffix — and returns the number of rows.

    Raises ValueError for another suffix, an empty range, days the ledger has no bill lines for, or an
    export that does not agree exactly with the ledger."""
    out = Path(out)
    fmt = {".csv": "csv", ".parquet": "parquet"}.get(out.suffix.lower())
    if fmt is None:
        raise ValueError(f"cannot export FOCUS to {out}: the file name must end in .csv or .parquet")
    if end < start:
        raise ValueError(f"empty date range: --end {end} is before --start {start}")
    days = [start + timedelta(days=i) for i in range((end - start).days + 1)]

    try:
        stale = _missing_staged_columns(con)
        if stale:
            raise ValueError(f"the warehouse's bill lines lack column(s) {', '.join(stale)} that the export carries: "
                             "it was built by an older gpuledger; any `gpuledger run` adds them")
        if not _knows_its_bills(con):
            raise ValueError("the warehouse does not yet say which of its sources are bills (ops.landing_sources): "
                             "it was built by an older gpuledger; any `gpuledger run` records them")
        have = {d for (d,) in con.execute(
            """SELECT day FROM intermediate.int_bill_line_hours WHERE day BETWEEN $start AND $end
               UNION SELECT day FROM intermediate.int_config_cost_lines WHERE day BETWEEN $start AND $end""",
            {"start": start, "end": end}).fetchall()}
        missing = [d.isoformat() for d in days if d not in have]
        if missing:
            raise ValueError(f"the ledger has no bill lines or config cost lines for {', '.join(missing)}: "
                             "run `gpuledger run` for those days before exporting them")
        rows = _build(con, days)
        _write(con, fmt, out)
        return rows
    finally:
        for table in _TEMP_TABLES:  # constants above
            con.execute(f"DROP TABLE IF EXISTS temp.main.{table}")
        for macro in _TEMP_MACROS:
            con.execute(f"DROP MACRO IF EXISTS temp.main.{macro}")


_STAGED_COLUMNS = """SELECT column_name FROM information_schema.columns
                      WHERE table_schema = 'staging' AND table_name = 'stg_focus__bill_lines'"""


def _knows_its_bills(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether ops.landing_sources says which sources are bills, so the export's quarantined bill rows
    are found (each sync records its source; a warehouse no run has synced since the table came has none)."""
    return has_table(con, "ops", "landing_sources") and con.execute(
        "SELECT count(*) FROM ops.landing_sources WHERE is_bill").fetchall()[0][0] > 0


def _missing_staged_columns(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The columns of staging.stg_focus__bill_lines, as this version defines it, that the warehouse
    lacks (the export's connection is read-only: it cannot add them itself)."""
    have = {c for (c,) in con.execute(_STAGED_COLUMNS).fetchall()}
    return [c for c in FocusBillLine.columns if c not in have]


def _build(con: duckdb.DuckDBPyConnection, days: list[date]) -> int:
    """Builds temp table focus_export with the rows of `days`, checking each day; returns its row count."""
    for i, day in enumerate(days):
        for script in _STEPS.prepare:
            run_sql(con, script, {"day": day})
        con.execute(f"CREATE OR REPLACE TEMP TABLE focus_day AS {sql(_STEPS.query)}", {"day": day})
        _check_day(con, day)
        if i == 0:
            con.execute("CREATE OR REPLACE TEMP TABLE focus_export AS SELECT * FROM focus_day")
        else:
            con.execute("INSERT INTO focus_export BY NAME SELECT * FROM focus_day")
    return con.execute("SELECT count(*) FROM focus_export").fetchall()[0][0]


def _check_day(con: duckdb.DuckDBPyConnection, day: date) -> None:
    """Every origin's rows sum exactly to its share of the day, line by line: EffectiveCost and BilledCost
    to the ledger's (a bill line's, or a config cost line's; depreciation bills nothing), the metrics
    split here to the line's share of the day."""
    bad = con.execute(
        """WITH origins AS (
               SELECT line_key, sum(effective_cost) AS e, sum(billed_cost) AS b
               FROM intermediate.int_bill_line_hours WHERE day = $day GROUP BY line_key
               UNION ALL
               SELECT line_key, sum(effective_cost),
                      sum(CASE WHEN cost_basis = 'depreciation' THEN 0 ELSE billed_cost END)
               FROM intermediate.int_config_cost_lines WHERE day = $day GROUP BY line_key
           )
           SELECT o.line_key, o.e, o.b, sum(x.EffectiveCost), sum(x.BilledCost)
           FROM origins o
           LEFT JOIN focus_day x ON x.x_OriginLineKey = o.line_key
           GROUP BY ALL
           HAVING sum(x.EffectiveCost) IS DISTINCT FROM o.e OR sum(x.BilledCost) IS DISTINCT FROM o.b
           ORDER BY 1 LIMIT 5""", {"day": day}).fetchall()
    if bad:
        raise ValueError(f"FOCUS export of {day}: allocated rows do not sum to their origin line: {bad}")
    sums = ", ".join(f"sum({column}) AS {metric}" for metric, column in _SPLIT_METRICS.items())  # constants
    bad = con.execute(
        f"""WITH rows AS (
                SELECT x_OriginLineKey AS line_key, {sums} FROM focus_day GROUP BY 1
            ),
            got AS (
                UNPIVOT rows ON {", ".join(_SPLIT_METRICS)} INTO NAME metric VALUE amount
            )
            SELECT d.line_key, d.metric, units_money(d.units), g.amount
            FROM focus_line_day d
            SEMI JOIN focus_origins USING (line_key)   -- the lines the ledger has for the day
            LEFT JOIN got g USING (line_key, metric)
            WHERE g.amount IS DISTINCT FROM units_money(d.units)
            ORDER BY 1, 2 LIMIT 5""").fetchall()
    if bad:
        raise ValueError(f"FOCUS export of {day}: allocated rows' split metrics do not sum to their origin: {bad}")


def _write(con: duckdb.DuckDBPyConnection, fmt: str, out: Path) -> None:
    if fmt == "csv":
        cols = ", ".join(
            f"strftime({c}, '%Y-%m-%dT%H:%M:%SZ') AS {c}" if c in _TIMESTAMPS
            else f"{guard_sql(c)} AS {c}" if c in _TEXT else c
            for c in FOCUS_COLUMNS)
        options = "FORMAT csv, HEADER true"
    else:
        cols = ", ".join(f"timezone('UTC', {c}) AS {c}" if c in _TIMESTAMPS else c for c in FOCUS_COLUMNS)
        options = "FORMAT parquet"
    out.parent.mkdir(parents=True, exist_ok=True)
    part = part_file(out)                       # written whole, then renamed: never a half-written file
    target = str(part).replace("'", "''")       # COPY takes no bound file name: quote it as a literal
    try:
        con.execute(f"COPY (SELECT {cols} FROM focus_export ORDER BY ChargePeriodStart, x_OriginLineKey, "
                    f"AllocatedResourceId NULLS LAST, AllocatedTags) TO '{target}' ({options})")
        os.replace(part, out)
    finally:
        part.unlink(missing_ok=True)
