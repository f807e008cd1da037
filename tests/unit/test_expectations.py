"""The Great Expectations suites on the marts catch what they are there to catch."""

import pandas as pd

from pipelines.lib.dagster_glue.expectations import MartExpectations, validate_frame

SPEC = MartExpectations("marts/fct_cost_daily", key=("day", "team", "project", "category"),
                        non_negative=("gpu_seconds",), category_column="category", must_have_rows=True)


def _frame(**overrides):
    rows = [
        {"day": "2026-11-02", "team": "a", "project": "p", "category": "productive", "gpu_seconds": 10.0},
        {"day": "2026-11-02", "team": "a", "project": "p", "category": "idle_unallocated", "gpu_seconds": 5.0},
    ]
    rows[1].update(overrides)
    return pd.DataFrame(rows)


def test_a_clean_day_passes():
    assert validate_frame(SPEC, _frame()) == (True, {})


def test_each_expectation_fails_on_its_fault():
    ok, failed = validate_frame(SPEC, _frame(gpu_seconds=-1.0))
    assert not ok and failed == {"expect_column_values_to_be_between(gpu_seconds)": 1}
    ok, failed = validate_frame(SPEC, _frame(category="lunch"))
    assert not ok and failed == {"expect_column_values_to_be_in_set(category)": 1}
    ok, failed = validate_frame(SPEC, _frame(category="productive"))
    assert not ok and list(failed) == ["expect_compound_columns_to_be_unique(['day', 'team', 'project', 'category'])"]
    ok, failed = validate_frame(SPEC, _frame().iloc[0:0])
    assert not ok and "expect_table_row_count_to_be_between()" in failed
