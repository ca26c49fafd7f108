"""One scheduler's issue rate on the blind mandelbrot's loop, by live warps (round 14, t5).

Nsight Compute gives mandelbrot 0.92 issues an active cycle of a scheduler at every block
shape (``smsp__issue_active``) with 8.5 warps eligible on the mean scheduler and 13.6
resident; the model issues one a cycle wherever a scheduler has warps enough ((B6), cap).
This asks whether the loop's own code caps the rate below one at that many warps: a
cycle-stepped scheduler runs ``n`` warps through the sm_90 loop body (nvcc -O3 -arch=sm_90
of validation/cuda/blind/mandelbrot.cu, nvdisasm -hex: eleven instructions, each with the
stall count of its control word, bits 41-44 of the high word) and its pipes (Nsight's
counters: the four FADD on fmalite, the two FMUL and the FFMA on fmaheavy, IADD3, ISETP and
FSETP on the ALU, each 16 lanes: a warp instruction holds its pipe 2 cycles); each cycle
the least recently issued warp whose stall has run out and whose pipe is free issues.

Result (``python validation/issue_rate_sim.py``): a lone warp issues 0.29 a cycle (11
instructions in 38), 4 warps 0.88, 6 warps 0.98, 8 or more 1.00. At the 13.6 resident warps
of the counters the code and pipes allow one a cycle, so the missing 8 % is time a scheduler
spends with fewer than about 6 live warps (a block's slot held by its slowest warp, the
drain at the launch's end), not a throughput limit of the loop. Needs no GPU; stdlib only.

The sfu_heavy check (``--sfu``): Nsight's XU pipe count (``smsp__inst_executed_pipe_xu``,
3 MUFU and an FCHK a warp) at the published 16 SFU lanes an SM (4 a scheduler: 8 cycles a
warp instruction) against the launch's active cycles.
"""

from __future__ import annotations

import argparse
import csv
import io
import random
import re
from pathlib import Path

#: the loop body at 0x01f0-0x0290 of the sm_90 SASS: (pipe, stall count of the control word)
MANDELBROT_BODY: tuple[tuple[str, int], ...] = (
    ("lite", 1),   # FADD R7, R7, -R0
    ("lite", 1),   # FADD R11, R8, R8
    ("alu", 2),    # IADD3 R5, R5, 0x1, RZ
    ("lite", 1),   # FADD R8, R4, R7
    ("heavy", 1),  # FFMA R9, R11, R9, R6
    ("alu", 2),    # ISETP.GE.AND P0, PT, R5, R10, PT
    ("heavy", 1),  # FMUL R7, R8, R8
    ("heavy", 4),  # FMUL R0, R9, R9
    ("lite", 5),   # FADD R11, R7, R0
    ("alu", 13),   # FSETP.LE.AND P1, PT, R11, 4, PT
    ("branch", 5),  # @!P0 BRA P1, `(.L_x_1)
)
#: cycles a warp instruction holds its pipe (16 lanes: 2; the branch unit 1)
PIPE_CYCLES = {"lite": 2, "heavy": 2, "alu": 2, "branch": 1}
ROOT = Path(__file__).resolve().parent / "measured"
MANDELBROT_NCU = {"16x16": "h100-worst2-2026-11-27/blind-ncu/mandelbrot-16x16.csv",
                  "64x4": "h100-worst2-2026-11-27/blind-ncu/mandelbrot-64x4.csv",
                  "32x32": "h100-blind-2026-11-27/plain-ncu/mandelbrot-32x32.csv",
                  "32x8": "h100-blind-2026-11-27/plain-ncu/mandelbrot-32x8.csv"}
SFU_NCU = ("h100-worst2-2026-11-27/user-ncu/sfu_heavy-128x1.csv",
           "h100-worst2-2026-11-27/user-ncu/sfu_heavy-1024x1.csv",
           "h100-session-2026-11-27b/counters/user-ncu/sfu_heavy-256x1.csv")


