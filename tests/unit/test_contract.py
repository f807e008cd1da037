"""The contracts' own checks (models/contract.py) refuse the same rows for the same reasons as pandera
validating the same contract: every contract, on rows that break each check alone and together."""

from __future__ import annotations

import random
from datetime import date, datetime
from decimal import Decimal

import pandera.polars as pa
import polars as pl
import pytest

from models import landing, staging
from models.contract import Contract
from pipelines.ingest import focus
from pipelines.ingest.common import split_by_contract
from tests.support.memory_db import memory_db

CONTRACTS = list(dict.fromkeys(c for m in (landing, staging) for c in vars(m).values() if isinstance(c, Contract)))

# values of each type that pass and break the contracts' checks: bounds, nulls, NaN, the far future
CANDIDATES: dict[pl.DataType, list] = {
    pl.String: ["Usage", "", "Used", "step", "x", None, "Unused", "Credit"],
    pl.Float64: [0.5, -1.0, 0.0, 1.0, 100.0, 101.0, 9.3e18, float("nan"), None, 2.0],
    pl.Int32: [0, -1, 1, 64, 65, 255, 256, None],
    pl.Int64: [0, -5, 7, None],
    pl.Boolean: [True, None, False],
    pl.Date: [date(2024, 1, 1), None],
    landing.TS: [datetime(2024, 1, 1), None, datetime(2100, 1, 1), datetime(2023, 12, 31, 23, 59, 30),
                 datetime(2024, 1, 1, 0, 1)],
    landing.MONEY: [Decimal("1.5"), Decimal("0"), Decimal("-2.25"), None],
    landing.ROUNDING: [Decimal("1e-19"), Decimal("6e-19"), None, Decimal("-5e-19")],
    pl.List(pl.String): [["a"], None, []],
    pl.List(pl.Int32): [[1, 2], None],
}
ROWS = 60


def _frame(contract: Contract) -> pl.DataFrame:
    """ROWS rows in which every column takes each of its candidates (in turn, from its own place in
    the list, then at random), so values meet in many combinations; plus the columns the row checks read."""
    columns = {name: spec.dtype for name, spec in contract.columns.items() if not spec.provenance}
    columns.setdefault("submit_ts", landing.TS)
    data = {}
    for i, (name, dtype) in enumerate(columns.items()):
        values = CANDIDATES[dtype]
        rng = random.Random(name)
        picks = [values[(row + i) % len(values)] if row < len(values) else rng.choice(values) for row in range(ROWS)]
        data[name] = pl.Series(name, picks, dtype=dtype)
    return pl.DataFrame(data)


def _pandera_reasons(contract: Contract, frame: pl.DataFrame) -> dict[int, list[str]]:
    """Row -> reasons, each of pandera's failure cases worded by the contract's rule of that name."""
    try:
        contract.to_pandera().validate(frame, lazy=True)
    except pa.errors.SchemaErrors as err:
        cases = err.failure_cases
    else:
        return {}
    assert cases.filter(pl.col("index").is_null()).height == 0, cases
    rules = {(rule.column, rule.pandera): rule for rule in contract.rules()}
    found: dict[int, list[str]] = {}
    for case in cases.iter_rows(named=True):
        spec = contract.columns.get(case["column"])
        if case["failure_case"] == "NaN" and case["check"] != "not_nullable" and spec and not spec.nullable:
            continue  # pandera also holds a NaN to the bounds; the contract calls it missing, once
        if case["schema_context"] == "Column":
            says = rules[(case["column"], case["check"])].says
            reason = pl.select(says(pl.lit(case["failure_case"], dtype=pl.String))).item()
        else:
            reason = case["check"]
        found.setdefault(case["index"], [])
        if reason not in found[case["index"]]:
            found[case["index"]].append(reason)
    return found


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.name)
def test_contract_refuses_what_pandera_refuses(contract: Contract):
    frame = _frame(contract)
    expected = _pandera_reasons(contract, frame)
    assert expected, "the frame breaks some check"
    staged, rejects = split_by_contract(
        frame.with_row_index("_row", offset=0), contract, source="test", file="f.csv", staged_columns=["_row"],
        raw_columns=["_row"], row_ref=pl.format("{}", pl.col("_row")),
    )
    got = {int(ref): reason.split("; ") for ref, reason in rejects.select("row_ref", "reason").iter_rows()}
    assert got == expected
    assert sorted(staged["_row"].to_list() + list(got)) == list(range(ROWS))


