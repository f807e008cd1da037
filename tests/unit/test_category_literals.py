"""sql/ names no ledger category: it takes each by what it is, from marts.dim_ledger_categories (is_gpu,
is_waste, is_idle, precedence, badput_kind, allocation, is_unplaced), so a new category is its
declaration (models/ledger_categories.py), its rule and its truth. Two forms may name one, because the
name is what they are:
- a pivot into a column named by the category (`FILTER (category = 'rerun_loss') AS rerun_loss_gpu_seconds`):
  the column is the category's by name (docs/tables.md), so renaming one renames the other;
- an interval rule of sql/intermediate/int_gpu_seconds/10_slot_segments.sql: a rule is its category's own
  ("this stretch is allocated_idle"), checked below against the declaration.
Anything else must be in ALLOWED, with its reason."""

import re
from pathlib import Path

from models.ledger_categories import CATEGORIES, NAMES

SQL = Path(__file__).resolve().parents[2] / "sql"
RULES_FILE = "intermediate/int_gpu_seconds/10_slot_segments.sql"
RULES_START, RULES_END = "-- interval rules:", "-- end of interval rules"
# the parts of a rerun loss a rule may give beside its category (int_gpu_seconds' rerun_part)
RERUN_PARTS = {"lost", "restart"}

# (file under sql/, literal) → how many times it may appear, and why it is no category
ALLOWED = {
    # a storage object's kind (checkpoint, the policy's kinds, else other): not the ledger category `other`
    ("intermediate/int_storage_objects.sql", "other"): 1,
}

LITERAL = re.compile(r"'([^']*)'")


def _code(text: str) -> str:
    """The text without its comments (no statement of sql/ has `--` inside a string that matters here)."""
    return re.sub(r"--[^\n]*", "", text)


def _category(literal: str) -> str | None:
    name = literal.split(":", 1)[0]   # rerun_loss:restart is rerun_loss's
    return name if name in NAMES else None


def _is_pivot(line: str, end: int, name: str) -> bool:
    """The literal ending at `end` compares a category in a FILTER/CASE whose column is named by it."""
    # the first AS after it names the column: FILTER (category = 'x'), 0)::DOUBLE AS x_gpu_seconds
    return re.match(rf"\)(?:(?!\bAS\b)[^'])*\bAS\s+\"?{name}(_\w*)?\"?\s*(,|$)", line[end:]) is not None


def _literals(text: str) -> list[tuple[str, str]]:
    """(category, line) of every literal naming a category, pivots left out."""
    found = []
    for line in _code(text).splitlines():
        for m in LITERAL.finditer(line):
            name = _category(m.group(1))
            if name and not _is_pivot(line, m.end(), name):
                found.append((name, line.strip()))
    return found


def _rules_block(text: str) -> tuple[int, int]:
    start, end = text.index(RULES_START), text.index(RULES_END)
    assert start < end
    return start, end


def test_sql_names_no_category_outside_pivots_rules_and_the_allow_list():
    counts: dict[tuple[str, str], list[str]] = {}
    for path in sorted(SQL.rglob("*.sql")):
        rel = path.relative_to(SQL).as_posix()
        text = path.read_text()
        if rel == RULES_FILE:
            start, end = _rules_block(text)
            text = text[:start] + text[end:]
        for name, line in _literals(text):
            counts.setdefault((rel, name), []).append(line)
    unexpected = {k: v for k, v in counts.items() if len(v) > ALLOWED.get(k, 0)}
    assert not unexpected, (
        "SQL names a ledger category: take it by its attributes in marts.dim_ledger_categories instead "
        f"(or add a reason to ALLOWED): {unexpected}")
    stale = {k: n for k, n in ALLOWED.items() if len(counts.get(k, [])) < n}
    assert not stale, f"ALLOWED lists literals sql/ no longer has: {stale}"


def test_every_interval_rule_is_a_declared_category_and_every_ranked_category_has_one():
    text = (SQL / RULES_FILE).read_text()
    start, end = _rules_block(text)
    literals = {m.group(1) for m in LITERAL.finditer(_code(text[start:end]))}
    rules = {lit for lit in literals if lit not in RERUN_PARTS}
    assert rules <= set(NAMES), f"a rule names no declared category: {sorted(rules - set(NAMES))}"
    ranked = {c.name for c in CATEGORIES if c.precedence is not None}
    assert rules == ranked, (f"rules without a precedence: {sorted(rules - ranked)}; "
                             f"categories with a precedence and no rule: {sorted(ranked - rules)}")


def test_the_check_sees_a_category_literal_and_lets_a_pivot_by():
    assert _literals("WHERE category = 'productive'") == [("productive", "WHERE category = 'productive'")]
    assert _literals("x -- category = 'productive'") == []
    assert _literals("sum(s) FILTER (category = 'rerun_loss') AS rerun_loss_gpu_seconds,") == []
    assert _literals("sum(s) FILTER (category = 'rerun_loss') AS lost_seconds,") != []
    assert _literals("coalesce(sum(s) FILTER (c = 'productive'), 0)::DOUBLE AS productive,") == []
    assert _literals("coalesce(sum(s) FILTER (c = 'productive'), 0) AS busy, x AS productive_s") != []
    assert _literals("CASE WHEN category = 'rerun_loss:restart' THEN 1 END") != []
