"""`gpuledger plan FILE`: a run plan's estimate before launch (docs/plans.md).

The estimate is the daily mart's own SQL (sql/marts/dim_run_plans/) run on this one plan in an
in-memory DuckDB: step 10 reads the plan, step 20 what the published warehouse observed over the 30
days ending on its last day (the inputs the plan leaves out), step 30 the arithmetic. So the command
and marts.dim_run_plans can never disagree on a formula.
"""

from __future__ import annotations

import math
import textwrap
from datetime import date
from decimal import Decimal
from pathlib import Path

import duckdb

from pipelines.cli.plan_names import plan_team
from pipelines.ingest.plans import PlanFile, plan_frame, plan_row
from pipelines.lib.config import OrgConfig
from pipelines.lib.dates import utc_today
from pipelines.lib.ledger_names import LedgerNames
from pipelines.lib.warehouse import _bound, bootstrap, run_sql, sql, table_sql

STEPS = table_sql("marts/dim_run_plans")
KEYS_STEP, DEFAULTS_STEP = STEPS.prepare
# The columns of step 20's plan_defaults, for a plan estimated without a warehouse (all NULL then);
# tests/unit/test_plan_estimate.py checks them against the step itself.
DEFAULT_COLUMNS: dict[str, str] = {
    "window_first_day": "DATE", "window_last_day": "DATE",
    "observed_price_per_gpu_hour": "DECIMAL(38, 18)", "price_currency": "VARCHAR", "price_gpu_hours": "DOUBLE",
    "price_first_day": "DATE", "price_last_day": "DATE",
    "observed_checkpoint_seconds": "DOUBLE", "checkpoint_scope": "VARCHAR", "checkpoint_saves": "BIGINT",
    "checkpoint_first_day": "DATE", "checkpoint_last_day": "DATE",
    "observed_restart_seconds": "DOUBLE", "restart_interruptions": "BIGINT", "restart_first_day": "DATE",
    "restart_last_day": "DATE",
    "observed_mtbf_gpu_hours": "DOUBLE", "mtbf_interruptions": "BIGINT", "mtbf_run_gpu_hours": "DOUBLE",
    "mtbf_first_day": "DATE", "mtbf_last_day": "DATE",
}
# What `plan --json` prints at its top level (docs/plans.md#the-estimate), in this order.
ESTIMATE_KEYS = ("flops", "ideal_gpu_hours", "run_mtbf_hours", "checkpoint_interval_seconds", "failure_overhead",
                 "planned_gpu_hours", "budget_gpu_hours", "planned_cost", "budget_cost", "wall_clock_days")
# Each input: (the estimate's column, its source column, the unit shown)
INPUTS = {
    "dtype": ("dtype", "dtype_source", ""),
    "peak_flops": ("peak_flops", "peak_flops_source", "FLOP/s"),
    "mfu_target": ("mfu_target", "mfu_target_source", ""),
    "redundancy": ("redundancy", "redundancy_source", ""),
    "price_per_gpu_hour": ("price_per_gpu_hour", "price_source", "per GPU-hour"),
    "checkpoint_seconds": ("checkpoint_seconds", "checkpoint_source", "s"),
    "restart_seconds": ("restart_seconds", "restart_source", "s"),
    "mtbf_gpu_hours": ("mtbf_gpu_hours", "mtbf_source", "GPU-hours"),
}


class PlanError(ValueError):
    """A plan that cannot be estimated as asked (an unreadable warehouse)."""


def estimate(plan: PlanFile, file: str, cfg: OrgConfig, warehouse: Path | None, config: Path | None = None,
             ledger: LedgerNames | None = None) -> dict:
    """The estimate of `plan` as one row of marts.dim_run_plans would hold it, with `warehouse` (the
    published file; None or absent: no defaults from data) as of its last day; `cfg` read from the file
    `config` (None: the built-in defaults). Its team is said with its source (plan_team), from `ledger`
    (the names of that warehouse) where the config has none."""
    con = duckdb.connect()
    try:
        bootstrap(con)
        con.register("plan_in", plan_frame([plan_row(plan, file)]))
        con.execute("INSERT INTO staging.stg_plans__run_plans BY NAME SELECT * FROM plan_in")
        day, source = _as_of(con, warehouse, plan)
        params = {"day": day, **cfg.sql_params()}
        run_sql(con, KEYS_STEP, params)
        if source is not None:
            con.execute("USE published")
            try:
                run_sql(con, DEFAULTS_STEP, params)
            except duckdb.CatalogException as err:
                raise PlanError(f"{warehouse} lacks a table the defaults read ({_first_line(err)}): run "
                                "`gpuledger run` with this version first, or give every input in the plan") from None
            finally:
                con.execute("USE memory")
        else:
            columns = ", ".join(f"NULL::{t} AS {c}" for c, t in DEFAULT_COLUMNS.items())  # constants above
            con.execute(f"CREATE OR REPLACE TEMP TABLE plan_defaults AS SELECT run_id, {columns} FROM plan_keys")
            con.execute("UPDATE plan_defaults SET window_first_day = $day::DATE - 29, window_last_day = $day",
                        {"day": day})
        query = sql(STEPS.query)
        result = con.execute(query, _bound(query, params))
        names = [d[0] for d in result.description]
        row = dict(zip(names, result.fetchall()[0]))
    finally:
        con.close()
    row["defaults_from"] = str(source) if source else None
    row["config_from"] = str(config) if config else None
    row["team"], row["team_source"] = plan_team(plan.project, cfg, ledger)
    return row


