"""Inline SVG charts, drawn in Python so a report is one file that opens anywhere, offline.

No chart library: the report must not load scripts, fonts or styles from the network, and the few
chart shapes needed (stacked bars, a heatmap, paired horizontal bars) are short to draw. Every text
and attribute value passes through `esc`, numbers included, so nothing from input can close a tag.
Hovering a bar or cell shows its exact value (an SVG <title>).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import ceil, floor, log10

from pipelines.reports.fmt import esc

FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, 'Liberation Sans', sans-serif"
INK, MUTED, GRID = "#1f2933", "#616e7c", "#e4e7eb"
# Sequential scale for the heatmap (light = little idle, dark red = a whole hour of idle GPUs).
HEAT = ("#fff3e0", "#fdd49e", "#fdbb84", "#fc8d59", "#e34a33", "#b30000")
# Categorical colours for runs, chosen to stay distinguishable side by side.
RUN_COLORS = ("#3b82f6", "#f59e0b", "#10b981", "#8b5cf6", "#ef4444", "#14b8a6", "#ec4899", "#84cc16",
              "#6366f1", "#f97316")


@dataclass
class Series:
    label: str
    color: str
    values: Sequence[float]  # one per x; negative values stack below zero (credits)
    tooltips: Sequence[str]  # exact value text shown on hover, one per x


def _svg(width: int, height: int, label: str, body: list[str]) -> str:
    # No xmlns: inline SVG in HTML needs none, and the report must hold no URL at all.
    return (f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
            f'aria-label="{esc(label)}" font-family="{esc(FONT)}">' + "".join(body) + "</svg>")


def _text(x: float, y: float, text: object, size: int = 11, anchor: str = "start", color: str = MUTED,
          weight: str = "normal", extra: str = "", halo: bool = False) -> str:
    # A white halo keeps a value label readable where it crosses a grid or target line.
    ring = ' stroke="#ffffff" stroke-width="3" paint-order="stroke"' if halo else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{color}" '
            f'font-weight="{weight}"{ring}{extra}>{esc(text)}</text>')


def _rect(x: float, y: float, w: float, h: float, color: str, tip: str | None = None, extra: str = "") -> str:
    title = f"<title>{esc(tip)}</title>" if tip else ""
    return (f'<rect x="{x:.2f}" y="{y:.2f}" width="{max(w, 0):.2f}" height="{max(h, 0):.2f}" fill="{esc(color)}"'
            f'{extra}>{title}</rect>')


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round axis ticks covering [lo, hi] (1, 2, 2.5 or 5 times a power of ten apart)."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / n
    magnitude = 10 ** floor(log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first, last = floor(lo / step), ceil(hi / step)
    return [i * step for i in range(first, last + 1)]


def empty(width: int, height: int, message: str) -> str:
    """A chart-sized box that says why there is no chart, so the page layout stays the same."""
    return _svg(width, height, message, [
        _rect(0.5, 0.5, width - 1, height - 1, "#f8fafc", extra=f' stroke="{GRID}"'),
        _text(width / 2, height / 2 + 4, message, 13, "middle")])


def stacked_bars(x_labels: Sequence[str], series: Sequence[Series], totals: Sequence[str], *, y_format: Callable[[float], str],
                 label: str, width: int = 1180, height: int = 330, highlight: int | None = None) -> str:
    """Bars per x, stacked by series (positives up, negatives down), with the x's total on top and a
    legend on the right. `highlight` marks one x (the report's day in a 7-day trend)."""
    n = len(x_labels)
    left, right, top, bottom = 72, 210, 24, 44
    plot_w, plot_h = width - left - right, height - top - bottom
    pos = [sum(max(s.values[i], 0) for s in series) for i in range(n)]
    neg = [sum(min(s.values[i], 0) for s in series) for i in range(n)]
    lo_data, hi_data = min([0.0, *neg]), max([0.0, *pos])
    ticks = nice_ticks(lo_data, hi_data * 1.08 or 1.0)
    step = ticks[1] - ticks[0]
    # Credits are usually a sliver below zero: give them just their room, not a whole tick of empty axis.
    lo = min(0.0, lo_data * 1.15) if lo_data > -step else ticks[0]
    hi = ticks[-1]
    ticks = [t for t in ticks if t >= lo - step * 1e-9]

    def y(v: float) -> float:
        return top + plot_h * (hi - v) / (hi - lo)

    body: list[str] = []
    for t in ticks:
        body.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(t):.1f}" y2="{y(t):.1f}" '
                    f'stroke="{INK if t == 0 else GRID}" stroke-width="1"/>')
        body.append(_text(left - 8, y(t) + 4, y_format(t), 11, "end"))
    slot = plot_w / max(n, 1)
    bar = min(slot * 0.7, 64)
    every = max(1, ceil(n / 16))  # label at most ~16 days on the axis
    for i, x_label in enumerate(x_labels):
        x = left + slot * i + (slot - bar) / 2
        if highlight == i:
            body.append(_rect(left + slot * i + 1, top, slot - 2, plot_h, "#eef2ff"))
        up = down = 0.0
        for s in series:
            v = s.values[i]
            if v > 0:
                body.append(_rect(x, y(up + v), bar, y(up) - y(up + v), s.color, s.tooltips[i]))
                up += v
            elif v < 0:
                body.append(_rect(x, y(down), bar, y(down + v) - y(down), s.color, s.tooltips[i]))
                down += v
        if (up or down) and slot >= 44:  # totals need room; on narrow bars the axis and hover tell them
            body.append(_text(x + bar / 2, y(up) - 5, totals[i], 10, "middle", INK, halo=True))
        if i % every == 0:
            weight = "bold" if highlight == i else "normal"
            body.append(_text(x + bar / 2, top + plot_h + 18, x_label, 11, "middle", INK, weight))
    legend_y = top + 4
    for s in reversed(series):  # top of the legend = top of the stack
        if any(s.values):
            body.append(_rect(width - right + 18, legend_y, 12, 12, s.color))
            body.append(_text(width - right + 36, legend_y + 10, s.label, 12, color=INK))
            legend_y += 19
    return _svg(width, height, label, body)


