"""Fit the H100's per-slice atomic cost and slice mapping on atomics.cu's footprint sweep.

Replays each sweep point's addresses (the kernel's hash of the thread index into ``bins``
ints), maps them to L2 slices with cgpredict.l2_slices for each candidate mapping (an
interleave, with or without the XOR of the address bit of half a granule into the slice
number's lowest bit), and fits the one cost per request that best matches the measured times
(the one that minimises the mean absolute percentage error). Prints one line per mapping
and the per-point table of the best one. Usage: python validation/ubench/fit_atomics.py
[ubench folder]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from cgpredict.l2_slices import SliceMap, slice_stats

HERE = Path(__file__).resolve().parents[1] / "measured/h100-session-2026-11-26/ubench"
SLICES = 80  # ncu device__attribute_l2s_count
SAMPLE = 1 << 19  # lanes replayed per point (the hash is uniform over the thread index)


def sweep_addresses(lanes: int, bins: int) -> np.ndarray:
    """Byte offsets that atomics.cu's bins_i kernel updates for its first ``lanes`` threads."""
    i = np.arange(lanes, dtype=np.uint64)
    h = (i * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)
    h ^= h >> np.uint64(15)
    return (h & np.uint64(bins - 1)).astype(np.int64) * 4


def busiest_requests(ops: int, bins: int, smap: SliceMap) -> float:
    """Requests of the busiest slice for ``ops`` updates over ``bins`` (eq. (A2))."""
    lanes = min(ops, SAMPLE)
    addr = sweep_addresses(lanes, bins)
    st = slice_stats(addr, np.arange(lanes) // 32, smap)
    return ops / 32 * st.requests_per_warp * st.busiest_share


def points(folder: Path) -> list[tuple[int, int, float]]:
    """(ops, bins, cycles) of every sweep point of both problem sizes."""
    out = []
    for f in sorted(folder.glob("atomics*.json")):
        d = json.loads(f.read_text())
        clk = d["clock_khz"] * 1e3
        out += [(p["ops"], p["bins"], p["ms"] * 1e-3 * clk) for p in d["sweep"]]
    return out


def least_mape_factor(x: np.ndarray, t: np.ndarray) -> float:
    """The c minimising mean |c x / t - 1| = mean (x/t) |c - t/x|: the median of the ratios
    t/x weighted by x/t (the lower weighted median)."""
    r, w = t / x, x / t
    order = np.argsort(r)
    cum = np.cumsum(w[order])
    return float(r[order][np.searchsorted(cum, cum[-1] / 2)])


def fit(pts, smap: SliceMap) -> tuple[float, np.ndarray]:
    """(cycles per request, relative error per point) for one slice mapping."""
    x = np.array([busiest_requests(n, b, smap) for n, b, _ in pts])
    t = np.array([c for _, _, c in pts])
    c = least_mape_factor(x, t)
    return c, c * x / t - 1


def main(argv: list[str]) -> int:
    folder = Path(argv[1]) if len(argv) > 1 else HERE
    pts = points(folder)
    best = None
    for g in (128, 256, 512, 1024, 2048):
        for xor in (0, g // 2):
            smap = SliceMap(slices=SLICES, interleave_bytes=g, xor_bytes=xor)
            c, err = fit(pts, smap)
            mape = float(np.mean(np.abs(err)))
            print(f"interleave {g:5d} B, xor {xor:4d} B: {c:.3f} cycles/request, "
                  f"MAPE {mape:.1%}, worst {np.max(np.abs(err)):.1%}")
            if best is None or mape < best[0]:
                best = (mape, smap, c, err)
    _, smap, c, err = best
    print(f"best: interleave {smap.interleave_bytes} B, xor {smap.xor_bytes} B, "
          f"{c:.3f} cycles per request")
    for (n, b, _), e in zip(pts, err):
        print(f"  {n:9d} ops {b:8d} bins: {e:+.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
