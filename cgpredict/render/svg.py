"""Inline SVG charts for the HTML report: the MWP-CWP timeline, a roofline and bar charts.

Each function returns one ``<svg>`` element as text (no scripts, no external references), so
the page opens offline. Colours are shared with the rest of the page (``COLOURS``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from ..plots import PALETTE

__all__ = ["COLOURS", "Bar", "TimelineInputs", "bars_svg", "roofline_svg", "timeline_svg"]

COLOURS = {
    **PALETTE,  # the shared plotting module's colours by meaning
    "idle": "#eeeeee",
    "roof": "#555555",
    "point": "#d9534f",
    "bar": "#337ab7",
    "slower": "#aaaaaa",
}


def _t(
    x: float, y: float, text: str, anchor: str = "start", size: int = 11, extra: str = ""
) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}"{extra}>'
        f"{escape(text)}</text>"
    )


def _open(cls: str, width: float, height: float, label: str) -> str:
    """The ``<svg>`` start tag: its natural size and a viewBox of the same size, so that the
    page's CSS (``max-width:100%``) scales the whole chart down in a narrow window instead of
    cutting it off."""
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="{cls}" width="{width}" '
            f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
            f'aria-label="{label}">')


@dataclass(frozen=True)
class TimelineInputs:
    """The model's per-warp picture: each memory period (``mem_l`` cycles) follows a computation
    period (``comp_cycles / mem_insts``); a new request departs at most every
    ``departure_delay`` cycles; one warp computes at a time on an SM."""

    comp_cycles: float  # per warp, all its computation
    mem_insts: float  # memory instructions (periods) per warp
    mem_l: float
    departure_delay: float
    n_warps: int
    mwp: float
    cwp: float


def _schedule(t: TimelineInputs, warps: int, periods: int) -> list[list[tuple[str, float, float]]]:
    """(kind, start, end) per warp: computation and memory periods in turn, computation
    serialised on the SM, memory departures at least ``departure_delay`` apart."""
    comp = t.comp_cycles / max(t.mem_insts, 1.0)
    ready = [0.0] * warps
    rows: list[list[tuple[str, float, float]]] = [[] for _ in range(warps)]
    sm_free = 0.0
    last_departure = -math.inf
    for _ in range(periods):
        for w in range(warps):
            start = max(ready[w], sm_free)
            rows[w].append(("compute", start, start + comp))
            sm_free = start + comp
            depart = max(sm_free, last_departure + t.departure_delay)
            last_departure = depart
            rows[w].append(("memory", depart, depart + t.mem_l))
            ready[w] = depart + t.mem_l
    return rows


def timeline_svg(t: TimelineInputs, max_warps: int = 8, periods: int = 3) -> str:
    """The warps of one SM over a few memory periods (a schematic of SPEC §2.4-2.5: MWP warps'
    memory periods overlap, the others wait; CWP warps' computation fits in one period)."""
    warps = max(1, min(t.n_warps, max_warps))
    rows = _schedule(t, warps, periods)
    end = max((e for r in rows for _, _, e in r), default=1.0) or 1.0
    left, width, row_h = 70, 560, 18
    top = 24
    height = top + warps * row_h + 44
    scale = width / end
    parts = [
        _open("timeline", left + width + 20, height, "MWP-CWP timeline"),
        _t(left, 14, f"MWP {t.mwp:.2f}, CWP {t.cwp:.2f}, N {t.n_warps} warps per SM"
           + (f" (first {warps} shown)" if t.n_warps > warps else "")),
    ]
    for w, row in enumerate(rows):
        y = top + w * row_h
        parts.append(_t(left - 6, y + 12, f"warp {w + 1}", "end", 10))
        for kind, s, e in row:
            parts.append(
                f'<rect x="{left + s * scale:.1f}" y="{y + 2}" '
                f'width="{max((e - s) * scale, 0.5):.1f}" height="{row_h - 4}" '
                f'fill="{COLOURS[kind]}"><title>{kind} {s:.0f}-{e:.0f} cycles</title></rect>'
            )
    y = top + warps * row_h + 14
    parts.append(_t(left, y, "0", "middle", 10))
    parts.append(_t(left + width, y, f"{end:.4g} cycles", "end", 10))
    y += 18
    for i, kind in enumerate(("compute", "memory")):
        x = left + i * 150
        parts.append(f'<rect x="{x}" y="{y - 9}" width="10" height="10" fill="{COLOURS[kind]}"/>')
        parts.append(_t(x + 14, y, f"{kind} period", size=10))
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True)
class RooflinePoint:
    label: str
    intensity: float  # warp instructions per DRAM byte
    perf: float  # warp instructions per second


