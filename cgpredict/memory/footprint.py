"""The trace-size check (issue 25): how far the traced footprint is from the work size's, per
cache level, and which reuse the trace cannot show.

The cache analysis runs on the trace size's addresses and grows reuse distances to the work
size by the per-thread loops' and the grid's growth (reuse.scale_hits). A **gather** (a load
whose address comes from another load: ``x[col[k]]``) reuses a line when two threads happen
to pick it; its reuse distance is set by the size of the array it picks from, not by the
loops. When that array fits a cache at the trace size but not at the work size, the trace
shows hits the work size does not have (CSR SpMV on the TK1: x of 16 KB traced, 4 MB at the
work size, against a 128 KB L2: 87% of the gathers hit in the trace, about 3% at the work
size). Such a gather's reuse distances are grown by its array's growth (reuse.scale_gathered):
a uniform gather over L lines keeps a hit only when it reuses within capacity / growth lines.

Every prediction states the check per cache level (``check_lines``); when the scaling moves
the prediction by more than MOVE_LIMIT, a warning says so (``moved_warning``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..devices import GPUDevice
from ..frontend.tracefile import Trace
from ..instrument import loopbody
from ..parallelism import traced_loop_body
from ..scaling import SizeModel
from .residency import region_arrays
from .shared import array_name

__all__ = [
    "MOVE_LIMIT",
    "LevelCheck",
    "SizeCheck",
    "check_lines",
    "gathered_loads",
    "moved_warning",
    "pick_spans",
    "size_check",
]

#: a prediction that the trace-size scaling moves by more than this says so
MOVE_LIMIT = 0.10


@dataclass(frozen=True)
class LevelCheck:
    """One cache level: its capacity and the launch's arrays at the trace and work sizes."""

    level: str  # "L1" | "L2"
    capacity_bytes: int
    traced_bytes: float  # the arrays the kernel touches, at the trace size
    work_bytes: float  # ... at the work size
    crossing: tuple[str, ...] = ()  # arrays that fit it at the trace size, not at the work size


@dataclass(frozen=True)
class SizeCheck:
    """The trace-size check of a kernel: per level, and the gathers whose reuse is scaled."""

    levels: tuple[LevelCheck, ...] = ()
    gathers: tuple[tuple[int, float], ...] = ()  # (static load, reuse-distance growth)
    # the gathers into arrays that outgrow the L1 (eq. (LP2): the L1's own test)
    l1_gathers: tuple[tuple[int, float], ...] = ()
    gathered_arrays: tuple[str, ...] = ()  # the arrays of those gathers
    unknown: tuple[str, ...] = ()  # arrays whose bytes at a size are not known


def _tainted_loads(body: loopbody.LoopBody) -> set[int]:
    """Memory ids of the loads of ``body`` whose address depends on a value loaded in the
    same iteration."""
    data: list[bool] = []
    out = set()
    for o in body.ops:
        from_load = any(data[k] for k in o.operands if k < len(data))
        if o.klass == "load" and from_load and o.mem_id >= 0:
            out.add(o.mem_id)
        data.append(o.klass == "load" or from_load)
    return out


def gathered_loads(trace: Trace, region: int) -> frozenset[int]:
    """Static loads of ``region`` whose address comes from another load of the same
    iteration of an innermost loop (gathers; ``col[k]`` from k = rowptr[r] is none)."""
    h = trace.header
    mem = loopbody.mem_by_label(h, region)
    out: set[int] = set()
    parents = {lp.parent for lp in h.loops}
    for lp in h.loops:  # innermost loops: an outer body's joins carry values from loads
        body = traced_loop_body(h, lp, mem) if lp.region == region and lp.id not in parents \
            else None
        if body is not None:
            out |= _tainted_loads(body)
    return frozenset(s for s in out if h.mem[s].kind == "load")


def pick_spans(addr: np.ndarray, inst_start: np.ndarray, inst_sid: np.ndarray,
               sids: frozenset[int]) -> dict[int, float]:
    """Per static load of ``sids``: the mean byte span (largest less smallest address) of
    its warp instructions' lanes, eq. (LP2u): what range a gather picks from."""
    out: dict[int, float] = {}
    if not len(inst_start) or not sids:
        return out
    a = np.asarray(addr, np.float64)
    hi, lo = np.maximum.reduceat(a, inst_start), np.minimum.reduceat(a, inst_start)
    for s in sids:
        m = inst_sid == s
        if m.any():
            out[s] = float((hi[m] - lo[m]).mean())
    return out


def _levels(device: GPUDevice, l1_bytes: int = 0) -> list[tuple[str, int]]:
    """The caches a global load meets: the L1 where it caches them (``l1_bytes``, what the
    launch's carve-out leaves, eq. (SC3); 0: the device's), and the L2."""
    out = [("L1", l1_bytes or device.l1_bytes)] if device.l1_caches_global_loads else []
    return out + [("L2", device.l2_bytes)]