def issue_rate(warps: int, cycles: int = 40000, seed: int = 1,
               body: tuple[tuple[str, int], ...] = MANDELBROT_BODY) -> float:
    """Issues a cycle of one scheduler running ``warps`` warps through ``body`` forever,
    each warp starting at a random instruction and delay (loose round robin)."""
    rnd = random.Random(seed)
    pc = [rnd.randrange(len(body)) for _ in range(warps)]
    ready = [rnd.randrange(40) for _ in range(warps)]
    last = [-1] * warps
    free = dict.fromkeys(PIPE_CYCLES, 0)
    issued = 0
    for t in range(cycles):
        pick = -1
        for w in range(warps):
            if ready[w] <= t and free[body[pc[w]][0]] <= t and (pick < 0 or last[w] < last[pick]):
                pick = w
        if pick >= 0:
            pipe, stall = body[pc[pick]]
            free[pipe], ready[pick], last[pick] = t + PIPE_CYCLES[pipe], t + stall, t
            pc[pick] = (pc[pick] + 1) % len(body)
            issued += 1
    return issued / cycles


def ncu_row(rel: str) -> dict[str, float]:
    """The last launch of one committed ncu CSV: metric name -> its number."""
    lines = [ln for ln in (ROOT / rel).read_text().splitlines() if not ln.startswith("==")]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    out = {}
    for name, value in zip(rows[0], rows[-1]):
        try:
            out[name] = float(value.split(" ")[0].replace(",", ""))
        except ValueError:
            continue
    return out


def warp_iterations(it, bx: int, by: int, warp: int = 32) -> int:
    """The launch's warp-iterations: each warp's slowest lane's escape-loop trips, summed
    (``it``: every pixel's trips, rows y; blocks of bx x by threads, x fastest)."""
    h, w = it.shape
    t = it.reshape(h // by, by, w // bx, bx).transpose(0, 2, 1, 3).reshape(-1, bx * by)
    return int(t.reshape(t.shape[0], -1, warp).max(axis=2).sum())


def mandelbrot_table() -> None:
    """mandelbrot: the brute force's warp-iterations against the SASS's one IADD3 an
    iteration, and the launch's cycles in units of the mean scheduler's instructions."""
    from smsp_balance import SIZE, iterations  # the numpy brute force (float32)

    it = iterations(SIZE)
    print("| block | brute-force warp-iterations | IADD3 (ncu) | busiest scheduler's insts | "
          "busiest SM's active cycles | elapsed |")
    print("|---|---:|---:|---:|---:|---:|")
    for shape, rel in MANDELBROT_NCU.items():
        row, text = ncu_row(rel), (ROOT / rel).read_text()
        bx, by = (int(v) for v in shape.split("x"))
        iadd = re.search(r"IADD3: ([0-9,]+)", text)
        mean = row["smsp__inst_executed.avg"]
        print(f"| {shape} | {warp_iterations(it, bx, by):,} | "
              f"{iadd.group(1) if iadd else '?'} | {row['smsp__inst_executed.max'] / mean:.3f} | "
              f"{row['sm__cycles_active.max'] / mean:.3f} | "
              f"{row['sm__cycles_elapsed.max'] / mean:.3f} |")


def sfu_table() -> None:
    """sfu_heavy: the XU pipe's cycles at 16 lanes an SM against the active cycles."""
    print("| launch | XU insts a scheduler | x 8 cycles | smsp active cycles | share |")
    print("|---|---:|---:|---:|---:|")
    for rel in SFU_NCU:
        row = ncu_row(rel)
        xu = row["smsp__inst_executed_pipe_xu.avg"]
        active = row["smsp__cycles_active.avg"]
        print(f"| {Path(rel).stem} | {xu:,.1f} | {8 * xu:,.0f} | {active:,.0f} | "
              f"{8 * xu / active:.2f} |")


def main() -> None:
    """Print the issue rate by live warps (and the tables that --counters and --sfu ask)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sfu", action="store_true", help="also the sfu_heavy XU table")
    ap.add_argument("--counters", action="store_true",
                    help="also mandelbrot's brute force against its counters (numpy, ~10 s)")
    args = ap.parse_args()
    print("| live warps | issues a cycle |")
    print("|---:|---:|")
    for n in (1, 2, 3, 4, 6, 8, 12, 16):
        print(f"| {n} | {issue_rate(n):.3f} |")
    if args.counters:
        print()
        mandelbrot_table()
    if args.sfu:
        print()
        sfu_table()


if __name__ == "__main__":
    main()
