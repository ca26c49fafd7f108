"""Per-loop analysis for the FPGA estimate (SPEC §5): the innermost loop's DDDG body, its
memory dependences and strides from a trace window, trip counts and entries at the work size,
whether the enclosing loop may be unrolled and jammed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..frontend.tracefile import Trace
from ..instrument import loopbody
from ..instrument.memtrace import MARKED_DEPTH  # noqa: F401  (loops with markers)
from ..scaling import SizeModel, TripModel
from . import dddg

# ---- per-loop analysis ----------------------------------------------------------------------


MAX_UNROLL = 64  # largest unroll (and jam) factor explored


@dataclass(frozen=True)
class AnalyzedLoop:
    info: Any  # LoopInfo
    body: loopbody.LoopBody
    deps: tuple[dddg.MemDep, ...]
    strides: dict[int, tuple[int | None, int | None]]
    jam_ok: bool
    jam_max: int
    trip: float
    entries: float
    perfect: bool
    access_work: dict[int, float]  # mem id -> executions at the work size
    window_len: int = MAX_UNROLL + 1  # iterations of the longest traced window entry


def work_trips(model: TripModel | None, sizes: dict[str, int]) -> float:
    if model is None:
        return 1.0
    try:
        return max(model(sizes), 0.0)
    except KeyError:
        return model.alpha


def _ratio(sizes: SizeModel, lid: int, tsz, wsz) -> float:
    t0, t1 = work_trips(sizes.trips.get(lid), tsz), work_trips(sizes.trips.get(lid), wsz)
    return t1 / t0 if t0 > 0 else 1.0


def _ancestors(loops, lid: int) -> list:
    out, p = [], loops[lid].parent
    while p >= 0:
        out.append(loops[p])
        p = loops[p].parent
    return out


def block_work_counts(
    trace: Trace, region: int, sizes: SizeModel, tsz, wsz, launch_ratio: float
) -> dict[int, float]:
    h = trace.header
    bb = trace.bb_counts.sum(axis=0).astype(np.float64) if trace.bb_counts.size else np.zeros(0)
    out = {
        b.id: float(bb[b.id]) * launch_ratio
        for b in h.blocks
        if b.region == region and b.id < len(bb)
    }
    for lp in h.loops:
        if lp.region == region:
            f = _ratio(sizes, lp.id, tsz, wsz)
            for b in lp.blocks:
                if b in out:
                    out[b] *= f
    return out


_FLOAT_OR_MEM = (
    "fadd",
    "fmul",
    "fdiv",
    "fsqrt",
    "dadd",
    "dmul",
    "ddiv",
    "dsqrt",
    "load",
    "store",
    "call",
    "idiv",
    "imul",
)


def analyze_loop(
    trace, region, lp, fn, mem_by_label, counts, sizes, tsz, wsz, launch, launch_ratio
) -> AnalyzedLoop:
    h = trace.header
    labels = [h.blocks[b].label for b in lp.blocks]
    body = loopbody.loop_body(fn, labels, mem_by_label)
    pos = {o.mem_id: k for k, o in enumerate(body.mem_ops)}
    anc = _ancestors(h.loops, lp.id)
    events = trace.launch_events(launch)
    # the window covers more iterations than the largest unroll factor, so that every
    # dependence an unrolled iteration holds is seen (explore_loop caps U at its length)
    window = dddg.trace_windows(
        events, lp.id, lp.depth <= 2, {a.id for a in anc}, pos, iterations=MAX_UNROLL + 1
    )
    deps = dddg.memory_dependences(body, window)
    parent = anc[0] if anc else None
    siblings = [x for x in h.loops if parent is not None and x.parent == parent.id]
    jam_ok = bool(
        parent is not None
        and len(siblings) == 1
        and len(window.entries) > 1
        and not dddg.cross_entry_dependence(body, window)
        and _parent_independent(h, fn, parent, anc[1:], mem_by_label, events)
    )
    trip = work_trips(sizes.trips.get(lp.id), wsz)
    entries_trace = float(trace.loop_entries[:, lp.id].sum()) if trace.loop_entries.size else 1.0
    entries = entries_trace * launch_ratio
    for a in anc:
        entries *= _ratio(sizes, a.id, tsz, wsz)
    perfect = parent is not None and all(
        all(op[0] not in _FLOAT_OR_MEM for op in h.blocks[b].ops)
        for b in parent.blocks
        if b not in lp.blocks
    )
    jam_max = int(max(1, work_trips(sizes.trips.get(parent.id), wsz))) if parent is not None else 1
    access = {m.id: counts.get(m.block, 0.0) for m in h.mem if m.id in pos}
    return AnalyzedLoop(
        lp,
        body,
        deps,
        dddg.strides(window),
        jam_ok,
        jam_max,
        max(snap_integer(trip), 1.0),
        max(snap_integer(entries), 1.0),
        perfect,
        access,
        max((len(e) for e in window.entries), default=0),
    )


def snap_integer(x: float) -> float:
    """The nearest integer when ``x`` is one up to the noise of the trip-count fit (64.0000001
    must not become two unrolled iterations of 64)."""
    r = round(x)
    return float(r) if abs(x - r) <= 1e-6 * max(abs(x), 1.0) else x


def _parent_independent(h, fn, parent, parent_anc, mem_by_label, events) -> bool:
    """Are the iterations of the enclosing loop independent, so that its unroll-and-jam is
    legal? Not when its header carries a value (a non-induction phi: ``s += A[i][j]`` over
    the whole nest is one chain), nor when one of its iterations reads what an earlier one
    wrote, its own blocks outside the inner loop included (``x[i] = s`` read by the inner
    loop of iteration i + 1). The memory check needs the enclosing loop's markers."""
    labels = [h.blocks[b].label for b in parent.blocks]
    pbody = loopbody.loop_body(fn, labels, mem_by_label)
    for o in pbody.ops:
        if o.klass != "phi" or o.carried < 0 or o.index in pbody.induction:
            continue
        upd = pbody.ops[o.carried]
        if upd.klass == "gep" and o.index in upd.operands:
            continue  # a pointer induction (p += stride)
        return False
    if parent.depth > 2:
        return True
    ppos = {o.mem_id: k for k, o in enumerate(pbody.mem_ops)}
    if not ppos:
        return True
    pwin = dddg.trace_windows(
        events,
        parent.id,
        True,
        {a.id for a in parent_anc},
        ppos,
        iterations=MAX_UNROLL + 1,
        entries=1,
    )
    return not any(d.distance >= 1 for d in dddg.memory_dependences(pbody, pwin))