def size_check(trace: Trace, region: int, sizes: SizeModel, tsz: dict[str, int],
               wsz: dict[str, int], device: GPUDevice,
               spans: dict[int, float] | None = None, l1_bytes: int = 0) -> SizeCheck:
    """The region's arrays at the trace and work sizes against each cache level, and the
    gathers into an array that outgrows the L2 at the work size (it may have fitted traced,
    or held a larger share of it there: either way the trace shows too many hits); for the
    L1, also those into an array that outgrows the L1 whose warp instructions pick from the
    whole array (``spans``, pick_spans: at least half its traced bytes), eq. (LP2u).
    ``l1_bytes``: the launch's L1 (eq. (SC3)); 0: the device's l1_bytes."""
    arrays = sorted(region_arrays(trace).get(region, frozenset()) - {""})
    traced = {a: sizes.array_bytes(a, tsz) for a in arrays}
    work = {a: sizes.array_bytes(a, wsz) for a in arrays}
    known = [a for a in arrays if traced[a] and work[a]]
    levels = tuple(
        LevelCheck(
            level=name, capacity_bytes=cap,
            traced_bytes=sum(traced[a] for a in known),
            work_bytes=sum(work[a] for a in known),
            crossing=tuple(a for a in known if traced[a] <= cap < work[a]),
        )
        for name, cap in _levels(device, l1_bytes)
    )
    gathered = [(s, a) for s in sorted(gathered_loads(trace, region))
                if (a := array_name(trace.header.mem[s].base)) in known]

    def outgrow(cap: float) -> tuple[tuple[int, float], ...]:
        return tuple((s, work[a] / traced[a]) for s, a in gathered
                     if work[a] > max(cap, traced[a]))

    gathers = outgrow(device.l2_bytes // device.l2_partitions)  # the L2's share, eq. (LP1)
    spans = spans or {}
    whole = {s for s, a in gathered if spans.get(s, 0.0) >= 0.5 * traced[a]}  # (LP2u)
    l1_gathers = gathers + tuple(
        g for g in outgrow(l1_bytes or device.l1_bytes) if g[0] in whole and g not in gathers
    ) if device.l1_caches_global_loads else ()
    return SizeCheck(
        levels=levels, gathers=gathers, l1_gathers=l1_gathers,
        gathered_arrays=tuple(sorted({array_name(trace.header.mem[s].base)
                                      for s, _ in gathers + l1_gathers})),
        unknown=tuple(a for a in arrays if a not in known),
    )


def _size(n: float) -> str:
    """Bytes as KB or MB."""
    return f"{n / 1e6:.3g} MB" if n >= 1e6 else f"{n / 1e3:.3g} KB"


def check_lines(check: SizeCheck) -> tuple[str, ...]:
    """The report's trace-size lines: per cache level the footprints and what crosses it."""
    out = []
    for lv in check.levels:
        ratio = lv.work_bytes / lv.traced_bytes if lv.traced_bytes else float("nan")
        line = (f"{lv.level} {_size(lv.capacity_bytes)}: arrays {_size(lv.traced_bytes)} "
                f"traced, {_size(lv.work_bytes)} at the work size ({ratio:.3g}x)")
        if lv.crossing:
            line += f"; {', '.join(lv.crossing)} fit it traced, not at the work size"
        out.append(line)
    if check.gathers or check.l1_gathers:
        grown = ", ".join(f"{a}" for a in check.gathered_arrays)
        out.append(f"gathers into {grown}: reuse distances grown to the work size "
                   f"(x{max(g for _, g in check.gathers + check.l1_gathers):.3g}"
                   f"{'' if check.gathers else ', in the L1'})")
    if check.unknown:
        out.append(f"size unknown at a size: {', '.join(check.unknown)} (not counted)")
    return tuple(out)


def moved_warning(name: str, check: SizeCheck, scaled_ms: float, traced_ms: float
                  ) -> list[str]:
    """A warning when scaling the gathers' reuse moved the prediction by > MOVE_LIMIT."""
    if not (check.gathers or check.l1_gathers) or traced_ms <= 0:
        return []
    move = scaled_ms / traced_ms - 1
    if abs(move) <= MOVE_LIMIT:
        return []
    return [
        f"{name}: the trace-size check moved the prediction by {move:+.0%} "
        f"({traced_ms:.4g} ms with the trace's own reuse of "
        f"{', '.join(check.gathered_arrays)}, {scaled_ms:.4g} ms scaled to the work size): "
        f"the gathered arrays hold more of the cache traced than at the work size; trace a "
        f"size where they outgrow it as much for a prediction that needs no scaling"
    ]
