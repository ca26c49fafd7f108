"""The SASS of a tiled kernel's cooperative staging (SPEC §2.6, issue 24): what a thread issues
to copy its share of every tile into shared memory, beyond the staging load and store
themselves (those are the staging loads and ``machine_code``'s staging stores).

The staging is a loop over a tile's elements, the block's threads taking one element each a
trip (x fastest, so a warp reads a row of global memory at once): element ``e`` is tile row
``e / cols`` and column ``e - r * cols``, read from the array when inside it, else 0, and stored
to ``tile[r * stride + c]`` (``cgp::stage`` of validation/cuda/common.cuh, which every tiled
port uses). Read from the sm_90 SASS of the ports (``nvcc -cubin -O3 -arch=sm_90``, every loop
``#pragma unroll 1``: ``python validation/sass_counts.py gemm_tiled --port restrict``), per
element a thread copies (one trip of its staging loop):

* the element's tile row and column, for a tile whose column count is a compile-time power of
  two (the strip of the reduction loop, 32): a signed shift-divide (``SHF``, ``LEA.HI``,
  ``SHF``) and the column (``IMAD``): 4 integer;
* the element's row and column in the array (``row0 + r``, ``col0 + c``): 2 integer;
* the bounds checks (``ISETP``, ``ISETP.OR``): 2 integer;
* the 64-bit global address (``SHF`` sign, ``IMAD.WIDE``, ``LEA``, ``LEA.HI.X``) and the 0
  of an element outside the array (``IMAD.MOV``): 5 integer;
* the next element and the loop test (``IADD3``, ``ISETP``) and the shared address (``IMAD``
  or ``LEA``): 3 integer; the back edge: 1 branch;
* the array's pointer from the constant bank (``LDC.64`` under the bounds predicate): 1 other.

A tile whose columns follow the block's x (``X[k][j]``: as many columns as the block is wide,
a run-time ``blockDim.x`` in a kernel written for any block shape) divides by a run-time value:
the signed division through the divisor's reciprocal (absolute values, ``IMAD.HI`` quotient,
two correction steps, the sign and the zero-divisor select) is 15 integer instructions more an
element, and the reciprocal itself (``IABS``, ``I2F.RP``, ``MUFU.RCP``, ``F2I`` and its Newton
step) 6 integer and 3 other once a tile phase.

Once a tile phase, per tile (a staged array's accesses with one shape of a warp's lanes on
it: ``A[i][k]`` and ``A[j][k]`` are two tiles of ``A``): its staging loop's convergence
barrier (``BSSY`` before it, ``BSYNC`` after it: 2 other) and its first element index (1
integer); per group of tiles with the same extents (one trip count: ptxas tests once whether
a thread has an element of them, ``ISETP`` and ``BRA``): 1 integer and 1 branch. A warp's
lanes tell the extents apart: all lanes on one element (``X[i][k]``: the block's y rows by
the strip), lanes on consecutive elements (``X[k][j]``: the strip by the block's x columns),
lanes a row apart (``X[j][k]``: the block's x rows by the strip).

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

#: integer instructions per element of a tile with compile-time power-of-two columns: index
#: split 4, array row and column 2, bounds 2, global address and zero 5, loop and shared
#: address 3 (module doc)
ELEMENT_INTEGER = 16
#: per element: the staging loop's back edge (branch) and the pointer's LDC.64 (other)
ELEMENT_BRANCH = 1
ELEMENT_OTHER = 1
#: integer instructions more per element when the tile's column count is a run-time value:
#: the signed division through a reciprocal instead of a shift
RUNTIME_DIVISION_INTEGER = 15
#: once a phase per tile with run-time columns: the divisor's reciprocal
RECIPROCAL_INTEGER = 6
RECIPROCAL_OTHER = 3
#: once a phase per tile: BSSY/BSYNC around its staging loop, its first element index
TILE_OTHER = 2
TILE_INTEGER = 1
#: once a phase per group of tiles with one trip count: the test whether a thread has any
GROUP_INTEGER = 1
GROUP_BRANCH = 1
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
    """The generic staging loops' code a phase: per element, per tile, per group of tiles with
    the same extents and per tile with run-time columns (module doc)."""
    elements = sum(t.loads_per_phase for t in tiles)
    runtime = [t for t in tiles if t.runtime_columns]
    groups = len({t.lanes for t in tiles})
    integer = (
        ELEMENT_INTEGER * elements
        + RUNTIME_DIVISION_INTEGER * sum(t.loads_per_phase for t in runtime)
        + RECIPROCAL_INTEGER * len(runtime)
        + TILE_INTEGER * len(tiles)
        + GROUP_INTEGER * groups
    )
    return StagingCounts(
        integer=float(integer),
        branch=float(ELEMENT_BRANCH * elements + GROUP_BRANCH * groups),
        other=float(ELEMENT_OTHER * elements + TILE_OTHER * len(tiles)
                    + RECIPROCAL_OTHER * len(runtime)),
    )


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