def heatmap(rows: Sequence[str], cells: dict[tuple[str, int], tuple[float, str]], row_totals: dict[str, str], *,
            label: str, unit: str, width: int = 1180) -> str:
    """Rows × 24 hours of day; each cell's colour and printed number is its value (`cells[(row, hour)]`
    = (value, hover text)). Row totals print on the right."""
    # Room for the longest hostname shown (cut at 30 characters; the hover text has it whole).
    shown = {row: row if len(row) <= 30 else row[:29] + "…" for row in rows}
    left = min(250, max(110, 7 * max((len(v) for v in shown.values()), default=0) + 20))
    right, top, cell_h = 90, 26, 22
    cell_w = (width - left - right) / 24
    height = top + cell_h * len(rows) + 56
    vmax = max((v for v, _ in cells.values()), default=0.0) or 1.0
    body: list[str] = [_text(left + 24 * cell_w + 10, top - 8, f"total {unit}", 11, color=INK, weight="bold")]
    for h in range(24):
        body.append(_text(left + cell_w * (h + 0.5), top - 8, f"{h:02d}", 10, "middle"))
    for r, row in enumerate(rows):
        y = top + r * cell_h
        body.append(_text(left - 8, y + cell_h / 2 + 4, shown[row], 11, "end", INK))
        for h in range(24):
            value, tip = cells.get((row, h), (0.0, f"{row} {h:02d}:00 UTC: no idle GPUs"))
            frac = value / vmax
            color = "#f5f7fa" if value <= 0 else HEAT[min(len(HEAT) - 1, int(frac * (len(HEAT) - 1) + 0.999))]
            x = left + h * cell_w
            body.append(_rect(x + 1, y + 1, cell_w - 2, cell_h - 2, color, tip))
            if value >= 0.05:
                body.append(_text(x + cell_w / 2, y + cell_h / 2 + 4, f"{value:.1f}", 10, "middle",
                                  "#ffffff" if frac > 0.6 else INK, extra=' pointer-events="none"'))
        body.append(_text(left + 24 * cell_w + 10, y + cell_h / 2 + 4, row_totals.get(row, ""), 11, color=INK))
    # Legend: the colour steps with the values they stand for.
    ly = top + len(rows) * cell_h + 22
    body.append(_text(left, ly + 11, f"{unit} per node and hour:", 11, color=INK))
    x = left + 180
    steps = [("0", "#f5f7fa")] + [(f"≤ {vmax * (i + 1) / (len(HEAT)):.1f}", c) for i, c in enumerate(HEAT)]
    for text, color in steps:
        body.append(_rect(x, ly, 14, 14, color, extra=f' stroke="{GRID}"'))
        body.append(_text(x + 19, ly + 11, text, 11))
        x += 80
    return _svg(width, height, label, body)


