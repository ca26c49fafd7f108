"""One H100 SM's L1 at spmv_csr's work size in the C order: what eq. (L1a)'s premise keeps.

examples/user/spmv_csr.c at NR = NC = 2^20 (the measured size), 256x1: an SM holds 64 warps
(8 blocks); a warp of 32 rows reads, each iteration k of 16, col[k] and val[k] of each lane's
row (64 B a row: each 32-B sector read 8 iterations running) and x[col[k]], a random pick of
x's 131,072 sectors (4 MB). The L1 is a fully associative LRU of ``capacity`` 32-B sectors
(7168: 224 KB, the 32 KB carve-out of eq. (SC)), every warp of the SM one iteration at a time
(the model's lockstep), each wave of 64 warps on rows a grid's width (132 SMs) on. Nothing is
fitted. Printed: the share of val/col and of x reads kept (the first two waves warm it up).

    python validation/spmv_csr_xhit.py [CAPACITY]      # 7168 by default, about 2 s

At 7168: val/col 0.875, x 0.0225, against the model's x 0.044 from (LP2)'s test on the
trace's distances (docs/models.md, under (GQ)) and ncu's 0.01-0.02.
"""

from __future__ import annotations

import random
import sys
from collections import OrderedDict

WARPS, NNZ, X_SECTORS, SMS = 64, 16, 131072, 132


def simulate(capacity: int, waves: int = 6, warm: int = 2, seed: int = 1,
             x_sectors: int = X_SECTORS, warps: int = WARPS) -> dict[str, float]:
    """The kept share of val/col and of x reads, after ``warm`` waves, by brute force."""
    rng = random.Random(seed)
    lru: OrderedDict = OrderedDict()
    kept = {"valcol": [0, 0], "x": [0, 0]}

    def touch(key: tuple, name: str, count: bool) -> None:
        hit = key in lru
        if hit:
            lru.move_to_end(key)
        else:
            lru[key] = None
            if len(lru) > capacity:
                lru.popitem(last=False)
        if count:
            kept[name][0] += hit
            kept[name][1] += 1

    for wave in range(waves):
        first = wave * warps * 32 * SMS
        for k in range(NNZ):
            for w in range(warps):
                for arr in (1, 0):  # col[k], then val[k]
                    for lane in range(32):
                        row = first + w * 32 + lane
                        touch((arr, (row * 64 + 4 * k) // 32), "valcol", wave >= warm)
                for _ in range(32):
                    touch((2, rng.randrange(x_sectors)), "x", wave >= warm)
    return {name: h / n for name, (h, n) in kept.items()}


def main() -> None:
    """Prints the kept shares at the capacity given (7168 sectors by default)."""
    cap = int(sys.argv[1]) if len(sys.argv) > 1 else 7168
    r = simulate(cap)
    print(f"capacity {cap} sectors: val/col kept {r['valcol']:.4f}, x kept {r['x']:.4f}")


if __name__ == "__main__":
    main()