def test_a_row_a_parser_refused_gets_every_reason_but_none_for_the_value_it_could_not_read():
    """The parser names the value it could not read (`gpu_count 'x' is not a number`); the contract
    then judges every other value of the row, but does not call the unread one empty as well."""
    frame = pl.DataFrame({"hostname": ["", "a"], "gpu_count": pl.Series([None, 99], dtype=pl.Int32),
                          "raw": ["x", "y"]})
    unread = {"gpu_count": pl.col("raw") == "x"}
    parser = [(pl.col("raw") == "x", pl.lit("gpu_count 'x' is not a number"))]
    _, rejects = split_by_contract(
        frame, landing.InventoryNode, source="t", file="f", staged_columns=["hostname"], raw_columns=["raw"],
        row_ref=pl.lit("r"), checks=parser, unread=unread,
    )
    assert rejects["reason"].to_list() == ["gpu_count 'x' is not a number; hostname is empty",
                                           "gpu_count 99 is more than 64"]
    # a parser that cannot say which values it read (a line may be no record at all) spares its rows
    _, rejects = split_by_contract(
        frame, landing.InventoryNode, source="t", file="f", staged_columns=["hostname"], raw_columns=["raw"],
        row_ref=pl.lit("r"), checks=parser,
    )
    assert rejects["reason"][0] == "gpu_count 'x' is not a number"


def test_three_problems_of_a_bill_line_are_three_reasons():
    """What the issue saw as one reason: an amount that is no number, a category that is none of
    FOCUS's, an empty amount — each named in plain words, in ops.quarantine.reason's "; "."""
    frame = pl.DataFrame({
        "ChargePeriodStart": ["2026-11-02T00:00:00Z"] * 2, "ChargePeriodEnd": ["2026-11-02T01:00:00Z"] * 2,
        "ChargeCategory": ["Refund", "Usage"], "BilledCost": ["x", "1"], "EffectiveCost": ["", "1"],
    })
    parsed = focus.from_focus_frame(memory_db(), frame, "bills/focus/b.csv", "focus")
    (reason,) = parsed.rejects["reason"].to_list()
    assert reason.split("; ") == ["BilledCost 'x' is not a number",
                                  "charge_category 'Refund' is not one of Usage, Purchase, Tax, Credit, Adjustment",
                                  "effective_cost is empty"]
    assert parsed.rows.height == 1


@pytest.mark.parametrize("column, value, reason", [
    ("gpu_count", -1, "gpu_count -1 is negative"),
    ("gpu_count", 65, "gpu_count 65 is more than 64"),
    ("gpu_count", None, None),   # nullable: no reason
    ("hostname", "", "hostname is empty"),
    ("hostname", None, "hostname is empty"),
])
def test_reasons_are_plain_words(column, value, reason):
    row = {"hostname": "a", "gpu_count": 1} | {column: value}
    frame = pl.DataFrame([row], schema={"hostname": pl.String, "gpu_count": pl.Int32})
    _, rejects = split_by_contract(frame, landing.InventoryNode, source="t", file="f", staged_columns=["hostname"],
                                   raw_columns=["hostname"], row_ref=pl.lit("r"))
    assert rejects["reason"].to_list() == ([reason] if reason else [])


def test_a_money_bound_is_worded_without_the_scale_zeros():
    rule = next(r for r in landing.RunPlan.rules() if r.column == "price_per_gpu_hour")
    assert pl.select(rule.says(pl.lit("-2.250000000000000000"))).item() == "price_per_gpu_hour -2.25 is not more than 0"
    rule = next(r for r in landing.FocusBillLine.rules() if r.column == "charge_category" and r.pandera != "not_nullable")
    assert pl.select(rule.says(pl.lit("Refund"))).item() == (
        "charge_category 'Refund' is not one of Usage, Purchase, Tax, Credit, Adjustment")


def test_a_column_of_another_type_is_a_parser_bug():
    frame = pl.DataFrame({"hostname": ["a"], "gpu_count": [1]})  # Int64, not Int32
    with pytest.raises(RuntimeError, match="gpu_count' is Int64, not Int32"):
        split_by_contract(frame, landing.InventoryNode, source="t", file="f", staged_columns=["hostname"],
                          raw_columns=["hostname"], row_ref=pl.lit("r"))


def test_rows_without_cast_failures_are_held_to_the_contract_even_with_a_null_list():
    """A parser's `_errors` list may be null for a row (no cast was tried): that row is held to the
    contract like a row whose list is empty."""
    frame = pl.DataFrame({"hostname": ["a", "b", "c"], "gpu_count": pl.Series([99, 99, 1], dtype=pl.Int32),
                          "_errors": pl.Series([None, [], ["gpu_count 'x' is not a number"]],
                                               dtype=pl.List(pl.String))})
    staged, rejects = split_by_contract(
        frame, landing.InventoryNode, source="t", file="f", staged_columns=["hostname"], raw_columns=["hostname"],
        row_ref=pl.col("hostname"),
    )
    assert dict(rejects.select("row_ref", "reason").iter_rows()) == {
        "a": "gpu_count 99 is more than 64",
        "b": "gpu_count 99 is more than 64",
        "c": "gpu_count 'x' is not a number",
    }
    assert staged.height == 0


def _sql_rules(contract: Contract) -> list[tuple[str, str, pl.Expr]]:
    """(rule, its SQL, its polars) for every column rule with a SQL form (bounds of text and numbers)."""
    found = []
    for name, column in contract.columns.items():
        try:
            sql = column.sql_fails(name)
        except TypeError:  # a DECIMAL or date bound: no set-based reader checks it in SQL yet
            continue
        found += [(f"{name} {rule.pandera}", text, rule.fails) for rule, text in zip(column.rules(name), sql)]
    return found


