"""Every line of a team report says what it means, in one sentence from one place
(models/ledger_categories.py): each waste line beside it, in the HTML and the Markdown, every category
the team has cost in and _unallocated in the report's glossary, and the report of _unallocated itself
opens with what it is. Rendered from a report built here, so no pipeline runs."""

from __future__ import annotations

import html
import re
from datetime import date
from decimal import Decimal

import pytest

from models import ledger_categories as lc
from pipelines.lib.dagster_glue.expectations import CATEGORIES as CHECKED_CATEGORIES
from pipelines.reports import html_page, markdown
from pipelines.reports.data import JOB_KINDS, Report, ReportData

DAY = date(2026, 11, 2)


def _report(team: str, categories: list[str], project: str = "p1") -> Report:
    scope = dict(team=team, start=DAY, end=DAY, label=DAY.isoformat(), trend_start=DAY, trend_end=DAY,
                 data_first_day=DAY, data_last_day=DAY)
    cost = {c: (Decimal(10 + i), Decimal(10 + i), 3600.0 if lc.BY_NAME[c].is_gpu else 0.0)
            for i, c in enumerate(categories)}
    section = ReportData(**scope, currency="USD", by_category=cost, daily=[], heatmap=[], heatmap_nodes_total=0,
                         idle_nodes=[], jobs={k: [] for k in JOB_KINDS}, interruptions=[], rerun_daily=[], runs=[],
                         run_budgets=[])
    ledger = [(DAY, team, project, c, "USD", g, e, b) for c, (e, b, g) in cost.items()]
    return Report(**scope, sections=[section], ledger=ledger)


def test_every_category_the_ledger_can_emit_has_one_sentence():
    # the data checks refuse any other category in the marts, so these are all a report can show
    assert set(CHECKED_CATEGORIES) == set(lc.NAMES) == set(lc.BY_NAME)
    for c in lc.CATEGORIES:
        assert c.help[:1].isupper() and c.help.endswith("."), c.name
    assert lc.UNALLOCATED_HELP.startswith(f"{lc.UNALLOCATED} is ") and lc.UNALLOCATED_HELP.endswith(".")
    for c in lc.CATEGORIES:   # one sentence: no full stop before its end
        assert not re.search(r"\.\s", c.help), c.name


def _waste_rows(page: str) -> dict[str, str]:
    return dict(re.findall(r'<tr class="[^"]*" data-kind="(\w+)">(.*?)</tr>', page, flags=re.S))


def test_each_waste_line_says_what_it_means_beside_it():
    report = _report("ml", list(lc.NAMES))
    page, md = html_page.render(report), markdown.render(report)
    rows = _waste_rows(page)
    assert set(rows) == set(lc.WASTE)
    for kind in lc.WASTE:
        c = lc.BY_NAME[kind]
        assert f'<div class="help">{html.escape(c.help)}</div>' in rows[kind], kind
        # Markdown: right under the waste table, before the next table
        under = re.split(r"^#+ Where the waste went$", md, flags=re.M)[1].split("# Hung or idle jobs", 1)[0]
        assert f"- **{markdown.md(c.label)}**: {markdown.md(c.help)}" in under, kind


def test_the_glossary_names_every_category_the_team_has_cost_in_and_unallocated():
    report = _report("ml", ["productive", "idle_unallocated", "storage", "tax", "unused_commitment"],
                     project=lc.UNALLOCATED)
    page, md = html_page.render(report), markdown.render(report)
    footer = page.split("<footer>", 1)[1]
    glossary = md.split("## What the lines mean\n", 1)[1]
    shown = [c for c in lc.CATEGORIES if c.is_gpu or c.name in ("storage", "tax", "unused_commitment")]
    for c in shown:
        assert f"<dt>{html.escape(c.label)}</dt><dd>{html.escape(c.help)}</dd>" in footer, c.name
        assert f"- **{markdown.md(c.label)}**: {markdown.md(c.help)}" in glossary, c.name
    for c in set(lc.CATEGORIES) - set(shown):   # a category with no cost is not explained
        assert f"<dt>{html.escape(c.label)}</dt>" not in footer and f"**{markdown.md(c.label)}**" not in glossary
    assert html.escape(lc.UNALLOCATED_HELP) in footer and markdown.md(lc.UNALLOCATED_HELP) in glossary


@pytest.mark.parametrize("team, says", [(lc.UNALLOCATED, True), ("ml", False)])
def test_the_report_of_unallocated_opens_with_what_it_is(team, says):
    report = _report(team, ["idle_unallocated", "unattributed"], project=lc.UNALLOCATED)
    page, md = html_page.render(report), markdown.render(report)
    note = f'<p class="summary" data-note="team">{html.escape(lc.UNALLOCATED_HELP)}</p>'
    assert (note in page.split("<section", 1)[0]) is says
    assert (md.split("\n\n")[2] == markdown.md(lc.UNALLOCATED_HELP)) is says
