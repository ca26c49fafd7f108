"""The shared plotting module (matplotlib, the ``plot`` extra): one palette, one set of axis
labels, one way to open and save a figure, for ``validate`` (predicted vs measured),
``advise --chart`` (the GPUPerf benefit chart) and ``compare --chart`` (GPU vs FPGA bars).
The HTML report draws its own inline SVG with the same colours (``render.svg.COLOURS``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = [
    "LABELS",
    "PALETTE",
    "benefit_chart",
    "compare_chart",
    "figure",
    "kernel_colour",
    "validation_plot",
]

#: Colours by meaning, shared with the HTML report.
PALETTE = {
    "memory": "#d9534f",
    "compute": "#337ab7",
    "gpu": "#5cb85c",
    "fpga": "#f0ad4e",
    "reference": "#333333",
}
#: Axis labels used wherever the same quantity is drawn.
LABELS = {
    "measured_ms": "measured time (ms)",
    "predicted_ms": "predicted time (ms)",
    "t_mem_exposed": "T'_mem (exposed memory cycles)",
    "t_comp": "T_comp (compute cycles)",
}
_KERNEL_COLOURS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
)


def kernel_colour(i: int) -> str:
    """The colour of the i-th kernel of a chart (the same order in every chart)."""
    return _KERNEL_COLOURS[i % len(_KERNEL_COLOURS)]


@contextmanager
def figure(path: Path, size: tuple[float, float] = (5.5, 5.0), dpi: int = 110) -> Iterator:
    """An Agg figure and axes, saved to ``path`` (format from its suffix) and closed on exit.
    Raises ImportError without matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=size)
    try:
        yield fig, ax
        fig.tight_layout()
        fig.savefig(path, dpi=dpi)
    finally:
        plt.close(fig)


def validation_plot(
    points: list[tuple[float, float, str]], title: str, path: Path
) -> Path:
    """Predicted against measured time, log-log, one colour per kernel, the diagonal and
    +-30 % lines. ``points``: (measured ms, predicted ms, kernel)."""
    with figure(path) as (_, ax):
        kernels = sorted({k for _, _, k in points})
        for i, k in enumerate(kernels):
            xs = [m for m, _, kk in points if kk == k]
            ys = [p for _, p, kk in points if kk == k]
            ax.scatter(xs, ys, label=k, color=kernel_colour(i), s=28)
        lo = min(min(m, p) for m, p, _ in points) / 1.5
        hi = max(max(m, p) for m, p, _ in points) * 1.5
        ax.plot([lo, hi], [lo, hi], "-", color=PALETTE["reference"], lw=0.8)
        for f in (0.7, 1.3):
            ax.plot([lo, hi], [lo * f, hi * f], ":", color=PALETTE["reference"], lw=0.6)
        ax.set(xscale="log", yscale="log", xlim=(lo, hi), ylim=(lo, hi),
               xlabel=LABELS["measured_ms"], ylabel=LABELS["predicted_ms"])
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=7, loc="upper left")
    return path


def benefit_chart(
    points: list[tuple[str, float, float]], title: str, path: Path
) -> Path:
    """GPUPerf's benefit chart: each kernel at (T'_mem, T_comp), the compute = memory
    diagonal. ``points``: (kernel, exposed memory cycles, compute cycles)."""
    with figure(path, (5.0, 5.0), 100) as (_, ax):
        top = max([max(c, m) for _, m, c in points] + [1.0]) * 1.1
        ax.plot([0, top], [0, top], "--", color=PALETTE["reference"], lw=1,
                label="compute = memory")
        for i, (name, mem, comp) in enumerate(points):
            ax.scatter(mem, comp, color=kernel_colour(i))
            ax.annotate(name, (mem, comp))
        ax.set(xlabel=LABELS["t_mem_exposed"], ylabel=LABELS["t_comp"], title=title,
               xlim=(0, top), ylim=(0, top))
        ax.legend(loc="upper left")
    return path


def compare_chart(
    rows: list[tuple[str, float, float]], title: str, path: Path
) -> Path:
    """GPU against FPGA time per kernel, grouped bars on a log axis. ``rows``: (kernel, GPU
    ms, FPGA ms)."""
    with figure(path, (max(4.0, 1.2 * len(rows) + 2), 4.0)) as (_, ax):
        xs = range(len(rows))
        width = 0.38
        ax.bar([x - width / 2 for x in xs], [g for _, g, _ in rows], width,
               color=PALETTE["gpu"], label="GPU")
        ax.bar([x + width / 2 for x in xs], [f for _, _, f in rows], width,
               color=PALETTE["fpga"], label="FPGA")
        ax.set_xticks(list(xs), [k for k, _, _ in rows])
        ax.set(yscale="log", ylabel=LABELS["predicted_ms"], title=title)
        ax.legend()
    return path
