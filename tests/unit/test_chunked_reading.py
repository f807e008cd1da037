"""Bill files are read a chunk of whole records at a time: whatever the chunk size, the rows, the
quarantine and the payloads are those of the whole file read at once."""

import csv
import gzip
import io
import json
from decimal import Decimal

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipelines.ingest import aws_cur, chunks, focus
from tests.support.memory_db import memory_db

HEADER = ["identity/LineItemId", "lineItem/LineItemType", "lineItem/UsageStartDate", "lineItem/UsageEndDate",
          "lineItem/UnblendedCost", "lineItem/LineItemDescription", "product/sku", "pricing/term"]


def _rows(n: int) -> list[list[str]]:
    rows = []
    for i in range(n):
        description = f'line {i}, with a comma' if i % 3 else f'line {i}\nover two lines, "quoted"'
        cost = "x" if i == 17 else f"{i}.0007458096045417008"  # one unreadable amount, late in the file
        rows.append([f"id-{i % 40}" if i >= 40 else f"id-{i}", "Usage", f"2026-11-02T{i % 24:02d}:00:00Z",
                     f"2026-11-02T{i % 24:02d}:30:00Z", cost, description, f"SKU{i}", "OnDemand"])
    return rows


def _write(path, rows) -> None:
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(HEADER)
    writer.writerows(rows)
    data = text.getvalue().encode()
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)


def _comparable(parsed):
    return parsed.rows.drop("_file").sort("_row"), parsed.rejects.drop("file").sort("row_ref")


# a CSV (gzipped or not) streams through polars a number of records at a time; where polars refuses
# it, the file is cut into blocks of bytes here (`streaming=False` makes polars refuse every file)
@pytest.mark.parametrize("name,streaming,setting,size", [
    ("cur.csv", True, "CHUNK_ROWS", 1), ("cur.csv", True, "CHUNK_ROWS", 7), ("cur.csv.gz", True, "CHUNK_ROWS", 25),
    ("cur.csv", False, "CHUNK_BYTES", 64), ("cur.csv", False, "CHUNK_BYTES", 300),
    ("cur.csv.gz", False, "CHUNK_BYTES", 1500),
])
def test_any_chunk_size_reads_as_the_whole_file(tmp_path, monkeypatch, name, streaming, setting, size):
    path = tmp_path / name
    _write(path, _rows(60))  # ids repeat from row 41 on: in chunks after the first one's
    whole = aws_cur.parse(memory_db(), path, name)
    monkeypatch.setattr(chunks, setting, size)
    if not streaming:
        def refuse(*args, **kwargs):
            raise pl.exceptions.ComputeError("refused")
        monkeypatch.setattr(pl, "scan_csv", refuse)
    chunked = list(aws_cur.parse_chunks(memory_db(), path, name))
    assert len(chunked) > 1
    for a, b in zip(_comparable(whole), _comparable(aws_cur.parse(memory_db(), path, name))):
        assert a.equals(b)

    rejects = {r["row_ref"]: r for r in whole.rejects.iter_rows(named=True)}
    assert rejects["row 41"]["reason"] == "x_LineItemId 'id-0' repeats row 1"
    assert rejects["row 60"]["reason"] == "x_LineItemId 'id-19' repeats row 20"
    assert "EffectiveCost 'lineItem/UnblendedCost=x' is not a number" in rejects["row 18"]["reason"]
    # the payload is the whole CUR record, columns the mapping never reads included
    payload = json.loads(rejects["row 18"]["payload"])
    assert (payload["pricing/term"], payload["lineItem/UnblendedCost"]) == ("OnDemand", "x")
    assert payload["lineItem/LineItemDescription"] == 'line 17, with a comma'
    assert whole.rows.height == 60 - 20 - 1


