"""Streamed sectors a lane re-reads across its warp's wait on a gather, eq. (GW).

In a loop whose body gathers (``x[col[k]]``) and streams other loads beside it (``val[k]``,
``col[k]``, a lane walking its own row: one 32-B sector for w > 1 executions running), the
sm_90 SASS does not read the stream in the C's order. ptxas unrolls the loop (a pass of U
source iterations, ``compute.runtime_trip_depth``), issues the pass's first index words and
gathers ahead, and leaves the rest of the streamed words with the loop-carried chain that
waits on the gathers in order (spmv_csr's nvdisasm: ``val[k0..k4]`` before the chain's first
wait on ``x[col[k0]]``, ``val[k5..k7]`` after it). A grown gather misses the L1 and queues at
the L2 behind the SM's other warps' gathers, so the sector run open across that wait was
filled before it and is read again after the SM's L1 has turned over: one re-fetch a pass
and a streamed load, the read at ``reread_position`` of the pass. Runs begun after the wait
are still pending at the next one (their fills were asked after the gather the warp waits
for) and keep their hits, as the brute force of the SASS order shows
(``validation/spmv_csr_l1.py``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["queue_turns_l1", "refetch_misses", "reread_position"]


def reread_position(depth: int) -> int:
    """The source iteration of a pass of ``depth`` whose streamed read comes first after the
    chain's first gather wait: nvcc's 4-iteration trip's gathers and the next issue before it
    (spmv_csr's SASS: ``x[k0..k4]``, then ``val[k5]``), so depth // 4 + 1; every iteration
    waits when the loop is not unrolled (depth 1)."""
    return max(min(depth // 4 + 1, depth - 1), 0)


def queue_turns_l1(warps_per_sm: int, depth: int, gathers: int, l1_units: int) -> bool:
    """Whether a warp's gather wait outlasts the L1 (eq. (GW)): the SM's other warps' gathers
    of a pass, queued ahead of its own and each filling a sector, are more than the L1 holds."""
    return (warps_per_sm - 1) * 32 * depth * gathers > l1_units


def refetch_misses(sid: np.ndarray, ordinal: np.ndarray, loads: np.ndarray, hits: np.ndarray,
                   waits: tuple[tuple[int, int], ...], runs: np.ndarray) -> np.ndarray:
    """The L1 hit mask (per transaction) with eq. (GW): a streamed load's hit at the pass's
    re-read position becomes a miss, ``waits`` holding (static load, pass depth) of the loads
    beside a grown gather whose wait turns the L1 over, ``runs`` each load's executions on
    one sector (l1scale.unit_runs; w = 1, a coalesced walk, has no run to split)."""
    if not waits or not len(sid):
        return hits
    n = max(int(sid.max()), max(s for s, _ in waits)) + 1
    depth = np.zeros(n, np.int64)
    at = np.full(n, -1, np.int64)
    for s, d in waits:
        if s < len(runs) and runs[s] > 1 and d >= 1:
            depth[s], at[s] = d, reread_position(d)
    d = depth[sid]
    refetch = loads & hits & (d > 0) & (ordinal % np.maximum(d, 1) == at[sid])  # (GW)
    return hits & ~refetch
