"""The sweep's pictures, drawn with the shared plotting module (``cgpredict/plots.py``):
time against size (log-log, with the fitted exponent), a block-shape heatmap per device and
the devices side by side. Each figure sums a configuration's kernels (``report.total_ms``,
the program's predicted GPU time), except time against size: its exponent is the GPU work's
(``kernel.kernel_ms`` summed), which launch costs and module loading would flatten."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..plots import LABELS, figure, kernel_colour


@dataclass(frozen=True)
class Point:
    """One configuration's total predicted time."""

    file: str
    block: str
    device: str
    port: str
    model: str
    size: int | None  # the value of the first swept size, None when sizes are not swept
    ms: float
    work_ms: float = 0.0  # the kernels' work alone: no launch cost, no module load


def points(rows: list[dict], size_name: str | None) -> list[Point]:
    """One Point per configuration (its rows share ``report.total_ms``; one row a kernel,
    whose ``kernel.kernel_ms`` add up to the work)."""
    total: dict[tuple, float] = {}
    work: dict[tuple, float] = {}
    for r in rows:
        size = r.get(f"cfg.size.{size_name}") if size_name else None
        key = (r["cfg.file"], r["cfg.block"], r["cfg.device"], r["cfg.port"], r["cfg.model"], size)
        total.setdefault(key, float(r["report.total_ms"]))
        work[key] = work.get(key, 0.0) + float(r.get("kernel.kernel_ms", 0.0))
    return [Point(*key[:5], key[5], total[key], work[key]) for key in total]


def fit_exponent(xs: list[float], ys: list[float]) -> float | None:
    """The slope of log(time) against log(size), least squares; None with < 2 sizes."""
    if len(set(xs)) < 2 or min(ys) <= 0:
        return None
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def _name(p: Point) -> str:
    return Path(p.file).stem


def time_vs_size(pts: list[Point], size_name: str, path: Path) -> list[tuple[str, float]]:
    """Log-log time against the swept size, a line per (file, device, block, port, model);
    returns (line label, fitted exponent). Past MAX_LINES lines, only the first block, port
    and model are drawn (the title says so; the exponents of every line are still fitted)."""
    all_exps = _exponents(pts) if len(_keys(pts)) > MAX_LINES else None
    title = "predicted GPU work vs size"
    if all_exps is not None:
        first = pts[0]
        pts = [p for p in pts if (p.block, p.port, p.model) == (first.block, first.port,
                                                                first.model)]
        title += f" (block {first.block}, {first.port}, {first.model})"
    lines: dict[str, list[Point]] = {}
    for p in pts:
        label = f"{_name(p)} {p.device} {p.block}"
        label += f" {p.port}" if len({q.port for q in pts}) > 1 else ""
        label += f" {p.model}" if len({q.model for q in pts}) > 1 else ""
        lines.setdefault(label, []).append(p)
    out = []
    with figure(path, (6.5, 5.0)) as (_, ax):
        for i, (label, ps) in enumerate(sorted(lines.items())):
            ps = sorted(ps, key=lambda p: p.size)
            xs, ys = [p.size for p in ps], [p.work_ms for p in ps]
            k = fit_exponent(xs, ys)
            out.append((label, k))
            text = f"{label} (exponent {k:.2f})" if k is not None else label
            ax.plot(xs, ys, "o-", color=kernel_colour(i), label=text, ms=4)
        ax.set(xscale="log", yscale="log", xlabel=f"{size_name}",
               ylabel="predicted GPU work (ms; launches and module load left out)",
               title=title)
        ax.legend(fontsize=6 if len(lines) > 6 else 8)
    return all_exps if all_exps is not None else out


MAX_LINES = 12


def _keys(pts: list[Point]) -> set[tuple]:
    return {(p.file, p.device, p.block, p.port, p.model) for p in pts}


def _exponents(pts: list[Point]) -> list[tuple[str, float | None]]:
    """The fitted exponent of every (file, device, block, port, model) line."""
    out = []
    for key in sorted(_keys(pts)):
        ps = sorted((p for p in pts if (p.file, p.device, p.block, p.port, p.model) == key),
                    key=lambda p: p.size)
        label = f"{Path(key[0]).stem} {key[1]} {key[2]} {key[3]} {key[4]}"
        out.append((label, fit_exponent([p.size for p in ps], [p.ms for p in ps])))
    return out


