#!/usr/bin/env python3
"""Reads block_rate.cu's JSON (round 16, t3): the GPU's block dispatch rate, eq. (BD).

For every kernel and block size, the least-squares line of the launch's time (one cudaEvent
pair on an idle GPU) over its blocks, from ``MIN_BLOCKS`` blocks on: the slope is the
chip-wide cost of one block (ns, and SM cycles at the board's clock), the intercept what a
launch costs without blocks (the model's launch_call_us + launch_gap_us). The empty_smem rows
(one or two blocks an SM at a time) give, times the SMs, one block's turnover on its SM.
``python validation/ubench/block_rate_read.py OUT/block_rate.json``."""

from __future__ import annotations

import json
import statistics
import sys
from dataclasses import dataclass

MIN_BLOCKS = 2000  # fewer blocks than this: the launch's fixed cost, not the rate


@dataclass(frozen=True)
class Rate:
    """One kernel at one block size (or shared-memory size): the line time = a + b x blocks."""

    kernel: str
    threads: int
    smem: int
    points: int
    slope_ns: float
    intercept_us: float

    def cycles(self, clock_mhz: float) -> float:
        """The slope in SM cycles a block, chip-wide."""
        return self.slope_ns * clock_mhz * 1e-3


def fit_line(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares (slope, intercept) of ys over xs (at least two distinct xs)."""
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return slope, my - slope * mx


def rates(data: dict) -> list[Rate]:
    """One line per (kernel, threads, smem) with at least two points of MIN_BLOCKS or more."""
    groups: dict[tuple[str, int, int], list[tuple[float, float]]] = {}
    for r in data["rows"]:
        if r["blocks"] >= MIN_BLOCKS and r["ms"] > 0:
            key = (r["kernel"], r["threads"], r["smem"])
            groups.setdefault(key, []).append((r["blocks"], r["ms"] * 1e3))
    out = []
    for (kernel, threads, smem), pts in groups.items():
        if len({b for b, _ in pts}) < 2:
            continue
        slope, icpt = fit_line([b for b, _ in pts], [t for _, t in pts])
        out.append(Rate(kernel, threads, smem, len(pts), slope * 1e3, icpt))
    return out


def main(path: str) -> None:
    data = json.loads(open(path).read())
    mhz, sms = data["clock_khz"] / 1e3, data["sms"]
    print(f"{data['gpu']}, {sms} SMs, {mhz:.0f} MHz")
    print("| kernel | threads | smem B | points | ns a block | cycles a block | "
          "cycles an SM | intercept us |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rates(data):
        print(f"| {r.kernel} | {r.threads} | {r.smem} | {r.points} | {r.slope_ns:.4f} | "
              f"{r.cycles(mhz):.3f} | {r.cycles(mhz) * sms:.0f} | {r.intercept_us:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1])
