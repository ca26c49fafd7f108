"""The lane order of a loop whose remainder runs first (SPEC §2.2, eq. (W5)): which iterations
of a warp's lanes one warp instruction holds when the lanes' trip counts differ.

nvcc unrolls a loop bounded by a run-time size ``compute.UNROLL_RUNTIME`` (U = 4) times and
runs the left-over iterations one at a time; where the loop starts at a run-time value (or
counts down) the left-over loop runs *first*, a prologue (``loop_counter``: LLVM's
``isEpilogProfitable``). A lane of t iterations then runs ``t mod U`` single iterations, and
after them the unrolled trips, in which every lane of the warp steps together. So its k-th
iteration is issued in the warp's

    step(k) = k                          for k < t mod U   (the prologue's passes)
    step(k) = (U - 1) + k - (t mod U)    otherwise         (the unrolled trips)        (W5)

the same step for every lane when the lanes' trips are equal (the trace's order, the lanes'
k-th iterations together), different when they differ. The blind trmv_t (``for (i = j; i <
n; i++)``, lane j runs n - j iterations): its lanes 4m+1 .. 4m+4 start their unrolled trips
at one row, so a warp load reads 9 rows, where the trace's order (every lane at its k-th
iteration, each a different row) read 32 (``validation/trmv_t_lanes.py``, a brute force
request by request: 17,841,152 sectors in (W5)'s order, Nsight Compute's count exactly).

The shift step(k) - k is added to the rank r of the event among its thread's events of its
static instruction (``warp_masked.sid_ranks``), so a masked warp instruction (sid, r) holds the
lanes' iterations of one step. A thread's later entries of the loop keep the shift of its
earlier ones (their ranks move by it), so no two of its events share an instruction.

Built for the loops that carry iteration markers inside the mapped loop: a 1-D grid's
depth-2 loops (``MARKED_DEPTH``), innermost, with no data-dependent exit (such a loop is not
unrolled with a remainder). Not modelled: the 16-deep trips of ptxas (their lanes stay in step
modulo U) splitting near a warp's end between the 16-deep and the 4-deep loop (a step
issued twice: trmv_t's 2,113,024 requests against 2,106,880); a depth-3 loop of a 2-D grid
(no markers: the trace's order stays).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .compute import UNROLL_RUNTIME
from .frontend.tracefile import TAG_EXIT, TAG_LOOP, TAG_MARKERS, Trace
from .loop_counter import counts_up_from_constant
from .loop_exits import data_exit

__all__ = ["prologue_loops", "remainder_shifts", "step_of"]


def step_of(k: int, trips: int, unroll: int = UNROLL_RUNTIME) -> int:
    """The warp step (W5) at which a lane of ``trips`` iterations runs its k-th iteration of
    a loop whose ``unroll``-deep trips follow a remainder of ``trips mod unroll``."""
    r = trips % unroll
    return k if k < r else unroll - 1 + k - r


def prologue_loops(trace: Trace, region: int, grid_dims: int) -> np.ndarray:
    """Per loop id of the trace, whether (W5) orders its lanes: a loop of ``region`` right
    below a 1-D grid's mapped loop (depth 2, with iteration markers), innermost, without a
    data exit, whose nvcc remainder runs first (not counting up from a constant)."""
    loops = trace.header.loops
    out = np.zeros(max(len(loops), 1), np.bool_)
    if grid_dims != 1:
        return out
    parents = {lp.parent for lp in loops if lp.region == region}
    for lp in loops:
        if lp.region != region or lp.depth != 2 or lp.id in parents:
            continue
        out[lp.id] = not counts_up_from_constant(trace, lp) and not data_exit(trace, lp.id)
    return out


def remainder_shifts(trace: Trace, region: int, launch: int, grid_dims: int,
                     in_d1: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Per mapped event of a 1-D launch (``warps.map_kernel``'s order), the shift step(k) - k
    of (W5) to add to its rank, and the same steps in program positions (the events a step);
    None when no event moves (no such loop, or every lane's trips equal modulo U: the
    trace's order is the SASS's)."""
    prologue = prologue_loops(trace, region, grid_dims)
    if not prologue.any():
        return None
    ev = np.ascontiguousarray(trace.launch_events(launch), dtype=np.uint64)
    shift, pos, seen = _shifts(ev, in_d1, prologue, UNROLL_RUNTIME)
    if np.count_nonzero(seen) < 2:  # one remainder: every lane's step(k) - k alike
        return None
    return shift, pos