@dataclass
class RunBar:
    run: str
    effective_mfu: float | None
    cost_per_mtok: float | None
    cost_at_target: float | None
    mfu_tip: str
    cost_tip: str
    mfu_text: str
    cost_text: str
    no_cost_text: str = "no tokens kept"  # said instead of a bar when cost_per_mtok is None


def run_efficiency(runs: Sequence[RunBar], target: float | None, *, label: str, cost_format: Callable[[float], str],
                   width: int = 1180) -> str:
    """Two panels per run: effective MFU against the target (dashed line), and cost per 1M tokens
    against what it would cost at the target MFU (dark tick), its axis written by `cost_format`. The trainer's own MFU is left to the
    table: a second marker per bar made the chart harder to read than it was worth."""
    left, gap, right, top, row_h = 190, 70, 70, 40, 30
    panel = (width - left - gap - right) / 2
    height = top + row_h * len(runs) + 40
    mfu_max = max([target or 0.0, *[r.effective_mfu or 0 for r in runs]]) * 1.15 or 1.0
    mfu_ticks = nice_ticks(0.0, mfu_max, 4)
    mfu_max = mfu_ticks[-1]
    cost_max = max([0.0, *[r.cost_per_mtok or 0 for r in runs], *[r.cost_at_target or 0 for r in runs]]) * 1.15 or 1.0
    cost_ticks = nice_ticks(0.0, cost_max, 4)
    cost_max = cost_ticks[-1]
    x2 = left + panel + gap
    body = [_text(left, 16, "Effective MFU (all GPU time)", 12, color=INK, weight="bold"),
            _text(x2, 16, "Cost per 1M tokens kept", 12, color=INK, weight="bold")]
    bottom = top + row_h * len(runs)
    for t in mfu_ticks:
        x = left + panel * t / mfu_max
        body.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top - 6}" y2="{bottom}" stroke="{GRID}"/>')
        body.append(_text(x, bottom + 16, f"{t * 100:.0f}%", 10, "middle"))
    for t in cost_ticks:
        x = x2 + panel * t / cost_max
        body.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top - 6}" y2="{bottom}" stroke="{GRID}"/>')
        body.append(_text(x, bottom + 16, cost_format(t), 10, "middle"))
    if target is not None:
        tx = left + panel * target / mfu_max
        body.append(f'<path d="M{tx:.1f},{top - 8} V{bottom}" stroke="#b91c1c" stroke-width="2" stroke-dasharray="5,4"/>')
        body.append(_text(tx + 4, top - 10, f"target {target * 100:.0f}%", 11, color="#b91c1c", weight="bold"))
    for i, r in enumerate(runs):
        y = top + i * row_h
        shown = r.run if len(r.run) <= 26 else r.run[:25] + "…"
        body.append(_text(left - 10, y + row_h / 2 + 4, shown, 12, "end", INK))
        if r.effective_mfu is None:
            body.append(_text(left + 6, y + row_h / 2 + 4, "no token events: MFU not measured", 11))
        else:
            w = panel * r.effective_mfu / mfu_max
            below = target is not None and r.effective_mfu < target
            body.append(_rect(left, y + 6, w, row_h - 12, "#f59e0b" if below else "#10b981", r.mfu_tip))
            body.append(_text(left + w + 8, y + row_h / 2 + 4, r.mfu_text, 11, color=INK, halo=True))
        if r.cost_per_mtok is None:
            body.append(_text(x2 + 6, y + row_h / 2 + 4, r.no_cost_text, 11))
        else:
            w = panel * r.cost_per_mtok / cost_max
            body.append(_rect(x2, y + 6, w, row_h - 12, "#3b82f6", r.cost_tip))
            if r.cost_at_target is not None:
                tx = x2 + panel * r.cost_at_target / cost_max
                body.append(f'<path d="M{tx:.1f},{y + 2} v{row_h - 4}" stroke="{INK}" stroke-width="3">'
                            f'<title>{esc(r.cost_tip)}</title></path>')
            body.append(_text(x2 + max(w, (r.cost_at_target or 0) * panel / cost_max) + 8, y + row_h / 2 + 4,
                              r.cost_text, 11, color=INK, halo=True))
    return _svg(width, height, label, body)
