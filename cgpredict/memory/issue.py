"""L2 transactions of the warp instructions and their GPU issue order (SPEC §2.3): the distinct
lines of each warp instruction, and a counting sort of them by batch of resident warps, then
program position k, then warp: the order the cache analysis replays them in.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..hashing import pow2_log2
from ..warps import WarpTrace
from .derived import memo, moved_mask


def transactions(wt: WarpTrace, line_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """(line address, warp-instruction index) of every L2 transaction: the distinct lines (or
    sectors, when ``line_bytes`` is the sector size) of each warp instruction."""
    return _distinct_lines(
        wt.addr, int(line_bytes), wt.inst_start.astype(np.int64, copy=False),
        np.arange(wt.n_insts, dtype=np.int64),
    )  # fmt: skip


def issued_transactions(
    wt: WarpTrace, line_bytes: int, warps_per_batch: int
) -> tuple[np.ndarray, np.ndarray]:
    """``transactions`` in GPU issue order (batch, then k, then warp): the instructions put
    in that order first (``issue_order`` of one transaction per instruction), then each
    one's distinct lines, so that no permutation of the transactions is needed."""
    starts = wt.inst_start.astype(np.int64, copy=False)
    order = issue_order(wt, np.arange(wt.n_insts, dtype=np.int64), warps_per_batch)
    return _distinct_lines(wt.addr, int(line_bytes), starts, order)


def issued(wt: WarpTrace, unit: int, wpb: int) -> tuple[np.ndarray, np.ndarray]:
    """``issued_transactions``, from the transactions of the trace ``wt`` was derived from
    (``Origin``; any issue order of them it has): a regrouped instruction has the same
    lines, one of a transposed array is found anew."""
    o = wt.origin
    if o is None:
        return issued_transactions(wt, unit, wpb)
    key = next((k for k in list(o.trace.derived) if k[:2] == ("issued", unit)),
               ("issued", unit, wpb))
    got = memo(o.trace, key, lambda: issued(o.trace, unit, wpb))
    # where each old instruction's lines lie in them: found once per old transactions, for
    # every trace derived from them (the advisor's block shapes)
    seg, cnt = memo(o.trace, ("runs", *key), lambda: _runs(got[1], o.trace.n_insts))
    order = issue_order(wt, np.arange(wt.n_insts, dtype=np.int64), wpb)
    src = order if o.inst is None else o.inst[order]
    todo = moved_mask(wt, o.moved)
    redo = np.zeros(0, np.bool_) if todo is None else todo[order]
    # the events are read only for the instructions found anew: a regrouped trace's stay
    # unmoved (warp_regroup.MovedEvents)
    addr = np.zeros(0, np.uint64) if todo is None else wt.addr
    return _issued_from(
        got[0], seg, cnt, order, src, redo, addr,
        wt.inst_start.astype(np.int64, copy=False), int(unit),
    )  # fmt: skip


