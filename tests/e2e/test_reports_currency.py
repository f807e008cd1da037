"""The team waste report when a team's costs were billed in several currencies: a section per currency,
each with its own totals, money printed in its currency, and no figure anywhere that adds two
currencies. Expected amounts are worked out by hand below (to the cent) and checked against the marts.

Day 2026-11-02. Team ml (project p1) has three bills; team research (p2) shares the USD one:
- u1 (pool-a of ml), USD (usd.csv) at $36.00 an hour, 24 h = $864.00. Job 1001 of run r1 00:00–06:00
  NODE_FAIL after a checkpoint at 05:00; job 2002 08:00–10:00 FAILED and nothing resumed it; the rest
  of the day no job: idle, charged to the pool's owner ml.
- u2 (pool-c of research), USD at $10.00 an hour = $240.00, job 4001 of research busy 00:00–12:00.
- usd.csv also has $8.64 of tax, spread by USD pre-tax cost: ml 8.64 · 864 / 1104 = $6.76 (to the
  cent), so ml's USD total is $870.76 and research's $247.88.
- e1 (pool-b of ml), EUR (eur.csv) at €30.00 an hour = €720.00. Job 1002 resumes run r1 06:30–12:00
  from the 05:00 checkpoint (its restart until the first step is rerun loss billed in EUR while the
  lost part of the interruption was billed in USD); job 2001 13:00–18:00 holds the GPUs at 0 %
  (hung, TIMEOUT). eur.csv also has €12.34 of storage tagged p1: ml's EUR total is €732.34.
- nok.csv: 1,234.50 NOK of storage tagged p1: ml's NOK total is 1,234.50 NOK, no GPU cost at all.
- x1 (pool-a of ml) is on no bill: job 5001 there FAILED 14:00–15:00 has no billed cost and no
  currency, so it shows once, in the first currency's (EUR) section.

Added across currencies these would be 870.76 + 732.34 + 1234.50 = 2837.60 (and pairwise 1603.10,
2105.26, 1966.84): numbers no page may show.

The config has one exchange rate, EUR → USD 1.08 for 2026-11, and none for NOK: in USD the EUR total is
732.34 × 1.08 = $790.9272 and its waste 570 × 1.08 = $615.60; the USD total converts at 1; so the total
in USD is $790.93 + $870.76 = $1,661.69 (exactly 790.9272 + 870.7617…) beside 1,234.50 NOK with no
rate, and the waste $1,299.60 (NOK has none, and zero converts to zero at any rate).
"""

from __future__ import annotations

import csv
import html
import io
import re
import shutil
from datetime import date
from decimal import ROUND_HALF_UP
from decimal import Decimal as D
from itertools import combinations

import duckdb
import pytest

from pipelines.reports import period_of, write_team_report
from pipelines.reports.data import load
from pipelines.reports.fmt import money, money_short
from tests.support.pipeline import run_pipeline
from tests.support.scenario_builder import Activity, Landing, utc

DAY = date(2026, 11, 2)
TEAM = "ml"
RUN_MODEL = {"params": 6.7e9, "active_params": 6.7e9, "layers": 32, "heads": 32, "head_dim": 128, "seq_len": 4096}
TOTAL = {"EUR": D("732.34"), "NOK": D("1234.50"), "USD": D("870.76")}   # ml's, by hand (see above)
SHOWN_TOTAL = {"EUR": "€732.34", "NOK": "1,234.50 NOK", "USD": "$870.76"}
WASTE = ("idle_unallocated", "allocated_idle", "failed_job", "rerun_loss", "unmonitored")
GPU = WASTE + ("productive",)


