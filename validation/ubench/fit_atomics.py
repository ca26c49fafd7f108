"""Check the H100's per-slice atomic bound (eq. (A2), cgpredict/l2_slices.py) against every
atomic micro-benchmark: atomics.cu's footprint sweep (its hash of the thread index), and
atomics_data.cu's and slice_map.cu's (the histogram port's data at 32..64K bins, 256 bins at
four placements, one-address / one-line / 8-address warp patterns).

Replays each point's addresses (a sample of warp instructions), counts the busiest slice's
sector passes with the device file's slice map, and prices them at the device's
``atomic_slice_cycles`` (measured: the one-address cost). Prints the error per point and the
mean over the points where the atomic unit alone binds (footprints of at most 1024 bins, 4x
or more the 0.25 ms the kernel takes whatever its footprint from 8192 bins up: at 2048 and 4096
bins that floor adds to the atomic time, which the bound, a lower bound, leaves out), and the
least-error cost for comparison (not used). Usage: python validation/ubench/fit_atomics.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from cgpredict.devices import load_device
from cgpredict.l2_slices import slice_stats

MEASURED = Path(__file__).resolve().parents[1] / "measured"
SWEEPS = ("h100-session-2026-11-26/ubench/atomics.json",
          "h100-session-2026-11-26/ubench/atomics-4m.json",
          "h100-session-2026-11-27/probes-2/atomics.json")
DATA = "h100-session-2026-11-27/atomics-data/atomics_data.json"
MAP = "h100-session-2026-11-27/probes-2/slice_map.json"
LANES = 1 << 15  # lanes replayed per point
CLOCK_HZ = 1.98e9
BINDS = 1024  # the atomic unit alone binds up to this footprint (bins): 4x the floor


def sweep_addresses(lanes: int, bins: int) -> np.ndarray:
    """Byte offsets that atomics.cu's bins_i kernel updates for its first ``lanes`` threads."""
    i = np.arange(lanes, dtype=np.uint64)
    h = (i * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)
    h ^= h >> np.uint64(15)
    return (h & np.uint64(bins - 1)).astype(np.int64) * 4


def port_data(lanes: int) -> np.ndarray:
    """The histogram port's data (validation/cuda/user/histogram.cu's generator)."""
    out = np.empty(lanes, np.int64)
    seed = 7
    for k in range(lanes):
        seed = (seed * 1103515245 + 12345) & 0xFFFFFFFF
        out[k] = seed >> 16
    return out


def points() -> list[tuple[str, int, np.ndarray, float]]:
    """(name, bins, byte offsets of the first LANES lanes, cycles per warp instruction)."""
    per_inst = 1e-3 * CLOCK_HZ / ((1 << 24) / 32)
    out = []
    for f in SWEEPS:
        d = json.loads((MEASURED / f).read_text())
        for p in d["sweep"]:
            out.append((f"sweep {p['bins']}", p["bins"], sweep_addresses(LANES, p["bins"]),
                        p["ms"] * 1e-3 * CLOCK_HZ / (p["ops"] / 32)))
    data = port_data(LANES)
    d = json.loads((MEASURED / DATA).read_text())
    for p in d["random"]:
        out.append((f"port data {p['bins']}", p["bins"], (data & (p["bins"] - 1)) * 4,
                    p["ms"] * per_inst))
    for p in d["placed_256"]:
        out.append((f"port data 256 at +{p['offset']}", 256, (data & 255) * 4 + p["offset"],
                    p["ms"] * per_inst))
    i = np.arange(LANES)
    pat = d["patterns_256"]
    for name, addr in (("warp_same", (i >> 5) & 255), ("lane_seq", i & 255),
                       ("lane_same8", (i >> 2) & 255)):
        out.append((name, 256, addr * 4, pat[f"{name}_ms"] * per_inst))
    m = json.loads((MEASURED / MAP).read_text())
    for p in m["histogram_256"][:4]:
        out.append((f"sweep 256 at +{p['offset']}", 256,
                    sweep_addresses(LANES, 256) + p["offset"], p["ms"] * per_inst))
    return out


def busiest_passes(addr: np.ndarray, smap) -> float:
    """Sector passes per warp instruction on the busiest slice (eq. (A2))."""
    st = slice_stats(addr, np.arange(len(addr)) // 32, smap, base=0)  # the array's start
    return st.requests_per_warp * st.busiest_share


def main() -> int:
    dev = load_device("h100")
    pts = points()
    x = np.array([busiest_passes(a, dev.slice_map) for _, _, a, _ in pts])
    t = np.array([c for _, _, _, c in pts])
    err = dev.atomic_slice_cycles * x / t - 1
    binds = np.array([b <= BINDS for _, b, _, _ in pts])
    for (name, _, _, c), e, xx in zip(pts, err, x):
        print(f"{name:28s} {c:7.2f} cycles a warp instruction, {xx:6.2f} passes: {e:+.1%}")
    print(f"atomic_slice_cycles {dev.atomic_slice_cycles}: MAPE {np.mean(abs(err[binds])):.1%}, "
          f"worst {np.max(abs(err[binds])):.1%} over {binds.sum()} points of <= {BINDS} bins")
    ratio = t[binds] / x[binds]
    print(f"(least-error cost, not used: median {np.median(ratio):.3f} cycles a pass)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
