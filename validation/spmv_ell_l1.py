"""Brute force of one H100 SM's L1 for the blind spmv_ell at the work size (issue t6, eq. (L1p)).

examples/blind/spmv_ell.c: N = 2^20 rows, K = 16 entries a row stored column-major, a thread a
row, x[col[k][r]] gathered within +-4096 columns of the row. This builds the column array as
the C does (the same LCG), deals the blocks round robin over 132 SMs (a wave puts blocks s,
s + 132, ..., s + (k-1) 132 on SM s; the next wave the next k x 132), runs the k resident
blocks' warps of one SM in step (entry k of every warp, then entry k + 1: val's 4 sectors,
col's 4, x's distinct sectors) through a fully associative LRU of ``capacity`` 32-B sectors
(eq. (L1a)), and prints the sectors of x a warp instruction that miss it (reach the L2).

Nsight Compute (validation/measured/h100-worst-2026-11-27/blind-ncu, h100-blind-2026-11-27/
plain-ncu at 256x1): (l1tex__m_xbar2l1tex_read_sectors - 4,194,304 val/col sectors) / 524,288
x instructions = 20.8, 21.4, 13.5, 2.22 at 32x1, 128x1, 256x1, 1024x1.

    python validation/spmv_ell_l1.py [capacity_sectors]      # default 8192 (256 KB)
"""

from __future__ import annotations

import sys

import numpy as np
from numba import njit

N, K, BAND, SMS = 1 << 20, 16, 4096, 132
SHAPES = ((32, 32), (128, 16), (256, 8), (1024, 2))  # block threads, resident blocks an SM


@njit(cache=True)
def columns(k_n: int, n: int, band: int) -> np.ndarray:  # pragma: no cover
    """col[k][r] exactly as examples/blind/spmv_ell.c fills it."""
    col = np.empty((k_n, n), np.int64)
    s = np.uint32(4321)
    for k in range(k_n):
        for r in range(n):
            s = np.uint32(s * np.uint32(1664525) + np.uint32(1013904223))
            c = r + np.int64((s >> np.uint32(8)) % np.uint32(2 * band + 1)) - band
            col[k, r] = min(max(c, 0), n - 1)
    return col


@njit(cache=True)
def sm_stream(col: np.ndarray, bt: int, k_res: int, sm: int, sms: int):  # pragma: no cover
    """One SM's sector stream (keys; True where the access is x's) and its x instructions."""
    k_n, n = col.shape
    blocks = np.arange(sm, n // bt, sms)
    keys, is_x = [], []
    n_x = 0
    for w0 in range(0, len(blocks), k_res):
        for k in range(k_n):
            for b in blocks[w0:w0 + k_res]:
                for wi in range(bt // 32):
                    r0 = b * bt + wi * 32
                    for arr in range(2):  # val, col: 4 sectors each
                        for q in range(4):
                            keys.append((arr + 1) * (1 << 21) + (k * n + r0) // 8 + q)
                            is_x.append(False)
                    for sc in np.unique(col[k, r0:r0 + 32] // 8):
                        keys.append(sc)
                        is_x.append(True)
                    n_x += 1
    return np.array(keys), np.array(is_x), n_x


@njit(cache=True)
def lru_misses(keys: np.ndarray, capacity: int) -> np.ndarray:  # pragma: no cover
    """Miss flags of a fully associative LRU of ``capacity`` units: a reuse hits iff fewer
    than ``capacity`` distinct units were used since (a Fenwick tree over last-use times)."""
    t_n = len(keys)
    fen = np.zeros(t_n + 1, np.int64)
    last = np.full(keys.max() + 1, -1, np.int64)
    miss = np.ones(t_n, np.bool_)
    for t in range(1, t_n + 1):
        key, p = keys[t - 1], last[keys[t - 1]]
        if p >= 0:
            live, i = 0, t - 1
            while i > 0:
                live += fen[i]
                i -= i & -i
            i = p
            while i > 0:
                live -= fen[i]
                i -= i & -i
            miss[t - 1] = live >= capacity
            i = p
            while i <= t_n:
                fen[i] -= 1
                i += i & -i
        i = t
        while i <= t_n:
            fen[i] += 1
            i += i & -i
        last[key] = t
    return miss


def main() -> None:
    capacity = int(sys.argv[1]) if len(sys.argv) > 1 else 262144 // 32
    col = columns(K, N, BAND)
    for bt, k_res in SHAPES:
        per_sm = []
        for sm in (0, 50):
            keys, is_x, n_x = sm_stream(col, bt, k_res, sm, SMS)
            per_sm.append(float((lru_misses(keys, capacity) & is_x).sum()) / n_x)
        print(f"{bt}x1: {k_res} blocks an SM, {capacity} sectors: x sectors a warp instruction "
              f"missing the L1 (SMs 0, 50): {per_sm[0]:.2f}, {per_sm[1]:.2f}")


if __name__ == "__main__":
    main()