def block_heatmap(pts: list[Point], device: str, path: Path) -> Path:
    """Predicted time per block shape (x across, y down) on one device: the first file,
    port and model at the largest size, colour on a log scale, the time written in each
    cell (blank: a shape not swept)."""
    mine = [p for p in pts if p.device == device]
    first = mine[0]
    top = max((p.size for p in mine if p.size is not None), default=None)
    mine = [p for p in mine if (p.file, p.port, p.model) == (first.file, first.port, first.model)
            and p.size == top]
    xs = sorted({int(p.block.split("x")[0]) for p in mine})
    ys = sorted({int(p.block.split("x")[1]) for p in mine})
    grid = np.full((len(ys), len(xs)), np.nan)
    for p in mine:
        bx, by = (int(v) for v in p.block.split("x"))
        grid[ys.index(by), xs.index(bx)] = p.ms
    with figure(path, (1.2 * len(xs) + 2.5, 1.0 * len(ys) + 2.0)) as (fig, ax):
        from matplotlib.colors import LogNorm

        im = ax.imshow(grid, cmap="viridis_r", aspect="auto", norm=LogNorm())
        for (r, c), v in np.ndenumerate(grid):
            if not math.isnan(v):
                ax.text(c, r, f"{v:.3g}", ha="center", va="center", fontsize=8, color="white")
        ax.set_xticks(range(len(xs)), [str(x) for x in xs])
        ax.set_yticks(range(len(ys)), [str(y) for y in ys])
        size = f", size {top}" if top is not None else ""
        ax.set(xlabel="block x", ylabel="block y",
               title=f"{_name(first)} on {device}{size}: ms")
        fig.colorbar(im, ax=ax, label=LABELS["predicted_ms"])
    return path


def device_bars(pts: list[Point], path: Path) -> Path:
    """Each file's best time (over block shapes) per device, at the largest size, first
    port and model; log axis."""
    top = max((p.size for p in pts if p.size is not None), default=None)
    port, model = pts[0].port, pts[0].model
    files = sorted({p.file for p in pts})
    devices = list(dict.fromkeys(p.device for p in pts))
    best = {}
    for p in pts:
        if p.size == top and p.port == port and p.model == model:
            k = (p.file, p.device)
            best[k] = min(best.get(k, math.inf), p.ms)
    width = 0.8 / max(len(devices), 1)
    with figure(path, (max(4.5, 1.3 * len(files) * len(devices) / 2 + 2), 4.2)) as (_, ax):
        for j, d in enumerate(devices):
            xs = [i + (j - (len(devices) - 1) / 2) * width for i in range(len(files))]
            ax.bar(xs, [best.get((f, d), 0.0) for f in files], width, label=d,
                   color=kernel_colour(j))
        ax.set_xticks(range(len(files)), [Path(f).stem for f in files])
        size = f" (size {top})" if top is not None else ""
        ax.set(yscale="log", ylabel=LABELS["predicted_ms"], title=f"best block per device{size}")
        ax.legend()
    return path


def draw_all(rows: list[dict], size_name: str | None, out_dir: Path) -> tuple[list[Path], list]:
    """Every picture of a sweep into ``out_dir``: (files written, fitted exponents).
    Raises ImportError without matplotlib."""
    pts = points(rows, size_name)
    written, exps = [], []
    if size_name and len({p.size for p in pts}) > 1:
        exps = time_vs_size(pts, size_name, out_dir / "time_vs_size.png")
        written.append(out_dir / "time_vs_size.png")
    if len({p.block for p in pts}) > 1:
        for d in dict.fromkeys(p.device for p in pts):
            written.append(block_heatmap(pts, d, out_dir / f"blocks_{_safe(d)}.png"))
    if len({p.device for p in pts}) > 1:
        written.append(device_bars(pts, out_dir / "devices.png"))
    return written, exps


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in Path(name).stem)
