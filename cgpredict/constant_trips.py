"""How deep nvcc unrolls a loop whose trip count it knows (issue 24, eq. (12ct)): a port that
bounds its loops by the size macros themselves (``#pragma cgp kernel ... bounds=constant``:
PolyBench-ACC's SYR2K) rather than by run-time parameters (every other measured port).

nvcc's partial unrolling of such a loop is LLVM's: a budget of instructions a trip shared
among the body's copies, less the back edge's compare and branch, and a depth that divides
the trip count, so that no remainder is left (eq. (12ct)):

```
depth = the largest power of two d with d <= (B - 2) / (c - 2) and trip mod d = 0      (12ct)
```

``c`` is the model's instructions per source iteration of the loop's own blocks (their static
size, ``compute.ptx_cost``, memory instructions apart), ``B`` = PARTIAL_UNROLL_BUDGET. Read
from the PTX of 19 one-thread probe loops of a compile-time trip (nvcc 13 ``-ptx -O3
-arch=sm_90``; ``validation/cuda/probes/constant_trip.py`` writes them): 1 to 8 arrays of
unit-stride loads, strided loads, repeated loads, a store, a double accumulator, SYR2K's body;
any ``B`` of 96 to 107 gives each its depth (32, 16, 8, 4 or 2) and the trip counts 1000
(``8 | 1000``: every body 8) and 96 theirs. What the rule leaves: ptxas unrolls some of these
trips 4 times more (a loop with a strided load: ``s += A[k][t]``, 16 a trip in the PTX, 64 in
the SASS), which no count here separates from those it keeps (SYR2K's 8, GEMM's 16); and a
short trip nvcc unrolls whole (``s += x[t][k]`` of 96 iterations) above UNROLL_WHOLE.
"""

from __future__ import annotations

#: eq. (12ct): the model's instructions (compute.ptx_cost) nvcc's partial unrolling allows a
#: trip: fitted on the probes' PTX (module doc), any of 96..107 fits all 19; the middle
PARTIAL_UNROLL_BUDGET = 100
#: eq. (12ct): the back edge's compare and branch, which a trip keeps once however deep
BACKEDGE_INSTS = 2


def constant_trip_depth(cost_per_iteration: float, trip: int) -> int:
    """Source iterations per trip of a loop of ``trip`` iterations, a compile-time count, whose
    body costs ``cost_per_iteration`` model instructions (eq. (12ct))."""
    room = (PARTIAL_UNROLL_BUDGET - BACKEDGE_INSTS) / max(cost_per_iteration - BACKEDGE_INSTS, 1.0)
    depth = 1
    while 2 * depth <= room and trip > 0 and trip % (2 * depth) == 0:
        depth *= 2
    return depth


def loop_body_cost(blocks, ptx_cost) -> float:
    """The static model instructions of one iteration of a loop whose own blocks are
    ``blocks`` (``BlockInfo``: their operations), each operation at ``ptx_cost`` (eq. (12ct):
    the size nvcc's unroller weighs, every block once)."""
    return float(sum(ptx_cost(opcode, ty, detail)[0] * k
                     for b in blocks for opcode, ty, detail, k in b.ops))


def constant_bound(trace, loop) -> bool:
    """Whether ``loop`` (a ``LoopInfo`` of ``trace``) runs a compile-time trip count in the
    port: its kernel's pragma says ``bounds=constant`` and every entry of the loop runs the
    same number of iterations (a triangular or data-bounded loop does not; eq. (12ct))."""
    region = next((r for r in trace.header.regions if r.index == loop.region), None)
    if region is None or getattr(region, "bounds", "runtime") != "constant":
        return False
    entries = trace.loop_entries[:, loop.id]
    iters = trace.loop_iters[:, loop.id]
    live = entries > 0
    if not live.any():
        return False
    per = iters[live] / entries[live]
    return bool((per == per[0]).all() and per[0] == int(per[0]) and per[0] > 0)
