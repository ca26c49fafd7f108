"""Loads that the L1 serves on a line still in flight (issue 24, eq. (C1) in docs/models.md).

The warps of one batch advance instruction by instruction (issue order: batch, then program
position k, then warp). When several warps of one SM load the same line at the same step
(the 32 or 8 warps of a GEMM block all read ``B[k][j]``, one line a step), the first one
misses and fetches the line; the others find it allocated and count as L1 hits (Nsight
Compute counts them so: the plain GEMMs' 97 % L1 sector hit rate is one miss of ``B`` a
block step), but their data arrive with the first warp's fetch, not an L1 latency later.
Such a hit is *in flight*: an L1 hit on a (sector, SM) whose last L1 miss was issued at the
same step. A hit on a line fetched at an earlier step (a warp's own next word, ``A[i][k]``
for seven steps in eight) is an ordinary hit. The L2 is shared by the SMs: the blocks of
other SMs that read the line at the same step (2MM's blocks of one grid column, in one
wave) hit in the L2 on the sector the first one's miss is fetching (``inflight_l2_hits``);
Nsight Compute counts them as L2 misses, which DRAM does not see twice (2MM at 4096:
2.31e8 L2 sector misses, 1.33e8 sectors read from DRAM).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..devices import GPUDevice
from ..hashing import dense_ids

__all__ = [
    "chain_dram_sectors", "chain_dram_share", "chain_load_latency", "inflight_l2_hits",
    "own_fetch_share",
    "inflight_served",
]


def inflight_served(
    inst: np.ndarray,
    l1_hit: np.ndarray,
    units: np.ndarray,
    is_load_inst: np.ndarray,
    step: np.ndarray,
    sm: np.ndarray,
    sid: np.ndarray,
    pattern: np.ndarray,
    n_sids: int,
) -> np.ndarray:
    """Per (static instruction, pattern): the warp instructions the L1 serves entirely of
    which at least one transaction is in flight (eq. (C1)).

    ``inst``, ``l1_hit``, ``units``: per transaction in issue order, its warp instruction,
    whether the L1 serves it and its sector; per warp instruction: ``is_load_inst``, its
    ``step`` (the same number for the warps of one batch at one program position), its
    ``sm``, ``sid`` and ``pattern``."""
    out = np.zeros((max(n_sids, 0), 3), np.int64)
    if not len(inst):
        return out
    sms = int(sm.max()) + 1 if len(sm) else 1
    key = units.astype(np.uint64) * np.uint64(sms) + sm[inst].astype(np.uint64)
    ids = dense_ids(key)[0]
    _count(inst, l1_hit, ids, is_load_inst, step, sid, pattern, out)
    return out


@njit(cache=True, nogil=True)
def _count(inst, l1_hit, ids, is_load_inst, step, sid, pattern, out):  # pragma: no cover
    """_inflight_served's pass: the step of each (sector, SM)'s last load miss, and per
    warp instruction whether it was served entirely and had an in-flight hit."""
    n_ids = ids.max() + 1 if ids.shape[0] else 0
    missed_at = np.full(n_ids, -1, np.int64)
    n_inst = sid.shape[0]
    served = np.ones(n_inst, np.bool_)
    waits = np.zeros(n_inst, np.bool_)
    touched = np.zeros(n_inst, np.bool_)
    for t in range(inst.shape[0]):
        i = inst[t]
        if not is_load_inst[i]:
            continue
        touched[i] = True
        d = ids[t]
        if l1_hit[t]:
            if missed_at[d] == step[i]:
                waits[i] = True
        else:
            served[i] = False
            missed_at[d] = step[i]
    for i in range(n_inst):
        if touched[i] and served[i] and waits[i]:
            out[sid[i], pattern[i]] += 1


def inflight_l2_hits(
    inst: np.ndarray,
    hits: np.ndarray,
    units: np.ndarray,
    is_load_inst: np.ndarray,
    step: np.ndarray,
    sm: np.ndarray,
    sid: np.ndarray,
    pattern: np.ndarray,
    n_sids: int,
    ids: np.ndarray | None = None,
) -> np.ndarray:
    """Per (static instruction, pattern): the load transactions that hit in the L2 on a
    sector whose last miss another SM issued at the same step (eq. (C2)): they wait for
    that miss's DRAM access. ``inst``, ``hits``, ``units``: the L2 stream in issue order;
    ``sm`` per warp instruction (all 0 where no L1 model places the warps: nothing
    counts). Warps of one SM that share a line at a step merge in their L1 (C1); where
    they reach the L2 apart (no L1 for global loads: the TK1, one SM) they are not counted:
    the TK1's plain GEMM at 1024 takes 405 cycles a step (published 249 ms), less than the
    496 of an L2 + DRAM round trip, so its warps do not each wait one. ``ids``:
    ``dense_ids(units)[0]``, when the caller has it already (the memory analysis: the
    same numbering, so the same counts)."""
    out = np.zeros((max(n_sids, 0), 3), np.int64)
    if not len(inst) or not sm.any():  # one SM: no miss of another SM to wait for
        return out
    if ids is None:
        ids = dense_ids(units.astype(np.uint64, copy=False))[0]
    _count_l2(inst, hits, ids, is_load_inst, step, sm, sid, pattern, out)
    return out


@njit(cache=True, nogil=True)
def _count_l2(inst, hits, ids, is_load_inst, step, sm, sid, pattern, out):  # pragma: no cover
    """inflight_l2_hits' pass: the step and SM of each sector's last miss."""
    n_ids = ids.max() + 1 if ids.shape[0] else 0
    missed_at = np.full(n_ids, -1, np.int64)
    missed_by = np.full(n_ids, -1, np.int64)
    for t in range(inst.shape[0]):
        i = inst[t]
        if not is_load_inst[i]:
            continue
        d = ids[t]
        if not hits[t]:
            missed_at[d] = step[i]
            missed_by[d] = sm[i]
        elif missed_at[d] == step[i] and missed_by[d] != sm[i]:
            out[sid[i], pattern[i]] += 1


def chain_load_latency(s, device: GPUDevice, outgrows_l2: bool = False) -> float:
    """Mean latency of static load ``s`` (memory.InstrMemStats) on its thread's chain: the
    L1's for the warp instructions it serves from a line fetched at an earlier step, else
    the fetch's: the L2's plus DRAM's for the share of transactions that miss (SPEC eq.
    (2)). An instruction the L1 serves on a line another warp of its SM fetched at the same
    step waits for that fetch (``l1_inflight``, eq. (C1)). Of an array that outgrows the L2
    at the work size (``outgrows_l2``), an L2 hit on a sector another warp's miss is
    fetching at the same step waits for that DRAM access (``l2_inflight``, eq. (C2)); an
    array the L2 holds keeps the traced misses (its first touches, which earlier waves of
    the work size may have left in the L2, are not re-judged)."""
    total = max(s.total_warp_insts, 1)
    l1 = (sum(s.l1_served) - sum(s.l1_inflight)) / total
    l2 = sum(s.l2_trans)
    missed = sum(s.dram_trans) + (sum(s.l2_inflight) if outgrows_l2 else 0)
    miss = missed / l2 if l2 else 0.0
    beyond = device.l2_latency_cycles + min(miss, 1.0) * device.dram_latency_cycles
    return l1 * device.l1_latency_cycles + (1 - l1) * beyond


def chain_dram_share(s, outgrows_l2: bool = False) -> float:
    """The share of static load ``s``'s warp instructions that wait on a DRAM access on its
    thread's chain (the DRAM term of chain_load_latency, same reading of the L1 and L2
    counts): what a warp's trip of loads in flight queues at the DRAM, eq. (Q1)."""
    total = max(s.total_warp_insts, 1)
    l1 = (sum(s.l1_served) - sum(s.l1_inflight)) / total
    l2 = sum(s.l2_trans)
    missed = sum(s.dram_trans) + (sum(s.l2_inflight) if outgrows_l2 else 0)
    return (1 - l1) * min(missed / l2 if l2 else 0.0, 1.0)


