"""The SASS of a tiled kernel's cooperative staging (SPEC §2.6, issue 24): what a thread issues
to copy its share of every tile into shared memory, beyond the staging load and store
themselves (those are the staging loads and ``machine_code``'s staging stores).

The staging is a loop over a tile's elements, the block's threads taking one element each a
trip (x fastest, so a warp reads a row of global memory at once): element ``e`` is tile row
``e / cols`` and column ``e - r * cols``, read from the array when inside it, else 0, and stored
to ``tile[r * stride + c]`` (``cgp::stage`` of validation/cuda/common.cuh, which every tiled
port uses). Its trip count is a run-time value (``ceil((rows * cols - tid) / threads)``), so
nvcc unrolls the loop 4 times with the remainder first, as the binary the GPU runs shows
(``nvcc -cubin -O3 -arch=sm_90``, nvdisasm: ``python validation/sass_counts.py gemm_tiled
--unroll --keep DIR``); the trip count's quotient is computed once, before the strip loop. A
thread with ``n`` elements of a tile a phase runs, per tile phase (eq. (S1)):

```
code(n) = frame + sum_{k=1}^{n mod 4} remainder[k] + [n >= 4] body_entry + floor(n / 4) body   (S1)
code(0) = the entry test and its convergence barrier pair only
```

* ``frame``: the entry test whether the thread has an element (``ISETP``, ``BSSY``, ``BRA``),
  the remainder count ``n & 3`` and its test (``VIADD``, ``LOP3``, ``ISETP``, ``BSSY``, a move,
  ``BRA``), the test whether a 4-element trip follows (``BSYNC``, ``ISETP``, ``BRA``) and the
  closing ``BSYNC``: 13 instructions;
* ``remainder[k]``: the k-th remainder element, straight-line code (ptxas unrolls the at most
  3 trips whole): its tile row and column, array row and column, bounds checks, 64-bit
  address, the 0 of an element outside, the shared address and, after the first two, the test
  whether another remainder element follows. The first element of a tile whose column count
  is the block's run-time width (``X[k][j]``) also builds the reciprocal of that width;
* ``body``: one trip of the 4-element loop (the four elements' index, bounds and address code
  interleaved, the loads predicated, the loop test and back edge), and ``body_entry`` the code
  before the loop (the first shared address; with run-time columns the reciprocal again).

Counted by SASS class along the path a thread runs in the ``gemm_tiled`` kernel (tile A,
32 columns; tile B, ``blockDim.x`` columns: a signed division through a reciprocal). The
other tiled ports' 4-element trips are within 3 instructions of these (2MM/3MM's ``mm_tiled``
65 and 129, SYR2K 65, SYRK 62); SYRK's path through a one-element tile is 30 where GEMM's A is
34 (ptxas hoists its remainder count and part of the index out of the strip loop). A 32x32 block
copies one element of each tile a phase: 34 instructions of code for A (the unrolled loop's
frame and first remainder element) and 57 for B, 91 a strip where the ``#pragma unroll 1``
loop has 70; a 32x8 block copies one element of A's 8x32 tile and four of B's 32x32 tile
(one 4-element trip): 34 + 151 = 185 where the unroll-1 loop has 169.

Tiles of one trip count (eq. (S2)): two tiles of a phase with the same lane shape and the same
elements a thread (SYR2K's ``A[i][k]`` and ``B[i][k]``, then ``A[j][k]`` and ``B[j][k]``: both
``rows x 32`` with the same run-time ``rows``) have loops of one trip count, and ptxas tests
once whether the thread has an element of either (a thread without one skips both loops) and
computes the remainder count once. Per phase, each such tile after the first runs

```
code'(n) = code(n) - shared      (n >= 1)        code'(0) = 0                       (S2)
```

with ``shared`` 4 integer and 1 branch for a 32-column tile (syr2k_tiled.cu's sm_90 SASS along
a one-element path: 80 integer, 18 branch, 28 other a strip where four frames of their own
are 88, 20, 28) and 1 branch for a tile of run-time columns (two ``X[k][j]`` tiles of one
strip, a probe compiled like the ports: 86 integer, 7 branch where two frames are 86, 8).
Tiles of different shapes keep their own loops (SYRK's ``A[i][k]`` and ``A[j][k]``: ``by``
and ``bx`` rows). Three 32-column tiles of one shape (a probe) run 54 integer and 14 branch
where (S2) gives 58 and 13 and three frames of their own 66 and 15.

Block-shaped tiles (``copy`` "thread", "thread-checked"): when the tile is the block's shape
and each thread copies exactly one element of each tile a phase (the textbook kernel the
advisor proposes: validation/cuda/textbook/gemm_textbook.cu), there is no staging loop and
no index division: the thread's tile row and column are ``threadIdx.y`` and ``threadIdx.x``.
Read from that
port's sm_90 SASS as the GPU runs it (the 32-step compute loop unrolled whole:
``python validation/sass_counts.py textbook/gemm_textbook --port restrict --unroll``), per
element a thread copies each phase:

* sizes that are multiples of the tile (``gemm_textbook_kernel<0>``, no bounds checks): the
  64-bit global address stepped by the tile's constant stride (``IADD3``, ``IADD3.X``):
  2 integer, and copied into the load's address registers (``MOV``, ``MOV``): 2 other;
* otherwise (``gemm_textbook_kernel<1>``): the index that moves with the phase (``IADD3``:
  ``kk + tx`` or ``kk + ty``), the bounds (``ISETP``, ``ISETP.OR`` with the one that does
  not move) and the address (stepped as above, or the index stepped and ``IMAD.WIDE`` under
  the predicate): 5 integer; the 0 of an element outside (``MOV`` or ``HFMA2.MMA``): 1 other;
  and once a phase the pointer of one tile reloaded from the constant bank under its
  predicate (``LDC.64``): 1 other.

No branch, no convergence barrier, nothing per tile or per group: of the phase loop's
``integer 6 branch 1 other 4`` (unchecked; ``integer 12 branch 1 other 3`` checked) what is
not above is the strip loop's own count, test and back edge (``UIADD3``, ``ISETP``, ``BRA``).

Nothing here needs nvcc: the elements a thread copies per phase, the phases and the lanes'
addresses come from the trace (``staging.staging_setup``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numba import njit

from ..profile import StagingCounts
from .shared import one_address


@dataclass(frozen=True)
class UnrolledLoop:
    """The code of one tile's staging loop as nvcc unrolls it 4 times, remainder first
    (eq. (S1)), by SASS class: the pieces a thread's path through one tile phase adds up."""

    frame: StagingCounts  # entry test, remainder count and test, body test, closing BSYNC
    remainder: tuple[StagingCounts, StagingCounts, StagingCounts]  # the 1st, 2nd, 3rd
    body_entry: StagingCounts  # before the 4-element loop
    body: StagingCounts  # one 4-element trip
    empty: StagingCounts = StagingCounts(integer=1.0, branch=1.0, other=2.0)  # code(0)
    shared: StagingCounts = StagingCounts()  # saved by a tile sharing another's frame (S2)

    def code(self, n: int) -> StagingCounts:
        """A thread's staging code of one tile phase with ``n`` elements of the tile (S1)."""
        if n <= 0:
            return self.empty
        parts = [self.frame, *self.remainder[: n % 4]]
        if n >= 4:
            parts += [self.body_entry] + [self.body] * (n // 4)
        return _sum(parts)


def _sum(parts) -> StagingCounts:
    """The sum of staging counts, class by class."""
    return StagingCounts(integer=sum(p.integer for p in parts),
                         branch=sum(p.branch for p in parts), other=sum(p.other for p in parts))


def _c(integer: float, branch: float, other: float) -> StagingCounts:
    """Staging counts from integer, branch and other instructions."""
    return StagingCounts(integer=float(integer), branch=float(branch), other=float(other))


#: a tile of compile-time power-of-two columns (gemm_tiled's A tile, 32 columns): the sm_90
#: SASS of gemm_tiled.cu along a thread's path, LDG and STS left out (module doc)
POW2_LOOP = UnrolledLoop(
    frame=_c(6, 3, 4),
    remainder=(_c(16, 2, 3), _c(17, 2, 3), _c(14, 1, 3)),
    body_entry=_c(1, 0, 0),
    body=_c(59, 1, 5),
    shared=_c(4, 1, 0),
)
#: a tile whose column count is the block's run-time width (gemm_tiled's B tile): each element
#: a signed division through the width's reciprocal, which the first remainder element and the
#: body's entry build (IABS, I2F.RP, MUFU.RCP, F2I, IMAD, IMAD.HI)
RUNTIME_LOOP = UnrolledLoop(
    frame=_c(5, 3, 5),
    remainder=(_c(38, 1, 5), _c(30, 1, 2), _c(27, 0, 1)),
    body_entry=_c(5, 0, 4),
    body=_c(121, 1, 7),
    shared=_c(0, 1, 0),
)
#: share of a staged access's warp instructions that must show a lane shape to take it
LANE_SHARE = 0.75
# the rate at which one warp issues the staging code (eq. (22d)) is a property of the GPU's
# compiler-written control words: the device file's ``staging_issue_rate`` (h100.toml: 195
# instructions in 689 cycles along a 32x8 GEMM tile strip of the sm_90 binary)

#: a block-shaped tile's element, sizes multiples of the tile: the address step (IADD3,
#: IADD3.X) and its two moves into the load's registers (module doc)
THREAD_INTEGER = 2
THREAD_OTHER = 2
#: with bounds checks: the moving index, ISETP + ISETP.OR, the address 2; the 0 outside
CHECKED_INTEGER = 5
CHECKED_OTHER = 1
#: once a phase when checked: one tile's pointer reloaded under its predicate (LDC.64)
CHECKED_PHASE_OTHER = 1

LaneShape = str  # "broadcast" | "columns" | "rows"
#: how a block copies a tile: the generic staging loop (cgp::stage, any block shape, bounds
#: checked), or each thread its one element of a block-shaped tile, with or without bounds
#: checks (the textbook kernel)
Copy = Literal["loop", "thread", "thread-checked"]
COPIES: tuple[str, ...] = ("loop", "thread", "thread-checked")


@dataclass(frozen=True)
class StagedTile:
    """One tile a block stages: its array, the elements a thread copies into it per tile
    phase and how a warp's lanes lie on it (``LaneShape``)."""

    array: str
    loads_per_phase: float
    lanes: LaneShape = "broadcast"
    copy: Copy = "loop"
    sectors_per_load: float = 0.0  # L2 sectors one warp's staging load reads (copy_sectors)

    def __post_init__(self) -> None:
        if self.copy not in COPIES:
            raise ValueError(f"unknown tile copy {self.copy!r} (one of {', '.join(COPIES)})")

    @property
    def runtime_columns(self) -> bool:
        """The tile's columns follow the block's x: its column count is ``blockDim.x``."""
        return self.lanes == "columns"


@njit(cache=True, nogil=True)
def _lane_steps(addr, inst_sid, bounds, sid, elem):  # pragma: no cover - numba
    """(share of ``sid``'s warp instructions whose lanes all read one address, share whose
    second lane reads the element after the first lane's)."""
    n = same = unit = 0
    for i in range(inst_sid.shape[0]):
        if inst_sid[i] != sid or bounds[i + 1] - bounds[i] < 2:
            continue
        n += 1
        a0 = np.int64(addr[bounds[i]])
        same += one_address(addr, bounds[i], bounds[i + 1])
        unit += np.int64(addr[bounds[i] + 1]) - a0 == elem
    return (same / n if n else 1.0), (unit / n if n else 0.0)


def lane_shape(wt, sids: list[int], elem: int) -> LaneShape:
    """How a warp's lanes lie on a staged array's tile, from its accesses ``sids`` in the
    pseudo-warps ``wt``: one element (broadcast), consecutive elements (columns follow x),
    else rows (a row apart)."""
    bounds = np.r_[wt.inst_start, wt.n_events].astype(np.int64)
    same = unit = 0.0
    for sid in sids:
        s, u = _lane_steps(wt.addr, wt.inst_sid, bounds, sid, elem)
        same, unit = max(same, s), max(unit, u)
    if same >= LANE_SHARE:
        return "broadcast"
    return "columns" if unit >= LANE_SHARE else "rows"


def copy_sectors(cols: int, elem: int, warp: int = 32, sector: int = 32) -> float:
    """32-byte sectors one warp's staging load reads: its lanes take consecutive elements of
    a tile of ``cols`` columns, x fastest, so it reads ceil(warp / cols) tile rows of
    min(cols, warp) elements each, every row starting on a tile (sector-aligned) boundary."""
    per_row = min(max(cols, 1), warp)
    rows = math.ceil(warp / per_row)
    return float(rows * math.ceil(per_row * elem / sector))


def phase_sectors(tiles: tuple[StagedTile, ...]) -> float:
    """L2 sectors a warp's staging loads read per tile phase (every tile's loads a thread
    times the sectors of each)."""
    return sum(t.loads_per_phase * t.sectors_per_load for t in tiles)


def phase_code(tiles: tuple[StagedTile, ...]) -> StagingCounts:
    """The staging code of one tile phase per thread: the staging loops' (module doc) plus
    the block-shaped tiles' straight-line copies."""
    loops = tuple(t for t in tiles if t.copy == "loop")
    one = _loop_code(loops) if loops else StagingCounts()
    two = _thread_code(tuple(t for t in tiles if t.copy != "loop"))
    return StagingCounts(integer=one.integer + two.integer, branch=one.branch + two.branch,
                         other=one.other + two.other)


def _loop_code(tiles: tuple[StagedTile, ...]) -> StagingCounts:
    """The generic staging loops' code a phase, eq. (S1) per tile: a tile's ``n`` elements a
    thread split among the block's threads as ``floor(n)`` or ``ceil(n)`` (the threads past
    the tile's last full round take one fewer), each share at its own path's count; a tile of
    the shape of an earlier one shares that one's loop frame (eq. (S2), ``_shared_frame``)."""
    seen: set[tuple[str, float]] = set()
    parts = []
    for t in tiles:
        code = _tile_code(t)
        key = (t.lanes, round(max(t.loads_per_phase, 0.0), 9))
        if key in seen:
            s = _shared_frame(t)
            code = StagingCounts(integer=code.integer - s.integer,
                                 branch=code.branch - s.branch, other=code.other - s.other)
        seen.add(key)
        parts.append(code)
    return _sum(parts)


def _shared_frame(tile: StagedTile) -> StagingCounts:
    """What a tile saves a phase whose loop has the trip count of an earlier tile's (eq.
    (S2)): its threads' element count is the other's, so ptxas tests for an element once for
    both (a thread without one skips both loops: its empty code, ``UnrolledLoop.empty``, runs
    once) and, with an element, its loop saves ``UnrolledLoop.shared``; averaged over the
    block's threads as ``_tile_code`` does."""
    loop = RUNTIME_LOOP if tile.runtime_columns else POW2_LOOP
    n = max(tile.loads_per_phase, 0.0)
    lo = math.floor(n + 1e-9)
    more = n - lo if n - lo > 1e-9 else 0.0
    a, b = (loop.shared if lo >= 1 else loop.empty), loop.shared
    return StagingCounts(integer=a.integer + more * (b.integer - a.integer),
                         branch=a.branch + more * (b.branch - a.branch),
                         other=a.other + more * (b.other - a.other))


def _tile_code(tile: StagedTile) -> StagingCounts:
    """One tile's staging loop code a phase per thread, averaged over the block's threads."""
    loop = RUNTIME_LOOP if tile.runtime_columns else POW2_LOOP
    n = max(tile.loads_per_phase, 0.0)
    lo = math.floor(n + 1e-9)
    more = n - lo if n - lo > 1e-9 else 0.0
    a, b = loop.code(lo), loop.code(lo + 1)
    return StagingCounts(integer=a.integer + more * (b.integer - a.integer),
                         branch=a.branch + more * (b.branch - a.branch),
                         other=a.other + more * (b.other - a.other))


def _thread_code(tiles: tuple[StagedTile, ...]) -> StagingCounts:
    """Block-shaped tiles' copies a phase (one element a thread each, no loop): the address
    step, or with bounds checks the index, bounds, address and zero (module doc)."""
    plain = sum(t.loads_per_phase for t in tiles if t.copy == "thread")
    checked = sum(t.loads_per_phase for t in tiles if t.copy == "thread-checked")
    reload = CHECKED_PHASE_OTHER if checked else 0
    return StagingCounts(
        integer=float(THREAD_INTEGER * plain + CHECKED_INTEGER * checked),
        branch=0.0,
        other=float(THREAD_OTHER * plain + CHECKED_OTHER * checked + reload),
    )


def staging_code(tiles: tuple[StagedTile, ...], phases: float) -> StagingCounts:
    """The staging code per thread of a launch of ``phases`` tile phases a thread."""
    one = phase_code(tiles)
    return StagingCounts(
        integer=one.integer * phases, branch=one.branch * phases, other=one.other * phases
    )