@pytest.fixture(scope="module")
def ledger(tmp_path_factory):
    L = Landing(tmp_path_factory.mktemp("report_currency"))
    L.config = {"teams": {"ml": {"projects": ["p1"]}, "research": {"projects": ["p2"]}},
                "slurm_accounts": {"a1": "p1", "a2": "p2"},
                "fx": {"reporting_currency": "USD",
                       "rates": [{"currency": "EUR", "month": "2026-11", "rate": "1.08", "source": "test rate"}]}}
    L.node("u1", pool="pool-a", team="ml")
    L.node("u2", pool="pool-c", team="research")
    L.node("e1", pool="pool-b", team="ml")
    L.node("x1", pool="pool-a", team="ml")   # on no bill: its job has no billed cost, no currency
    L.node_hours("u1", utc(2026, 11, 2), 24, D("36.00"), currency="USD", file="usd.csv")
    L.node_hours("u2", utc(2026, 11, 2), 24, D("10.00"), currency="USD", file="usd.csv")
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Tax", D("8.64"), currency="USD", file="usd.csv")
    L.node_hours("e1", utc(2026, 11, 2), 24, D("30.00"), currency="EUR", file="eur.csv")
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Usage", D("12.34"), service="Storage", tags={"project": "p1"},
           resource_id="vol-eur", resource_type="volume", currency="EUR", file="eur.csv")
    L.line(utc(2026, 11, 2), utc(2026, 11, 3), "Usage", D("1234.50"), service="Storage", tags={"project": "p1"},
           resource_id="vol-nok", resource_type="volume", currency="NOK", file="nok.csv")

    L.job("c1", "1001", account="a1", start="2026-11-02T00:00:00", end="2026-11-02T06:00:00", state="NODE_FAIL",
          host="u1", comment="run_id=r1", name="pretrain-7b")
    L.job("c1", "1002", account="a1", start="2026-11-02T06:30:00", end="2026-11-02T12:00:00", state="COMPLETED",
          host="e1", comment="run_id=r1", name="pretrain-7b")
    L.job("c1", "2002", account="a1", start="2026-11-02T08:00:00", end="2026-11-02T10:00:00", state="FAILED",
          host="u1", exit_code="1:0", name="eval-sweep")
    L.job("c1", "2001", account="a1", start="2026-11-02T13:00:00", end="2026-11-02T18:00:00", state="TIMEOUT",
          host="e1", exit_code="0:1", name="notebook", user="bob")
    L.job("c1", "5001", account="a1", start="2026-11-02T14:00:00", end="2026-11-02T15:00:00", state="FAILED",
          host="x1", exit_code="2:0", name="unbilled")
    L.job("c1", "4001", account="a2", start="2026-11-02T00:00:00", end="2026-11-02T12:00:00", state="COMPLETED",
          host="u2", user="carol", name="research-job")
    L.telemetry("u1", [DAY], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 6), "1001", True),
                              Activity(utc(2026, 11, 2, 8), utc(2026, 11, 2, 10), "2002", True)])
    L.telemetry("e1", [DAY], [Activity(utc(2026, 11, 2, 6, 30), utc(2026, 11, 2, 12), "1002", True),
                              Activity(utc(2026, 11, 2, 13), utc(2026, 11, 2, 18), "2001", False)])
    L.telemetry("x1", [DAY], [Activity(utc(2026, 11, 2, 14), utc(2026, 11, 2, 15), "5001", True)])
    L.telemetry("u2", [DAY], [Activity(utc(2026, 11, 2, 0), utc(2026, 11, 2, 12), "4001", True)])

    L.event("r1", "run_config", utc(2026, 11, 2, 0, 1), job_id="1001", project="p1", model=RUN_MODEL, dtype="bf16")
    for h in range(1, 6):
        L.event("r1", "step", utc(2026, 11, 2, h), job_id="1001", step=100 * h, tokens=300_000_000)
    L.event("r1", "checkpoint_saved", utc(2026, 11, 2, 5), job_id="1001", step=500)
    L.event("r1", "step", utc(2026, 11, 2, 5, 30), job_id="1001", step=550, tokens=150_000_000)   # rolled back
    L.event("r1", "checkpoint_loaded", utc(2026, 11, 2, 6, 40), job_id="1002", step=500)
    for h, step in ((7, 510), (9, 600), (11, 700)):
        L.event("r1", "step", utc(2026, 11, 2, h), job_id="1002", step=step, tokens=300_000_000)
    L.write()
    assert not run_pipeline(L.landing, L.warehouse, L.config_path, [DAY])
    return L


