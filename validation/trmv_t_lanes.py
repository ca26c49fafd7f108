"""Brute-force oracle for the blind trmv_t (examples/blind/trmv_t.c, N = 8192, block 256x1):
its two loads, L[i][j] and x[i], counted warp request by warp request in two lane orders.

* ``sass``: as the sm_90 SASS of validation/cuda/blind/trmv_t.cu runs the loop
  ``for (i = j; i < n; i++)``: nvcc's runtime unroller puts the remainder first, so lane j
  runs (n - j) & 3 iterations one at a time (passes p = 0, 1, 2: the lanes with r > p), then
  the rest 16 or 4 at a time with every lane in step from i = j + r, which rounds j up to
  n mod 4: lanes 4m+1 .. 4m+4 read one row together.
* ``trace``: the C trace's order, the pseudo-warp's lane l at its k-th iteration (i = j + k):
  every lane a different row.

Prints the requests, 32-B sectors, 128-B lines and bank ways (the largest number of distinct
4-byte words in one of the 32 banks) of each, a warp-iteration being two requests. ncu's
counters of the port (validation/measured/h100-blind-2026-11-27/plain-ncu/trmv_t-256x1.csv):
2,113,024 load requests and 17,841,152 sectors; the ``sass`` order gives those sectors
exactly, in 2,106,880 requests (near its end a warp's lanes split between the 16-deep and the
4-deep loop and issue a step twice, which this does not model). Slow (pure numpy per request,
about 10 minutes on the shared machine); ``--warps W`` counts the first W warps only."""
from __future__ import annotations

import argparse

import numpy as np

N = 8192


def warp_steps(w: int, order: str):
    """(i, j) of the active lanes of each of warp ``w``'s loop steps, in issue order."""
    j = 32 * w + np.arange(32)
    if order == "sass":
        r = (N - j) & 3
        for p in range(3):  # the remainder loop: lanes with r > p at i = j + p
            m = r > p
            if m.any():
                yield j[m] + p, j[m]
        start = j + r
    else:
        start = j
    for s in range(N - int(start.min())):
        i = start + s
        m = i < N
        if m.any():
            yield i[m], j[m]


def counts(order: str, warps: int) -> tuple[int, int, int, int]:
    req = sec = lines = ways = 0
    for w in range(warps):
        for i, j in warp_steps(w, order):
            for addr in (i * N + j, i):  # L[i][j], x[i] (word addresses)
                words = np.unique(addr)
                req += 1
                sec += len(np.unique(words // 8))
                lines += len(np.unique(words // 32))
                ways += int(np.bincount(words % 32).max())
    return req, sec, lines, ways


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warps", type=int, default=N // 32)
    warps = ap.parse_args().warps
    for order in ("sass", "trace"):
        req, sec, lines, ways = counts(order, warps)
        print(f"{order}: requests {req}, sectors {sec} ({2 * sec / req:.2f} a warp-iteration), "
              f"lines {lines} ({2 * lines / req:.2f}), bank ways {ways} ({2 * ways / req:.2f})")


if __name__ == "__main__":
    main()
