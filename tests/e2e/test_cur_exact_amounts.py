"""AWS writes CUR costs as float64 text (`0.0007458096045417008`, `1.2E-7`) and CUR 2.0 Parquet as
DOUBLE. Such lines are staged, not refused: stored at 1e-18 with their rounding, and the ledger's
bill side plus the rounding it records is exactly what the files say, checked against Python's own
decimal read from the file text (Parquet: from repr(float))."""

import csv
import json
import subprocess
import sys
from datetime import date
from decimal import ROUND_HALF_EVEN, Decimal, localcontext
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from pipelines.ingest import aws_cur
from tests.support.pipeline import run_pipeline
from tests.support.memory_db import memory_db

UNIT, HALF = Decimal("1e-18"), Decimal("0.5e-18")
DAY, SPAN_START, SPAN_END = date(2026, 11, 2), date(2026, 11, 3), date(2026, 11, 4)

LEGACY = ["identity/LineItemId", "identity/TimeInterval", "bill/PayerAccountId", "bill/BillingPeriodStartDate",
          "bill/BillingPeriodEndDate", "lineItem/UsageAccountId", "lineItem/LineItemType", "lineItem/UsageStartDate",
          "lineItem/UsageEndDate", "lineItem/ProductCode", "lineItem/UsageAmount", "lineItem/CurrencyCode",
          "lineItem/UnblendedCost"]
# amounts as AWS writes them: float64 round-trip text, up to 19 decimals, exponents
CSV_AMOUNTS = ["0.0007458096045417008", "1.2E-7", "3.3333333333333335", "-0.00000001", "12.5", "5e+3",
               "0.00000000000000000015", "0.1234567890123456789"]
PARQUET_AMOUNTS = [0.0007458096045417008, 1.2e-7, 3.3333333333333335, -1e-08, 1.1e-19, 2.675, 1e-5]
SPANNING = "1.0000000000000000006"  # 23:00 → 02:00 the next day: its rounding belongs to its first hour


def _exact(text: str) -> Decimal:
    with localcontext(prec=200):
        return Decimal(text)


def _rounding(text: str) -> Decimal:
    with localcontext(prec=200):
        exact = Decimal(text)
        return exact - exact.quantize(UNIT, rounding=ROUND_HALF_EVEN)


def _hour(day: date, h: int) -> str:
    return f"{day.isoformat()}T{h:02d}:00:00Z"


def _write_csv(path: Path) -> None:
    rows = []
    for i, amount in enumerate(CSV_AMOUNTS):
        rows.append([f"csv-{i}", f"{_hour(DAY, i)}/{_hour(DAY, i + 1)}", "111122223333", "2026-11-01T00:00:00Z",
                     "2026-12-01T00:00:00Z", "444455556666", "Usage", _hour(DAY, i), _hour(DAY, i + 1), "AmazonS3",
                     "1", "USD", amount])
    rows.append(["span", f"{_hour(SPAN_START, 23)}/{_hour(SPAN_END, 2)}", "111122223333", "2026-11-01T00:00:00Z",
                 "2026-12-01T00:00:00Z", "444455556666", "Usage", _hour(SPAN_START, 23), _hour(SPAN_END, 2),
                 "AmazonS3", "3", "USD", SPANNING])
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(LEGACY)
        writer.writerows(rows)


def _write_parquet(path: Path) -> None:
    """CUR 2.0 as AWS writes Parquet: DOUBLE amounts, zoned timestamps."""
    n = len(PARQUET_AMOUNTS)
    starts = [f"{DAY.isoformat()}T{10 + i:02d}:00:00+00:00" for i in range(n)]
    ends = [f"{DAY.isoformat()}T{11 + i:02d}:00:00+00:00" for i in range(n)]
    stamp = pa.timestamp("us", tz="UTC")
    table = pa.table({
        "identity_line_item_id": [f"pq-{i}" for i in range(n)],
        "identity_time_interval": [f"{s}/{e}" for s, e in zip(starts, ends)],
        "line_item_line_item_type": ["Usage"] * n,
        "line_item_usage_start_date": pa.array(starts).cast(stamp),
        "line_item_usage_end_date": pa.array(ends).cast(stamp),
        "line_item_product_code": ["AmazonS3"] * n,
        "line_item_currency_code": ["USD"] * n,
        "line_item_unblended_cost": pa.array(PARQUET_AMOUNTS, pa.float64()),
    })
    pq.write_table(table, path)