def issue_order(wt: WarpTrace, inst: np.ndarray, warps_per_batch: int) -> np.ndarray:
    """Permutation of transactions into GPU issue order: batch, then k, then warp. The
    transactions come in (warp, k) order, so a stable counting sort by (batch, k) keeps the
    warps of one (batch, k) in order: O(n)."""
    if not len(inst):
        return np.zeros(0, np.int64)
    wpb = max(warps_per_batch, 1)
    perm, ok = _issue_perm(inst.astype(np.int64, copy=False), wt.inst_warp, wt.inst_k, wpb)
    if ok:
        return perm
    warp, k = wt.inst_warp[inst], wt.inst_k[inst]  # events built in another order
    return np.lexsort((warp, k, warp // wpb))


@njit(cache=True, nogil=True)
def _issue_perm(inst, inst_warp, inst_k, wpb):  # pragma: no cover - numba
    """Stable counting sort of transactions by (batch of their warp, k of their instruction);
    ok=False when the transactions are not in (warp, k) order (the sort would then not put
    the warps of one (batch, k) in order)."""
    n = inst.shape[0]
    for t in range(1, n):
        a, b = inst[t - 1], inst[t]
        if inst_warp[b] < inst_warp[a] or (inst_warp[b] == inst_warp[a] and inst_k[b] < inst_k[a]):
            return np.empty(0, np.int64), False
    kk = np.int64(0)
    nb = np.int64(0)
    for i in range(inst_warp.shape[0]):
        kk = max(kk, inst_k[i] + 1)
        nb = max(nb, inst_warp[i] // wpb + 1)
    count = np.zeros(nb * kk + 1, np.int64)
    key = np.empty(n, np.int64)
    for t in range(n):
        i = inst[t]
        key[t] = (inst_warp[i] // wpb) * kk + inst_k[i]
        count[key[t] + 1] += 1
    for b in range(1, count.shape[0]):
        count[b] += count[b - 1]
    perm = np.empty(n, np.int64)
    for t in range(n):
        perm[count[key[t]]] = t
        count[key[t]] += 1
    return perm, True


@njit(cache=True, nogil=True)
def _distinct_lines(addr, line_bytes, inst_start, inst_order):  # pragma: no cover - numba
    """The distinct lines (addr // line_bytes, a power of two: a shift) of each warp
    instruction (at most 32 lanes each), in first-use order, and the instruction they
    belong to; instructions taken in ``inst_order``."""
    n = addr.shape[0]
    n_inst = inst_start.shape[0]
    out_line = np.empty(n, np.uint64)
    out_inst = np.empty(n, np.int64)
    shift = np.uint64(pow2_log2(line_bytes))
    m = 0
    for j in range(inst_order.shape[0]):
        i = inst_order[j]
        hi = inst_start[i + 1] if i + 1 < n_inst else n
        m = _lines_of(addr, inst_start[i], hi, shift, i, out_line, out_inst, m)
    return out_line[:m].copy(), out_inst[:m].copy()


@njit(cache=True, nogil=True, inline="always")
def _lines_of(addr, lo, hi, shift, i, out_line, out_inst, m):  # pragma: no cover - numba
    """Append the distinct lines of events lo..hi-1 (instruction i) at m; the new m."""
    first = m
    top = np.uint64(0)  # the largest line of the instruction so far
    for t in range(lo, hi):
        v = np.uint64(addr[t]) >> shift
        dup = False
        if m > first and v <= top:  # lanes mostly ascend: scan only when one does not
            for q in range(first, m):
                if out_line[q] == v:
                    dup = True
                    break
        if not dup:
            top = v if m == first or v > top else top
            out_line[m] = v
            out_inst[m] = i
            m += 1
    return m


@njit(cache=True, nogil=True)
def _runs(old_inst, n_old):  # pragma: no cover - numba
    """(first, count): where each of ``n_old`` instructions' transactions start in
    ``old_inst`` (each instruction's in one run; -1: none) and how many there are."""
    seg = np.full(n_old, -1, np.int64)
    cnt = np.zeros(n_old, np.int64)
    for t in range(old_inst.shape[0]):
        i = old_inst[t]
        if seg[i] < 0:
            seg[i] = t
        cnt[i] += 1
    return seg, cnt


@njit(cache=True, nogil=True)
def _issued_from(  # pragma: no cover - numba
    old_lines, seg, cnt, order, src, redo, addr, inst_start, line_bytes
):
    """_distinct_lines in ``order`` from another trace's transactions (``old_lines``; old
    instruction i's lines are the ``cnt[i]`` from ``seg[i]``, ``_runs``): instruction
    order[j] takes the lines of old instruction src[j], or, where ``redo`` marks it, its own
    anew (``addr``: the events, read only for those; may be empty when none is)."""
    n, n_inst = addr.shape[0], inst_start.shape[0]
    size = 0
    for j in range(order.shape[0]):
        i = order[j]
        if redo.shape[0] and redo[j]:
            size += (inst_start[i + 1] if i + 1 < n_inst else n) - inst_start[i]
        else:
            size += cnt[src[j]]
    out_line = np.empty(size, np.uint64)
    out_inst = np.empty(size, np.int64)
    shift = np.uint64(pow2_log2(line_bytes))
    m = 0
    for j in range(order.shape[0]):
        i = order[j]
        if redo.shape[0] and redo[j]:
            hi = inst_start[i + 1] if i + 1 < n_inst else n
            m = _lines_of(addr, inst_start[i], hi, shift, i, out_line, out_inst, m)
        else:
            s0 = seg[src[j]]
            for q in range(cnt[src[j]]):
                out_line[m] = old_lines[s0 + q]
                out_inst[m] = i
                m += 1
    if m == size:  # no instruction found anew, or none with a repeated line: full, no copy
        return out_line, out_inst
    return out_line[:m].copy(), out_inst[:m].copy()
