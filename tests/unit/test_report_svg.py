"""The report's charts keep every label inside the chart: each <text>'s estimated extent (svg.text_extent,
from the widths DejaVu Sans draws) lies within the viewBox, for long labels too — 7-digit yen amounts,
currency codes after the number, long run ids, hostnames and legend labels. The browser check of the
same (real text widths) is tests/e2e/test_reports.py."""

from __future__ import annotations

import html
import re
from decimal import Decimal

import pytest

from pipelines.reports import svg
from pipelines.reports.fmt import money, money_short

_SVG = re.compile(r'<svg\b[^>]*viewBox="0 0 (\d+) (\d+)"[^>]*>(.*?)</svg>', re.S)
_TEXT = re.compile(r'<text x="([-\d.]+)" y="[-\d.]+" font-size="(\d+)" text-anchor="(\w+)" fill="[^"]*" '
                   r'font-weight="(\w+)"[^>]*>(?:<title>[^<]*</title>)?([^<]*)</text>')


def labels_out_of_bounds(chart: str) -> list[str]:
    """Each label of the chart whose estimated extent is not within its viewBox, with that extent."""
    m = _SVG.fullmatch(chart)
    assert m, chart[:200]
    width, body = int(m[1]), m[3]
    texts = _TEXT.findall(body)
    assert texts and len(texts) == body.count("<text "), "every label is read"
    out = []
    for x, size, anchor, weight, text in texts:
        left, right = svg.text_extent(float(x), html.unescape(text), int(size), anchor, weight)
        if left < 0 or right > width:
            out.append(f"{html.unescape(text)!r}: {left:.0f} to {right:.0f} of 0 to {width}")
    return out


def _runs(currency: str, scale: Decimal) -> list[svg.RunBar]:
    runs = []
    # the first is the longest bar, as in the demo whose "€0.69  (at target €0.54)" ran off the chart
    for i, (cost, at_target, mfu) in enumerate([("0.69", "0.54", 0.31), ("0.40", "0.38", 0.52), ("0.20", "0.09", 0.18)]):
        c, t = Decimal(cost) * scale, Decimal(at_target) * scale
        runs.append(svg.RunBar(f"pretrain-70b-long-context-ablation-{i}-of-many", mfu, float(c), float(t),
                               "tip", "tip", f"{mfu * 100:.1f}%", money(c, currency), f"(at target {money(t, currency)})"))
    return runs


@pytest.mark.parametrize("currency, scale", [("EUR", Decimal(1)), ("JPY", Decimal(2_345_678)),
                                             ("NOK", Decimal(1_000_000)), ("KWD", Decimal(9_999_999))])
def test_run_chart_labels_fit_for_any_amount_and_currency(currency, scale):
    chart = svg.run_efficiency(_runs(currency, scale), 0.5, label="runs", cost_format=lambda v: money_short(v, currency))
    assert f"(at target {money(Decimal('0.54') * scale, currency)})" in html.unescape(chart)
    assert labels_out_of_bounds(chart) == []


def test_a_label_no_axis_can_make_room_for_drops_its_target_part_and_stays_inside():
    run = svg.RunBar("r", 0.3, 5.0, 4.0, "tip", "tip", "30.0%", "9" * 60 + " NOK", "(at target " + "9" * 60 + " NOK)")
    chart = svg.run_efficiency([run], 0.5, label="runs", cost_format=lambda v: money_short(v, "NOK"))
    assert "at target" not in chart and labels_out_of_bounds(chart) == []


def test_stacked_bar_axis_totals_and_legend_fit():
    values = [1_234_567.0, 7_654_321.0, -12_500.0, 9_999_999.0]
    series = [svg.Series("work lost to interruptions in run pretrain-70b-long-context-ablation", "#000",
                         values, ["tip"] * 4),
              svg.Series("Unmonitored (no telemetry)", "#111", [v / 3 for v in values], ["tip"] * 4)]
    for currency in ("NOK", "JPY", "KWD"):
        totals = [money_short(v, currency) for v in values]
        chart = svg.stacked_bars(["Mon 02 Nov"] * 4, series, totals, y_format=lambda v, c=currency: money_short(v, c),
                                 label="cost")
        assert labels_out_of_bounds(chart) == [], currency
    many_days = svg.stacked_bars([f"{d:02d} Nov" for d in range(1, 31)], [svg.Series("x", "#000", [1e6] * 30, ["t"] * 30)],
                                 [money(Decimal(1_234_567), "NOK")] * 30, y_format=lambda v: money_short(v, "NOK"),
                                 label="month")
    assert labels_out_of_bounds(many_days) == []
    assert "1,234,567.00 NOK</text>" not in many_days   # totals wider than a bar's slot are left to the hover


def test_heatmap_hostnames_and_totals_fit():
    rows = ["gpu-node-with-a-really-long-fully-qualified-name-0001.cluster.example.internal", "n1"]
    cells = {(r, h): (float(h % 9) * 17.3, "tip") for r in rows for h in range(24)}
    chart = svg.heatmap(rows, cells, {r: "12,345,678.9" for r in rows}, label="idle", unit="GPU-h")
    assert labels_out_of_bounds(chart) == []
    assert "…" in chart   # the long hostname is cut to its room; its hover text has it whole


def test_fit_cuts_to_the_room_and_width_grows_with_the_text():
    assert svg.fit("short", 100, 12) == "short"
    cut = svg.fit("x" * 100, 100, 12)
    assert cut.endswith("…") and svg.text_width(cut, 12) <= 100 < svg.text_width(cut[:-1] + "xx…", 12)
    assert svg.text_width("¥1,234,567", 11) > svg.text_width("€0.69", 11) > 0
    assert svg.text_width("MMM", 12, "bold") > svg.text_width("MMM", 12)
