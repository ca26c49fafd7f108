"""Warp instructions of divergent warps (SPEC §2.2): the r-th execution of a static instruction
by each pseudo-thread (its rank among the thread's events of that instruction), and the events
of one warp grouped into masked instructions, issued where the warp reconverges.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def sid_ranks(thread, sid, n_threads, n_sids):  # pragma: no cover - numba
    """r of every event: its rank among its thread's events of the same static instruction.
    O(n) when every thread's events are contiguous in program order (each pseudo-thread is
    one iteration of the mapped loops); returns ok=False when a thread reappears later."""
    n = thread.shape[0]
    r = np.empty(n, np.int64)
    cnt = np.zeros(n_sids, np.int64)
    used = np.empty(n_sids, np.int64)
    done = np.zeros(n_threads, np.bool_)
    nu = 0
    cur = -1
    for t in range(n):
        th = thread[t]
        if th != cur:
            if done[th]:
                return r, False
            done[th] = True
            for i in range(nu):
                cnt[used[i]] = 0
            nu = 0
            cur = th
        s = sid[t]
        if cnt[s] == 0:
            used[nu] = s
            nu += 1
        r[t] = cnt[s]
        cnt[s] += 1
    return r, True


def sid_ranks_sorted(thread: np.ndarray, sid: np.ndarray) -> np.ndarray:
    """sid_ranks for any event order: a stable sort by (thread, sid), O(n log n)."""
    key = (thread.astype(np.uint64) << np.uint64(16)) | sid.astype(np.uint64)
    order = np.argsort(key, kind="stable")
    ks = key[order]
    idx = np.arange(len(key), dtype=np.int64)
    first = np.maximum.accumulate(np.where(np.r_[True, ks[1:] != ks[:-1]], idx, 0))
    r = np.empty(len(key), np.int64)
    r[order] = idx - first
    return r


@njit(cache=True, nogil=True)
def _sort_lanes(out, lane, a, b):  # pragma: no cover - numba
    """Sort ``out[a:b]`` (events of one warp instruction) by lane, in place: an insertion
    sort, the lanes of one instruction being few and mostly in order already."""
    for p in range(a + 1, b):
        t = out[p]
        q = p - 1
        while q >= a and lane[out[q]] > lane[t]:
            out[q + 1] = out[q]
            q -= 1
        out[q + 1] = t


@njit(cache=True, nogil=True)
def masked_order(perm, warp, lane, k, sid, r, n_sids):  # pragma: no cover - numba
    """Warp instructions of divergent warps: the events of one warp with the same (sid, r),
    i.e. the r-th execution of static instruction sid by the lanes that execute it (a masked
    instruction). A warp's instructions are issued in the order of the program position
    (k) at which their last lane reaches them, the point where a SIMT warp has reconverged
    and issues it; ties go by sid, then r.

    perm: events grouped by warp. Returns the events in (warp, instruction, lane) order, the
    instruction's index within its warp for every event (indexed like ``warp``), and the first
    event of every instruction."""
    n = perm.shape[0]
    out = np.empty(n, np.int64)
    slot = np.empty(n, np.int64)
    starts = np.empty(n, np.int64)
    rcount = np.zeros(n_sids, np.int64)
    offset = np.zeros(n_sids, np.int64)
    sids = np.empty(n_sids, np.int64)
    gsize = np.empty(n, np.int64)
    glast = np.empty(n, np.int64)
    gfill = np.empty(n, np.int64)
    gord = np.empty(n, np.int64)
    m = 0
    lo = 0
    while lo < n:
        w = warp[perm[lo]]
        hi = lo + 1
        while hi < n and warp[perm[hi]] == w:
            hi += 1
        ns = 0
        for q in range(lo, hi):
            t = perm[q]
            s = sid[t]
            if rcount[s] == 0:
                sids[ns] = s
                ns += 1
            if r[t] >= rcount[s]:
                rcount[s] = r[t] + 1
        sids[:ns].sort()
        n_groups = 0  # every (sid, r < rcount[sid]) is executed by some lane
        for i in range(ns):
            offset[sids[i]] = n_groups
            n_groups += rcount[sids[i]]
        for g in range(n_groups):
            gsize[g] = 0
            glast[g] = -1
        for q in range(lo, hi):
            t = perm[q]
            g = offset[sid[t]] + r[t]
            gsize[g] += 1
            if k[t] > glast[g]:
                glast[g] = k[t]
        key = np.empty(n_groups, np.int64)
        for g in range(n_groups):
            key[g] = glast[g] * n_groups + g
        order = np.argsort(key)
        pos = lo
        for j in range(n_groups):
            g = order[j]
            gfill[g] = pos
            gord[g] = j
            starts[m + j] = pos
            pos += gsize[g]
        for q in range(lo, hi):
            t = perm[q]
            g = offset[sid[t]] + r[t]
            out[gfill[g]] = t
            gfill[g] += 1
            slot[t] = gord[g]
        for j in range(n_groups):  # lane order inside each instruction (insertion sort)
            a = starts[m + j]
            b = starts[m + j + 1] if j + 1 < n_groups else hi
            _sort_lanes(out, lane, a, b)
        m += n_groups
        for i in range(ns):
            rcount[sids[i]] = 0
        lo = hi
    return out, slot, starts[:m]
