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
"""

from __future__ import annotations

import math
from pathlib import Path

from ncu_csv import read_ncu

from cgpredict.devices import load_device
from cgpredict.models.retire import expected_max_normal

SESSION = Path("validation/measured/h100-session-2026-11-26")
GLOBS = ("measured-ncu/*.csv", "measured-user-ncu/*.csv", "sizes/*-ncu/*.csv")


def _launches(path: Path):
    """(kernel, metric -> value, None where a cell is no number) of each launch in an
    ``ncu --csv --page raw`` file."""
    for launch in read_ncu(path):
        yield launch.kernel, {name: launch.metrics.get(name) for name in launch.cells}


def main() -> None:
    h100 = load_device("h100")
    round_trip = h100.l2_latency_cycles + h100.dram_latency_cycles
    clock_ghz = h100.freq_hz / 1e9
    print(f"{'file':40s} {'kernel':16s} {'W':>3s} {'waves':>6s} {'wave':>8s} {'gap':>6s} "
          f"{'d':>5s} {'R1':>5s} {'gap/R1':>6s}")
    for path in sorted(p for g in GLOBS for p in SESSION.glob(g)):
        seen = set()
        for kernel, m in _launches(path):
            waves = m.get("launch__waves_per_multiprocessor") or 0.0
            key = (kernel, m.get("launch__block_size"))
            if waves < 2 or key in seen:
                continue
            seen.add(key)
            warps_per_block = math.ceil(m["launch__block_size"] / h100.warp_size)
            wave = m["gpu__time_duration.sum"] * clock_ghz / waves
            busy = (m["sm__warps_active.avg.pct_of_peak_sustained_active"]
                    / m["sm__maximum_warps_per_active_cycle_pct"])
            gap = wave * (1 - busy)
            d = m["dram__bytes_read.sum"] / (m["launch__thread_count"] / 32) / 128
            r1 = (expected_max_normal(warps_per_block) * h100.dram_latency_cv * round_trip
                  * math.sqrt(d))
            print(f"{str(path.relative_to(SESSION)):40s} {kernel[:16]:16s} {warps_per_block:3d} "
                  f"{waves:6.2f} {wave:8.0f} {gap:6.0f} {d:5.2f} {r1:5.0f} {gap / r1:6.2f}")


if __name__ == "__main__":
    main()
