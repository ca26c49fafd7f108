#!/usr/bin/env python3
"""Block-retirement gaps from Nsight Compute counters against eq. (R1), per launch.

For each profiled launch of the committed H100 session (``measured-ncu``,
``measured-user-ncu``, ``sizes/*-ncu``): a wave lasts ``t x clock / waves`` cycles; the
SM's warp slots are occupied ``sm__warps_active / sm__maximum_warps_per_active_cycle`` of
that time, so the slots a wave leaves idle, ``wave x (1 - that share)``, are how long a
block outlasts its mean warp (and, for a fractional last wave, the launch's tail). Beside
it (R1) = z(W) x dram_latency_cv x (l2 + dram latency) x sqrt(d), d the launch's DRAM
read bytes per warp over one coalesced warp load (128 B). Launches of under 2 waves are
left out (no handover). Run from the repository root: ``python validation/retire_gap.py``.

``python validation/retire_gap.py FOLDER ...`` reads the CSVs of other lease folders
instead (sixteenth round, t2: the 1024x1 launches of ``h100-worst-2026-11-27/blind-ncu``,
``more-ncu``, ``h100-worst2-2026-11-27/*-ncu``), whose extended counters carry neither
``launch__waves_per_multiprocessor`` nor the warp limit: there a wave is the grid's blocks
over the blocks the warp limit admits on every SM (``min(max_warps_per_sm / W,
max_blocks_per_sm)`` x ``sm_count``, which holds where registers and shared memory admit as
many, as on the ports read here) and the slots' peak is 100 %.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

from ncu_csv import read_ncu

from cgpredict.devices import load_device
from cgpredict.models.retire import expected_max_normal

SESSION = Path("validation/measured/h100-session-2026-11-26")
GLOBS = ("measured-ncu/*.csv", "measured-user-ncu/*.csv", "sizes/*-ncu/*.csv")


def _dims(text: str | None) -> float:
    """The product of an ncu launch dimension cell, "(1024, 1, 1)"; 0 if unreadable."""
    n = 1.0
    for part in (text or "").strip("() ").split(","):
        try:
            n *= float(part)
        except ValueError:
            return 0.0
    return n


def launch_shape(m: dict, cells: dict, device) -> tuple[float, float, float]:
    """(warps a block, waves, the slots' peak share) of one launch: ncu's own figures where
    the CSV has them, else from its "Block Size" and "Grid Size" cells and the warp limit."""
    threads = m.get("launch__block_size") or _dims(cells.get("Block Size"))
    w = math.ceil(threads / device.warp_size)
    waves = m.get("launch__waves_per_multiprocessor")
    if waves is None:
        per_sm = min(device.max_warps_per_sm // max(w, 1), device.max_blocks_per_sm)
        waves = _dims(cells.get("Grid Size")) / max(per_sm * device.sm_count, 1)
    peak = m.get("sm__maximum_warps_per_active_cycle_pct") or 100.0
    return w, waves, peak


def main() -> None:
    h100 = load_device("h100")
    round_trip = h100.l2_latency_cycles + h100.dram_latency_cycles
    clock_ghz = h100.freq_hz / 1e9
    print(f"{'file':40s} {'kernel':16s} {'W':>3s} {'waves':>6s} {'wave':>8s} {'gap':>6s} "
          f"{'d':>5s} {'R1':>5s} {'gap/R1':>6s}")
    folders = [Path(a) for a in sys.argv[1:]]
    paths = (sorted(p for f in folders for p in f.glob("*.csv")) if folders
             else sorted(p for g in GLOBS for p in SESSION.glob(g)))
    for path in paths:
        seen = set()
        for launch in read_ncu(path):
            kernel, m = launch.kernel, launch.metrics
            warps_per_block, waves, peak = launch_shape(m, launch.cells, h100)
            key = (kernel, warps_per_block)
            if (waves < 2 or key in seen or "gpu__time_duration.sum" not in m
                    or "sm__warps_active.avg.pct_of_peak_sustained_active" not in m):
                continue
            seen.add(key)
            wave = m["gpu__time_duration.sum"] * clock_ghz / waves
            busy = m["sm__warps_active.avg.pct_of_peak_sustained_active"] / peak
            gap = wave * (1 - busy)
            threads = m.get("launch__thread_count") or (
                _dims(launch.cells.get("Grid Size")) * _dims(launch.cells.get("Block Size")))
            warps = threads / h100.warp_size
            d = m["dram__bytes_read.sum"] / warps / 128
            r1 = (expected_max_normal(warps_per_block) * h100.dram_latency_cv * round_trip
                  * math.sqrt(d))
            name = str(path.relative_to(SESSION)) if not folders else str(path)[-40:]
            ratio = f"{gap / r1:6.2f}" if r1 > 0 else f"{'-':>6s}"
            print(f"{name:40s} {kernel[:16]:16s} {warps_per_block:3d} "
                  f"{waves:6.2f} {wave:8.0f} {gap:6.0f} {d:5.2f} {r1:5.0f} {ratio}")


if __name__ == "__main__":
    main()
