"""A warp's slowest lane below the trace's lane spacing (SPEC §2.2, divergence; eq. (D4)).

The trace is smaller than the work size, so two neighbouring trace lanes stand ``s`` work
threads apart (``s = X_work / X_trace`` along x, the same along y). A work-size warp's 32
lanes are neighbours at the work size; the trace has no lanes that close. Eq. (D1) read on
groups of trace lanes inside one work-size warp's extent (the old (D2)) is a lower bound:
at W = H = 2048 traced at 128 a 16x16 block's warp spans one trace lane, so the escape-time
loop of the blind mandelbrot port got F = 1, where its warps run 1.081 times the mean
thread's iterations (Nsight: 6,732,420 warp iterations over 131,072 warps, 51.36 a warp,
against 47.53 a thread; a 32-wide warp 52.78, 1.111).

Eq. (D4) reads the trip field t(x, y) of a loop as self-affine: the mean difference of two
lanes d apart grows as d^H,

    S_L,a(d) = mean |t(lane) - t(lane + d along a)|,   H_L,a = log2(S_L,a(2) / S_L,a(1)),

clipped to [0, 1], over the pairs of trace lanes one and two apart along each mapped axis a
(same launch, same entry k of L). A warp's lanes at the work size are then the trace's
window of the same shape (``lane_trips.warp_span``: wx x wy trace lanes) shrunk s times, so
the window's excess of the slowest lane over the mean shrinks by s_a^H_L,a along each axis,
weighted by the warp's lane steps along it:

    F_L = 1 + (F_L,window - 1) * exp(-sum_a (w_a - 1) H_L,a ln s_a / sum_a (w_a - 1))   (D4)

with F_L,window eq. (D1) on the windows, s_a >= 1 the spacing along axis a and w_a the warp's
lanes along it. The rule is exact at both ends: a trip count linear in the lane (a
triangular loop: H = 1; the window's excess (w - 1)/2 over a mean s times smaller) and
independent trips (white noise: H = 0, the window's excess unchanged); at s = 1 (traced at
the work size) it is eq. (D1) itself. mandelbrot's 128x128 trace gives H = 0.758 along x and
0.626 along y, F = 1.072 / 1.119 for the 16x2 / 32x1 warps (brute force at 2048: 1.081 / 1.111).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from .lane_trips import LaneRecords, LaneSpan

__all__ = ["hurst_exponents", "lane_spacing", "scale_factors"]

SMOOTH = 1.0  # H where the trace has too few lanes to tell: the smooth field's, (D2)'s bound


def lane_spacing(traced: tuple[float, float], work: tuple[float, float]) -> tuple[float, float]:
    """s_a of eq. (D4): work threads between two neighbouring trace lanes along x and y, at
    least 1 (a trace at or above the work size has its lanes as close as the warp's)."""
    def one(t: float, w: float) -> float:
        return max(1.0, w / t) if t > 0 and w > 0 else 1.0
    return one(traced[0], work[0]), one(traced[1], work[1])


def hurst_exponents(rec: LaneRecords) -> dict[int, tuple[float, float]]:
    """H_L of eq. (D4) per loop of ``rec`` and axis (x, y): log2 of the mean lane difference
    two lanes apart over one lane apart along that axis, clipped to [0, 1]; SMOOTH along an
    axis without a pair two apart or whose lanes never differ; loops whose lanes never differ
    along either axis are left out."""
    if not len(rec.trips):
        return {}
    xr, yr = int(rec.x.max()) + 3, int(rec.y.max()) + 3
    radix = [int(rec.loop.max()) + 1, int(rec.row.max()) + 1, int(rec.entry.max()) + 1, yr, xr]
    if math.prod(radix) >= 2**62:
        return {}
    key = np.zeros(len(rec.trips), np.int64)
    for c, r in zip((rec.loop, rec.row, rec.entry, rec.y, rec.x), radix):
        key = key * r + c
    order = np.argsort(key, kind="stable")
    sk, st, sl = key[order], rec.trips[order], rec.loop[order]
    loops = radix[0]
    axes = (1,) if rec.grid == 1 else (1, xr)  # a lane's neighbour along x, along y
    diff, pairs = np.zeros((len(axes), 2, loops)), np.zeros((len(axes), 2, loops))
    for a, unit in enumerate(axes):
        for d in (1, 2):
            pos = np.minimum(np.searchsorted(sk, sk + d * unit), len(sk) - 1)
            hit = sk[pos] == sk + d * unit
            diff[a, d - 1] = np.bincount(sl[hit], np.abs(st[hit] - st[pos[hit]]), loops)
            pairs[a, d - 1] = np.bincount(sl[hit], minlength=loops)
    out = {}
    for lid in range(loops):
        h = [_exponent(diff[a, :, lid], pairs[a, :, lid]) for a in range(len(axes))]
        if any(x is not None for x in h):
            h = [SMOOTH if x is None else x for x in h] + [SMOOTH] * (2 - len(h))
            out[lid] = (h[0], h[1])
    return out


def _exponent(diff: np.ndarray, pairs: np.ndarray) -> float | None:
    """H of one axis from the summed differences and pair counts one and two lanes apart;
    None without both kinds of pair or without a difference one apart."""
    if not pairs[0] or not pairs[1] or diff[0] <= 0:
        return None
    s1, s2 = diff[0] / pairs[0], diff[1] / pairs[1]
    return min(max(math.log2(s2 / s1), 0.0), 1.0) if s2 > 0 else 0.0


def scale_factors(window: Mapping[int, float], hurst: Mapping[int, tuple[float, float]],
                  span: LaneSpan, spacing: tuple[float, float]) -> dict[int, float]:
    """Eq. (D4): each loop's factor on the trace's windows of ``span`` lanes carried to lanes
    ``spacing`` times closer, with the loop's H per axis (SMOOTH where ``hurst`` has none)."""
    steps = (span.x - 1, span.y - 1)
    if sum(steps) <= 0:
        return dict(window)
    out = {}
    for lid, f in window.items():
        h = hurst.get(lid, (SMOOTH, SMOOTH))
        shrink = sum(n * a * math.log(s) for n, a, s in zip(steps, h, spacing)) / sum(steps)
        out[lid] = 1.0 + (f - 1.0) * math.exp(-shrink)
    return out