def own_fetch_share(s) -> float:
    """The share of static load ``s``'s warp instructions that wait on a DRAM fetch of their
    own: chain_dram_share less the riders, those served on a line another warp of the SM
    missed ((C1), ``l1_inflight``) or by another SM's miss in flight ((C2)). A round of eq.
    (Q1r) counts these in D (eq. (Q1o)); a sector riding its pair's fill block ((F2)) is
    still the instruction's own fetch."""
    total = max(s.total_warp_insts, 1)
    l2 = sum(s.l2_trans)
    return (1 - sum(s.l1_served) / total) * min(sum(s.dram_trans) / l2 if l2 else 0.0, 1.0)


def chain_dram_sectors(s, outgrows_l2: bool = False,
                       own_only: bool = False) -> tuple[float, float]:
    """Static load ``s``'s DRAM share on its thread's chain (chain_dram_share) and the DRAM
    sectors one such waiting warp instruction fetches itself: its traced DRAM sectors per
    warp instruction over the share (a coalesced row of floats 4, one lane 1; an instruction
    that rides a fetch another warp or SM issued, (C1) and (C2), fetches none; nor does a
    sector whose fill block an earlier instruction fetched, (F2)). A trip's loads in flight
    queue by these sectors, eq. (Q1). ``own_only``: the share is own_fetch_share's (Q1o)."""
    share = own_fetch_share(s) if own_only else chain_dram_share(s, outgrows_l2)  # (Q1o)
    own = max(min(sum(s.dram_trans), sum(s.l2_trans)) - sum(s.fill_rides), 0)  # (F2)
    own = own / max(s.total_warp_insts, 1)
    return share, own / share if share > 0 else 1.0