@pytest.mark.parametrize("records,broken_at", [(30, 21), (60_000, 50_000)])
def test_a_broken_quote_in_a_later_chunk_costs_its_line(tmp_path, monkeypatch, records, broken_at):
    """Polars' streaming reader stops at the broken quote (the big file: after yielding about 49,000
    records); the rest is read block by block, and only the broken line is lost."""
    path = tmp_path / "f.csv"
    lines = ["ChargePeriodStart,ChargePeriodEnd,ChargeCategory,BilledCost,EffectiveCost,x_LineItemId"]
    lines += [f"2026-11-02T00:00:00Z,2026-11-02T01:00:00Z,Usage,{i},{i},l{i}" for i in range(1, records)]
    lines.insert(broken_at, '2026-11-02T00:00:00Z,2026-11-02T01:00:00Z,Usage,5,5,"broken')
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(chunks, "CHUNK_BYTES", 400 if records < 100 else 200_000)
    monkeypatch.setattr(chunks, "CHUNK_ROWS", 4 if records < 100 else 1_000)
    parsed = focus.parse(memory_db(), path, "f.csv")
    assert len(list(focus.parse_chunks(memory_db(), path, "f.csv"))) > 2
    (reject,) = parsed.rejects.iter_rows(named=True)
    assert (reject["row_ref"], reject["reason"]) == (f"line {broken_at + 1}", "unreadable CSV line: unbalanced quote")
    assert parsed.rows["line_id"].to_list() == [f"l{i}" for i in range(1, records)]
    assert parsed.rows["_row"].to_list() == [r for r in range(1, records + 1) if r != broken_at]


def test_parquet_in_batches_reads_as_the_whole_file(tmp_path, monkeypatch):
    n = 25
    table = pa.table({
        "identity_line_item_id": [f"p{i % 20}" for i in range(n)],
        "line_item_line_item_type": ["Usage"] * n,
        "line_item_usage_start_date": pa.array([f"2026-11-02T{i % 24:02d}:00:00+00:00" for i in range(n)])
        .cast(pa.timestamp("us", tz="UTC")),
        "line_item_usage_end_date": pa.array([f"2026-11-02T{i % 24:02d}:30:00+00:00" for i in range(n)])
        .cast(pa.timestamp("us", tz="UTC")),
        "line_item_unblended_cost": pa.array([i * 0.1 for i in range(n)], pa.float64()),
        "pricing_term": ["OnDemand"] * n,
    })
    path = tmp_path / "cur.parquet"
    pq.write_table(table, path)
    whole = aws_cur.parse(memory_db(), path, "cur.parquet")
    monkeypatch.setattr(chunks, "CHUNK_ROWS", 4)
    chunked = aws_cur.parse(memory_db(), path, "cur.parquet")
    for a, b in zip(_comparable(whole), _comparable(chunked)):
        assert a.equals(b)
    assert chunked.rejects["row_ref"].to_list() == [f"row {i}" for i in range(21, 26)]
    assert json.loads(chunked.rejects["payload"][0])["pricing_term"] == "OnDemand"
    assert chunked.rows.filter(pl.col("line_id") == "p3")["effective_cost"].item() == Decimal(repr(3 * 0.1))


def test_a_summary_reads_less_and_decides_the_same(tmp_path):
    """inspect's reading leaves out the columns that only describe a line: what is staged, what is
    quarantined and why, and every amount stay the same."""
    from pipelines.landing.parsed import combine
    from tests.unit.test_aws_cur import _write_csv

    for flavour in (0, 1):
        path = _write_csv(tmp_path / f"cur{flavour}.csv", flavour)
        full = aws_cur.parse(memory_db(), path, "cur.csv")
        summary = combine(aws_cur.parse_chunks(memory_db(), path, "cur.csv", descriptive=False))
        decided = ["_row", "line_id", "billing_currency", "charge_period_start", "charge_period_end", "charge_category",
                   "effective_cost", "effective_cost_rounding", "billed_cost", "billed_cost_rounding", "tags"]
        assert full.rows.select(decided).sort("_row").equals(summary.rows.select(decided).sort("_row"))
        assert summary.rows["service_name"].null_count() == summary.rows.height  # not read
        reasons = ["row_ref", "reason", "effective_cost", "billed_cost"]
        assert full.rejects.select(reasons).sort("row_ref").equals(summary.rejects.select(reasons).sort("row_ref"))
