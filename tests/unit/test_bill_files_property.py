"""Property (issue 22): over random bill files — bytes that are not UTF-8 in text cells, a column
named twice, amounts up to and past the per-line limit, amounts that are no number, currencies that
are not ISO 4217, no BillingCurrency column at all — no unit of landed money is lost or misread.

Either the file is refused whole, with a reason naming the file (its days are then not complete:
ops.landed_files `unreadable`, tests/e2e/test_bill_file_integrity.py), or every record is staged or
quarantined exactly once, and per day and currency staged + quarantined money is exactly the sum of
the amounts the file holds that can be read — the bill side that reconciliation compares the ledger
to. A record whose amount cannot be read is quarantined naming it, never staged. The truth here is
worked out from the generated values with Python's Decimal, not by the parser.

The parsers run on tiny files (a few lines); the pipeline itself is exercised end to end by
tests/e2e/test_bill_file_integrity.py, whose runs take about a minute each."""

from __future__ import annotations

import csv
import gzip
import io
from collections import Counter, defaultdict
from decimal import Decimal, InvalidOperation, localcontext

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.currencies import check_currency
from pipelines.ingest import focus
from tests.support.memory_db import memory_db

DAYS = ["2026-11-02", "2026-11-03"]
LIMIT = Decimal("1e12")  # docs/landing.md, "Amounts and currencies"
BASE = ["ChargePeriodStart", "ChargePeriodEnd", "ChargeCategory", "BilledCost", "EffectiveCost", "ResourceName"]

amounts = st.one_of(
    st.decimals(min_value=-LIMIT + Decimal("1e-18"), max_value=LIMIT - Decimal("1e-18"), places=18,
                allow_nan=False, allow_infinity=False).map(lambda d: format(d, "f")),
    st.integers(-10**6, 10**6).map(str),
    st.sampled_from(["999999999999.999999999999999999", "-999999999999.999999999999999999", "6e19", "1e12",
                     "abc", "1,5", "NaN", "", "1e-3"]),
)
# a text cell; bad bytes are written as lone surrogates and encoded with surrogateescape
texts = st.lists(st.sampled_from(["a", "b", "-", ",", '"', "é", "\udce9", "\udcff", "\udc80"]), max_size=6).map("".join)
currencies = st.sampled_from(["USD", "EUR", "usd", "XYZ", "dollars", "", "JPY"])


@st.composite
def bill_files(draw):
    n = draw(st.integers(1, 6))
    rows = [{"day": draw(st.sampled_from(DAYS)), "amount": draw(amounts), "name": draw(texts),
             "currency": draw(currencies)} for _ in range(n)]
    with_currency = draw(st.booleans())
    repeat = draw(st.sampled_from([None, None, "EffectiveCost", "BilledCost", "billedcost", "ResourceName"]))
    return rows, with_currency, repeat, draw(st.sampled_from(["b.csv", "b.csv.gz"]))


def _write(path, rows, with_currency, repeat) -> None:
    header = BASE + (["BillingCurrency"] if with_currency else []) + ([repeat] if repeat else [])
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    for r in rows:
        values = [f"{r['day']}T00:00:00Z", f"{r['day']}T01:00:00Z", "Usage", r["amount"], r["amount"], r["name"]]
        values += [r["currency"]] if with_currency else []
        values += ["7"] if repeat else []
        w.writerow(values)
    data = out.getvalue().encode("utf-8", "surrogateescape")
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)


def _readable(text: str) -> Decimal | None:
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        return None
    return value if value.is_finite() and abs(value) < LIMIT else None


@pytest.mark.slow
@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(bill_files())
def test_every_readable_unit_of_money_is_staged_or_quarantined_or_the_file_is_refused(tmp_path_factory, case):
    with localcontext(prec=80):  # exact: 18 decimals of sums near 1e13 are more than Decimal's 28 digits
        _check(tmp_path_factory, case)


def _check(tmp_path_factory, case) -> None:
    rows, with_currency, repeat, name = case
    path = tmp_path_factory.mktemp("bill") / name
    _write(path, rows, with_currency, repeat)
    rel = f"bills/focus/{name}"
    parsed = focus.parse(memory_db(), path, rel, default_currency="NOK")

    if repeat:  # a column named twice: which one holds the money cannot be known
        assert parsed.rows.height == 0
        (refusal,) = parsed.rejects.iter_rows(named=True)
        assert refusal["row_ref"] == "file" and refusal["reason"].startswith(f"file {rel}: column ")
        assert "appears twice" in refusal["reason"]
        return

    staged_rows = parsed.rows["_row"].to_list()
    quarantined = {int(r["row_ref"].removeprefix("row ")): r for r in parsed.rejects.iter_rows(named=True)}
    assert all(r["row_ref"].startswith("row ") for r in parsed.rejects.iter_rows(named=True)), "no line lost whole"
    assert sorted(staged_rows + list(quarantined)) == list(range(1, len(rows) + 1)), "every record exactly once"

    truth: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    for i, r in enumerate(rows, start=1):
        written = r["currency"].strip() if with_currency else ""
        currency = (written or "NOK").upper()
        value = _readable(r["amount"])
        if value is None:
            assert i in quarantined and quarantined[i]["billed_cost"] is None, (i, r)  # never staged, none invented
            continue
        truth[(r["day"], currency)] += value
        if any("\udc80" <= ch <= "\udcff" for ch in r["name"]) or (written and check_currency(written)):
            assert i in quarantined, (i, r)
        if i in quarantined:
            assert quarantined[i]["billing_currency"] == currency

    booked: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    for r in parsed.rows.iter_rows(named=True):
        booked[(str(r["charge_period_start"].date()), r["billing_currency"])] += r["billed_cost"]
    for r in quarantined.values():
        if r["billed_cost"] is not None:
            booked[(str(r["day"]), r["billing_currency"])] += r["billed_cost"]
    assert {k: v for k, v in booked.items() if v} == {k: v for k, v in truth.items() if v}
    defaulted = 0 if with_currency and all(r["currency"] for r in rows) else Counter(
        not with_currency or not r["currency"] for r in rows)[True]
    assert parsed.defaulted.get("billing_currency", {}).get("NOK", 0) == defaulted