@njit(cache=True, nogil=True)
def _close(shift, pos, seen, bound, first, m, trips, acc, acc_pos,
           unroll):  # pragma: no cover - numba
    """Writes (W5)'s shifts of one loop entry's events ``first..m-1`` (``bound[k]``: the first
    event of its iteration k < U), after the thread's ``acc`` (ranks) and ``acc_pos``
    (program positions) of its earlier entries: a rank moves by whole steps, a position by
    the entry's events a step. Returns the new (acc, acc_pos); ``seen``: the remainders met
    so far."""
    r = trips % unroll
    seen[r] = True
    per = (m - first) / max(trips, 1)  # the entry's events an iteration
    moved = np.int64(round((unroll - 1 - r) * per))
    late = min(bound[r], m)  # the first event of the unrolled trips
    for q in range(first, m):
        shift[q] = acc + (unroll - 1 - r if q >= late else 0)
        pos[q] = acc_pos + (moved if q >= late else 0)
    return acc + unroll - 1 - r, acc_pos + moved


@njit(cache=True, nogil=True)
def _shifts(ev, in_d1, prologue, unroll):  # pragma: no cover - numba
    """(W5)'s shifts of every event ``map_kernel`` maps in mode 1 (inside a depth-1
    iteration), in its order: of its rank, and of its program position (the warp issues an
    instruction where its last lane reaches it: ``warp_masked.masked_order``), and which
    remainders t mod U the entries had; one pass with the loop markers (an entry's trips
    are known at its exit)."""
    n = ev.shape[0]
    shift = np.zeros(n, np.int64)
    pos = np.zeros(n, np.int64)
    bound = np.full(unroll, n, np.int64)  # the open entry's first event of iteration k < U
    seen = np.zeros(unroll, np.bool_)  # the remainders t mod U of the entries
    m = 0
    cur1 = np.int64(-1)
    acc, acc_pos = np.int64(0), np.int64(0)
    loop_open = np.int64(-1)
    k = np.int64(-1)
    first = 0
    for t in range(n):
        e = ev[t]
        tag = e >> 48
        if tag == TAG_LOOP or tag == TAG_EXIT:
            loop = np.int64((e >> 32) & 0xFFFF)
            if loop_open >= 0 and (tag == TAG_EXIT and loop == loop_open or tag == TAG_LOOP and (
                    loop != loop_open or (loop < in_d1.shape[0] and in_d1[loop]))):
                acc, acc_pos = _close(shift, pos, seen, bound, first, m, k + 1, acc, acc_pos,
                                      unroll)
                loop_open = -1
            if tag == TAG_LOOP and loop < in_d1.shape[0] and in_d1[loop]:
                cur1, acc, acc_pos = np.int64(e & 0xFFFFFFFF), 0, 0
            elif tag == TAG_LOOP and loop < prologue.shape[0] and prologue[loop]:
                if loop_open != loop:
                    loop_open, first = loop, m
                    bound[:] = n
                k = np.int64(e & 0xFFFFFFFF)
                if k < unroll:
                    bound[k] = m
            continue
        if tag >= TAG_MARKERS or cur1 < 0:
            continue
        pos[m] = acc_pos  # an event outside the loop: after the thread's earlier entries
        m += 1
    if loop_open >= 0:
        _close(shift, pos, seen, bound, first, m, k + 1, acc, acc_pos, unroll)
    return shift[:m], pos[:m], seen
