"""Pseudo-warps regrouped for another block shape (SPEC §2.2): the events ordered for blocks of
one shape moved, warp by warp and in order, to the warp numbers they get under another block
shape of the same warp rows (the advisor's and the sweep's block shapes, without re-sorting).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .block import Block
from .warp_order import WARP_SIZE, OrderedEvents, blocks_across, lane_coords, thread_of_lane


def regroup_warps(
    ev: OrderedEvents, gx: int, gy: int, old: Block, new: Block
) -> tuple[OrderedEvents, np.ndarray] | None:
    """``ev``, ordered for blocks ``old``, in the order of blocks ``new`` without gathering
    the events again, when both shapes are a multiple of 32 threads wide: every warp is then
    32 consecutive pseudo-threads of one row under either shape (lane l the one at x mod 32
    = l), so its instructions and their events are the same and only the warps' numbers and
    order change: one copy of the events, warp by warp. With the index in ``ev`` of every
    warp instruction; None for other shapes."""
    if old.x % WARP_SIZE or new.x % WARP_SIZE:
        return None
    if not len(ev.addr) or old == new:
        return ev, np.arange(len(ev.inst_start), dtype=np.int64)
    gx = max(gx, 1)
    renumber = _warp_renumbering(
        int(ev.inst_warp[-1]) + 1, gx, gy, old.x, old.y, *blocks_across(gx, old),
        new.x, new.y, *blocks_across(gx, new),
    )  # fmt: skip
    addr, lane, starts, warp, src = _move_warps(
        ev.addr, ev.lane, ev.inst_start, ev.inst_warp, renumber
    )
    moved = OrderedEvents(
        addr, lane, starts, warp, ev.inst_k[src], ev.inst_sid[src],
        ev.n_threads, ev.n_warps, ev.divergent,
    )  # fmt: skip
    return moved, src


@njit(cache=True, nogil=True)
def _warp_renumbering(  # pragma: no cover - numba
    n_warps, gx, gy, bx0, by0, nbx0, wpb0, bx1, by1, nbx1, wpb1
):
    """The number under blocks (bx1, by1) of every warp under blocks (bx0, by0), found from
    its lane 0's pseudo-thread (-1: a warp with no thread)."""
    out = np.full(n_warps, -1, np.int64)
    for w in range(n_warps):
        th = thread_of_lane(w, 0, gx, gy, bx0, by0, nbx0, wpb0)
        if th >= 0:
            out[w] = lane_coords(th % gx, th // gx, gx, bx1, by1, nbx1, wpb1)[1]
    return out


@njit(cache=True, nogil=True)
def _move_warps(addr, lane, inst_start, inst_warp, renumber):  # pragma: no cover - numba
    """The instructions and events of each warp moved, whole and in order, to the place of
    its new number ``renumber[warp]`` (instructions grouped by warp, warps ascending): the
    events, each instruction's first event and warp, and its index before the move."""
    n, n_inst = addr.shape[0], inst_start.shape[0]
    n_new = 0
    for w in range(renumber.shape[0]):
        n_new = max(n_new, renumber[w] + 1)
    first = np.full(n_new, -1, np.int64)  # per new warp: its first and last+1 instruction
    last = np.zeros(n_new, np.int64)
    for i in range(n_inst):
        w = renumber[inst_warp[i]]
        if first[w] < 0:
            first[w] = i
        last[w] = i + 1
    o_addr, o_lane = np.empty(n, np.uint64), np.empty(n, np.uint8)
    o_start, o_warp = np.empty(n_inst, np.int64), np.empty(n_inst, np.int64)
    o_src = np.empty(n_inst, np.int64)
    m, pos = 0, 0
    for w in range(n_new):
        if first[w] < 0:
            continue
        lo = inst_start[first[w]]
        hi = inst_start[last[w]] if last[w] < n_inst else n
        for i in range(first[w], last[w]):
            o_start[m] = pos + inst_start[i] - lo
            o_warp[m] = w
            o_src[m] = i
            m += 1
        o_addr[pos : pos + hi - lo] = addr[lo:hi]
        o_lane[pos : pos + hi - lo] = lane[lo:hi]
        pos += hi - lo
    return o_addr, o_lane, o_start, o_warp, o_src
