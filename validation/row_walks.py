"""Row walks against their Nsight Compute counters: is a row walk's time beyond its L1
wavefronts a latency (its misses' wait) or an SM-side cost of its fills? (eq. (B2f))

For each L1 row walk (one thread per row, 8 warps an SM) of the extended counters of the
lease of 2026-11-27 (``validation/measured/h100-session-2026-11-27b/counters``), on its busiest
SM: ``sm__cycles_active`` (C), ``l1tex__data_pipe_lsu_wavefronts`` (W) and
``l1tex__m_xbar2l1tex_read_sectors`` (F, the sectors the crossbar fills into the L1), per
warp-iteration, and (C - W) / F; and the event-timed kernel (1980 MHz,
``nvidia-h100-80gb-hbm3*.json``) over ncu's duration at its locked base clock (C / cycles
elapsed x duration): a time set in SM cycles gives the clock ratio (about 1.245), a latency in
nanoseconds gives 1. Stdlib only: ``python validation/row_walks.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

from ncu_csv import read_ncu

ROOT = Path(__file__).resolve().parent / "measured"
NCU = ROOT / "h100-session-2026-11-27b" / "counters"
EVENTS = {"plain": ROOT / "nvidia-h100-80gb-hbm3.json",
          "restrict": ROOT / "nvidia-h100-80gb-hbm3-restrict.json"}
# (port, corpus file, kernel, iterations a thread)
WALKS = [("restrict", "atax", "atax_k1", 4096), ("restrict", "bicg", "bicg_k2", 4096),
         ("restrict", "dct1d", "dct1d", 1024), ("plain", "atax", "atax_k1", 4096),
         ("plain", "bicg", "bicg_k2", 4096), ("plain", "mvt", "mvt_k1", 4096),
         ("plain", "dct1d", "dct1d", 1024), ("plain", "gesummv", "gesummv", 4096),
         ("plain", "gemver", "gemver_k3", 2048),
         ("plain", "atax", "atax_k2", 4096)]  # the control: a column walk, latency-bound
WARPS = 8


def event_ms(port: str, bench: str, kernel: str) -> float:
    """The median event-timed launch of ``kernel`` in the port's reference file."""
    for row in json.loads(EVENTS[port].read_text())["results"]:
        if row["kernel"] == bench and row["config"] == "256x1":
            for launch in row["result"]["launches"]:
                if launch["name"] == kernel:
                    return float(launch["median_ms"])
    raise KeyError(f"{port} {bench} {kernel}")


def walk_figures(port: str, bench: str, kernel: str, iters: int) -> dict[str, float]:
    """Per warp-iteration on the busiest SM: cycles, wavefronts, fills and (C - W) / F;
    and the event time over ncu's at the base clock."""
    for launch in read_ncu(NCU / f"{port}-ncu" / f"{bench}-256x1.csv"):
        if not launch.kernel.startswith(kernel):
            continue
        m = launch.metrics
        cyc, wf = m["sm__cycles_active.max"], m["l1tex__data_pipe_lsu_wavefronts.max"]
        fill = m["l1tex__m_xbar2l1tex_read_sectors.max"]
        ncu_ms = m["gpu__time_duration.sum"] / 1e6
        per = WARPS * iters
        return {"cycles": cyc / per, "wavefronts": wf / per, "fills": fill / per,
                "per_fill": (cyc - wf) / fill,
                "ncu_over_event": ncu_ms / event_ms(port, bench, kernel)}
    raise KeyError(f"{port} {bench} {kernel}")


SESSION_B = NCU  # its plain.json / restrict.json: the same ports event-timed a day later
# (port, corpus file, kernel, iterations, L1 lines a warp-iteration by hand, filled sectors)
TIMED = [("restrict", "atax", "atax_k1", 4096, 33, 4), ("restrict", "dct1d", "dct1d", 1024, 33, 4),
         ("restrict", "gesummv", "gesummv", 4096, 65, 8),
         ("restrict", "gemver", "gemver_k3", 2048, 33, 4),
         ("plain", "atax", "atax_k1", 4096, 34, 4), ("plain", "gesummv", "gesummv", 4096, 70, 8)]
CLOCK_HZ = 1.98e9


def session_ms(path: Path, bench: str, kernel: str) -> float | None:
    """The median event-timed launch of ``kernel`` in one measure.py file, None if absent."""
    for row in json.loads(path.read_text())["results"]:
        if row["kernel"] == bench and row["config"] == "256x1" and "result" in row:
            for launch in row["result"]["launches"]:
                if launch["name"] == kernel:
                    return float(launch["median_ms"])
    return None


def timed_table() -> None:
    """Event-timed SM cycles a warp-iteration (1980 MHz, 8 warps an SM) of both sessions
    against the walk's L1 lines: what is left a filled sector."""
    print("\n| port | kernel | lines | fills | cycles (26) | cycles (27b) | left a fill (26) |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for port, bench, kernel, iters, lines, fills in TIMED:
        per = CLOCK_HZ / 1e3 / (WARPS * iters)
        a = event_ms(port, bench, kernel) * per
        b_ms = session_ms(SESSION_B / f"{port}.json", bench, kernel)
        b = f"{b_ms * per:.2f}" if b_ms else "-"
        per_fill = (a - lines) / fills
        print(f"| {port} | {kernel} | {lines} | {fills} | {a:.2f} | {b} | {per_fill:.2f} |")


def main() -> None:
    print("| port | kernel | cycles | wavefronts | fills | (C - W) / F | ncu ms / event ms |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for port, bench, kernel, iters in WALKS:
        f = walk_figures(port, bench, kernel, iters)
        print(f"| {port} | {kernel} | {f['cycles']:.2f} | {f['wavefronts']:.2f} | {f['fills']:.2f}"
              f" | {f['per_fill']:.3f} | {f['ncu_over_event']:.3f} |")
    timed_table()


if __name__ == "__main__":
    main()
