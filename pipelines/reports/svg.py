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


# Advance widths in em of DejaVu Sans, measured in Chromium and rounded up to 0.05: the font Linux
# draws `system-ui` and `sans-serif` with, and the widest of the report's font stack. Labels are
# placed from these estimates (text_width), so a label never runs past its chart's edge.
_EM = {
    **dict.fromkeys("'IJijl", 0.30), **dict.fromkeys(" ,./:;\\|·", 0.35), **dict.fromkeys("()-[]ft", 0.40),
    **dict.fromkeys("!r", 0.45), **dict.fromkeys('"*_`–', 0.50), **dict.fromkeys("?csz", 0.55),
    **dict.fromkeys("FLkvxy", 0.60), **dict.fromkeys("0123456789$EPSTYabdeghnopqu{}€¥£éü", 0.65),
    **dict.fromkeys("ABCKRVXZ", 0.70), **dict.fromkeys("NU", 0.75), **dict.fromkeys("&DGHOQ", 0.80),
    **dict.fromkeys("#+<=>^w~−≤", 0.85), "M": 0.90, **dict.fromkeys("%@Wm…", 1.00),
}
_EM_OTHER = 1.0  # a glyph not measured (another script, a symbol): a whole em, never less
_BOLD = 1.15     # bold glyphs are up to 15 % wider on average


def text_width(text: object, size: float, weight: str = "normal") -> float:
    """The estimated drawn width in px of `text` at font `size`: never less than DejaVu Sans draws it."""
    em = sum(_EM.get(ch, _EM_OTHER) for ch in str(text))
    return em * size * (_BOLD if weight == "bold" else 1.0)


def text_extent(x: float, text: object, size: float, anchor: str = "start", weight: str = "normal") -> tuple[float, float]:
    """The estimated left and right edge of a label drawn at `x` with this `text-anchor`."""
    w = text_width(text, size, weight)
    left = {"start": x, "middle": x - w / 2, "end": x - w}[anchor]
    return left, left + w


def fit(text: str, room: float, size: float, weight: str = "normal") -> str:
    """`text`, or as much of it as fits in `room` px followed by "…" (the hover text has it whole)."""
    if text_width(text, size, weight) <= room:
        return text
    budget, used, kept = room - text_width("…", size, weight), 0.0, 0
    for ch in text:  # one pass: a run id of any length costs its length, not its square
        used += text_width(ch, size, weight)
        if used > budget:
            break
        kept += 1
    return text[:kept] + "…"


def _svg(width: int, height: int, label: str, body: list[str]) -> str:
    # No xmlns: inline SVG in HTML needs none, and the report must hold no URL at all.
    return (f'<svg class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
            f'aria-label="{esc(label)}" font-family="{esc(FONT)}">' + "".join(body) + "</svg>")


def _text(x: float, y: float, text: object, size: int = 11, anchor: str = "start", color: str = MUTED,
          weight: str = "normal", extra: str = "", halo: bool = False, tip: str | None = None) -> str:
    # A white halo keeps a value label readable where it crosses a grid or target line.
    ring = ' stroke="#ffffff" stroke-width="3" paint-order="stroke"' if halo else ""
    title = f"<title>{esc(tip)}</title>" if tip else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{color}" '
            f'font-weight="{weight}"{ring}{extra}>{title}{esc(text)}</text>')


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
                 label: str, width: int = 1180, height: int = 330, highlight: int | None = None,
                 y_max: float | None = None) -> str:
    """Bars per x, stacked by series (positives up, negatives down), with the x's total on top and a
    legend on the right. `highlight` marks one x (the report's day in a 7-day trend); `y_max` is the
    axis' top where the values have one (shares: 100 %), else it is a round figure above the tallest."""
    n = len(x_labels)
    # the legend's room on the right: its longest label, up to 300 px (a longer one is cut, hover has it)
    right = ceil(min(300, max([210.0, *(text_width(s.label, 12) + 44 for s in series if any(s.values))])))
    top, bottom = 24, 44
    pos = [sum(max(s.values[i], 0) for s in series) for i in range(n)]
    neg = [sum(min(s.values[i], 0) for s in series) for i in range(n)]
    lo_data, hi_data = min([0.0, *neg]), max([0.0, *pos])
    ticks = nice_ticks(lo_data, y_max if y_max is not None else hi_data * 1.08 or 1.0)
    step = ticks[1] - ticks[0]
    # Credits are usually a sliver below zero: give them just their room, not a whole tick of empty axis.
    lo = min(0.0, lo_data * 1.15) if lo_data > -step else ticks[0]
    hi = ticks[-1]
    ticks = [t for t in ticks if t >= lo - step * 1e-9]
    # room on the left for the longest axis label ("−12.5k NOK" is longer than "$950")
    left = max(72, ceil(max(text_width(y_format(t), 11) for t in ticks)) + 16)
    plot_w, plot_h = width - left - right, height - top - bottom

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
    # totals need room: where one is wider than its bar's slot, the axis and hover tell them
    show_totals = slot >= 44 and all(text_width(t, 10) <= slot - 4 for t in totals)
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
        if (up or down) and show_totals:
            body.append(_text(x + bar / 2, y(up) - 5, totals[i], 10, "middle", INK, halo=True))
        if i % every == 0:
            weight = "bold" if highlight == i else "normal"
            body.append(_text(x + bar / 2, top + plot_h + 18, x_label, 11, "middle", INK, weight))
    legend_y = top + 4
    for s in reversed(series):  # top of the legend = top of the stack
        if any(s.values):
            body.append(_rect(width - right + 18, legend_y, 12, 12, s.color))
            body.append(_text(width - right + 36, legend_y + 10, fit(s.label, right - 40, 12), 12, color=INK,
                              tip=s.label))
            legend_y += 19
    return _svg(width, height, label, body)


