"""One iteration's dependence chain as a warp issues it: ptxas's blocks (eqs. (IB1)-(IB2)).

The chain of parallelism._chain lets every op of an iteration start once its operands are
ready (a dataflow machine). A warp issues in order, and ptxas schedules within a basic
block only. An IEEE division or square root (compute.SLOW_PATH_CLASSES) expands into a fast
path, a test and a branch to a slow-path subroutine (BSSY ... BSYNC), so it closes a block:
what follows it in program order issues after the fast path has issued, about when its
result is ready. And NVVM sinks a load to its first use, so a load whose first use follows
such a branch issues after it (the sm_90 SASS of the user kernels nbody and nbody_f64,
``nvcc -cubin -O3 -arch=sm_90``, nvdisasm: ``LDG px, LDG py, LDG pz``, the square root's
block, then ``LDG m`` and the division). So

    start(op) >= ready(s) for every slow-path op s before op in issue order        (IB1)

with a load placed at its first use (not past a store). A division's numerator enters its
SASS after the reciprocal of the denominator is refined (MUFU.RCP, then FFMA or DFMA steps
on the denominator alone): the numerator's path is NUMERATOR_CHAIN of it, not the whole
chain,

    ready(div) = max(ready(den) + chain(div), ready(num) + chain_num(div))           (IB2)
"""

from __future__ import annotations

import math

from .compute import SLOW_PATH_CLASSES, OpLatencies
from .instrument import loopbody

__all__ = ["NUMERATOR_CHAIN", "issue_order", "ordered_far"]

#: the dependent steps (MUFU, FP64, other ALU) from a division's numerator to its result, by
#: loop-body class (the sm_90 SASS of nbody.cu and nbody_f64.cu): float ``FFMA q = num * r``
#: and two FFMA corrections; double ``DMUL``, two DFMA and the two-step range check
NUMERATOR_CHAIN: dict[str, tuple[int, int, int]] = {"fdiv": (0, 0, 3), "ddiv": (0, 3, 2)}


def issue_order(body: loopbody.LoopBody) -> tuple[int, ...]:
    """The op indices of ``body`` in the order its warp issues them: program order, each
    load moved down to just before its first user (NVVM sinks it), never past a store."""
    users: dict[int, int] = {}
    for o in body.ops:
        for k in o.operands:
            if k < o.index:
                users.setdefault(k, o.index)
    place: dict[int, list[int]] = {}
    for o in body.ops:
        if o.klass != "load":
            continue
        stop = next((p.index for p in body.ops[o.index + 1:] if p.klass == "store"),
                    len(body.ops))
        place.setdefault(min(users.get(o.index, o.index), stop), []).append(o.index)
    order: list[int] = []
    for o in body.ops:
        order += place.get(o.index, [])
        if o.klass != "load":
            order.append(o.index)
    order += place.get(len(body.ops), [])
    return tuple(order)


def _numerator_cycles(klass: str, op_lat: OpLatencies | None, whole: float) -> float | None:
    """Eq. (IB2): cycles from a division's numerator to its result, at most ``whole``."""
    steps = NUMERATOR_CHAIN.get(klass)
    if steps is None or op_lat is None:
        return None
    sfu, fp64, alu = steps
    return min(sfu * op_lat.sfu + fp64 * op_lat.fp64 + alu * op_lat.fp32, whole)


def ordered_far(body: loopbody.LoopBody, lat, ordered: frozenset[int], gated: bool,
                op_lat: OpLatencies | None = None) -> list[float]:
    """Latency of the longest chain ending at each op when a load of ``ordered`` (accesses
    through plain pointers, whose program order nvcc keeps) issues only after every earlier
    store of ``ordered`` has issued, and a store issues once its value is ready (a GPU issues
    in order). ``gated``: the chains start at the iteration's loads, which wait for the
    previous iteration's stores (ops no load reaches: -inf); else every op may start one,
    in issue order (issue_order) behind each slow-path op's result (IB1), a division's
    numerator late (IB2) where ``op_lat`` gives the latencies."""
    far = [-math.inf] * len(body.ops)
    issued = -math.inf  # when the latest ordered store of the iteration can issue
    barrier = 0.0  # (IB1): the latest slow-path op's result in issue order
    seq = range(len(body.ops)) if gated else issue_order(body)
    for i in seq:
        o = body.ops[i]
        ins = [far[k] for k in o.operands if k < i]
        base = max(ins, default=-math.inf if gated else 0.0)
        if not gated:
            base = max(base, barrier)
        if o.klass == "load" and o.mem_id in ordered:
            base = max(base, issued, 0.0)
        if o.klass == "store" and o.mem_id in ordered and base > -math.inf:
            issued = max(issued, base)
        far[i] = base + lat[i] if base > -math.inf else -math.inf
        num = _numerator_cycles(o.klass, op_lat, lat[i]) if len(o.operands) == 2 else None
        if num is not None and not gated and o.operands[0] < i and o.operands[1] < i:
            den = max(far[o.operands[1]], barrier)  # (IB2): the numerator joins late
            far[i] = max(den + lat[i], far[o.operands[0]] + num, barrier + lat[i])
        if not gated and o.klass in SLOW_PATH_CLASSES:
            barrier = max(barrier, far[i])  # (IB1)
    return far