def _as_of(con: duckdb.DuckDBPyConnection, warehouse: Path | None, plan: PlanFile) -> tuple[date, Path | None]:
    """The day the defaults' 30 days end on: the published warehouse's last day (attached read-only as
    `published`), else the plan's start, else today."""
    fallback = plan.start or utc_today()
    if warehouse is None or not warehouse.exists():
        return fallback, None
    try:
        # ATTACH takes no bound parameters; the path is the user's own file, quoted
        con.execute(f"ATTACH '{str(warehouse.resolve()).replace(chr(39), chr(39) * 2)}' AS published (READ_ONLY)")
        last = con.execute("SELECT max(day) FROM published.marts.fct_cost_daily").fetchall()[0][0]
    except duckdb.Error as err:
        raise PlanError(f"cannot read the warehouse {warehouse}: {_first_line(err)}") from None
    return (last or fallback), warehouse


def _first_line(err: Exception) -> str:
    return " ".join(str(err).split("\n")[0].split())


def missing_reasons(row: dict) -> dict[str, str]:
    """Why each missing input is missing, and what to do, in words."""
    days = f"{row['defaults_first_day']}..{row['defaults_last_day']}"
    where = (f"the warehouse {row['defaults_from']} has" if row["defaults_from"] else "no warehouse was found, so there is")
    why = {
        "peak_flops": f"the GPU catalog (models/gpu_catalog.py) has no peak FLOP/s for gpu_model {row['gpu_model']!r} "
                      f"in {row['dtype']}: use a model it knows (H100-SXM, A100, B200, …), or set peak_flops",
        "price_per_gpu_hour": f"not in the plan, and {where} no {row['gpu_model_canonical'] or row['gpu_model']} "
                              f"GPU-hours billed in {days}: set price_per_gpu_hour (and currency)",
        "checkpoint_seconds": f"not in the plan, and {where} no checkpoint save in {days}: set checkpoint_seconds",
        "restart_seconds": f"not in the plan, and {where} no restart of an interrupted run in {days}: "
                           "set restart_seconds",
        "mtbf_gpu_hours": f"not in the plan, and {where} no interruption of a training run in {days}: "
                          "set mtbf_gpu_hours",
    }
    return {name: why[name] for name in row["missing_inputs"]}


def as_json(row: dict) -> dict:
    """`plan --json`: the estimate's keys, then every input with its value and source. Money is a
    decimal string; figures that a missing input prevents are null."""
    out: dict = {"run_id": row["run_id"], "project": row["project"], "team": row["team"],
                 "team_source": row["team_source"],
                 "gpu_model": row["gpu_model"], "gpu_model_catalog": row["gpu_model_canonical"], "gpus": row["gpus"],
                 "tokens": row["tokens"], "flops_per_token": row["flops_per_token"],
                 "attention_flops": row["attention_flops"], "peak_flops": row["peak_flops"]}
    for key in ESTIMATE_KEYS:
        out[key] = _plain(row[key])
    out["billing_currency"] = row["billing_currency"]
    out["inputs"] = {name: {"value": _plain(row[value]), "source": row[source]}
                     for name, (value, source, _) in INPUTS.items()}
    out["inputs"]["price_per_gpu_hour"]["currency"] = row["billing_currency"]
    out["defaults"] = {"warehouse": row["defaults_from"], "config": row["config_from"],
                       "first_day": str(row["defaults_first_day"]), "last_day": str(row["defaults_last_day"])}
    out["missing_inputs"] = missing_reasons(row)
    return out


