"""A warp per row (the advisor's fix for a 1-D kernel whose thread loops over a row reached
through an index, CSR SpMV, issue #26): the kernel launched with a warp for each row instead
of a thread (32 times the threads), the warp's lanes splitting the row's loop (lane l makes
iterations l, l + 32, ... of it), a shuffle reduction ending the row; or, for short rows,
L lanes a row and 32 / L rows a warp (CUSP's CSR-vector kernel, Bell & Garland 2009). The
same memory events as the trace; only which warp instruction makes each event changes:

* an event of the row loop, iteration j of the row of lane r of warp w, is made by lane
  j mod 32 of row (w, r)'s warp, in its instruction of chunk j // 32: a row's consecutive
  elements in one instruction (coalesced), a gather through them still a gather;
* any other event of the thread (the row's bounds, its result) is made once by one lane of
  the row's warp (its lanes read one address: a broadcast; one lane stores the result).

A warp then runs its row's code once and its loop ceil(n / 32) times for a row of n, where a
thread ran its row's code once and its loop n times: the scales returned say by how much each
static instruction's executions per thread change."""

from __future__ import annotations

import dataclasses

import numpy as np

from .warps import WarpTrace

__all__ = ["row_warp_trace"]


def _ranks(keys: np.ndarray) -> np.ndarray:
    """Per element: how many earlier elements (in array order) have the same key."""
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    first = np.r_[0, np.flatnonzero(sk[1:] != sk[:-1]) + 1]
    starts = np.repeat(first, np.diff(np.r_[first, len(sk)]))
    out = np.empty(len(keys), np.int64)
    out[order] = np.arange(len(keys)) - starts
    return out


def row_warp_trace(wt: WarpTrace, loop_sids: set[int], lanes: int = 32
                   ) -> tuple[WarpTrace, dict[int, float]]:
    """``wt`` regrouped ``lanes`` lanes per row (a power of two up to 32: 32 // lanes rows
    share a warp; module docstring), ``loop_sids`` the static instructions of the row loop;
    and per static instruction, its executions per thread after over before."""
    n = wt.n_events
    if not n:  # nothing traced: nothing to regroup
        return wt, {}
    counts = np.diff(np.append(wt.inst_start, n))
    inst = np.repeat(np.arange(wt.n_insts), counts)
    sid, k = wt.inst_sid[inst], wt.inst_k[inst]
    rows, row = np.unique(wt.inst_warp[inst] * 32 + wt.lane.astype(np.int64),
                          return_inverse=True)  # the row (traced thread) of each event
    share = 32 // lanes  # rows a warp
    warp, slot = row // share, row % share
    looped = np.isin(sid, np.asarray(sorted(loop_sids), np.int64))
    n_sids = int(sid.max()) + 1
    # the j-th execution of its static instruction by its thread (events are in k order)
    j = _ranks(row * n_sids + sid)
    chunk = np.where(looped, j // lanes, j)
    lane = slot * lanes + np.where(looped, j % lanes, 0)
    group = (warp * n_sids + sid) * (int(chunk.max(initial=0)) + 1) + chunk
    uniq, inv = np.unique(group, return_inverse=True)
    first_k = np.full(len(uniq), np.iinfo(np.int64).max, np.int64)
    np.minimum.at(first_k, inv, k)
    g_warp = np.zeros(len(uniq), np.int64)
    g_sid = np.zeros(len(uniq), np.int64)
    g_warp[inv], g_sid[inv] = warp, sid
    # warp after warp, its rows' instructions in the order their threads made them
    g_order = np.lexsort((first_k, g_warp))
    rank = np.empty(len(uniq), np.int64)
    rank[g_order] = np.arange(len(uniq))
    ev_order = np.lexsort((lane, rank[inv]))
    new_inst = rank[inv][ev_order]
    starts = np.flatnonzero(np.r_[True, new_inst[1:] != new_inst[:-1]])
    warps = g_warp[g_order]
    new_lane = lane[ev_order]
    n_warps = -(-len(rows) // share)
    out = dataclasses.replace(
        wt, grid_x=wt.grid_x * lanes, addr=wt.addr[ev_order],
        lane=new_lane.astype(wt.lane.dtype), inst_start=starts.astype(wt.inst_start.dtype),
        inst_warp=warps, inst_k=_ranks(warps), inst_sid=g_sid[g_order],
        n_threads=len(np.unique(warp[ev_order] * 32 + new_lane)), n_warps=n_warps,
        divergent_insts=0, dependence=None, origin=None)
    # per thread = per warp: warp instructions over warps, after; executions over rows, before
    ev_per_sid = np.bincount(sid, minlength=n_sids)
    new_per_sid = np.bincount(g_sid, minlength=n_sids)
    scale = {int(s): float(new_per_sid[s]) * len(rows) / n_warps / float(ev_per_sid[s])
             for s in np.flatnonzero(ev_per_sid)}
    return out, scale
