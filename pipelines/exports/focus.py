"""`gpuledger export focus`: the ledger as FOCUS 1.3 split-cost allocation rows.

Every origin charge — a bill line's piece of a UTC day, as the ledger cuts lines over the hours of
their charge period (`intermediate.int_bill_line_hours`) — becomes one or more allocated rows:

- GPU node lines (priced node-hours): split over the jobs that held the node's GPUs in each hour by
  their GPU-seconds, per ledger category, plus an unallocated row (AllocatedResourceId NULL) for the
  billed GPU-seconds no job held (`idle_unallocated`). AllocatedResourceId is the job (`job_uid`),
  AllocatedResourceName its Slurm JobID. When several lines price the same node-hour, each prefix
  sum of the hour's lines is split like the ledger split the whole hour, and consecutive prefixes
  are differenced: every line's rows sum exactly to the line, and over the hour's lines they sum
  exactly to the ledger's pieces of the hour.
- Other lines: one row per project the ledger places them on (tagged lines, shared lines by GPU cost,
  tax and untagged credits by pre-tax cost, unused commitment to its owning team), or one unallocated
  row for what the ledger marks `unattributed`.

EffectiveCost and BilledCost of each origin's rows sum exactly (DECIMAL(38,18), largest remainder in
units of 1e-18) to the origin; AllocatedRatio in AllocatedMethodDetails is informative (a double).
Non-node lines go where the ledger placed them (`intermediate.int_bill_line_placements`), and the
export checks that its rows agree exactly with `intermediate.int_cost_allocations` per day, team,
project and category before it writes anything.

Only TEMP tables are written: the export runs on a read-only connection to the warehouse (the
sandboxed kind, whose one writable file is `part_file(out)`).
"""

from __future__ import annotations

import os
from datetime import date, timedelta
from pathlib import Path

import duckdb

from pipelines.lib.warehouse import run_sql, sql

# The columns of the export, in order: FOCUS columns, then the `x_` ones.
FOCUS_COLUMNS: tuple[str, ...] = (
    "BillingAccountId", "BillingCurrency", "BillingPeriodStart", "BillingPeriodEnd",
    "ChargePeriodStart", "ChargePeriodEnd", "ChargeCategory", "ChargeClass", "ChargeDescription",
    "ChargeFrequency", "PricingCategory", "PricingUnit", "ConsumedUnit", "ServiceCategory", "ServiceName",
    "ProviderName", "HostProviderName", "ServiceProviderName", "InvoiceId", "RegionId", "SubAccountId",
    "ResourceId", "ResourceName", "ResourceType", "SkuId", "CommitmentDiscountId", "CommitmentDiscountType",
    "CommitmentDiscountCategory", "CommitmentDiscountStatus", "Tags", "EffectiveCost", "BilledCost",
    "AllocatedMethodId", "AllocatedMethodDetails", "AllocatedResourceId", "AllocatedResourceName",
    "AllocatedTags", "x_OriginLineKey", "x_OriginQuarantined",
)
_TIMESTAMPS = ("BillingPeriodStart", "BillingPeriodEnd", "ChargePeriodStart", "ChargePeriodEnd")

# The steps of one day, in order (each a file under sql/), then the query of the day's rows.
_STEPS = (
    "exports/focus_allocation.prepare",
    "lib/largest_remainder",
    "exports/focus_allocation.pieces",
    "lib/largest_remainder",
    "exports/focus_allocation.taxes",
)
_QUERY = "exports/focus_allocation"
_TEMP_TABLES = ("focus_export", "focus_day", "focus_origins", "focus_node_line_hours", "focus_node_pieces",
                "focus_other_lines", "focus_project_weights", "focus_pretax_weights", "focus_pieces",
                "split_input", "split_output")


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
        have = {d for (d,) in con.execute(
            "SELECT DISTINCT day FROM intermediate.int_bill_line_hours WHERE day BETWEEN $start AND $end",
            {"start": start, "end": end}).fetchall()}
        missing = [d.isoformat() for d in days if d not in have]
        if missing:
            raise ValueError(f"the ledger has no bill lines for {', '.join(missing)}: "
                             "run `gpuledger run` for those days before exporting them")
        rows = _build(con, days)
        _write(con, fmt, out)
        return rows
    finally:
        for table in _TEMP_TABLES:  # constants above
            con.execute(f"DROP TABLE IF EXISTS temp.main.{table}")


def _build(con: duckdb.DuckDBPyConnection, days: list[date]) -> int:
    """Builds temp table focus_export with the rows of `days`, checking each day; returns its row count."""
    for i, day in enumerate(days):
        for step in _STEPS:
            run_sql(con, step, {"day": day})
        con.execute(f"CREATE OR REPLACE TEMP TABLE focus_day AS {sql(_QUERY)}", {"day": day})
        _check_day(con, day)
        if i == 0:
            con.execute("CREATE OR REPLACE TEMP TABLE focus_export AS SELECT * FROM focus_day")
        else:
            con.execute("INSERT INTO focus_export BY NAME SELECT * FROM focus_day")
    return con.execute("SELECT count(*) FROM focus_export").fetchall()[0][0]


def _check_day(con: duckdb.DuckDBPyConnection, day: date) -> None:
    """Every origin's rows sum exactly to it, and the day's rows agree exactly with the ledger."""
    bad = con.execute(
        """SELECT o.line_key, o.effective_cost, o.billed_cost, sum(e.EffectiveCost), sum(e.BilledCost)
           FROM focus_origins o
           LEFT JOIN focus_day e ON e.x_OriginLineKey = o.line_key
           GROUP BY ALL
           HAVING sum(e.EffectiveCost) IS DISTINCT FROM o.effective_cost
               OR sum(e.BilledCost) IS DISTINCT FROM o.billed_cost
           ORDER BY 1 LIMIT 5""").fetchall()
    if bad:
        raise ValueError(f"FOCUS export of {day}: allocated rows do not sum to their origin line: {bad}")
    diff = con.execute(
        """WITH mine AS (
               SELECT p.team, p.project, p.category,
                      sum(p.effective_cost) AS e, sum(p.billed_cost) AS b
               FROM focus_pieces p GROUP BY ALL
           ),
           ledger AS (
               SELECT team, project, category, sum(effective_cost) AS e, sum(billed_cost) AS b
               FROM intermediate.int_cost_allocations WHERE day = $day GROUP BY ALL
           )
           SELECT coalesce(m.team, l.team), coalesce(m.project, l.project), coalesce(m.category, l.category),
                  m.e, l.e, m.b, l.b
           FROM mine m
           FULL JOIN ledger l ON m.team IS NOT DISTINCT FROM l.team AND m.project IS NOT DISTINCT FROM l.project
                             AND m.category IS NOT DISTINCT FROM l.category
           WHERE coalesce(m.e, 0) <> coalesce(l.e, 0) OR coalesce(m.b, 0) <> coalesce(l.b, 0)
           ORDER BY 1, 2, 3 LIMIT 5""", {"day": day}).fetchall()
    if diff:
        raise ValueError(
            f"FOCUS export of {day} disagrees with the ledger (team, project, category, export vs ledger "
            f"EffectiveCost and BilledCost): {diff}")


def _write(con: duckdb.DuckDBPyConnection, fmt: str, out: Path) -> None:
    if fmt == "csv":
        cols = ", ".join(
            f"strftime({c}, '%Y-%m-%dT%H:%M:%SZ') AS {c}" if c in _TIMESTAMPS else c for c in FOCUS_COLUMNS)
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
