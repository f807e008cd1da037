"""models/currencies.py: the ISO 4217 codes a config value or a bill line may name, and the one check
that says what is wrong with any other value."""

from __future__ import annotations

import pytest

from models.currencies import ISO_4217, NOT_A_CURRENCY, WITHDRAWN, check_currency


def test_the_list_is_iso_4217_active_codes():
    assert {"USD", "EUR", "JPY", "GBP", "CHF", "CNY", "INR", "XCG", "ZWG", "SLE"} <= ISO_4217
    assert all(len(c) == 3 and c.isascii() and c.isalpha() and c.isupper() for c in ISO_4217)
    assert not ISO_4217 & set(WITHDRAWN) and not ISO_4217 & set(NOT_A_CURRENCY)
    assert set(WITHDRAWN.values()) <= ISO_4217
    assert 170 <= len(ISO_4217) <= 185


@pytest.mark.parametrize("code, words", [
    ("usd", "did you mean USD?"),
    (" EUR", "did you mean EUR?"),
    ("XYZ", "'XYZ' is not an ISO 4217 currency code"),
    ("UDS", "did you mean USD?"),
    ("BGN", "withdrawn from ISO 4217 (replaced by EUR)"),
    ("XTS", "code reserved for testing"),
    ("DOLLARS", "is not an ISO 4217 currency code"),
    (840, "840 is not a currency code"),
    (None, "None is not a currency code"),
])
def test_anything_else_is_a_sentence_naming_the_value(code, words):
    problem = check_currency(code)
    assert problem is not None and words in problem, problem


def test_a_valid_code_has_no_problem():
    assert [check_currency(c) for c in ("USD", "EUR", "JPY")] == [None, None, None]
