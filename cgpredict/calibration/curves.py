"""Curve fits of the calibration micro-benchmarks' sweeps (SPEC §6): latency plateaus of a
pointer chase, the fetch granularity of a stride sweep, straight-line fits, the departure delay
of a saturated stream, bank-conflict costs and instruction throughputs. Pure functions on
numbers, tested on synthetic curves.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "LinearFit",
    "Plateau",
    "bank_conflict_cost",
    "departure_delay",
    "fetch_granularity",
    "find_plateaus",
    "linear_fit",
    "sectors_per_warp",
    "warp_insts_per_cycle",
]


@dataclass(frozen=True)
class Plateau:
    """A run of consecutive sweep points at one latency: the sizes it spans, in bytes."""

    latency_cycles: float
    first_bytes: int
    last_bytes: int
    points: int


@dataclass(frozen=True)
class LinearFit:
    slope: float
    intercept: float
    r2: float


def find_plateaus(
    sizes: Sequence[int], cycles: Sequence[float], rel_tol: float = 0.15, min_points: int = 2
) -> tuple[Plateau, ...]:
    """Latency plateaus of a pointer-chase curve (sizes ascending).

    A plateau is a maximal run of consecutive points within `rel_tol` of the run's median;
    runs shorter than `min_points` (the ramp between two levels) are dropped, and neighbouring
    plateaus closer than `rel_tol` are merged. The last size of a plateau is the largest
    footprint still served by that level: a lower bound of its capacity.
    """
    if len(sizes) != len(cycles):
        raise ValueError(f"expected as many sizes as latencies, got {len(sizes)} and {len(cycles)}")
    order = np.argsort(np.asarray(sizes, dtype=float), kind="stable")
    xs = [int(sizes[i]) for i in order]
    ys = [float(cycles[i]) for i in order]
    runs: list[list[int]] = []
    for i, y in enumerate(ys):
        if runs:
            ref = float(np.median([ys[k] for k in runs[-1]]))
            if abs(y - ref) <= rel_tol * ref:
                runs[-1].append(i)
                continue
        runs.append([i])
    kept = [r for r in runs if len(r) >= min_points]
    merged: list[list[int]] = []
    for r in kept:
        if merged:
            a = float(np.median([ys[k] for k in merged[-1]]))
            b = float(np.median([ys[k] for k in r]))
            if abs(b - a) <= rel_tol * a:
                merged[-1].extend(r)
                continue
        merged.append(list(r))
    return tuple(
        Plateau(float(np.median([ys[k] for k in r])), xs[r[0]], xs[r[-1]], len(r)) for r in merged
    )


def fetch_granularity(strides: Sequence[int], cycles: Sequence[float], rel_tol: float = 0.1) -> int:
    """Line / sector size from a first-touch stride sweep.

    With stride s below the fetch granularity G only s/G of the accesses miss, so cycles per
    access rise with s and stay flat from s = G on: G is the smallest stride within `rel_tol`
    of the top plateau (the median of the points at or above 90% of the maximum).
    """
    s = np.asarray(strides, dtype=float)
    c = np.asarray(cycles, dtype=float)
    if s.size == 0 or s.size != c.size:
        raise ValueError("expected equally long, non-empty stride and latency lists")
    order = np.argsort(s)
    s, c = s[order], c[order]
    top = float(np.median(c[c >= 0.9 * c.max()]))
    return int(s[np.nonzero(c >= (1.0 - rel_tol) * top)[0][0]])


def linear_fit(x: Sequence[float], y: Sequence[float]) -> LinearFit:
    """Least-squares line y = slope * x + intercept, with its coefficient of determination."""
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xa.size < 2 or np.ptp(xa) == 0:
        raise ValueError("a line needs at least two distinct x values")
    slope, intercept = np.polyfit(xa, ya, 1)
    resid = ya - (slope * xa + intercept)
    ss = float(((ya - ya.mean()) ** 2).sum())
    r2 = 1.0 - float((resid**2).sum()) / ss if ss > 0 else 1.0
    return LinearFit(float(slope), float(intercept), r2)


def departure_delay(
    sectors_per_warp: Sequence[float],
    warp_insts: Sequence[float],
    ms: Sequence[float],
    clock_mhz: float,
    sm_count: int,
) -> LinearFit:
    """Departure delay of a saturated stream (MWP-CWP dd_L2 / dd_dram, SPEC eqs. (1)-(3)).

    SM cycles per warp memory instruction = cycles / (warp_insts / sm_count) grows by dd per
    transaction the warp instruction needs: the slope over the coalescing degrees is dd.
    """
    per_inst = [m * 1e3 * clock_mhz / (w / sm_count) for m, w in zip(ms, warp_insts)]
    return linear_fit(sectors_per_warp, per_inst)


def bank_conflict_cost(degrees: Sequence[int], cycles: Sequence[float]) -> tuple[float, float]:
    """(latency of a conflict-free shared load, extra cycles per additional conflict way)."""
    free = [c for d, c in zip(degrees, cycles) if d == 1]
    if not free:
        raise ValueError("the sweep has no conflict-free (degree 1) point")
    fit = linear_fit(degrees, cycles)
    return float(np.median(free)), fit.slope


def warp_insts_per_cycle(
    thread_ops: float, ms: float, clock_mhz: float, sm_count: int, warp_size: int = 32
) -> float:
    """Throughput in warp instructions per SM cycle of one instruction class."""
    return thread_ops / warp_size / (ms * 1e3 * clock_mhz * sm_count)


def sectors_per_warp(
    stride_words: int, sector_bytes: int = 32, word_bytes: int = 4, warp_size: int = 32
) -> int:
    """Distinct `sector_bytes` transactions of one warp load whose lane t reads word
    t * stride_words (stream.cu's count for 32-B sectors, recounted for another size)."""
    return len({t * stride_words * word_bytes // sector_bytes for t in range(warp_size)})
