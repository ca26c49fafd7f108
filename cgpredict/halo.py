"""Stencil tiles with halos in shared memory (the advisor's halo tiling, issue #26): each block
stages the box of a read-only array its threads read (its points and the halo around them,
one box per plane of a 3-D array), every thread loading tile elements t, t + threads, ... in
row-major order (coalesced), one barrier, then every stencil read comes from the tile.

In the trace: the kernel's first loads of the array (in program order) become the staging
rounds (round q: the block's thread t loads tile element q x threads + t; lanes past the
tile's end drop out, and warps with none drop the instruction: ``scale`` is the share of a
round's warp instructions left), and every stencil read becomes a shared read whose bank
conflicts come from its own element's place in its block's tile. Boxes and offsets are read
from the addresses each block touches, not from the source text."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .memory.shared import StagedAccess, array_layouts, array_name, conflict_degrees
from .profile import SharedMemoryCounts
from .warps import WarpTrace

__all__ = ["HaloError", "HaloFigures", "HaloSpec", "halo_counts", "halo_figures", "halo_note",
           "halo_setup", "halo_text", "stencil_reach"]

#: How a fix's report says what it staged: "<kernel>: <access> staged with its halo: ...".
NOTE = "staged with its halo"


class HaloError(ValueError):
    """Why an array cannot be staged with its halo (the advisor says so in a note)."""


@dataclass(frozen=True)
class HaloSpec:
    """A kernel's halo tile: the stencil reads (shared, by bank conflict), the staging rounds
    (kept as global loads, ``scale``: the share of each round's warp instructions left), the
    shared stores per thread that fill the tile, and its bytes per block."""

    access: str  # the array as the kernel names it (a pointer to it, maybe)
    array: str  # the global array staged
    reads: tuple[StagedAccess, ...]  # every stencil load, read from the tile
    rounds: tuple[int, ...]  # the static loads that load the tile (global, coalesced)
    scale: tuple[tuple[int, float], ...]  # (round load, warp instructions kept / before)
    stores_per_thread: float  # tile elements of every block / the threads of the launch
    bytes_per_block: int  # the largest tile
    tile_elements: int  # elements of the largest tile
    spread: tuple[int, int, int]  # per axis (plane, row, column): 2 x the stencil's radius


@dataclass(frozen=True)
class _Events:
    """The stencil loads' events: per event its warp instruction, block, and the element's
    (plane, row, column) in the staged array."""

    inst: np.ndarray
    block: np.ndarray
    thread: np.ndarray  # warp x 32 + lane
    plane: np.ndarray
    row: np.ndarray
    col: np.ndarray


def _owner(addrs: np.ndarray, globals_: dict[str, int], layouts) -> tuple[str, int]:
    """The global array every address lies in, and its base; HaloError when they are not in
    one global array of two or more dimensions."""
    lo, hi = int(addrs.min()), int(addrs.max())
    for name, base in globals_.items():
        lay = layouts.get(name)
        if lay is None or len(lay.dims) < 2:
            continue
        if base <= lo and hi < base + int(np.prod(lay.dims)) * lay.elem_bytes:
            return name, base
    raise HaloError("its addresses do not lie in one global array of two or more dimensions")


def _events(wt: WarpTrace, sids: list[int], base: int, dims, elem: int) -> _Events:
    """The events of ``sids`` as (plane, row, column) elements of an array of ``dims``."""
    counts = np.diff(np.append(wt.inst_start, wt.n_events))
    inst = np.repeat(np.arange(wt.n_insts), counts)
    sel = np.isin(wt.inst_sid[inst], np.asarray(sids, np.int64))
    inst = inst[sel]
    e = (wt.addr[sel].astype(np.int64) - base) // elem
    cols, rows = int(dims[-1]), int(dims[-2])
    wpb = max(-(-wt.block.threads // 32), 1)
    thread = wt.inst_warp[inst] * 32 + wt.lane[sel].astype(np.int64)
    return _Events(inst=inst, block=wt.inst_warp[inst] // wpb, thread=thread,
                   plane=e // (rows * cols),
                   row=e // cols % rows, col=e % cols)


def stencil_reach(ev: _Events) -> tuple[int, int, int]:
    """Per axis (plane, row, column): the most elements between the lowest and the highest
    a thread's stencil reads (twice the radius along that axis), over all threads."""
    key = ev.thread
    out = []
    for axis in (ev.plane, ev.row, ev.col):
        n = int(key.max()) + 1
        lo = np.full(n, np.iinfo(np.int64).max, np.int64)
        hi = np.full(n, -1, np.int64)
        np.minimum.at(lo, key, axis)
        np.maximum.at(hi, key, axis)
        used = hi >= 0
        out.append(int((hi[used] - lo[used]).max()) if used.any() else 0)
    return tuple(out)


def _sel(wt: WarpTrace, sids: list[int]) -> np.ndarray:
    """Indices of the events of ``sids``."""
    counts = np.diff(np.append(wt.inst_start, wt.n_events))
    inst = np.repeat(np.arange(wt.n_insts), counts)
    return np.flatnonzero(np.isin(wt.inst_sid[inst], np.asarray(sids, np.int64)))


@dataclass(frozen=True)
class _Boxes:
    """Every block's tile: one box per (block, plane), sorted; where each box starts in its
    block's tile, and every block's tile size."""

    block: np.ndarray
    plane: np.ndarray
    r0: np.ndarray
    c0: np.ndarray
    width: np.ndarray
    start: np.ndarray  # element of its block's tile where the box begins
    size: np.ndarray  # elements of the box
    tile: dict[int, int]  # block -> tile elements


def _boxes(ev: _Events) -> _Boxes:
    """The box of rows and columns each block reads (from its lowest to its highest, over
    every plane), once in each plane it reads: the tile with its halo, as the textbook
    kernel loads it (the same box in every plane)."""
    planes = int(ev.plane.max()) + 1
    blocks, b_inv = np.unique(ev.block, return_inverse=True)
    big = np.iinfo(np.int64).max
    lo_r, lo_c = np.full(len(blocks), big, np.int64), np.full(len(blocks), big, np.int64)
    hi_r, hi_c = np.full(len(blocks), -1, np.int64), np.full(len(blocks), -1, np.int64)
    np.minimum.at(lo_r, b_inv, ev.row)
    np.minimum.at(lo_c, b_inv, ev.col)
    np.maximum.at(hi_r, b_inv, ev.row)
    np.maximum.at(hi_c, b_inv, ev.col)
    uniq = np.unique(ev.block * planes + ev.plane)  # the (block, plane) boxes, sorted
    block = uniq // planes
    at = np.searchsorted(blocks, block)
    r0, c0, width = lo_r[at], lo_c[at], hi_c[at] - lo_c[at] + 1
    size = (hi_r[at] - r0 + 1) * width
    start = np.zeros(len(uniq), np.int64)
    tile: dict[int, int] = {}
    for i, b in enumerate(block.tolist()):  # boxes of one block are consecutive (sorted key)
        start[i] = tile.get(b, 0)
        tile[b] = start[i] + int(size[i])
    return _Boxes(block=block, plane=uniq % planes, r0=r0, c0=c0, width=width,
                  start=start, size=size, tile=tile)


def _read_conflicts(wt: WarpTrace, ev: _Events, boxes: _Boxes, elem: int, banks: int,
                    bank_bytes: int) -> dict[int, np.ndarray]:
    """Per stencil load: the bank-conflict degree of each of its warp instructions, each
    lane's element at its place in its block's tile (4-byte words of it)."""
    planes = int(boxes.plane.max()) + 1
    idx = np.searchsorted(boxes.block * planes + boxes.plane, ev.block * planes + ev.plane)
    place = boxes.start[idx] + (ev.row - boxes.r0[idx]) * boxes.width[idx] + ev.col - boxes.c0[idx]
    words = place * elem // 4
    # the events come in warp-instruction order: each instruction's lanes are one run
    starts = np.flatnonzero(np.r_[True, ev.inst[1:] != ev.inst[:-1]]).astype(np.int64)
    ends = np.r_[starts[1:], len(ev.inst)].astype(np.int64)
    degrees = conflict_degrees(words.astype(np.int64), starts, ends, banks, bank_bytes)
    sid = wt.inst_sid[ev.inst[starts]]
    return {int(s): degrees[sid == s] for s in np.unique(sid)}


def _staging_rounds(wt: WarpTrace, rounds: list[int], boxes: _Boxes, base: int, dims,
                    elem: int) -> tuple[WarpTrace, dict[int, float]]:
    """``wt`` with the loads of ``rounds`` loading the tile (round q: thread t of a block
    loads its tile element q x threads + t, row-major box after box), lanes past the tile's
    end and warps without a lane dropped; and the share of each round's warp instructions
    left."""
    threads = wt.block.threads
    wpb = max(-(-threads // 32), 1)
    counts = np.diff(np.append(wt.inst_start, wt.n_events))
    inst = np.repeat(np.arange(wt.n_insts), counts)
    q = np.full(int(wt.inst_sid.max()) + 1, -1, np.int64)
    q[rounds] = np.arange(len(rounds))
    ev_q = q[wt.inst_sid[inst]]
    mine = np.flatnonzero(ev_q >= 0)
    warp = wt.inst_warp[inst[mine]]
    b = warp // wpb
    j = ev_q[mine] * threads + (warp % wpb) * 32 + wt.lane[mine].astype(np.int64)
    tile = np.array([boxes.tile.get(int(x), 0) for x in range(int(b.max()) + 1)], np.int64)
    active = j < tile[b]
    big = int(tile.max()) + 1
    at = np.searchsorted(boxes.block * big + boxes.start, b * big + j, side="right") - 1
    at = np.clip(at, 0, len(boxes.block) - 1)
    local = j - boxes.start[at]
    r = boxes.r0[at] + local // boxes.width[at]
    c = boxes.c0[at] + local % boxes.width[at]
    addr = wt.addr.copy()
    moved = base + ((boxes.plane[at] * int(dims[-2]) + r) * int(dims[-1]) + c) * elem
    addr[mine[active]] = moved[active].astype(np.uint64)
    keep = np.ones(wt.n_events, np.bool_)
    keep[mine[~active]] = False
    kept = np.bincount(inst[keep], minlength=wt.n_insts)
    live = kept > 0
    before = {s: int((wt.inst_sid == s).sum()) for s in rounds}
    out = dataclasses.replace(
        wt, addr=addr[keep], lane=wt.lane[keep],
        inst_start=np.r_[0, np.cumsum(kept[live])[:-1]].astype(wt.inst_start.dtype),
        inst_warp=wt.inst_warp[live], inst_k=wt.inst_k[live], inst_sid=wt.inst_sid[live],
        origin=None)
    scale = {s: int((out.inst_sid == s).sum()) / before[s] if before[s] else 0.0
             for s in rounds}
    return out, scale


def _check_not_written(trace, region: int, wt: WarpTrace, owner: str, base: int, lay) -> None:
    """HaloError when a store of the kernel's launch writes the staged array (an in-place
    stencil: a block's tile would hold values its neighbours have already overwritten)."""
    stores = [m.id for m in trace.header.mem if m.region == region and m.kind == "store"]
    addr = wt.addr[_sel(wt, stores)].astype(np.int64) if stores else np.zeros(0, np.int64)
    end = base + int(np.prod(lay.dims)) * lay.elem_bytes
    if ((addr >= base) & (addr < end)).any():
        raise HaloError(f"the kernel writes {owner} in the same launch (an in-place stencil: a "
                        f"block's tile would hold values its neighbours overwrite)")


def halo_setup(trace, region: int, wt: WarpTrace, array: str, banks: int,
               bank_bytes: int) -> tuple[WarpTrace, HaloSpec]:
    """The warp trace with ``array``'s halo tile staged (module docstring) and what the tile
    costs; HaloError when the kernel's reads of ``array`` cannot be staged so."""
    h = trace.header
    sids = sorted(m.id for m in h.mem if m.region == region and m.kind == "load"
                  and array_name(m.base) == array)
    if len(sids) < 2:
        raise HaloError(f"{array} is read by {len(sids)} load(s): no stencil")
    sel = _sel(wt, sids)
    if not len(sel):
        raise HaloError(f"{array} is not read in the traced launch")
    layouts = array_layouts(h.ir_text)
    owner, base = _owner(wt.addr[sel], h.globals, layouts)
    lay = layouts[owner]
    ev = _events(wt, sids, base, lay.dims, lay.elem_bytes)
    boxes = _boxes(ev)
    threads = wt.block.threads
    need = -(-max(boxes.tile.values()) // threads)
    if need > len(sids):
        raise HaloError(f"its tile needs {need} loads a thread, more than its {len(sids)} reads")
    degrees = _read_conflicts(wt, ev, boxes, lay.elem_bytes, banks, bank_bytes)
    reads = tuple(
        StagedAccess(sid=s, array=owner, elem_bytes=lay.elem_bytes,
                     conflicts=tuple((int(x), int(n)) for x, n in
                                     zip(*np.unique(degrees[s], return_counts=True))))
        for s in sids if s in degrees)
    _check_not_written(trace, region, wt, owner, base, lay)
    rounds = sids[:need]
    out, scale = _staging_rounds(wt, rounds, boxes, base, lay.dims, lay.elem_bytes)
    largest = max(boxes.tile.values())
    return out, HaloSpec(
        access=array, array=owner, reads=reads, rounds=tuple(rounds),
        scale=tuple(sorted(scale.items())),
        stores_per_thread=sum(boxes.tile.values()) / max(wt.n_threads, 1),
        bytes_per_block=largest * lay.elem_bytes, tile_elements=largest,
        spread=stencil_reach(ev))


def halo_counts(spec: HaloSpec, per_thread: dict[int, float], block_of) -> tuple[
        SharedMemoryCounts, float]:
    """Shared accesses per thread of a halo-tiled launch (SPEC §2.6): every stencil read at
    its conflict degree (the X_P of eq. (20)), the tile's stores (a row of consecutive words
    a warp: conflict-free) and one barrier between them (eq. (23)'s sync instruction)."""
    by_x: dict[float, float] = {1.0: spec.stores_per_thread}
    waves = spec.stores_per_thread
    for a in spec.reads:
        count = per_thread.get(block_of(a.sid), 0.0)
        total = sum(c for _, c in a.conflicts)
        for x, c in a.conflicts:
            by_x[float(x)] = by_x.get(float(x), 0.0) + count * c / total
        waves += count * a.wavefronts
    counts = SharedMemoryCounts(insts_by_conflict=tuple(sorted(by_x.items())),
                                bytes_per_block=spec.bytes_per_block, wavefronts=waves)
    return counts, 1.0


@dataclass(frozen=True)
class HaloFigures:
    """What a halo-tiled kernel's report carries (``KernelReport.halo``): the array staged,
    the stencil's span and the tile's size, which the advisor's fix reads (halo_fix.py)."""

    access: str  # the array as the kernel names it (a pointer to it, maybe)
    array: str  # the global array staged
    spans: tuple[int, int, int]  # (planes, rows, columns) a thread's stencil spans
    tile_elements: int  # elements of the largest tile
    bytes_per_block: int  # the largest tile's bytes
    rounds: int  # coalesced staging rounds of the block's threads
    threads: int  # threads a block


def halo_figures(spec: HaloSpec, threads: int) -> HaloFigures:
    """The report's figures of halo tile ``spec`` in blocks of ``threads`` threads."""
    p, r, c = spec.spread
    return HaloFigures(access=spec.access, array=spec.array, spans=(p + 1, r + 1, c + 1),
                       tile_elements=spec.tile_elements, bytes_per_block=spec.bytes_per_block,
                       rounds=len(spec.rounds), threads=threads)


def halo_text(f: HaloFigures) -> str:
    """What was staged and how large: the note's text after the kernel's name."""
    planes, rows, cols = f.spans
    deep = f"{planes} planes, " if planes > 1 else ""
    return (f"{f.access} {NOTE}: the stencil spans {deep}{rows} rows and {cols} columns of "
            f"{f.array}; the largest tile holds {f.tile_elements} elements "
            f"({f.bytes_per_block} B per block), loaded in {f.rounds} coalesced round(s) of "
            f"{f.threads} threads")


def halo_note(kernel: str, f: HaloFigures) -> str:
    """The line a halo-tiled kernel's report carries: what was staged and how large."""
    return f"{kernel}: {halo_text(f)}"