def heatmap(rows: Sequence[str], cells: dict[tuple[str, int], tuple[float, str]], row_totals: dict[str, str], *,
            label: str, unit: str, width: int = 1180) -> str:
    """Rows × 24 hours of day; each cell's colour and printed number is its value (`cells[(row, hour)]`
    = (value, hover text)). Row totals print on the right."""
    # Room for the longest hostname, up to 250 px (a longer one is cut; the hover text has it whole),
    # and on the right for the widest row total.
    left = ceil(min(250, max(110, max((text_width(r, 11) for r in rows), default=0) + 20)))
    shown = {row: fit(row, left - 12, 11) for row in rows}
    right = ceil(max(90, text_width(f"total {unit}", 11, "bold") + 16,
                     max((text_width(t, 11) for t in row_totals.values()), default=0) + 16))
    top, cell_h = 26, 22
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
            if value >= 0.05 and text_width(f"{value:.1f}", 10) <= cell_w - 2:
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
    at_target_text: str = ""  # "(at target €0.54)", said after cost_text where there is room
    no_cost_text: str = "no tokens kept"  # said instead of a bar when cost_per_mtok is None


LABEL_GAP = 8  # px between a bar's end and its value label


def axis_max(ends: Sequence[float], widths: Sequence[float], panel: float, room: float, least: float) -> float:
    """The top of a bar axis `panel` px long such that every bar (its end value in `ends`) plus its label
    (`widths` px, LABEL_GAP after the bar) ends within the panel and the `room` px after it; at least
    `least`. A label too long to fit after any bar is left out (the caller draws it otherwise)."""
    top = least
    for end, width in zip(ends, widths):
        free = panel + room - LABEL_GAP - width
        if end > 0 and free > 0:
            top = max(top, panel * end / free)
    return top


def run_efficiency(runs: Sequence[RunBar], target: float | None, *, label: str, cost_format: Callable[[float], str],
                   width: int = 1180) -> str:
    """Two panels per run: effective MFU against the target (dashed line), and cost per 1M tokens
    against what it would cost at the target MFU (dark tick), its axis written by `cost_format`. The trainer's own MFU is left to the
    table: a second marker per bar made the chart harder to read than it was worth.

    Each axis is long enough for the value labels after the bars, whatever their length (a 7-digit
    yen amount, a currency code): a label never runs past the chart's edge or into the next panel."""
    left, gap, right, top, row_h = 190, 70, 70, 40, 30
    panel = (width - left - gap - right) / 2
    height = top + row_h * len(runs) + 40
    mfu_ends = [r.effective_mfu or 0.0 for r in runs]
    mfu_least = max([target or 0.0, *mfu_ends]) * 1.15 or 1.0
    mfu_widths = [text_width(r.mfu_text, 11) for r in runs] + [text_width(f"target {(target or 0) * 100:.0f}%", 11, "bold")]
    mfu_ticks = nice_ticks(0.0, axis_max([*mfu_ends, target or 0.0], mfu_widths, panel, gap - 4, mfu_least), 4)
    mfu_max = mfu_ticks[-1]
    cost_ends = [max(r.cost_per_mtok or 0.0, r.cost_at_target or 0.0) for r in runs]
    cost_labels = [_cost_label(r, panel + right - LABEL_GAP - 4) for r in runs]
    cost_ticks = nice_ticks(0.0, axis_max(cost_ends, [text_width(t, 11) for t in cost_labels], panel, right - 4,
                                          max([0.0, *cost_ends]) * 1.15 or 1.0), 4)
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
        body.append(_text(left - 10, y + row_h / 2 + 4, fit(r.run, left - 14, 12), 12, "end", INK, tip=r.run))
        if r.effective_mfu is None:
            body.append(_text(left + 6, y + row_h / 2 + 4, "no token events: MFU not measured", 11))
        else:
            w = panel * r.effective_mfu / mfu_max
            below = target is not None and r.effective_mfu < target
            body.append(_rect(left, y + 6, w, row_h - 12, "#f59e0b" if below else "#10b981", r.mfu_tip))
            body.append(_text(left + w + LABEL_GAP, y + row_h / 2 + 4, r.mfu_text, 11, color=INK, halo=True))
        if r.cost_per_mtok is None:
            body.append(_text(x2 + 6, y + row_h / 2 + 4, r.no_cost_text, 11))
        else:
            w = panel * r.cost_per_mtok / cost_max
            body.append(_rect(x2, y + 6, w, row_h - 12, "#3b82f6", r.cost_tip))
            if r.cost_at_target is not None:
                tx = x2 + panel * r.cost_at_target / cost_max
                body.append(f'<path d="M{tx:.1f},{y + 2} v{row_h - 4}" stroke="{INK}" stroke-width="3">'
                            f'<title>{esc(r.cost_tip)}</title></path>')
            end = x2 + panel * cost_ends[i] / cost_max + LABEL_GAP
            # a label longer than the whole panel (no axis could make room) starts at the panel, over the bar
            x = end if end + text_width(cost_labels[i], 11) <= width - 4 else x2 + 4
            body.append(_text(x, y + row_h / 2 + 4, cost_labels[i], 11, color=INK, halo=True, tip=r.cost_tip))
    return _svg(width, height, label, body)


def _cost_label(r: RunBar, room: float) -> str:
    """"€0.69  (at target €0.54)", or the amount alone where the two would not fit in `room` px."""
    both = f"{r.cost_text}  {r.at_target_text}" if r.at_target_text else r.cost_text
    return both if text_width(both, 11) <= room else r.cost_text