@pytest.mark.parametrize("contract", CONTRACTS, ids=lambda c: c.name)
def test_each_rule_in_sql_fails_exactly_the_rows_it_fails_in_polars(contract: Contract, tmp_path):
    import duckdb

    frame = _frame(contract)
    rules = _sql_rules(contract)
    if not rules:
        pytest.skip(f"{contract.name} has no rule with a SQL form")
    # read back from Parquet too, with and without nulls: the statistics of a column without nulls say
    # it has no NaN whatever it holds, and DuckDB folds isnan() by them
    full = frame.fill_null(strategy="forward").fill_null(strategy="backward")
    con = duckdb.connect()
    for rows in (frame, full):
        rows.write_parquet(tmp_path / "rows.parquet")
        for where in ("rows", f"read_parquet('{tmp_path / 'rows.parquet'}')"):
            for rule, sql, fails in rules:
                got = [row[0] for row in con.sql(f"SELECT coalesce({sql}, FALSE) FROM {where}").fetchall()]
                assert got == rows.select(fails.fill_null(False))[:, 0].to_list(), (rule, sql, where)


def test_dcgm_samples_are_bad_in_sql_exactly_where_the_contract_refuses_them(tmp_path):
    import duckdb

    contract = landing.DcgmSample
    # no nulls in the file: its statistics then hide its NaN from DuckDB (above)
    frame = _frame(contract).select(list(contract.columns))
    frame = frame.with_columns(pl.col("value").fill_null(float("nan")))
    staged, rejects = split_by_contract(
        frame.with_row_index("_row", offset=0), contract, source="test", file="f.csv", staged_columns=["_row"],
        raw_columns=["_row"], row_ref=pl.format("{}", pl.col("_row")),
    )
    refused = {int(ref) for ref in rejects["row_ref"]}
    assert refused and staged.height, "the frame has good and bad rows"
    frame.write_parquet(tmp_path / "rows.parquet")
    con = duckdb.connect()
    con.execute(f"CREATE MACRO fails({', '.join(contract.columns)}) AS {contract.sql_failed()}")
    got = con.sql(f"SELECT fails({', '.join(contract.columns)}) FROM read_parquet('{tmp_path / 'rows.parquet'}')")
    assert {i for i, (bad,) in enumerate(got.fetchall()) if bad} == refused


def test_a_row_check_without_sql_cannot_be_checked_in_sql():
    with pytest.raises(ValueError, match="RunEvent: the row check 'ts must not be in the future' has no SQL form"):
        landing.RunEvent.sql_failed()


@pytest.mark.parametrize("contract", staging.TABLES, ids=lambda c: c.name)
def test_a_staging_table_is_made_from_its_contract_with_its_types(contract: Contract):
    """Every column the contract lists is the table's, in its order, of the type DuckDB gives back as the
    contract's polars type; NOT NULL where the contract refuses a null."""
    import duckdb

    con = duckdb.connect()
    con.execute("CREATE SCHEMA staging")
    con.execute(contract.ddl())
    con.execute(contract.ddl())  # idempotent: a bootstrapped warehouse runs it again after an upgrade
    qualified = contract.table.replace("/", ".")
    assert dict(con.sql(f"SELECT * FROM {qualified}").pl().schema) == {n: c.dtype for n, c in contract.columns.items()}
    nullable = dict(con.execute("SELECT column_name, is_nullable = 'YES' FROM information_schema.columns "
                                "WHERE table_schema = 'staging' AND table_name = $t",
                                {"t": qualified.split(".")[1]}).fetchall())
    assert nullable == {n: c.nullable for n, c in contract.columns.items()}


def test_a_table_an_older_version_made_gains_the_columns_added_since():
    import duckdb

    contract = staging.DcgmGpuMinute
    con = duckdb.connect()
    con.execute("CREATE SCHEMA staging")
    con.execute("CREATE TABLE staging.stg_dcgm__gpu_minutes (_file VARCHAR NOT NULL, day DATE NOT NULL, "
                "minute_ts TIMESTAMP NOT NULL, hostname VARCHAR NOT NULL, gpu INTEGER NOT NULL, samples INTEGER NOT "
                "NULL, first_sample_ts TIMESTAMP NOT NULL, last_sample_ts TIMESTAMP NOT NULL)")
    con.execute("INSERT INTO staging.stg_dcgm__gpu_minutes VALUES ('f', DATE '2026-11-01', TIMESTAMP '2026-11-01', "
                "'n1', 0, 4, TIMESTAMP '2026-11-01', TIMESTAMP '2026-11-01 00:00:45')")
    con.execute(contract.ddl())
    row = con.sql("SELECT * FROM staging.stg_dcgm__gpu_minutes").pl()
    assert set(row.columns) == set(contract.columns)
    assert row["hostname"].to_list() == ["n1"] and row["energy_last_mj"].to_list() == [None]


def test_a_contract_of_no_table_has_no_ddl():
    with pytest.raises(ValueError, match="DcgmSample is the contract of no table"):
        landing.DcgmSample.ddl()
