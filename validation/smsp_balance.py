"""The blind mandelbrot's sub-partition balance: eqs. (B3) and (B6) against the counters (t8).

The model's warp instruction count of mandelbrot is within 2 % of Nsight's, its time 10-12 %
short. This brute-forces the kernel (numpy, float32, the escape-time loop of every pixel of
the 2048 x 2048 work image), gives each work warp 35 + 11 x its slowest lane's iterations
(docs/models.md, (B5): Nsight's 80,703,259 warp instructions to 0.01 %) and schedules the
launch on the H100's 132 SMs two ways, each in units of the mean scheduler's instructions
(total / (132 x 4)), the time an even launch at one issue a cycle would take:

- (B3): each block's summed warps, an SM's resident blocks sharing its 4 issues a cycle;
- (B6): each warp on its own scheduler (warp w of slot k on (k W + w) mod 4), a block's slot
  held until its last warp ends; with and without the chain cap (a warp alone issues at
  most ``--cap`` a cycle: the model's 590.4 instructions over its 1,414-cycle chain, 0.42).

Each at the work resolution (every pixel) and at the trace's (128 x 128: a work lane takes
the traced pixel at its relative position, as cgpredict's (B5) weights do). The counters'
figure is ``sm__cycles_elapsed.max`` over ``smsp__inst_executed.avg`` (the launch's cycles
over the mean scheduler's instructions). Needs no GPU; about a minute of CPU.

    python validation/smsp_balance.py [--cap 0.42]

``--spread`` (fifteenth round, t5) prints (B7)'s share, over the equal warps' waves (B7e),
three ways: every pixel's warps, the trace's pixels read at each lane's nearest traced one
(``warp_work``), and the trace's warps drawn as a block's order statistics, eq. (B8)
(``warp_spread.spread_work``); and (B6)'s live warps a scheduler over its active time each
way, against the counters' ``smsp__warps_active.avg.per_cycle_active``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from ncu_csv import read_ncu

from cgpredict.block import Block
from cgpredict.block_schedule import makespan
from cgpredict.smsp_schedule import warp_makespan, warp_residency, warp_share, warp_work
from cgpredict.warp_spread import spread_work

ROOT = Path(__file__).resolve().parent / "measured"
NCU = {"16x16": "h100-worst2-2026-11-27/blind-ncu/mandelbrot-16x16.csv",
       "64x4": "h100-worst2-2026-11-27/blind-ncu/mandelbrot-64x4.csv",
       "32x32": "h100-blind-2026-11-27/plain-ncu/mandelbrot-32x32.csv",
       "32x8": "h100-blind-2026-11-27/plain-ncu/mandelbrot-32x8.csv"}
SIZE, TRACE, MAXIT, SMS, SCHED, WARPS_SM = 2048, 128, 256, 132, 4, 64


def iterations(size: int) -> np.ndarray:
    """Each pixel's escape-time iterations (rows y, columns x), as examples/blind/mandelbrot.c."""
    px = np.arange(size, dtype=np.float32)
    cr = np.broadcast_to(np.float32(-2.0) + px * np.float32(3.0 / size), (size, size))
    ci = np.broadcast_to((np.float32(-1.5) + px * np.float32(3.0 / size))[:, None], (size, size))
    zr, zi = np.zeros((size, size), np.float32), np.zeros((size, size), np.float32)
    it = np.zeros((size, size), np.int32)
    live = np.ones((size, size), bool)
    for _ in range(MAXIT):
        live &= zr * zr + zi * zi <= np.float32(4.0)
        if not live.any():
            break
        t = zr * zr - zi * zi + cr
        zi = np.where(live, np.float32(2.0) * zr * zi + ci, zi)
        zr = np.where(live, t, zr)
        it += live
    return it


def counters(rel: str) -> float:
    """sm__cycles_elapsed.max over smsp__inst_executed.avg of one committed ncu CSV (its
    last launch)."""
    m = read_ncu(ROOT / rel)[-1].metrics
    return m["sm__cycles_elapsed.max"] / m["smsp__inst_executed.avg"]


