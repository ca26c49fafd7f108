"""Brute force of one H100 SM's L1 for the user spmv_csr as its sm_90 SASS issues the loads.

examples/user/spmv_csr.c (validation/cuda/user/spmv_csr.cu): NR = NC = 2^20 rows, 16 entries
a row, a thread a row; val[k] and col[k] of a row are 64 B, two 32-B sectors, read a word at a
time; x[col[k]] a random gather over 4 MB. Nsight Compute (validation/measured/
h100-worst-2026-11-27/user-ncu) keeps 78-80 % of val's and col's sectors in the L1 at 32x1-256x1
and 74 % at 1024x1, where a sector LRU replayed in the C order, every warp of the SM one
iteration at a time (the model's eq. (L1a)), keeps 14 of 16 (87.5 %) at every block shape.

nvcc 13.0 -O3 -arch=sm_90 unrolls the row loop by 16 (the run-time trip is checked > 12) and
hoists the loads (``SASS`` below, nvdisasm of the loop body): a warp reads col[k0..k8] and three
val words at once, waits for col[k0] to address x, issues the 16 gathers among a few more val
and col words, and reads val[k5..k7] (val's first sector) and col[k10..k12, k14, k15] (col's
second) only behind the FFMAs that wait for the gathers. So a row's sectors are re-read across
the gathers' round trip, not one iteration apart, and that reuse distance is the sectors the
SM's other warps fetch while the gathers queue.

This replays that: each warp of the SM runs the body in order (an instruction issues when its
source registers are ready, one a cycle), a load looks up its sectors in a fully associative
LRU of ``capacity`` 32-B sectors (eq. (L1a)); a missed sector is allocated at the miss (it
may be evicted while pending) or, ``at_fill``, when its reply returns (two bounds on the
L1's miss handling, which no counter shows); a later access to a pending sector waits for the
reply and counts as a hit (ncu's hits plus misses equal its lookups and its misses equal the
sectors fetched). A missed sector's request (the
warp instruction's missed sectors of one 128-B line) queues in order at the SM's share of the
L2's request rate (l2_request_cycles, 2.19 SM cycles a request, eq. (B2q)) and returns after
the L2 latency (369.2 cycles; 685.1 to DRAM for val/col/rowptr, which the L2 does not hold).
Blocks are dealt to the SM whole, a new one when one retires, as the GPU does. Nothing is fitted.

    python validation/spmv_csr_l1.py [THREADS ...]   # 32 128 256 1024 by default, about 1 min

prints, per block shape at the L1 its carve-out leaves, val's and col's kept share both ways
(and x's hit share) beside ncu's.
"""

from __future__ import annotations

import heapq
import re
import sys
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

# nvdisasm of the 16-way unrolled body (0x490-0xa30); R14 = &col[k0 + 2], R12 = &val[k0 + 2],
# R10 = x. Only the loads and what waits on them: IMAD.WIDE forms x's address from col.
SASS = """
LDG R29 [R14-0x8]; LDG R21 [R14-0x4]; LDG R17 [R14]; LDG R27 [R14+0x4]; LDG R19 [R14+0x8];
LDG R25 [R12-0x8]; LDG R23 [R14+0xc]; LDG R8 [R12-0x4]; LDG R6 [R14+0x10]; LDG R4 [R14+0x14];
LDG R26 [R14+0x18]; LDG R24 [R12+0x8]; IMAD R28 R29; LDG R29 [R28]; IMAD R20 R21; IMAD R16 R17;
LDG R21 [R20]; LDG R9 [R16]; IMAD R18 R19; LDG R20 [R12]; IMAD R16 R27; LDG R19 [R18];
LDG R27 [R12+0x4]; LDG R16 [R16]; LDG R18 [R14+0x2c]; LDG R17 [R14+0x1c]; FFMA R28 R29 R25 R22;
IMAD R22 R23; LDG R25 [R12+0xc]; LDG R22 [R22]; FFMA R8 R21 R8 R28; IMAD R28 R6;
LDG R21 [R12+0x10]; LDG R28 [R28]; FFMA R20 R9 R20 R8; IMAD R8 R4; LDG R23 [R14+0x20];
LDG R4 [R12+0x14]; LDG R8 [R8]; FFMA R16 R16 R27 R20; IMAD R26 R26; LDG R6 [R12+0x18];
FFMA R16 R19 R24 R16; LDG R19 [R14+0x24]; LDG R26 [R26]; LDG R29 [R14+0x28]; LDG R20 [R14+0x30];
LDG R24 [R12+0x20]; FFMA R16 R22 R25 R16; LDG R25 [R14+0x34]; FFMA R21 R28 R21 R16;
IMAD R16 R17; LDG R16 [R16]; FFMA R4 R8 R4 R21; IMAD R8 R23; LDG R21 [R12+0x1c];
LDG R17 [R12+0x28]; IMAD R22 R19; LDG R8 [R8]; FFMA R4 R26 R6 R4; LDG R22 [R22];
IMAD R26 R29; LDG R6 [R12+0x24]; IMAD R18 R18; LDG R26 [R26]; IMAD R28 R20; LDG R18 [R18];
LDG R9 [R12+0x2c]; LDG R29 [R28]; LDG R20 [R12+0x30]; LDG R23 [R12+0x34]; IMAD R10 R25;
LDG R10 [R10]; FFMA R21 R16 R21 R4; FFMA R21 R8 R24 R21; FFMA R21 R22 R6 R21;
FFMA R17 R26 R17 R21; FFMA R18 R18 R9 R17; FFMA R29 R29 R20 R18; FFMA R22 R10 R23 R29
"""
NR, NNZ, NC, SMS = 1 << 20, 16, 1 << 20, 132
SECTOR, LINE = 32, 128
L2_LAT, DRAM_LAT, L1_LAT, REQ_CYCLES = 369.2, 685.1, 38.9, 2.19
VAL, COL, X, ROWPTR = 0, 1, 2, 3
BASE = {VAL: 1 << 32, COL: 2 << 32, X: 3 << 32, ROWPTR: 4 << 32}


