"""Shared-memory staging of one kernel (SPEC §2.6): which of its accesses read a tile, the
tile loop whose iterations are the tile phases, and the staging loads and tile bytes one
block needs per phase, all from the addresses each block touches in the trace."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace

import numpy as np
from numba import njit

from ..block import Block
from ..devices import GPUDevice
from ..frontend.tracefile import Trace
from ..hashing import hash_slot, hash_table
from ..warps import WarpTrace, mapped_loops
from .shared import (
    array_layouts,
    array_name,
    param_row_layouts,
    staged_accesses,
)
from .staging_code import Copy, StagedTile, copy_sectors, lane_shape
from .staging_reuse import footprints, reused

__all__ = ["staging_setup"]


def staging_setup(
    trace: Trace,
    region: int,
    wt: WarpTrace,
    device: GPUDevice,
    block: Block,
    extra: tuple = (),
    launch: int = 0,
    warnings: list[str] | None = None,
    copy: Copy = "loop",
    own_copy: Copy = "loop",
):
    """Staged accesses and (tile loop, staging loads per phase, tile bytes, phase divisor,
    ``staging_code.StagedTile`` of each array, ``fresh_sectors`` per warp) of a tiled kernel.
    ``extra`` stages arrays of an untiled kernel (the advisor's modelled tiling):
    ``(array, R, C)`` for every kernel or ``(kernel name, array, R, C)`` for one; an array the
    kernel's own pragma stages keeps the pragma's tile. Its innermost loop then counts tile
    phases every ``tile columns`` iterations. ``copy`` is how the block copies those ``extra``
    tiles (``staging_code.Copy``): "thread" asks for the textbook copy of a block-shaped tile
    (``block_copy`` says whether it applies), "loop" the generic staging loop; ``own_copy``
    the same for the tiles the kernel's own pragmas stage (the corpus ports: the loop).

    Only accesses inside the tile loop are staged (one before or after it stays a global access,
    with a warning). The tile loop is the innermost per-thread loop of most staged accesses (its
    parent when a pragma'd kernel is strip-mined). Staging loads and tile bytes follow the block
    shape: the distinct elements of each array a block touches per tile phase, from the trace."""
    h = trace.header
    info = h.region(region)
    warnings = [] if warnings is None else warnings
    hints = _hints(info, extra)
    own = {x[0] for x in info.shared}  # the kernel's own pragmas: its own (loop) code
    if not hints:
        return (), None
    layouts = array_layouts(h.ir_text)
    staged = _staged(h, region, info, wt, device, hints, layouts, warnings)
    if not staged:
        return (), None
    found = _tile_loop(h, region, info, wt, staged, warnings)
    if found is None:
        return (), None
    tile_loop, strip_mined = found
    staged = _inside(h, info, staged, tile_loop, warnings)
    used = {a.array for a in staged}
    hints = tuple(x for x in hints if x[0] in used)
    divisor = 1.0 if strip_mined else float(max(c for _, _, c in hints))
    per_array, nbytes = _tile_loads(trace, region, wt, block, staged, layouts, tile_loop.id,
                                    divisor, launch)
    copies = {x[0]: block_copy(x, block, layouts)
              if (own_copy if x[0] in own else copy) != "loop" else "loop" for x in hints}
    cols = {arr: c for arr, _, c in hints}
    tiles = _tiles(wt, staged, layouts, per_array, copies, block)
    tiles = tuple(replace(t, sectors_per_load=copy_sectors(
        block.x if t.runtime_columns else cols.get(t.array, block.x),
        layouts[t.array].elem_bytes if t.array in layouts else 4,
        device.warp_size, device.l2_sector_bytes)) for t in tiles)
    fresh = fresh_sectors(wt, [a.sid for a in staged], device.l2_sector_bytes)
    return staged, (tile_loop.id, float(sum(per_array.values())), nbytes, divisor, tiles, fresh)


def fresh_sectors(wt: WarpTrace, sids: list[int], sector: int) -> float:
    """Distinct sectors per warp the accesses ``sids`` read in the launch ``wt`` (issue 24):
    the staging loads' compulsory DRAM traffic, each staged element read from DRAM at least
    once. Per warp, it holds at the work size while the arrays grow with the grid. The count
    is the same for every block shape regrouped from one trace (RS1): found once on it."""
    if not wt.n_warps or not len(wt.inst_start):
        return 0.0
    n = reused(wt, ("fresh", tuple(sids), sector), lambda w: _distinct_sectors(w, sids, sector))
    return float(n) / wt.n_warps


def _distinct_sectors(wt: WarpTrace, sids: list[int], sector: int) -> int:
    """Distinct ``sector``-byte sectors the accesses ``sids`` read in ``wt``."""
    take = np.isin(wt.inst_sid, np.asarray(sids, dtype=np.int64))
    starts = wt.inst_start.astype(np.int64, copy=False)
    if sector <= 0 or sector & (sector - 1):  # not a power of two: no shift
        counts = np.diff(np.r_[starts, len(wt.addr)])
        mine = np.repeat(take, counts)
        return int(np.unique(wt.addr[mine] // np.uint64(sector)).size)
    return int(_distinct_units(wt.addr, starts, take, sector.bit_length() - 1))


@njit(cache=True, nogil=True)
def _distinct_units(addr, inst_start, take, shift):  # pragma: no cover - numba
    """How many distinct ``addr >> shift`` the events of the warp instructions ``take``
    marks hold: a bitmap over their range when it is small (the staged arrays' sectors: one
    pass for the range, one to mark, each event an L1 access), else ``_distinct_hashed``."""
    n, n_inst = addr.shape[0], inst_start.shape[0]
    sh = np.uint64(shift)
    lo, hi, m = np.uint64(0), np.uint64(0), 0
    for i in range(n_inst):
        if not take[i]:
            continue
        for t in range(inst_start[i], inst_start[i + 1] if i + 1 < n_inst else n):
            v = np.uint64(addr[t]) >> sh
            if m == 0 or v < lo:
                lo = v
            if m == 0 or v > hi:
                hi = v
            m += 1
    if m == 0:
        return 0
    if hi - lo >= np.uint64(1 << 26):
        return _distinct_hashed(addr, inst_start, take, shift)
    seen = np.zeros(np.int64(hi - lo) + 1, np.bool_)
    d = 0
    for i in range(n_inst):
        if not take[i]:
            continue
        for t in range(inst_start[i], inst_start[i + 1] if i + 1 < n_inst else n):
            k = np.int64((np.uint64(addr[t]) >> sh) - lo)
            if not seen[k]:
                seen[k] = True
                d += 1
    return d


@njit(cache=True, nogil=True)
def _distinct_hashed(addr, inst_start, take, shift):  # pragma: no cover - numba
    """_distinct_units by a hash table that grows with the distinct values (kept at most
    half full), no per-event mask, copy or sort: for values spread too wide for a bitmap."""
    n, n_inst = addr.shape[0], inst_start.shape[0]
    keys, used, down = hash_table(512)
    sh = np.uint64(shift)
    m = 0
    for i in range(n_inst):
        if not take[i]:
            continue
        for t in range(inst_start[i], inst_start[i + 1] if i + 1 < n_inst else n):
            v = np.uint64(addr[t]) >> sh
            h = hash_slot(keys, used, v, down)
            if not used[h]:
                used[h], keys[h] = True, v
                m += 1
                if 2 * m >= keys.shape[0]:
                    keys, used, down = _regrown(keys, used)
    return m


@njit(cache=True, nogil=True)
def _regrown(keys, used):  # pragma: no cover - numba
    """The keys of a ``hash_table`` moved to one of twice the slots."""
    k2, u2, down = hash_table(keys.shape[0])
    for h in range(keys.shape[0]):
        if used[h]:
            g = hash_slot(k2, u2, keys[h], down)
            k2[g], u2[g] = keys[h], True
    return k2, u2, down


def _tiles(wt: WarpTrace, staged, layouts: dict, per_array: dict[str, int],
           copies: dict[str, Copy], block: Block) -> tuple:
    """The ``staging_code.StagedTile`` of every tile a block stages: one per staged array and
    shape of a warp's lanes on it (``A[i][k]`` and ``A[j][k]`` are two tiles of ``A``), the
    array's staging loads per phase shared among its tiles by their elements (``_tile_shares``),
    copied as ``copies`` says (the staging loop when it does not name the array, or a thread
    copies more than one element of a tile a phase)."""
    shapes: dict[str, set[str]] = {}
    for a in staged:
        elem = layouts[a.array].elem_bytes if a.array in layouts else 4
        shapes.setdefault(a.array, set()).add(reused(  # (RS1): per warp instruction
            wt, ("lanes", a.sid, elem), lambda w, a=a, elem=elem: lane_shape(w, [a.sid], elem)))
    tiles = []
    for arr, n in sorted(per_array.items()):
        kinds = sorted(shapes.get(arr, {"broadcast"}))
        for shape, share in zip(kinds, _tile_shares(kinds, block)):
            each = n * share
            copy = copies.get(arr, "loop") if each == 1 else "loop"
            tiles.append(StagedTile(array=arr, loads_per_phase=each, lanes=shape, copy=copy))
    return tuple(tiles)


def _tile_shares(kinds: list[str], block: Block) -> list[float]:
    """Each tile's share of its array's staging loads: its elements, a strip of S by the
    block's y rows when a warp's lanes read one element of it (``X[i][k]``: y rows x S), else
    by the block's x (``X[k][j]``: S x the x columns; ``X[j][k]``: the x rows x S): weights
    ``block.y`` and ``block.x`` (S is common to the tiles of one strip)."""
    w = [float(block.y if k == "broadcast" else block.x) for k in kinds]
    return [x / sum(w) for x in w]


def block_copy(hint: tuple, block: Block, layouts: dict) -> Copy:
    """How the textbook kernel copies the tile ``hint`` = (array, R, C) when the tile is the
    block's shape: each thread its element (``_tiles`` checks that it has one a tile), with
    bounds checks unless the array's traced extents are multiples of the tile; else the
    staging loop."""
    arr, rows, cols = hint
    if (rows, cols) != (block.y, block.x):
        return "loop"
    return "thread" if whole_tiles(layouts.get(arr), rows, cols) else "thread-checked"


def whole_tiles(layout, rows: int, cols: int) -> bool:
    """Whether an array's traced extents are whole multiples of a ``rows`` x ``cols`` tile:
    its textbook copy needs no bounds checks (block_copy; the advisor's snippet says the same)."""
    return (layout is not None and len(layout.dims) >= 2 and not layout.dims[-2] % rows
            and not layout.dims[-1] % cols)


def _hints(info, extra: tuple) -> tuple:
    """The kernel's staged arrays ``(array, R, C)``: its pragmas', then the ``extra`` ones
    for every kernel or for this one that no pragma stages."""
    hints = tuple(info.shared)
    own = {x[0] for x in hints}
    for x in extra:
        if len(x) == 4:
            if x[0] != info.name:
                continue
            x = x[1:]
        if x[0] not in own:
            hints += (tuple(x),)
            own.add(x[0])
    return hints


def _staged(h, region: int, info, wt: WarpTrace, device: GPUDevice, hints: tuple,
            layouts: dict, warnings: list[str]) -> tuple:
    """The kernel's accesses to the staged arrays with their bank conflicts (a warning for an
    array whose row length is unknown)."""
    texts = {m.id: m.base for m in h.mem if m.region == region}
    unknown = [x[0] for x in hints if x[0] not in layouts]
    rows = param_row_layouts(h.ir_text, unknown)  # row length of parameter arrays
    for arr in unknown:
        if arr not in rows and any(array_name(t) == arr for t in texts.values()):
            warnings.append(
                f"{info.name}: the row length of {arr} is unknown (not a global array): "
                f"bank conflicts assume rows of the tile width"
            )
    lay = {**rows, **layouts}
    args = (texts, hints, lay, device.smem_banks, device.smem_bank_bytes, h.globals,
            device.smem_phase_bytes)
    # (RS1): the same accesses for every block shape regrouped from one trace
    key = ("staged", *(tuple(sorted(x.items())) if isinstance(x, dict) else x for x in args))
    return reused(wt, key, lambda w: staged_accesses(w, *args))


def _tile_loop(h, region: int, info, wt: WarpTrace, staged, warnings: list[str]):
    """(the tile loop, whether the kernel is strip-mined), or None when no staged access lies
    in a per-thread loop: the innermost per-thread loop of most staged accesses, its parent
    when a pragma'd kernel is strip-mined."""
    loops = {lp.id: lp for lp in h.loops if lp.region == region}

    def innermost(sid: int):
        blk = h.mem[sid].block
        return max(
            (lp for lp in loops.values() if blk in lp.blocks),
            key=lambda lp: lp.depth,
            default=None,
        )

    inner_of = {a.sid: innermost(a.sid) for a in staged}
    deep = [lp for lp in inner_of.values() if lp is not None and lp.depth > wt.grid_dims]
    if not deep:  # no per-thread loop: nothing reused
        if info.shared:
            warnings.append(
                f"{info.name}: no staged access lies in a per-thread loop; "
                f"shared-memory tiling not modelled"
            )
        return None
    votes = Counter(lp.id for lp in deep)
    inner = loops[max(votes, key=lambda i: (votes[i], loops[i].depth))]
    parent = loops.get(inner.parent)
    strip_mined = bool(info.shared) and parent is not None and parent.depth > wt.grid_dims
    if info.shared and not strip_mined:
        warnings.append(
            f"{info.name}: the loop at line {inner.line} is not strip-mined (no per-thread loop "
            f"around it); tile phases counted every tile-width iterations of it"
        )
    return (parent if strip_mined else inner), strip_mined


def _inside(h, info, staged, tile_loop, warnings: list[str]) -> tuple:
    """The staged accesses inside the tile loop (one outside stays a global access, with a
    warning)."""
    kept = []
    for a in staged:
        m = h.mem[a.sid]
        if m.block in tile_loop.blocks:
            kept.append(a)
        else:
            warnings.append(
                f"{info.name}: {m.base} at line {m.line} is outside the tile loop (line "
                f"{tile_loop.line}): read from global memory, not from the {a.array} tile"
            )
    return tuple(kept)


def _tile_loads(trace: Trace, region: int, wt: WarpTrace, block: Block, staged, layouts: dict,
                tile_loop: int, divisor: float, launch: int) -> tuple[dict[str, int], int]:
    """Staging loads per thread of each array and tile bytes of one block per tile phase:
    the distinct elements of each array a block touches, over the phases of the launch."""
    used = {a.array for a in staged}
    mapped = mapped_loops(trace, region)[1 if wt.grid_dims == 2 else 0]
    threads = float(trace.loop_iters[launch, mapped].sum())
    iters = float(trace.loop_iters[launch, tile_loop])
    phases = max(iters / threads / divisor if threads else 1.0, 1.0)
    elem = {a: (layouts[a].elem_bytes if a in layouts else 4) for a in used}
    sids: dict[str, list[int]] = {}
    for a in staged:
        sids.setdefault(a.array, []).append(a.sid)
    loads: dict[str, int] = {}
    nbytes = 0
    for arr, (fp, active) in footprints(wt, sids, elem).items():  # (RS2)
        per_phase = fp / phases
        loads[arr] = math.ceil(per_phase / active - 1e-9)
        tile = math.ceil(per_phase * block.threads / active - 1e-9)
        if arr in layouts:  # a tile never holds more than the whole array
            tile = min(tile, math.prod(layouts[arr].dims))
        nbytes += tile * elem[arr]
    return loads, nbytes