def shapes_row(it: np.ndarray, traced: np.ndarray, shape: str, cap: float) -> str:
    """One Markdown row: the counters' ratio and each schedule's, in mean-scheduler units."""
    bx, by = (int(v) for v in shape.split("x"))
    block = Block(bx, by)
    wpb = bx * by // 32
    slots = min(WARPS_SM // wpb, 32)
    out = [shape, f"{counters(NCU[shape]):.3f}"]
    for field, grid in ((it.astype(np.float64), SIZE), (traced.astype(np.float64), TRACE)):
        iters = warp_work(field.ravel(), (grid, grid), (SIZE, SIZE), block, 32)
        cost = 35.0 + 11.0 * iters
        mean = cost.sum() / (SMS * SCHED)
        b3 = makespan(cost.sum(axis=1) / SCHED, SMS, slots) / mean
        b6 = warp_makespan(cost, SMS, slots, SCHED) / mean
        b6c = warp_makespan(cost, SMS, slots, SCHED, cap) / mean
        out += [f"{b3:.3f}", f"{b6:.3f}", f"{b6c:.3f}"]
    return "| " + " | ".join(out) + " |"


def spread_row(it: np.ndarray, traced: np.ndarray, shape: str) -> str:
    """One Markdown row of (B7)'s share (over (B7e), cap 1) and (B6)'s live warps a
    scheduler over its active time, three ways: every pixel's warps, the trace's nearest
    pixels, and the trace's warps drawn by (B8) (warp_spread.py); then the counters' live
    warps (``smsp__warps_active.avg.per_cycle_active``)."""
    bx, by = (int(v) for v in shape.split("x"))
    block = Block(bx, by)
    slots = min(WARPS_SM // (bx * by // 32), 32)
    shares, lives = [], []
    for iters in (warp_work(it.astype(np.float64).ravel(), (SIZE, SIZE), (SIZE, SIZE), block, 32),
                  warp_work(traced.astype(np.float64).ravel(), (TRACE, TRACE), (SIZE, SIZE),
                            block, 32),
                  spread_work(traced.astype(np.float64).ravel(), (TRACE, TRACE), (SIZE, SIZE),
                              block, 32)):
        cost = 35.0 + 11.0 * iters
        shares.append(f"{warp_share(cost, SMS, slots, SCHED):.3f}")
        lives.append(f"{warp_residency(cost, SMS, slots, SCHED)[1]:.2f}")
    m = read_ncu(ROOT / NCU[shape])[-1].metrics
    return "| " + " | ".join([shape, *shares, *lives,
                              f"{m['smsp__warps_active.avg.per_cycle_active']:.2f}"]) + " |"


def main() -> None:
    """Print the table (and, with --spread, the shares of eq. (B8))."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cap", type=float, default=0.42, help="a lone warp's issues a cycle")
    ap.add_argument("--spread", action="store_true",
                    help="only (B7)'s shares: every pixel, the trace's, (B8)'s draws")
    args = ap.parse_args()
    it = iterations(SIZE)
    step = SIZE // TRACE
    traced = it[::step, ::step]  # the trace's pixel i is the work's pixel step x i
    if args.spread:
        print("| block | share: every pixel | the trace's, nearest | (B8) | live warps: every "
              "pixel | the trace's, nearest | (B8) | counters |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for shape in NCU:
            print(spread_row(it, traced, shape))
        return
    print(f"Blind mandelbrot {SIZE}^2 on {SMS} SMs x {SCHED} schedulers; ratios to the mean "
          f"scheduler's warp instructions; cap {args.cap}\n")
    print("| block | counters | (B3) work | (B6) work | (B6) work, cap | (B3) trace | "
          "(B6) trace | (B6) trace, cap |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for shape in NCU:
        print(shapes_row(it, traced, shape, args.cap))


if __name__ == "__main__":
    main()