@pytest.fixture(scope="module")
def reports(ledger, tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("report_currency_out")
    # the published file, as `gpuledger report` reads it: the marts and the config's exchange rates
    con = duckdb.connect(str(ledger.warehouse.with_name("warehouse.published.duckdb")), read_only=True)
    month = write_team_report(con, TEAM, *period_of(None, "2026-11"), out)
    day = write_team_report(con, TEAM, *period_of("2026-11-02", None), out)
    yield {"con": con, "month": month, "day": day, "html": month[0].read_text(), "md": month[1].read_text(),
           "csv": month[2].read_text()}
    con.close()


# --- reading the page ---------------------------------------------------------------------------

def _shown(text: str) -> tuple[str, D]:
    """("EUR", Decimal("1234.56")) from "€1,234.56", "−$74.05" or "1,234.50 NOK"."""
    text = html.unescape(text).strip()
    sign = -1 if text.startswith("\u2212") else 1
    text = text.lstrip("\u2212")
    symbols = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}
    if text[:1] in symbols:
        return symbols[text[0]], sign * D(text[1:].replace(",", ""))
    number, code = text.split(" ")
    return code, sign * D(number.replace(",", ""))


def _cents(value: D) -> D:
    return value.quantize(D("0.01"), rounding=ROUND_HALF_UP)


def _blocks(page: str) -> dict[str, str]:
    """Each currency's part of the page: from its "Billed in" block to the next one (or the footer)."""
    starts = [(m.start(), m.group(1)) for m in re.finditer(r'<div class="currency" data-currency="(\w+)">', page)]
    ends = [s for s, _ in starts[1:]] + [page.index("<footer>")]
    return {c: page[s:e] for (s, c), e in zip(starts, ends)}