def _plain(value: object) -> object:
    if isinstance(value, Decimal):
        # exact, trailing zeros dropped but cents kept: 3.12, 4184.10, 2.123456
        text = format(value.normalize(), "f")
        return text if len(text.partition(".")[2]) >= 2 else str(value.quantize(Decimal("0.01")))
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


WIDTH = 80  # a terminal's: a longer line is wrapped, its continuation indented


def _wrapped(line: str, indent: int = 4) -> list[str]:
    if len(line) <= WIDTH:
        return [line]
    return textwrap.wrap(line, WIDTH, subsequent_indent=" " * indent, break_long_words=False,
                         break_on_hyphens=False)


def as_text(row: dict) -> str:
    """The readable estimate: the run, where its inputs came from, the figures, then each input with
    its source, within 80 columns."""
    c = row["billing_currency"] or ""

    def num(v: object, fmt: str, unit: str = "") -> str:
        return "–" if v is None else format(v, fmt) + (f" {unit}" if unit else "")

    team = f"team {row['team']}" if row["team"] else "no team"
    head = [
        f"plan {row['run_id']}: project {row['project']}, {team}",
        f"  {row['gpus']:,} × {row['gpu_model']} ({row['gpu_model_canonical'] or 'not in the GPU catalog'}), "
        f"{row['dtype']}, {row['tokens']:.4g} tokens",
        f"estimated as of {row['day']}" + (f", inputs the plan leaves out from {row['defaults_from']} "
                                           f"({row['defaults_first_day']}..{row['defaults_last_day']})"
                                           if row["defaults_from"] else ", without a warehouse"),
        f"config {row['config_from']}" if row["config_from"] else "no config file: the built-in defaults",
    ]
    lines = [wrapped for line in head for wrapped in _wrapped(line)] + [""]
    figures = [
        ("FLOPs", num(row["flops"], ".4e") + f"  ({row['flops_per_token']:.4e}/token, {row['attention_flops']} attention)"),
        ("ideal GPU-hours", num(row["ideal_gpu_hours"], ",.1f")
         + (f"   (at {row['mfu_target']:.0%} MFU of {row['peak_flops'] / 1e12:,.0f} TFLOP/s)" if row["peak_flops"] else "")),
        ("run MTBF", num(row["run_mtbf_hours"], ",.2f", "h") + "   (mtbf_gpu_hours / gpus)"),
        ("Young–Daly checkpoint interval", num(row["checkpoint_interval_seconds"], ",.0f", "s")
         + (f"   ({row['checkpoint_interval_seconds'] / 60:,.1f} min)" if row["checkpoint_interval_seconds"] else "")),
        ("failure overhead", num(None if row["failure_overhead"] is None else 100 * row["failure_overhead"], ".2f", "%")),
        ("planned GPU-hours", num(row["planned_gpu_hours"], ",.1f")),
        ("GPU-hour budget", num(row["budget_gpu_hours"], ",.1f") + f"   (× {row['redundancy']:g} redundancy)"),
        ("planned cost", num(row["planned_cost"], ",.2f", c)),
        ("budget", num(row["budget_cost"], ",.2f", c)),
        ("wall-clock days", num(row["wall_clock_days"], ",.2f")),
    ]
    width = max(len(name) for name, _ in figures)
    lines += [f"  {name:<{width}}  {value}" for name, value in figures]
    lines += ["", "inputs (value, then where it came from):"]
    shown = {"team": (row["team"] or "–", row["team_source"])}
    for name, (value, source, unit) in INPUTS.items():
        v = row[value]
        if v is None:
            text = "–"
        elif name == "price_per_gpu_hour":
            text = f"{_plain(v)} {c} {unit}"
        else:
            text = (f"{v:g}" if isinstance(v, float) else str(v)) + (f" {unit}" if unit else "")
        shown[name] = (text, row[source] or "missing")
    value_width = max(len(text) for text, _ in shown.values())
    for name, (text, source) in shown.items():
        line = f"  {name:<19} {text:<{value_width}}  {source}"
        if len(line) > WIDTH:  # the source on lines of its own, under the value
            lines.append(f"  {name:<19} {text}")
            lines += textwrap.wrap(source, WIDTH, initial_indent=" " * 22, subsequent_indent=" " * 22,
                                   break_long_words=False, break_on_hyphens=False)
        else:
            lines.append(line)
    for name, why in missing_reasons(row).items():
        lines += _wrapped(f"missing {name}: {why}")
    return "\n".join(lines)