def roofline_svg(points: list[RooflinePoint], peak: float, bandwidth: float, title: str) -> str:
    """Instruction roofline, log-log: warp instructions per second against warp instructions
    per DRAM byte, the device's issue roof and its DRAM bandwidth slope."""
    left, bottom, w, h = 60, 30, 380, 220
    ridge = peak / bandwidth
    xs = [p.intensity for p in points] + [ridge]
    x_lo = 10 ** math.floor(math.log10(min(xs)) - 1)
    x_hi = 10 ** math.ceil(math.log10(max(xs)) + 1)
    y_hi = 10 ** math.ceil(math.log10(peak) + 0.3)
    ys = [p.perf for p in points if p.perf > 0] + [bandwidth * x_lo]
    y_lo = 10 ** math.floor(math.log10(min(ys)) - 0.3)

    def px(x: float) -> float:
        return left + (math.log10(x) - math.log10(x_lo)) / math.log10(x_hi / x_lo) * w

    def py(y: float) -> float:
        y = max(y, y_lo)
        return 10 + h - (math.log10(y) - math.log10(y_lo)) / math.log10(y_hi / y_lo) * h

    parts = [
        _open("roofline", left + w + 30, h + bottom + 30, "roofline"),
        f'<rect x="{left}" y="10" width="{w}" height="{h}" fill="none" stroke="#ccc"/>',
        f'<polyline fill="none" stroke="{COLOURS["roof"]}" stroke-width="2" points="'
        f'{px(x_lo):.1f},{py(bandwidth * x_lo):.1f} {px(ridge):.1f},{py(peak):.1f} '
        f'{px(x_hi):.1f},{py(peak):.1f}"/>',
        _t(px(x_hi) - 4, py(peak) - 4, f"issue roof {peak:.3g} warp inst/s", "end", 10),
        _t(left + 4, h + 4, f"DRAM {bandwidth / 1e9:.4g} GB/s", size=10),
    ]
    for p in points:
        x, y = px(p.intensity), py(p.perf)
        parts.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{COLOURS["point"]}">'
            f"<title>{escape(p.label)}: {p.intensity:.3g} inst/B, {p.perf:.3g} inst/s"
            f"</title></circle>"
        )
        parts.append(_t(x + 7, y - 6, p.label, size=11))
    parts += [
        _t(left + w / 2, h + 28, "warp instructions per DRAM byte (log)", "middle", 10),
        _t(12, 10 + h / 2, "warp inst/s (log)", "middle", 10,
           f' transform="rotate(-90 12 {10 + h / 2:.1f})"'),
        _t(left, h + 20, f"{x_lo:.0e}", "middle", 9),
        _t(left + w, h + 20, f"{x_hi:.0e}", "middle", 9),
        _t(left - 4, 10 + h, f"{y_lo:.0e}", "end", 9),
        _t(left - 4, 18, f"{y_hi:.0e}", "end", 9),
        _t(left + w / 2, 24, title, "middle", 11),
        "</svg>",
    ]
    return "".join(parts)


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    colour: str = COLOURS["bar"]
    text: str = ""  # printed after the bar [default: the value]


def bars_svg(bars: list[Bar], unit: str, log: bool = False) -> str:
    """Horizontal bars, one per row (``log``: a log scale for values spanning decades)."""
    label_w, w, row_h = 190, 330, 20
    vals = [b.value for b in bars if b.value > 0 and math.isfinite(b.value)]
    hi = max(vals, default=1.0)
    lo = min(vals, default=1.0)
    parts = [
        _open("bars", label_w + w + 120, len(bars) * row_h + 24, "bar chart")
    ]
    for i, b in enumerate(bars):
        y = 4 + i * row_h
        if b.value > 0 and math.isfinite(b.value):
            frac = (
                (math.log10(b.value / lo) + 1) / (math.log10(hi / lo) + 1) if log else b.value / hi
            )
        else:
            frac = 0.0
        parts.append(_t(label_w - 6, y + 13, b.label[:32], "end", 11))
        parts.append(
            f'<rect x="{label_w}" y="{y + 2}" width="{max(frac * w, 1):.1f}" '
            f'height="{row_h - 5}" fill="{b.colour}"><title>{escape(b.label)}</title></rect>'
        )
        parts.append(_t(label_w + frac * w + 4, y + 13, b.text or f"{b.value:.4g} {unit}", size=10))
    parts.append(
        _t(label_w, len(bars) * row_h + 18, f"{unit}{' (log scale)' if log else ''}", size=10)
    )
    parts.append("</svg>")
    return "".join(parts)