def _md_blocks(text: str) -> dict[str, str]:
    parts = re.split(r"^## Billed in (\w+)\n", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def _marts(con, sql: str) -> dict:
    """{key: value} of a query whose last column is the value (the key: the other columns, or the one)."""
    params = {"team": TEAM, "start": date(2026, 11, 1), "end": date(2026, 11, 30)}
    rows = con.execute(sql, {k: v for k, v in params.items() if f"${k}" in sql}).fetchall()
    return {tuple(r[:-1]) if len(r) > 2 else r[0]: r[-1] for r in rows}


def _by_category(con) -> dict[tuple[str, str], D]:
    return _marts(con, "SELECT billing_currency, category, sum(effective_cost) FROM marts.fct_cost_daily "
                       "WHERE team = $team AND day BETWEEN $start AND $end GROUP BY ALL")


# --- money formatting ---------------------------------------------------------------------------

@pytest.mark.parametrize("value, currency, shown", [
    ("1234.565", "USD", "$1,234.57"),          # half up, once, to the cent
    ("1234.56", "EUR", "€1,234.56"),
    ("0.005", "GBP", "£0.01"),
    ("1234.5", "JPY", "¥1,235"),               # yen have no cents: rounded to the yen
    ("1234.564", "NOK", "1,234.56 NOK"),       # no symbol everyone reads: the code after the number
    ("-74.045", "USD", "\u2212$74.05"),
    ("-74.045", "SEK", "\u221274.05 SEK"),
    ("1.0005", "KWD", "1.001 KWD"),            # dinars have three decimals
    ("0E-18", "EUR", "€0.00"),
])
def test_money_is_written_in_its_currency(value, currency, shown):
    assert money(D(value), currency) == shown


def test_axis_labels_carry_the_currency():
    assert [money_short(v, "USD") for v in (0, 950, 12_500, 1_200_000)] == ["$0", "$950", "$12.5k", "$1.2M"]
    assert [money_short(v, "NOK") for v in (0, 950, 12_500, -300)] == ["0 NOK", "950 NOK", "12.5k NOK", "\u2212300 NOK"]
    assert money_short(12_500, "EUR") == "€12.5k"


# --- the report ---------------------------------------------------------------------------------

def test_a_section_per_currency_in_currency_order(reports):
    page, md = reports["html"], reports["md"]
    assert list(_blocks(page)) == ["EUR", "NOK", "USD"]
    assert [m for m in re.findall(r"<h2 class=\"billed\">Billed in (\w+)</h2>", page)] == ["EUR", "NOK", "USD"]
    assert "money in EUR, NOK and USD" in page and "money in EUR, NOK and USD" in md
    assert list(_md_blocks(md)) == ["EUR", "NOK", "USD"]
    report = load(reports["con"], TEAM, date(2026, 11, 1), date(2026, 11, 30), "2026-11")
    assert report.currencies == ["EUR", "NOK", "USD"]
    for path in reports["day"][:2]:   # the day's report has the same sections
        assert re.findall(r"Billed in (\w+)", path.read_text()) == ["EUR", "NOK", "USD"]


def test_each_currencys_headline_is_its_own_marts_sum(reports):
    con, page = reports["con"], reports["html"]
    by_cat = _by_category(con)
    report = load(con, TEAM, date(2026, 11, 1), date(2026, 11, 30), "2026-11")
    kpis = {(c, k): v for c, k, v in re.findall(
        r'data-currency="(\w+)" data-kpi="(\w+)"><div class="k">[^<]*</div><div class="v">([^<]*)</div>', page)}
    md = {c: text.replace("\\", "") for c, text in _md_blocks(reports["md"]).items()}
    for currency, hand in TOTAL.items():
        rows = {k: v for (c, k), v in by_cat.items() if c == currency}
        expected = {"total_cost": sum(rows.values(), D(0)),
                    "gpu_cost": sum((rows.get(k, D(0)) for k in GPU), D(0)),
                    "waste_cost": sum((rows.get(k, D(0)) for k in WASTE), D(0))}
        assert _cents(expected["total_cost"]) == hand   # the mart agrees with the bills worked out by hand
        section = report.section(currency)
        assert section.total_cost == expected["total_cost"]          # exact, not just once rounded
        assert section.waste_cost == expected["waste_cost"]
        for key, value in expected.items():
            assert _shown(kpis[(currency, key)]) == (currency, _cents(value)), (currency, key)
        assert html.unescape(kpis[(currency, "total_cost")]) == SHOWN_TOTAL[currency]
        assert f"**Total cost:** {SHOWN_TOTAL[currency]}" in md[currency]
        kinds = dict(re.findall(r'data-kind="(\w+)">.*?<td class="n waste">([^<]*)</td>', _blocks(page)[currency]))
        assert {k: _shown(v) for k, v in kinds.items()} == {k: (currency, _cents(rows.get(k, D(0)))) for k in WASTE}
    # by hand: the GPU cost is the node bills, the waste everything but productive GPU time
    assert _shown(kpis[("USD", "gpu_cost")]) == ("USD", D("864.00"))
    assert _shown(kpis[("EUR", "gpu_cost")]) == ("EUR", D("720.00"))
    assert _shown(kpis[("USD", "waste_cost")]) == ("USD", D("684.00"))   # 576 idle + 72 failed + 36 rerun
    assert _shown(kpis[("EUR", "waste_cost")]) == ("EUR", D("570.00"))   # 405 idle + 150 hung + 15 restart
    assert _shown(kpis[("NOK", "gpu_cost")]) == ("NOK", D("0.00"))
    assert "Team ml spent 1,234.50 NOK in November 2026, none of it on GPUs." in _blocks(page)["NOK"]


def test_no_figure_adds_two_currencies(reports):
    """Every sum a report could be tempted to make across currencies — totals, GPU cost, waste, each
    category, the run and the interruption that were billed in two — appears nowhere."""
    con = reports["con"]
    by_cat = _by_category(con)
    per_currency: dict[str, dict[str, D]] = {c: {} for c in TOTAL}
    for (c, k), v in by_cat.items():
        per_currency[c][k] = v
        per_currency[c]["total"] = per_currency[c].get("total", D(0)) + v
        if k in GPU:
            per_currency[c]["gpu"] = per_currency[c].get("gpu", D(0)) + v
        if k in WASTE:
            per_currency[c]["waste"] = per_currency[c].get("waste", D(0)) + v
    for table, column in (("fct_run_efficiency_daily", "effective_cost"), ("fct_run_efficiency_daily", "mfu_gap_cost"),
                          ("fct_job_cost", "effective_cost")):
        sql = (f"SELECT billing_currency, sum({column}) FROM marts.{table} "  # table, column: constants above
               "WHERE team = $team AND day BETWEEN $start AND $end AND billing_currency IS NOT NULL GROUP BY ALL")
        for c, v in _marts(con, sql).items():
            per_currency[c][f"{table}.{column}"] = v
    for c, v in _marts(con, "SELECT billing_currency, sum(effective_cost) FROM marts.fct_rerun_loss GROUP BY ALL").items():
        per_currency[c]["interruption"] = v
    mixed = {}
    for n in (2, 3):
        for group in combinations(sorted(per_currency), n):
            for key in set.intersection(*(set(per_currency[c]) for c in group)):
                mixed[(group, key)] = _cents(sum((per_currency[c][key] for c in group), D(0)))
    assert mixed[(("EUR", "USD"), "fct_run_efficiency_daily.effective_cost")] == D("381.00")  # run r1: 216 + 165
    assert mixed[(("EUR", "USD"), "interruption")] == D("51.00")                              # 36 + 15
    assert mixed[(("EUR", "NOK", "USD"), "total")] == D("2837.60")
    texts = {"html": reports["html"], "md": reports["md"].replace("\\", "")}
    for path in reports["day"][:2]:
        texts[path.name] = path.read_text().replace("\\", "")
    for (group, key), value in mixed.items():
        if value == 0:
            continue
        pattern = re.compile(rf"(?<![\d.,]){re.escape(f'{abs(value):,}')}(?![\d])")
        for name, text in texts.items():
            assert not pattern.search(text), f"{name} shows {value}, the sum of {key} over {group}"


def _without_converted_total(text: str) -> str:
    """A section without its total in the reporting currency: the one amount of another currency in it."""
    text = re.sub(r'<div class="d fx" data-kpi="total_cost_reporting">[^<]*</div>', "", text)
    return re.sub(r" = \$[\d,.]+ at [^\n]*", "", text)


def test_money_is_printed_in_the_sections_currency(reports):
    blocks = {c: _without_converted_total(t) for c, t in _blocks(reports["html"]).items()}
    md = {c: _without_converted_total(t) for c, t in _md_blocks(reports["md"]).items()}
    assert set(re.findall(r"€[\d,.]+", blocks["EUR"])) and set(re.findall(r"[\d,.]+ NOK", blocks["NOK"]))
    others = {"EUR": (r"\$", r"\d NOK", r"\d EUR"), "NOK": (r"\$", "€", r"\d EUR"), "USD": ("€", r"\d NOK", r"\d USD")}
    for currency, absent in others.items():
        for text in (blocks[currency], md[currency]):
            for mark in absent:   # charts, tooltips and tables included
                assert not re.search(mark, text), (currency, mark)
    # every amount of the NOK block has its code after the number
    amounts = re.findall(r"\d[\d,]*\.\d\d(?!\d)(?: NOK)?", re.sub(r"<svg\b.*?</svg>", "", blocks["NOK"], flags=re.S))
    assert amounts and all(a.endswith(" NOK") for a in amounts), amounts


def _row(block: str, first_cell: str) -> list[str]:
    """The cells of the table row whose first cell is `first_cell`."""
    for row in re.findall(r"<tr>(.*?)</tr>", block, flags=re.S):
        cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        if cells and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no row {first_cell!r}")


def test_jobs_runs_and_interruptions_keep_their_gpu_time_and_split_their_money(reports):
    blocks = _blocks(reports["html"])
    # the interruption of run r1: lost 05:00–06:00 (8 GPU-h, billed in USD), restart 06:30–07:00 until
    # the first step after the restore (4 GPU-h, billed in EUR); each section shows all of its GPU time
    for currency, cost in (("USD", "$36.00"), ("EUR", "€15.00")):
        cells = _row(blocks[currency], "r1")          # the first table whose first cell is r1: interruptions
        assert cells[1:3] == ["1001", "pretrain-7b"] and cells[-3:] == ["8.0", "4.0", cost], cells
    # run r1: 6 h on u1 at $36 and 5.5 h on e1 at €30; tokens kept 5 × 300M before the checkpoint (the
    # 150M after it were rolled back) + 3 × 300M after the restore = 2.4B, whole in both sections; no
    # cost per token when it was billed in two currencies
    runs = {c: re.search(r"<h2>Training runs</h2>.*?</table>", blocks[c], flags=re.S).group(0) for c in ("EUR", "USD")}
    for currency, cost in (("USD", "$216.00"), ("EUR", "€165.00")):
        cells = _row(runs[currency], "r1")
        assert cells[3] == "2.40B" and cells[7] == cost and cells[8] == "– (several currencies)", cells
        assert "billed in several currencies: no cost per token" in blocks[currency]   # the chart says it too
    # the hung job in EUR (5 h × €30), the failed one in USD (2 h × $36), the unbilled one once, in EUR
    assert _row(blocks["EUR"], "2001 (c1)")[5:] == ["40.0", "€150.00", "€150.00"]
    assert _row(blocks["USD"], "2002 (c1)")[5:] == ["16.0", "$72.00", "$72.00"]
    assert _row(blocks["EUR"], "5001 (c1)")[5:] == ["8.0", "€0.00", "€0.00"]
    assert "5001" not in blocks["USD"] and "5001" not in blocks["NOK"]
    assert "research-job" not in reports["html"] and "carol" not in reports["html"]   # the other team's


def test_csv_has_the_currency_and_reconciles_per_currency(reports):
    rows = list(csv.DictReader(io.StringIO(reports["csv"])))
    assert list(rows[0]) == ["day", "team", "project", "category", "billing_currency", "gpu_seconds",
                             "effective_cost", "billed_cost"]
    keys = [(r["day"], r["project"], r["category"], r["billing_currency"]) for r in rows]
    assert len(keys) == len(set(keys))   # one row per day × project × category × currency
    where = "FROM marts.fct_cost_daily WHERE team = $team AND day BETWEEN $start AND $end GROUP BY ALL"
    effective_mart = _marts(reports["con"], f"SELECT billing_currency, sum(effective_cost) {where}")
    billed_mart = _marts(reports["con"], f"SELECT billing_currency, sum(billed_cost) {where}")
    for currency, hand in TOTAL.items():
        mine = [r for r in rows if r["billing_currency"] == currency]
        assert sum((D(r["effective_cost"]) for r in mine), D(0)) == effective_mart[currency]   # to the last digit
        assert sum((D(r["billed_cost"]) for r in mine), D(0)) == billed_mart[currency]
        assert _cents(effective_mart[currency]) == hand
    assert {r["billing_currency"] for r in rows} == set(TOTAL)


def test_headless_chromium_renders_every_currency(reports, tmp_path):
    from tests.support.chromium import chromium_path, headless

    chromium = chromium_path()
    if chromium is None:
        pytest.skip("chromium is not installed: make system-deps")
    page = reports["month"][0]
    png = tmp_path / "report.png"
    shot = headless(chromium, tmp_path / "profile-shot", f"--screenshot={png}", f"file://{page}")
    assert png.exists() and png.stat().st_size > 10_000, shot.stderr[-2000:]
    dom = headless(chromium, tmp_path / "profile-dom", "--dump-dom", f"file://{page}").stdout
    assert re.findall(r"Billed in (\w+)</h2>", dom) == ["EUR", "NOK", "USD"]
    assert len(re.findall(r"<svg\b", dom)) >= 3 * 4   # every section draws its charts
    assert "<script" not in dom.lower()


def test_a_currency_the_team_ran_no_training_in_shows_no_mfu_beside_its_money(reports):
    con, page = reports["con"], reports["html"]
    report = load(con, TEAM, date(2026, 11, 1), date(2026, 11, 30), "2026-11")
    kpis = {(c, k): v for c, k, v in re.findall(
        r'data-currency="(\w+)" data-kpi="(\w+)"><div class="k">[^<]*</div><div class="v">([^<]*)</div>', page)}
    without_runs = [s.currency for s in report.sections if not s.runs]
    assert without_runs, "the fixture's team bills some currency without a training run in it"
    assert report.sections[0].team_effective_mfu is not None   # the team has an MFU: from its other currency's runs
    for currency in without_runs:
        assert kpis[(currency, "effective_mfu")] == "–", currency
        assert "no training run billed in " + currency in _md_blocks(reports["md"])[currency]


# --- the reporting currency ----------------------------------------------------------------------

def _reporting_rows(page: str) -> dict[str, list[str]]:
    """The "Totals in USD" table: its rows by their first cell."""
    section = re.search(r'<section data-kpi="reporting_totals">.*?</section>', page, flags=re.S).group(0)
    rows = {}
    for row in re.findall(r"<tr>(.*?)</tr>", section, flags=re.S):
        cells = [html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        if cells:
            rows[cells[0]] = cells[1:]
    return rows


def test_totals_beside_the_reporting_currency_at_the_configs_rate(reports):
    page, md = reports["html"], reports["md"]
    assert _reporting_rows(page) == {   # by hand, see the top of this file
        "EUR": ["€732.34", "€570.00", "1.08 USD per EUR in 2026-11 (test rate)", "$790.93", "$615.60"],
        "NOK": ["1,234.50 NOK", "0.00 NOK", "no rate to USD for NOK in 2026-11", "no rate", "$0.00"],
        "USD": ["$870.76", "$684.00", "the reporting currency", "$870.76", "$684.00"],
        "all, in USD": ["", "", "", "$1,661.69 + 1,234.50 NOK (no rate)", "$1,299.60"],
    }
    # the finance view converts the team's rows of the month to the same sum, to the cent
    view = _marts(reports["con"], "SELECT team, sum(effective_cost_reporting) FROM finance.chargeback_monthly "
                                  "WHERE team = $team AND month = '2026-11' GROUP BY team")
    assert _cents(view[TEAM]) == D("1661.69")
    # each section's headline says its total in USD, or that it has no rate; USD's needs no converting
    converted = {c: re.findall(r'data-kpi="total_cost_reporting">([^<]*)<', block) for c, block in _blocks(page).items()}
    assert converted == {"EUR": ["= $790.93 at 1.08 USD per EUR in 2026-11 (test rate)"],
                         "NOK": ["no rate to USD for NOK in 2026-11: not converted"], "USD": []}
    assert ("## Totals in USD\n" in md
            and "| all, in USD |  |  |  | $1,661.69 + 1,234.50 NOK (no rate) | $1,299.60 |" in md
            and "| NOK | 1,234.50 NOK | 0.00 NOK | no rate to USD for NOK in 2026-11 | no rate | $0.00 |" in md)
    assert "- **Total cost:** €732.34 = $790.93 at 1.08 USD per EUR in 2026-11 (test rate)" in _md_blocks(md)["EUR"]
    day = reports["day"][0].read_text()   # a day converts at its month's rate too
    assert _reporting_rows(day)["EUR"][2:] == ["1.08 USD per EUR in 2026-11 (test rate)", "$790.93", "$615.60"]


def test_without_exchange_rates_nothing_is_converted(ledger, tmp_path):
    """A config without `fx:` rates publishes an empty finance.fx_rates: the report converts nothing and
    says nothing of another currency."""
    copy = tmp_path / "warehouse.duckdb"
    shutil.copy(ledger.warehouse.with_name("warehouse.published.duckdb"), copy)
    with duckdb.connect(str(copy)) as con:
        con.execute("DELETE FROM finance.fx_rates")
    with duckdb.connect(str(copy), read_only=True) as con:
        assert load(con, TEAM, date(2026, 11, 1), date(2026, 11, 30), "2026-11").reporting is None
        page, md = (p.read_text() for p in write_team_report(con, TEAM, *period_of(None, "2026-11"), tmp_path)[:2])
    assert "Totals in" not in page and "total_cost_reporting" not in page and "Totals in" not in md
    assert "$790.93" not in page + md and "no rate" not in page + md