def program() -> list[tuple]:
    """The body as (op, dst, srcs, array, element offset or -1 for x) tuples."""
    out = []
    for ins in (s.strip() for s in SASS.replace("\n", " ").split(";")):
        op, dst, *rest = ins.split()
        if op == "LDG":
            m = re.match(r"\[(R\d+)([+-]0x[0-9a-f]+)?\]", rest[0])
            reg, off = m.group(1), int(m.group(2) or "0", 16)
            if reg == "R14":
                out.append(("ld", dst, (), COL, off // 4 + 2))
            elif reg == "R12":
                out.append(("ld", dst, (), VAL, off // 4 + 2))
            else:
                out.append(("ld", dst, (reg,), X, -1))
        else:  # IMAD (x's address from a col word) or FFMA: wait for the sources
            out.append((op, dst, tuple(rest), -1, 0))
    return out


class SectorLru:
    """A fully associative LRU of 32-B sectors; a sector is allocated when it misses and is
    pending (its fill time in the future) until its reply returns."""

    def __init__(self, capacity: int, at_fill: bool = False) -> None:
        self.capacity, self.fill, self.at_fill = capacity, OrderedDict(), at_fill
        self.pending: list = []  # (ready, key) of sectors not yet allocated (at_fill)
        self.waiting: dict = {}

    def _settle(self, now: float) -> None:
        while self.pending and self.pending[0][0] <= now:
            ready, key = heapq.heappop(self.pending)
            if self.waiting.get(key) == ready:
                del self.waiting[key]
                self._put(key, ready)

    def _put(self, key: int, ready: float) -> None:
        self.fill[key] = ready
        self.fill.move_to_end(key)
        if len(self.fill) > self.capacity:
            self.fill.popitem(last=False)

    def lookup(self, key: int, now: float) -> float | None:
        """The time the sector's data is there (a hit, perhaps pending), None on a miss."""
        self._settle(now)
        if key in self.waiting:
            return self.waiting[key]
        t = self.fill.get(key)
        if t is None:
            return None
        self.fill.move_to_end(key)
        return t

    def allocate(self, key: int, ready: float) -> None:
        """Allocate a missed sector (now, or when its reply returns: ``at_fill``),
        evicting the least recently used."""
        if self.at_fill:
            self.waiting[key] = ready
            heapq.heappush(self.pending, (ready, key))
        else:
            self._put(key, ready)


@dataclass(kw_only=True)
class _Sm:
    """One SM's state: its L1, the L2 request queue's next free cycle, the hit counts."""

    lru: SectorLru
    queue_free: float = 0.0
    hits: dict = field(default_factory=lambda: {VAL: 0, COL: 0, X: 0})
    looks: dict = field(default_factory=lambda: {VAL: 0, COL: 0, X: 0})

    def access(self, arr: int, keys: np.ndarray, now: float) -> float:
        """One warp instruction's sectors through the L1 and the L2 queue; its data time."""
        done, missed = now + L1_LAT, []
        for key in np.unique(keys):
            self.looks[arr] += 1
            t = self.lru.lookup(int(key), now)
            if t is None:
                missed.append(int(key))
            else:
                self.hits[arr] += 1
                done = max(done, t + L1_LAT)
        lat = L2_LAT if arr == X else DRAM_LAT
        for line in sorted({k * SECTOR // LINE for k in missed}):  # a request a line
            start = max(now, self.queue_free)
            self.queue_free = start + REQ_CYCLES
            for k in missed:
                if k * SECTOR // LINE == line:
                    self.lru.allocate(k, start + REQ_CYCLES + lat)
            done = max(done, start + REQ_CYCLES + lat)
        return done


def _step(sm: _Sm, w: dict, ins: tuple, now: float) -> float:
    """Issue one instruction of warp ``w`` at ``now`` (its sources ready); the next cycle
    it may issue at."""
    op, dst, srcs, arr, elem = ins
    ready = w["ready"]
    if op == "ld" and arr == X:
        keys = BASE[X] // SECTOR + w["cols"][:, int(ready[srcs[0] + "k"])] * 4 // SECTOR
        ready[dst] = sm.access(X, keys, now)
    elif op == "ld":
        ready[dst] = sm.access(arr, (BASE[arr] + (w["rows"] * NNZ + elem) * 4) // SECTOR, now)
        if arr == COL:  # which col word the register holds, for x's address
            ready[dst + "k"] = elem
    else:
        ready[dst] = now + 4.0
        if op == "IMAD":
            ready[dst + "k"] = ready[srcs[0] + "k"]
    return now + 1.0


def simulate(block_threads: int, capacity: int, *, at_fill: bool = False, seed: int = 1,
             blocks: int | None = None) -> dict:
    """One SM's blocks (blockIdx sm, sm + 132, ...; the first ``blocks`` of them if given)
    at ``block_threads``: the hit fraction of val's, col's and x's sector lookups."""
    rng = np.random.default_rng(seed)
    wpb = block_threads // 32
    per_sm = min(32, 64 // wpb)  # resident blocks: 64 warps, 32 blocks an SM
    todo = list(range(0, NR // block_threads, SMS))[:blocks]
    body, sm = program(), _Sm(lru=SectorLru(capacity, at_fill))
    events: list = []
    warps: list[dict] = []
    live: dict[int, int] = {}

    def start_block(now: float) -> None:
        b = todo.pop(0)
        live[b] = wpb
        for w in range(wpb):
            rows = np.arange(32) + b * block_threads + w * 32
            warps.append({"rows": rows, "cols": rng.integers(0, NC, size=(32, NNZ)),
                          "ready": {}, "pc": 0, "block": b})
            # rowptr[r], rowptr[r + 1]: a DRAM round trip before the body
            heapq.heappush(events, (now + DRAM_LAT, len(warps) - 1))

    while todo and len(live) < per_sm:
        start_block(0.0)
    now = 0.0
    while events:
        now, wid = heapq.heappop(events)
        w = warps[wid]
        if w["pc"] == len(body):  # retired: its block leaves with its last warp
            live[w["block"]] -= 1
            if not live[w["block"]]:
                del live[w["block"]]
                if todo:
                    start_block(now)
            continue
        ins = body[w["pc"]]
        t = max([now] + [w["ready"].get(r, 0.0) for r in ins[2]])
        if t == now:  # the sources are ready: issue
            w["pc"] += 1
            t = _step(sm, w, ins, now)
        heapq.heappush(events, (t, wid))
    return {a: sm.hits[a] / max(sm.looks[a], 1) for a in (VAL, COL, X)} | {"cycles": now}


# Nsight Compute (h100-worst-2026-11-27/user-ncu): the L1 the carve-out leaves (KB), and the
# share of val's and col's sectors the L1 kept, 1 - 2 (S - Q - 3 x 32768) / 33,554,432 with S and
# Q the L2's read sectors and requests (val/col miss a line's two rows at once: 2 sectors a
# request; rowptr 4 sectors in 1 request a warp; x 1 and 1), which leaves x ~1 % of its lookups hit.
NCU = {32: (224, 0.779), 128: (224, 0.803), 256: (224, 0.795), 1024: (248, 0.744)}


def main() -> None:
    shapes = [int(a) for a in sys.argv[1:]] or sorted(NCU)
    for bt in shapes:
        kb, kept = NCU[bt]
        got = []
        for at_fill in (False, True):
            r = simulate(bt, kb * 1024 // SECTOR, at_fill=at_fill)
            got.append(f"{(r[VAL] + r[COL]) / 2:.3f} (x {r[X]:.3f})")
        print(f"{bt}x1, {kb} KB of L1: val/col sectors kept, allocated at the miss {got[0]}, "
              f"at the reply {got[1]}; ncu {kept:.3f}; C-order LRU (L1a) 0.875", flush=True)


if __name__ == "__main__":
    main()
