"""Memory events into warp instructions (SPEC §2.2): the order ``warps.form_warps`` gives the
events of one launch, (warp, instruction, lane), and the count of divergent instructions.

When every lane of a warp runs the same sequence of static instructions (possibly cut short),
a warp instruction is the warp's k-th event group: gathered lane by lane when each thread's
events are contiguous (``_warp_gather``), else found by one counting sort that writes the
events in place (``_warp_sort``). Otherwise (branches, trip counts that differ between lanes)
the events are regrouped by (warp, static instruction, r-th execution): masked instructions
of the lanes that run them (``warp_masked.masked_order``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .block import Block
from .warp_masked import masked_order, sid_ranks, sid_ranks_sorted

__all__ = [
    "EVENT_DTYPE",
    "WARP_SIZE",
    "OrderedEvents",
    "ThreadEvents",
    "event_records",
    "order_events",
    "thread_events",
]

WARP_SIZE = 32

#: One memory event in warp order, as a record (``event_records``: inspection and tests).
EVENT_DTYPE = np.dtype(
    [
        ("warp", "<u4"),
        ("k", "<u4"),  # index of the event's warp instruction within its warp (issue order)
        ("lane", "<u1"),
        ("sid", "<u2"),
        ("thread", "<u8"),
        ("addr", "<u8"),
    ]
)


def blocks_across(gx: int, block: Block) -> tuple[int, int]:
    """(blocks along x of a grid ``gx`` pseudo-threads wide, warps per block)."""
    return -(-max(gx, 1) // block.x), -(-block.threads // WARP_SIZE)


@njit(cache=True, nogil=True)
def lane_coords(x, y, gx, bx, by, nbx, wpb):  # pragma: no cover - numba
    """(thread, warp, lane) of pseudo-thread (x, y)."""
    tib = (y % by) * bx + (x % bx)
    return y * gx + x, ((y // by) * nbx + x // bx) * wpb + tib // 32, tib % 32


@njit(cache=True, nogil=True)
def thread_of_lane(w, lane, gx, gy, bx, by, nbx, wpb):  # pragma: no cover - numba
    """The pseudo-thread (y * gx + x) that runs ``lane`` of warp ``w``: the inverse of
    lane_coords; -1 where the lane has none (past the block's threads, or the grid's edge)."""
    b, tib = w // wpb, (w % wpb) * 32 + lane
    x, y = (b % nbx) * bx + tib % bx, (b // nbx) * by + tib // bx
    return y * gx + x if tib < bx * by and x < gx and y < gy else -1


@njit(cache=True, nogil=True)
def _thread_events(tx, ty, gx, bx, by, nbx, wpb, n_threads):  # pragma: no cover - numba
    """Thread, warp, lane and k (rank among the thread's events, program order) of every
    event, and the number of threads that made at least one event."""
    n = tx.shape[0]
    thread = np.empty(n, np.int64)
    warp = np.empty(n, np.int64)
    lane = np.empty(n, np.int64)
    k = np.empty(n, np.int64)
    seen = np.zeros(n_threads, np.int64)
    used = 0
    lx, ly = np.int64(-1), np.int64(-1)
    th, w, ln = np.int64(0), np.int64(0), np.int64(0)
    for t in range(n):
        if tx[t] != lx or ty[t] != ly:  # a thread's events are mostly contiguous: divide once
            lx, ly = tx[t], ty[t]
            th, w, ln = lane_coords(lx, ly, gx, bx, by, nbx, wpb)
        thread[t] = th
        warp[t] = w
        lane[t] = ln
        c = seen[th]
        k[t] = c
        if c == 0:
            used += 1
        seen[th] = c + 1
    return thread, warp, lane, k, used


@njit(cache=True, nogil=True)
def _sort_warp_k(warp, k):  # pragma: no cover - numba
    """Counting sort of events into (warp, k, lane) order, O(n), and the first event of every
    (warp, k) group. Lanes of a warp appear in increasing order in program order (x is the
    inner mapped loop), so a stable scatter by (warp, k) leaves each group in lane order."""
    n = warp.shape[0]
    n_warps = 0
    for t in range(n):
        if warp[t] + 1 > n_warps:
            n_warps = warp[t] + 1
    kmax = np.zeros(n_warps, np.int64)
    for t in range(n):
        if k[t] + 1 > kmax[warp[t]]:
            kmax[warp[t]] = k[t] + 1
    base = np.zeros(n_warps + 1, np.int64)
    for w in range(n_warps):
        base[w + 1] = base[w] + kmax[w]
    count = np.zeros(base[n_warps] + 1, np.int64)
    for t in range(n):
        count[base[warp[t]] + k[t] + 1] += 1
    for s in range(1, count.shape[0]):
        count[s] += count[s - 1]
    perm = np.empty(n, np.int64)
    fill = count[:-1].copy()
    for t in range(n):
        slot = base[warp[t]] + k[t]
        perm[fill[slot]] = t
        fill[slot] += 1
    starts = np.empty(count.shape[0] - 1, np.int64)
    m = 0
    for s in range(count.shape[0] - 1):
        if count[s + 1] > count[s]:
            starts[m] = count[s]
            m += 1
    return perm, starts[:m]


@njit(cache=True, nogil=True)
def _gather(perm, lane, addr, o_lane, o_addr):  # pragma: no cover - numba
    """The lane and address columns in ``perm`` order, in one pass."""
    for i in range(perm.shape[0]):
        t = perm[i]
        o_lane[i] = lane[t]
        o_addr[i] = addr[t]


@dataclass(frozen=True)
class ThreadEvents:
    """Where each pseudo-thread's (y * gx + x) memory events lie among the mapped events: how
    many, and from which index when every thread's events are contiguous (each pseudo-thread
    one iteration of the mapped loops; None when a thread's events are split)."""

    counts: np.ndarray
    starts: np.ndarray | None


def thread_events(tx: np.ndarray, ty: np.ndarray, gx: int, gy: int) -> ThreadEvents:
    """``ThreadEvents`` of mapped events, in one pass: they do not depend on the block shape,
    so a block-shape sweep finds them once."""
    gx, gy = max(gx, 1), max(gy, int(ty.max()) + 1 if len(ty) else 1)
    counts, starts, contiguous = _count_threads(tx, ty, gx, gx * gy)
    return ThreadEvents(counts, starts if contiguous else None)


@njit(cache=True, nogil=True)
def _count_threads(tx, ty, gx, n_threads):  # pragma: no cover - numba
    counts = np.zeros(n_threads, np.int64)
    starts = np.full(n_threads, -1, np.int64)
    contiguous = True
    last = np.int64(-1)
    for t in range(tx.shape[0]):
        th = ty[t] * gx + tx[t]
        if th != last:
            if starts[th] >= 0:
                contiguous = False
            starts[th] = t
            last = th
        counts[th] += 1
    return counts, starts, contiguous


@dataclass(frozen=True)
class OrderedEvents:
    """One launch's memory events in (warp, instruction, lane) order, as columns: per event
    its address and lane, per warp instruction its first event, warp, index k within the
    warp and static instruction (the warp, k and static id are the same for every event of
    an instruction, and the pseudo-thread follows from the warp and the lane)."""

    addr: np.ndarray  # uint64 per event
    lane: np.ndarray  # uint8 per event
    inst_start: np.ndarray  # int64 per warp instruction: index of its first event
    inst_warp: np.ndarray  # int64
    inst_k: np.ndarray  # int64
    inst_sid: np.ndarray  # int64
    n_threads: int  # pseudo-threads that made at least one event
    n_warps: int  # warps with at least one instruction
    divergent: int  # warp instructions with lanes masked off by control flow


def order_events(
    tx, ty, sid, addr, gx: int, gy: int, block: Block, threads: ThreadEvents | None = None,
    shifts: tuple[np.ndarray, np.ndarray] | None = None,
) -> OrderedEvents:
    """The ``OrderedEvents`` of one launch's mapped events (module docstring); ``threads``:
    their ``thread_events``, when already known; ``shifts``: per event, the steps to add to
    its rank r and to its program position k (a loop whose remainder runs first, eq. (W5) of
    ``remainder_first``), which take the general path.

    A warp instruction is the r-th execution of a static instruction by the lanes of a warp
    that execute it. When every lane of a warp runs the same sequence of static instructions
    (possibly cut short), that is the warp's k-th event group, gathered lane by lane from
    the threads' contiguous events, or found by an O(n) counting sort when a thread's events
    are split; otherwise (branches, trip counts that differ between lanes) the events are
    regrouped by (warp, sid, r)."""
    n = len(tx)
    if not n:
        none = np.zeros(0, np.int64)
        return OrderedEvents(
            np.zeros(0, np.uint64), np.zeros(0, np.uint8), none, none, none, none, 0, 0, 0
        )
    if threads is None:
        threads = thread_events(tx, ty, gx, gy)
    counts = threads.counts
    gx = max(gx, 1)
    gy = len(counts) // gx
    nbx, wpb = blocks_across(gx, block)
    n_threads = gy * gx
    o_addr, o_lane = np.empty(n, np.uint64), np.empty(n, np.uint8)
    if shifts is not None:
        inst, ok = None, False
    elif threads.starts is not None:
        inst, ok = _warp_gather(
            sid, addr, counts, threads.starts, gx, block.x, block.y, nbx, wpb, o_lane, o_addr
        )
    else:
        inst, ok = _warp_sort(tx, ty, sid, addr, counts, gx, block.x, block.y, nbx, wpb,
                              o_lane, o_addr)  # fmt: skip
    n_threads_used = int(np.count_nonzero(counts))
    if ok:
        starts, inst_warp, inst_k, inst_sid = inst
    else:  # lanes that run different instructions: the general path
        thread, warp, lane, k, n_threads_used = _thread_events(
            tx, ty, gx, block.x, block.y, nbx, wpb, n_threads
        )
        perm, starts = _sort_warp_k(warp, k)
        n_sids = int(sid.max()) + 1
        r, ok = sid_ranks(thread, sid, n_threads, n_sids)
        if not ok:
            r = sid_ranks_sorted(thread, sid)
        if shifts is not None:
            r, k = r + shifts[0], k + shifts[1]
        perm, k, starts = masked_order(perm, warp, lane, k, sid, r, n_sids)
        _gather(perm, lane, addr, o_lane, o_addr)
        first = perm[starts]
        inst_warp, inst_k, inst_sid = warp[first], k[first], sid[first].astype(np.int64)
    divergent = _count_divergent(inst_warp, starts, n, gx, gy, block.x, block.y, nbx, wpb)
    n_warps = int(np.count_nonzero(np.r_[True, inst_warp[1:] != inst_warp[:-1]]))
    return OrderedEvents(
        o_addr, o_lane, starts, inst_warp, inst_k, inst_sid,
        int(n_threads_used), n_warps, int(divergent),
    )  # fmt: skip


_TILE = 64  # program positions k gathered per step of a warp (their output fits the L1)


@njit(cache=True, nogil=True)
def _warp_gather(  # pragma: no cover - numba
    sid, addr, counts, starts, gx, bx, by, nbx, wpb, o_lane, o_addr
):  # fmt: skip
    """``_warp_sort`` when every thread's events are contiguous (``starts``): the events
    written in (warp, k, lane) order. A warp's k are taken _TILE at a time, each lane's
    events of the tile read in one contiguous run and written to their places in the
    tile's output (which stays in the L1), where reading the k-th event of 32 threads at a
    time pulled from 64 places in memory at once (1.3-1.6x slower on 3MM's launches).
    Same result, same ok."""
    lane_thread, kmax = _warp_lanes(counts, gx, bx, by, nbx, wpb)
    n_inst = kmax.sum()  # every k < kmax has the longest lane
    i_start = np.empty(n_inst, np.int64)
    i_warp = np.empty(n_inst, np.int64)
    i_k = np.empty(n_inst, np.int64)
    i_sid = np.empty(n_inst, np.int64)
    fill = np.zeros(_TILE, np.int64)
    pos = 0
    m = 0
    for w in range(kmax.shape[0]):
        for k0 in range(0, kmax[w], _TILE):
            k1 = min(k0 + _TILE, kmax[w])
            fill[:] = 0
            for lane in range(32):  # the lanes that run each k of the tile
                th = lane_thread[w, lane]
                if th >= 0:
                    for k in range(k0, min(k1, counts[th])):
                        fill[k - k0] += 1
            for k in range(k0, k1):
                i_start[m + k - k0] = pos
                i_warp[m + k - k0] = w
                i_k[m + k - k0] = k
                pos += fill[k - k0]
            fill[:] = 0  # now: the lanes of each k placed so far
            for lane in range(32):
                th = lane_thread[w, lane]
                for k in range(k0, min(k1, counts[th]) if th >= 0 else k0):
                    j = m + k - k0
                    t = starts[th] + k
                    if fill[k - k0] == 0:
                        i_sid[j] = np.int64(sid[t])
                    elif np.int64(sid[t]) != i_sid[j]:
                        return (i_start, i_warp, i_k, i_sid), False
                    o_lane[i_start[j] + fill[k - k0]] = lane
                    o_addr[i_start[j] + fill[k - k0]] = addr[t]
                    fill[k - k0] += 1
            m += k1 - k0
    return (i_start, i_warp, i_k, i_sid), True


@njit(cache=True, nogil=True)
def _warp_lanes(counts, gx, bx, by, nbx, wpb):  # pragma: no cover - numba
    """Per warp of the grid, the pseudo-thread of each lane (-1: none, at the grid's edge or
    past the block's end) and its longest lane's event count."""
    n_threads = counts.shape[0]
    gy = n_threads // gx
    n_warps = nbx * ((gy + by - 1) // by) * wpb  # every warp of the grid
    lane_thread = np.empty((n_warps, 32), np.int64)
    kmax = np.zeros(n_warps, np.int64)
    for w in range(n_warps):
        for lane in range(32):
            th = thread_of_lane(w, lane, gx, gy, bx, by, nbx, wpb)
            lane_thread[w, lane] = th
            if th >= 0:
                kmax[w] = max(kmax[w], counts[th])
    return lane_thread, kmax


@njit(cache=True, nogil=True)
def _warp_sort(  # pragma: no cover - numba
    tx, ty, sid, addr, counts, gx, bx, by, nbx, wpb, o_lane, o_addr
):  # fmt: skip
    """The events in (warp, k, lane) order written straight into their columns (address,
    lane), with the first event, warp, k and static id of every warp instruction: a
    counting sort by (warp, k), k being an event's rank among its thread's events. The
    (warp, k) slot sizes come from the threads' event counts (a thread of c events fills
    slots 0..c-1 of its warp), so the events are read once, in the scatter, which
    recomputes (thread, warp, lane) only when the thread changes. Lanes appear in
    increasing order in program order (x is the inner mapped loop), so the stable scatter
    leaves each group in lane order. ok is False when a (warp, k) group holds events of two
    static instructions (divergent lanes): those go to ``masked_order``, which rewrites
    both columns."""
    n = tx.shape[0]
    n_threads = counts.shape[0]
    n_warps = nbx * ((n_threads // gx + by - 1) // by) * wpb  # every warp of the grid
    warp_of = np.empty(n_threads, np.int64)
    kmax = np.zeros(n_warps, np.int64)
    for th in range(n_threads):
        _, w, _ = lane_coords(th % gx, th // gx, gx, bx, by, nbx, wpb)
        warp_of[th] = w
        kmax[w] = max(kmax[w], counts[th])
    base = np.zeros(n_warps + 1, np.int64)
    for q in range(n_warps):
        base[q + 1] = base[q] + kmax[q]
    n_slots = base[n_warps]
    ends = np.zeros(n_slots + 1, np.int64)  # threads whose last event is in the slot
    for th in range(n_threads):
        if counts[th] > 0:
            ends[base[warp_of[th]] + counts[th] - 1] += 1
    fill = np.zeros(n_slots + 1, np.int64)  # events per slot (threads still running), then
    for w in range(n_warps):  # the offset of each slot's first event
        running = 0
        for slot in range(base[w + 1] - 1, base[w] - 1, -1):
            running += ends[slot]
            fill[slot + 1] = running
    n_inst = 0
    for q in range(1, n_slots + 1):
        if fill[q] > 0:
            n_inst += 1
        fill[q] += fill[q - 1]
    starts = np.empty(n_inst, np.int64)
    i_warp = np.empty(n_inst, np.int64)
    i_k = np.empty(n_inst, np.int64)
    m = 0
    for w in range(n_warps):
        for q in range(base[w], base[w + 1]):
            if fill[q + 1] > fill[q]:
                starts[m] = fill[q]
                i_warp[m] = w
                i_k[m] = q - base[w]
                m += 1
    seen = np.zeros(n_threads, np.int64)
    group_sid = np.full(n_slots, -1, np.int64)
    lx, ly = np.int64(-1), np.int64(-1)
    th, w, ln = np.int64(0), np.int64(0), np.int64(0)
    for t in range(n):
        if tx[t] != lx or ty[t] != ly:
            lx, ly = tx[t], ty[t]
            th, w, ln = lane_coords(lx, ly, gx, bx, by, nbx, wpb)
        c = seen[th]
        seen[th] = c + 1
        slot = base[w] + c
        if group_sid[slot] < 0:
            group_sid[slot] = sid[t]
        elif group_sid[slot] != sid[t]:
            return (starts, i_warp, i_k, i_k), False
        pos = fill[slot]
        fill[slot] = pos + 1
        o_lane[pos] = ln
        o_addr[pos] = addr[t]
    i_sid = np.empty(n_inst, np.int64)
    for m in range(n_inst):
        i_sid[m] = group_sid[base[i_warp[m]] + i_k[m]]
    return (starts, i_warp, i_k, i_sid), True


def event_records(ev: OrderedEvents, gx: int, gy: int, block: Block) -> np.ndarray:
    """The events as EVENT_DTYPE records (warp, k, lane, sid, thread, address each), a copy
    for inspection and tests: the analysis reads the columns of ``OrderedEvents``."""
    out = np.empty(len(ev.addr), EVENT_DTYPE)
    counts = np.diff(np.r_[ev.inst_start, len(ev.addr)]).astype(np.int64)
    for name, col in (("warp", ev.inst_warp), ("k", ev.inst_k), ("sid", ev.inst_sid)):
        out[name] = np.repeat(col, counts)
    out["lane"], out["addr"] = ev.lane, ev.addr
    gx = max(gx, 1)
    nbx, wpb = blocks_across(gx, block)
    out["thread"] = _event_threads(
        out["warp"].astype(np.int64), ev.lane, gx, gy, block.x, block.y, nbx, wpb
    )
    return out


@njit(cache=True, nogil=True)
def _event_threads(warp, lane, gx, gy, bx, by, nbx, wpb):  # pragma: no cover - numba
    out = np.empty(warp.shape[0], np.int64)
    for t in range(warp.shape[0]):
        out[t] = thread_of_lane(warp[t], np.int64(lane[t]), gx, gy, bx, by, nbx, wpb)
    return out


@njit(cache=True, nogil=True)
def _count_divergent(inst_warp, starts, n, gx, gy, bx, by, nbx, wpb):  # pragma: no cover
    """Warp instructions whose active lanes are fewer than the warp's lanes inside the grid:
    lanes masked off by control flow (a partial warp at the grid edge is not divergent)."""
    count = 0
    last = -1
    full = 0
    for i in range(starts.shape[0]):
        w = inst_warp[i]
        if w != last:
            last = w
            full = 0
            for lane in range(32):
                if thread_of_lane(w, lane, gx, gy, bx, by, nbx, wpb) >= 0:
                    full += 1
        hi = starts[i + 1] if i + 1 < starts.shape[0] else n
        if hi - starts[i] < full:
            count += 1
    return count