def _landing(root: Path) -> Path:
    bills = root / "landing" / "bills" / "aws_cur"
    bills.mkdir(parents=True)
    _write_csv(bills / "legacy.csv")
    _write_parquet(bills / "cur2.parquet")
    return root / "landing"


def test_float64_amounts_are_staged_with_their_rounding(tmp_path):
    landing = _landing(tmp_path)
    texts = {f"csv-{i}": t for i, t in enumerate(CSV_AMOUNTS)} | {"span": SPANNING}
    texts |= {f"pq-{i}": repr(f) for i, f in enumerate(PARQUET_AMOUNTS)}
    staged = {}
    for name in ("legacy.csv", "cur2.parquet"):
        parsed = aws_cur.parse(memory_db(), landing / "bills" / "aws_cur" / name, f"bills/aws_cur/{name}")
        assert parsed.rejects.height == 0, parsed.rejects["reason"].to_list()
        for row in parsed.rows.iter_rows(named=True):
            staged[row["line_id"].split("/")[0]] = row
    assert set(staged) == set(texts)
    for line, text in texts.items():
        row = staged[line]
        for measure in ("effective_cost", "billed_cost"):
            assert row[measure] + row[f"{measure}_rounding"] == _exact(text), (line, text)
            assert row[measure] == _exact(text).quantize(UNIT, rounding=ROUND_HALF_EVEN), (line, text)
            assert abs(row[f"{measure}_rounding"]) <= HALF
    assert any(row["effective_cost_rounding"] != 0 for row in staged.values())  # the rounding is really there


def test_the_ledger_records_the_rounding_and_reconciles_exactly(tmp_path):
    landing = _landing(tmp_path)
    day_truth = sum((_exact(t) for t in CSV_AMOUNTS), Decimal(0)) + sum((_exact(repr(f)) for f in PARQUET_AMOUNTS),
                                                                       Decimal(0))
    day_rounding = sum((_rounding(t) for t in CSV_AMOUNTS), Decimal(0)) + sum(
        (_rounding(repr(f)) for f in PARQUET_AMOUNTS), Decimal(0))

    report = json.loads(subprocess.run([sys.executable, "-m", "pipelines.cli", "inspect", "--landing", str(landing),
                                        "--json"], capture_output=True, text=True, check=True).stdout)["aws_cur"]
    assert report["quarantined"] == 0 and report["currencies"] == ["USD"]
    assert Decimal(report["effective_cost"]) == Decimal(report["billed_cost"]) == day_truth + _exact(SPANNING)
    assert Decimal(report["rounding"]["effective_cost"]) == day_rounding + _rounding(SPANNING)

    days = [DAY, SPAN_START, SPAN_END]
    assert not run_pipeline(landing, tmp_path / "w.duckdb", None, days)
    with duckdb.connect(str(tmp_path / "w.published.duckdb"), read_only=True) as con:
        recon = {r[0]: r[1:] for r in con.execute(
            """SELECT day, bill_effective_cost, rounding_effective_cost, bill_billed_cost, rounding_billed_cost,
                      difference_effective_cost, difference_billed_cost, quarantined_lines
               FROM finance.reconciliation_daily ORDER BY day""").fetchall()}
    with duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True) as con:
        staged_rounding = con.execute(
            "SELECT max(abs(effective_cost_rounding)), max(abs(billed_cost_rounding)) FROM staging.stg_focus__bill_lines"
        ).fetchall()[0]
        first_piece = con.execute(
            """SELECT hour_ts, effective_cost_rounding FROM intermediate.int_bill_line_hours
               WHERE line_key LIKE '%legacy.csv#9' ORDER BY hour_ts""").fetchall()
    assert set(recon) == set(days)
    for day, (bill_e, round_e, bill_b, round_b, diff_e, diff_b, quarantined) in recon.items():
        assert (diff_e, diff_b, quarantined) == (0, 0, 0), day  # allocated = billed, exactly, on stored amounts
    bill_e, round_e, bill_b, round_b = recon[DAY][:4]
    assert bill_e + round_e == day_truth and bill_b + round_b == day_truth
    assert round_e == day_rounding != 0
    # the spanning line: its rounding on the day of its first hour, none on the next; both days together
    # are exactly what the file says
    assert recon[SPAN_START][1] == _rounding(SPANNING) and recon[SPAN_END][1] == 0
    assert sum(recon[d][0] + recon[d][1] for d in (SPAN_START, SPAN_END)) == _exact(SPANNING)
    assert all(r <= HALF for r in staged_rounding)
    # its three hour pieces: the rounding whole on the first (the hour its charge period starts in)
    assert [r for _, r in first_piece] == [_rounding(SPANNING), 0, 0]
