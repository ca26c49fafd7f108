"""Pseudo-warps regrouped for another block shape (SPEC §2.2): the events ordered for blocks of
one shape moved, warp by warp and in order, to the warp numbers they get under another block
shape of the same warp rows (the advisor's and the sweep's block shapes, without re-sorting).
The events (9 bytes each, ~10 M for a polybench trace) move only when something reads them
(``MovedEvents``): the memory analysis of a regrouped trace reads each instruction's lines
from the trace it came from (memory/issue.py), so on a device without a global L1 model a
block-shape sweep never copies them.
"""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
from numba import njit

from .block import Block
from .warp_order import WARP_SIZE, OrderedEvents, blocks_across, lane_coords, thread_of_lane


class MovedEvents:
    """The events (addresses, lanes) of warps moved to new numbers, copied on first read
    (``columns``; once, whichever thread asks first): the whole warps' runs of events
    ``lo[j]..hi[j]`` of ``addr``/``lane`` go to ``pos[j]``, in order (``_move_events``).
    ``len()``: the number of events, known without the copy."""

    def __init__(self, addr: np.ndarray, lane: np.ndarray, runs: np.ndarray) -> None:
        self._source = (addr, lane, runs)
        self._n = int(addr.shape[0])
        self._lock = threading.Lock()
        self._moved: tuple[np.ndarray, np.ndarray] | None = None

    def __len__(self) -> int:
        return self._n

    def columns(self) -> tuple[np.ndarray, np.ndarray]:
        """(addr, lane) of the moved events, copied now if not yet."""
        with self._lock:
            if self._moved is None:
                self._moved = _move_events(*self._source)
                self._source = None  # the source stays with the trace it belongs to
            return self._moved


def regroup_warps(
    ev: OrderedEvents, gx: int, gy: int, old: Block, new: Block
) -> tuple[OrderedEvents, np.ndarray] | None:
    """``ev``, ordered for blocks ``old``, in the order of blocks ``new`` without gathering
    the events again, when both shapes are a multiple of 32 threads wide: every warp is then
    32 consecutive pseudo-threads of one row under either shape (lane l the one at x mod 32
    = l), so its instructions and their events are the same and only the warps' numbers and
    order change: one copy of the events, warp by warp. With the index in ``ev`` of every
    warp instruction; None for other shapes."""
    got = regroup_lazily(ev, gx, gy, old, new)
    if got is None or not isinstance(got[0].addr, MovedEvents):
        return got
    moved, src = got
    addr, lane = moved.addr.columns()
    return dataclasses.replace(moved, addr=addr, lane=lane), src


def regroup_lazily(
    ev: OrderedEvents, gx: int, gy: int, old: Block, new: Block
) -> tuple[OrderedEvents, np.ndarray] | None:
    """``regroup_warps`` with the events not moved yet: the result's ``addr`` and ``lane``
    are one ``MovedEvents`` (unless ``ev`` is returned as it is), whose ``columns()`` are
    ``regroup_warps``' two arrays. For a WarpTrace, which copies them on first read."""
    if old.x % WARP_SIZE or new.x % WARP_SIZE:
        return None
    if not len(ev.addr) or old == new:
        return ev, np.arange(len(ev.inst_start), dtype=np.int64)
    gx = max(gx, 1)
    renumber = _warp_renumbering(
        int(ev.inst_warp[-1]) + 1, gx, gy, old.x, old.y, *blocks_across(gx, old),
        new.x, new.y, *blocks_across(gx, new),
    )  # fmt: skip
    starts, warp, src, runs = _move_warps(ev.addr.shape[0], ev.inst_start, ev.inst_warp, renumber)
    events = MovedEvents(ev.addr, ev.lane, runs)
    moved = OrderedEvents(
        events, events, starts, warp, ev.inst_k[src], ev.inst_sid[src],
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
def _move_warps(n, inst_start, inst_warp, renumber):  # pragma: no cover - numba
    """The instructions of each warp moved, whole and in order, to the place of its new
    number ``renumber[warp]`` (instructions grouped by warp, warps ascending): each
    instruction's first event after the move, its warp, its index before the move, and per
    moved warp the run of its ``n`` events to copy (``_move_events``: first, end, place)."""
    n_inst = inst_start.shape[0]
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
    o_start, o_warp = np.empty(n_inst, np.int64), np.empty(n_inst, np.int64)
    o_src = np.empty(n_inst, np.int64)
    runs = np.empty((n_new, 3), np.int64)
    m, pos, r = 0, 0, 0
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
        runs[r, 0], runs[r, 1], runs[r, 2] = lo, hi, pos
        r += 1
        pos += hi - lo
    return o_start, o_warp, o_src, runs[:r].copy()


@njit(cache=True, nogil=True)
def _move_events(addr, lane, runs):  # pragma: no cover - numba
    """The events of ``_move_warps``' runs copied to their places: (addr, lane)."""
    n = addr.shape[0]
    o_addr, o_lane = np.empty(n, np.uint64), np.empty(n, np.uint8)
    for r in range(runs.shape[0]):
        lo, hi, pos = runs[r, 0], runs[r, 1], runs[r, 2]
        o_addr[pos : pos + hi - lo] = addr[lo:hi]
        o_lane[pos : pos + hi - lo] = lane[lo:hi]
    return o_addr, o_lane
