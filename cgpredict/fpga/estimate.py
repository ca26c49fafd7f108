"""FPGA (HLS) estimate of the marked kernels, Lin-Analyzer style (SPEC §5).

For every kernel (region) and every innermost loop of it:

1. **DDDG** (``dddg.py``): the loop body from the IR, a window of iterations from the trace for
   the memory dependences and access strides.
2. **Design points**: loop pipelining (on/off), unroll factor U of the innermost loop, jam factor
   V (unroll the enclosing loop and jam, i.e. V independent copies of the inner loop in flight;
   only when the trace shows no dependence between the enclosing loop's iterations) and a cyclic
   array partition factor P (banks of the on-chip arrays).
3. **II** = max(recurrence MII, memory-port MII, DSP MII). recMII(U) = max over cycles of
   ceil(U * sum latency / sum distance); port MII: accesses per bank / 2 ports for on-chip
   arrays (U*V copies spread over P banks; loop-invariant accesses are one access), beats per
   cycle of the AXI port for streamed arrays; DSP MII: the smallest II whose operator
   instances fit the DSP budget. Instances (``explore.instances``): every unrolled copy of
   an operation has its own core (the copies start in the same cycle); only distinct
   operations of a class share over the II, ``copies * ceil(n / II)``. So the DSPs cap the
   parallel lanes (a float multiply-add: fmul 3 + fadd 2 DSP48E1).
4. **Cycles**: pipelined ``ceil(E/V) * ((ceil(T/U) - 1) * II + depth)`` for E entries of trip
   count T (one fill per enclosing iteration; once in all when the nest is perfect, as HLS
   flattens it), not pipelined ``ceil(E/V) * ceil(T/U) * depth``; depth = the list-scheduled
   length of U iterations of the DDDG under the memory ports. Blocks outside the innermost
   loops cost their scheduled length per execution.
5. **Memory**: arrays that fit in BRAM (smallest first, within the utilisation share of the
   budget) are copied in before and out after the kernel (not overlapped: time adds). The rest
   stream from DRAM during the loop through an AXI port: the loop takes
   max(compute, streamed bytes / bandwidth) (overlapped). Streamed bytes count every access
   except those invariant in the inner loop (kept in a register) or shared by the V jammed
   copies; an access that is contiguous neither along the inner loop nor across the jam moves
   ``dram_min_transfer_bytes``.
6. **Resources**: operator instances from the device table, loop and AXI overheads, BRAM of the
   on-chip arrays (P banks of ceil(bytes / P / bram36_bytes) each, LUT RAM when tiny). Every
   kept design point fits DSP / BRAM / LUT / FF times ``utilisation``; with several innermost
   loops the per-loop choices are relaxed until their sum fits.

7. **Tiled design** (``tiling.py``): when the kernel is one loop nest whose accesses are affine
   in the loop indices (``affine.py``) and whose enclosing iterations are independent, the
   nest is also tiled into BRAM buffers filled by AXI bursts (eqs. T1-T5 there); the kernel
   takes the faster of the streamed and the tiled design, and says why a nest was not tiled.
   A kernel that reaches a recursive function is refused (``FPGAEstimateError``, one line).

Trace size -> work size: trip counts and entries come from the ``SizeModel`` (as the GPU
side), array sizes from the IR global types with each dimension equal to a traced size macro
replaced by its work value. The operator table is per device file (its clock).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..frontend.tracefile import Trace
from ..instrument import loopbody
from ..instrument.irtext import parse_module
from ..prediction import RunOptions
from ..prepared import prepare
from ..scaling import SizeModel
from . import dddg
from .affine import affine_nest
from .arrays import array_bytes, bram_cost, touched_bytes
from .device import FPGADevice, Resources, load_fpga_device
from .explore import explore_loop, partition_extra
from .hls import loop_variable
from .loops import MARKED_DEPTH, analyze_loop, block_work_counts, snap_integer, work_trips
from .results import ArrayPlacement, FPGAEstimateError, FPGAReport, KernelEstimate, LoopEstimate
from .tiling import explore_tiled


def estimate_region(
    trace: Trace,
    region: int,
    dev: FPGADevice,
    sizes: SizeModel,
    tsz: dict[str, int],
    wsz: dict[str, int],
) -> KernelEstimate:
    """The FPGA estimate of one region: its innermost loops analysed and explored, its arrays
    placed on chip or streamed, the transfers, and the tiled design when it is faster."""
    h = trace.header
    info = h.region(region)
    rows = np.flatnonzero((trace.launches["region"] == region) & (trace.launches["recorded"] == 1))
    if not len(rows):
        raise FPGAEstimateError(f"kernel {info.name}: no launch was recorded (did it run?)")
    launches, launch_ratio = _launches(trace, region, sizes, wsz)
    counts = block_work_counts(trace, region, sizes, tsz, wsz, launch_ratio)
    mod = parse_module(h.ir_text)
    mem_by_label = loopbody.mem_by_label(h, region)
    loops = [lp for lp in h.loops if lp.region == region]
    inner = [lp for lp in loops if not any(c.parent == lp.id for c in loops)]
    _check_recursion(h, region, info.name)
    warnings: list[str] = _call_warnings(h, region, info.name)
    analysed = [
        analyze_loop(trace, region, lp, mod.functions[lp.function], mem_by_label, counts,
                     sizes, tsz, wsz, int(rows[0]), launch_ratio)
        for lp in inner
    ]
    # arrays: sizes, placement
    mems = [m for m in h.mem if m.region == region]
    names = sorted({m.base.split("[")[0] for m in mems})
    elem = {m.id: m.bytes for m in mems}
    arr_bytes = _array_sizes(trace, int(rows[0]), mems, names, launch_ratio, counts, tsz, wsz)
    usable = dev.usable()
    on_chip, streamed, base = _placement(dev, usable, names, arr_bytes)
    loop_budget = Resources(
        usable.dsp, usable.bram36 - base.bram36, usable.lut - base.lut, usable.ff - base.ff
    )
    chosen, fits = _combine([explore_loop(lp, dev, on_chip, elem, loop_budget, arr_bytes=arr_bytes)
                             for lp in analysed], loop_budget, analysed)
    part, res = _resources(dev, analysed, chosen, on_chip, streamed, arr_bytes, base)
    if not res.fits(usable):
        fits = False
        warnings.append(f"{info.name}: no explored design fits the {dev.name} budget")
    other = _other_cycles(h, region, inner, counts, mod, dev, mem_by_label)
    transfer = _transfer_bytes(on_chip, arr_bytes, mems, launches)
    hz = dev.clock_mhz * 1e6
    transfer_ms = transfer / (dev.dram_bandwidth_gbps * 1e9) * 1e3
    loop_ms = sum(e.time_ms for e in chosen if e is not None)
    total = loop_ms + other / hz * 1e3 + transfer_ms
    arrays = _placements(names, arr_bytes, on_chip, mems, part)
    loops_out = tuple(e for e in chosen if e is not None)
    bound = max(loops_out, key=lambda e: e.time_ms).bound if loops_out else "latency"
    if transfer_ms > loop_ms:
        bound = "transfers"
    tiled, note = _tiled_design(trace, int(rows[0]), loops, analysed, mems, dev, sizes, wsz, tsz)
    design, tiled, note, t_ms = _design(tiled, note, warnings, launches, other / hz * 1e3,
                                        fits, total)
    if design == "tiled":
        total, bound, fits, res = t_ms, tiled.bound, True, tiled.resources
    return KernelEstimate(
        info.name,
        f"{h.source_name}:{info.line}",
        launches,
        loops_out,
        arrays,
        other,
        float(transfer),
        transfer_ms,
        total,
        res,
        fits,
        bound,
        tuple(warnings),
        design,
        tiled,
        note,
    )


def _array_sizes(trace: Trace, row: int, mems, names: list[str], launch_ratio: float,
                 counts: dict, tsz: dict[str, int], wsz: dict[str, int]) -> dict[str, float]:
    """Bytes of each array the kernel touches at the work size: its declared size, else
    what the launch of trace row ``row`` touches grown by the launch ratio."""
    h = trace.header
    sizes_b = array_bytes(h.ir_text, tsz, wsz, h.source_text)
    return {
        a: sizes_b[a]
        if a in sizes_b
        else touched_bytes(
            trace,
            row,
            [m.id for m in mems if m.base.split("[")[0] == a],
            launch_ratio,
            counts,
            mems,
        )
        for a in names
    }


def _placement(dev: FPGADevice, usable: Resources, names: list[str],
               arr_bytes: dict[str, float]) -> tuple[set[str], list[str], Resources]:
    """(arrays on chip, arrays streamed, the resources they take): the smallest arrays go
    into BRAM while they fit three quarters of it; each streamed one takes an AXI port."""
    on_chip: set[str] = set()
    used = 0
    for a in sorted(names, key=lambda x: arr_bytes[x]):
        need = bram_cost(dev, arr_bytes[a], 1)[0]
        if used + need <= usable.bram36 * 0.75:
            on_chip.add(a)
            used += need
    streamed = [a for a in names if a not in on_chip]
    base = Resources(
        0,
        used + dev.axi_port_bram36 * len(streamed),
        dev.axi_port_lut * len(streamed),
        dev.axi_port_ff * len(streamed),
    )
    return on_chip, streamed, base


def _resources(dev: FPGADevice, analysed, chosen, on_chip: set[str], streamed: list[str],
               arr_bytes: dict[str, float], base: Resources) -> tuple[dict[str, int], Resources]:
    """(partition factor per on-chip array, the kernel's resources): each array partitioned
    as its most demanding chosen loop asks (never one of data-dependent index), its storage
    counted once, plus every chosen loop's own resources."""
    part = {a: 1 for a in on_chip}
    unbanked = data_dependent_arrays(analysed)  # no static bank: never partitioned
    for lp, est in zip(analysed, chosen):
        for o in lp.body.mem_ops:
            if o.array in on_chip and est is not None and o.array not in unbanked:
                part[o.array] = max(part[o.array], est.point.partition)
    bram = sum(bram_cost(dev, arr_bytes[a], part[a])[0] for a in on_chip)
    lutram = sum(bram_cost(dev, arr_bytes[a], part[a])[1] for a in on_chip)
    res = Resources(0, bram + dev.axi_port_bram36 * len(streamed), base.lut + lutram, base.ff)
    for lp, est in zip(analysed, chosen):
        if est is not None:  # the partition storage is counted above, once per array
            extra = partition_extra(lp, est.point.partition, dev, on_chip, arr_bytes)
            r = est.resources
            res = res + Resources(r.dsp, r.bram36 - extra.bram36, r.lut - extra.lut, r.ff)
    return part, res


def _other_cycles(h, region: int, inner, counts: dict, mod, dev: FPGADevice,
                  mem_by_label) -> float:
    """Cycles of the kernel's blocks outside its innermost loops, at the work size."""
    inner_blocks = {b for lp in inner for b in lp.blocks}
    other = 0.0
    for b in h.blocks:
        if b.region == region and b.id not in inner_blocks and counts.get(b.id, 0.0) > 0:
            other += counts[b.id] * _block_cycles(
                mod.functions[b.function], b.label, dev, mem_by_label
            )
    return other


def _launches(trace: Trace, region: int, sizes: SizeModel,
              wsz: dict[str, int]) -> tuple[int, float]:
    """The region's launches at the work size, and their ratio to the trace's."""
    launches_trace = int((trace.launches["region"] == region).sum())
    launches = max(round(work_trips(sizes.launches.get(region), wsz)), 1)
    return launches, launches / max(launches_trace, 1)


def _design(tiled, note: str, warnings: list[str], launches: int, other_ms: float, fits: bool,
            total: float):
    """(design, the tiled design or None, the note, the tiled time): the tiled design when
    the kernel calls no function with a loop and it is faster than streaming (or streaming
    does not fit), else streaming."""
    design, t_ms = "streamed", 0.0
    if warnings:
        tiled, note = None, "not tiled: the kernel calls a function with a loop"
    if tiled is not None:
        t_ms = tiled.time_ms * launches + other_ms
        if fits and t_ms >= total:
            note = (
                f"the tiled design ({t_ms:.4g} ms) is not faster than streaming "
                f"({total:.4g} ms)"
            )
        else:
            note = f"the streamed design takes {total:.4g} ms"
            design = "tiled"
    return design, tiled, note, t_ms


def _transfer_bytes(on_chip: set[str], arr_bytes: dict[str, float], mems,
                    launches: int) -> float:
    """Bytes moved between DRAM and the on-chip arrays over every launch: each array in if
    the kernel loads it, out if it stores it."""
    return (
        sum(
            arr_bytes[a]
            * (
                any(m.kind == "load" for m in mems if m.base.split("[")[0] == a)
                + any(m.kind == "store" for m in mems if m.base.split("[")[0] == a)
            )
            for a in on_chip
        )
        * launches
    )


def _placements(names: list[str], arr_bytes: dict[str, float], on_chip: set[str], mems,
                part: dict[str, int]) -> tuple[ArrayPlacement, ...]:
    """Where each array lives, whether the kernel loads and stores it, its partition."""
    return tuple(
        ArrayPlacement(
            a,
            int(arr_bytes[a]),
            a in on_chip,
            any(m.kind == "load" for m in mems if m.base.split("[")[0] == a),
            any(m.kind == "store" for m in mems if m.base.split("[")[0] == a),
            part.get(a, 1),
        )
        for a in names
    )


def _tiled_design(trace, launch, loops, analysed, mems, dev, sizes, wsz, tsz):
    """The best tiled design of the kernel's loop nest (``tiling.py``), or None and why
    (not a single perfect chain of loops, not affine, no tile size fits)."""
    h = trace.header
    if len(analysed) != 1:
        return None, "not tiled: the kernel holds several innermost loops (only one nest is tiled)"
    chain = sorted(loops, key=lambda lp: lp.depth)
    if any(b.parent != a.id for a, b in zip(chain, chain[1:])):
        return None, "not tiled: the loops do not form one nest"
    lp = analysed[0]
    if len(chain) > 1 and not lp.jam_ok:
        return None, (
            "not tiled: the enclosing loop's iterations are not independent (a value or a "
            "memory dependence crosses them), so reordering them into tiles may be illegal"
        )
    level = {b: k for k, c in enumerate(chain) for b in c.blocks}
    nest = affine_nest(
        trace.launch_events(launch),
        [c.id for c in chain],
        [c.depth <= MARKED_DEPTH for c in chain],
        mems,
        {m.id: level.get(m.block, -1) for m in mems},
        [c.line for c in chain],
    )
    if nest.problem:
        return None, f"not tiled: {nest.problem}"
    if not nest.accesses:
        return None, "not tiled: no memory access to buffer"
    trips = tuple(max(snap_integer(work_trips(sizes.trips.get(c.id), wsz)), 1.0) for c in chain)
    src = h.source_text.split("\n")
    names = {
        k: loop_variable(src[c.line - 1] if 0 < c.line <= len(src) else "", f"l{k}")
        for k, c in enumerate(chain)
    }
    traced = tuple(max(snap_integer(work_trips(sizes.trips.get(c.id), tsz)), 1.0) for c in chain)
    est, why = explore_tiled(
        nest, lp, trips, tuple(c.line for c in chain), dev, dev.usable(), names, traced
    )
    return est, (f"not tiled: {why}" if est is None else "")


def data_dependent_arrays(loops) -> set[str]:
    """Arrays some access of ``loops`` indexes with no stride in the trace (a data-dependent
    index such as ``hist[data[i]]``): no cyclic partition gives their accesses fixed banks."""
    return {o.array for lp in loops for o in lp.body.mem_ops
            if lp.strides.get(o.mem_id, (None, None))[0] is None}


def _check_recursion(h, region: int, name: str) -> None:
    """A kernel that reaches a recursive function (directly or through helpers) has no finite
    DDDG and no HLS implementation: refused with one line naming the function and call."""
    edges: dict[str, list] = {}
    for c in h.calls:
        if c.traced:
            edges.setdefault(c.function, []).append(c)
    start = [c for c in h.calls if c.traced and c.region == region]
    for c0 in start:
        # depth-first from the callee, looking for a path back to a function on the stack
        stack, seen = [(c0.callee, (c0.callee,))], set()
        while stack:
            f, path = stack.pop()
            for d in edges.get(f, []):
                if d.callee in path:
                    raise FPGAEstimateError(
                        f"kernel {name}: {d.callee}() is recursive (called from {d.function}() "
                        f"at line {d.line}); the DDDG cannot schedule recursion and HLS cannot "
                        f"synthesise it: rewrite it as a loop"
                    )
                if (d.callee, len(path)) not in seen and len(path) < 64:
                    seen.add((d.callee, len(path)))
                    stack.append((d.callee, path + (d.callee,)))


def _call_warnings(h, region: int, name: str) -> list[str]:
    """Calls of the kernel (directly or through helpers) to functions of the module that hold
    a loop: the model costs a call as one operator, so such a kernel is not estimated."""
    reached: dict[str, int] = {}
    frontier = [c for c in h.calls if c.traced and c.region == region]
    while frontier:
        c = frontier.pop()
        if c.callee in reached:
            continue
        reached[c.callee] = c.line
        frontier += [d for d in h.calls if d.traced and d.function == c.callee]
    looped = {lp.function for lp in h.loops}
    return [
        f"{name}: calls {f}() (line {line}), which contains a loop; the FPGA estimate costs the "
        f"call as a single operator and ignores its loop, so it is far too optimistic and "
        f"unreliable (inline the function into the kernel)"
        for f, line in sorted(reached.items())
        if f in looped
    ]



def _block_cycles(fn, label: str, dev: FPGADevice, mem_by_label) -> int:
    body = loopbody.loop_body(fn, [label], mem_by_label)
    g = dddg.build_dddg(body, 1, (), dev.latency)
    return max(dddg.schedule(g)[1], 1)


def _combine(choices: list[list[LoopEstimate]], budget: Resources, loops) -> tuple[list, bool]:
    """The fastest point of every loop, relaxed (the loop using the largest share of the
    budget moves to its next point that uses less) until the sum fits."""
    idx = [0] * len(choices)
    if any(not c for c in choices):
        return [c[0] if c else None for c in choices], False
    while True:
        picked = [c[i] for c, i in zip(choices, idx)]
        total = Resources()
        for e in picked:
            total = total + e.resources
        if total.fits(budget):
            return picked, True
        order = sorted(range(len(picked)), key=lambda k: -picked[k].resources.share(budget))
        moved = False
        for k in order:
            cur = picked[k].resources.share(budget)
            nxt = next(
                (
                    j
                    for j in range(idx[k] + 1, len(choices[k]))
                    if choices[k][j].resources.share(budget) < cur
                ),
                None,
            )
            if nxt is not None:
                idx[k] = nxt
                moved = True
                break
        if not moved:
            return picked, False


def estimate_trace(
    trace: Trace,
    dev: FPGADevice,
    sizes: SizeModel | None = None,
    tsz: dict[str, int] | None = None,
    wsz: dict[str, int] | None = None,
) -> FPGAReport:
    sizes = sizes or SizeModel.constant(trace)
    tsz = tsz or {}
    wsz = wsz or tsz
    if not trace.header.ir_text:
        raise FPGAEstimateError(f"{trace.path}: the trace carries no IR text; trace again")
    kernels = tuple(
        estimate_region(trace, r.index, dev, sizes, tsz, wsz) for r in trace.header.regions
    )
    warns = tuple(w for k in kernels for w in k.warnings)
    return FPGAReport(
        trace.header.source_name, dev.name, dev.clock_mhz, dev.budget(), wsz, tsz, kernels, warns
    )


# ---- from a source file -------------------------------------------------------------------


@contextlib.contextmanager
def traced_source(
    source: Path,
    work: dict[str, int],
    trace_sizes: dict[str, int],
    functions: tuple[str, ...] = (),
    timeout_s: float = 120.0,
    max_events: int = 200_000_000,
) -> Iterator:
    """Trace ``source`` and fit its trip counts exactly as ``cgpredict run`` does
    (``prepared.prepare``); the trace lives while the context is open."""
    opts = RunOptions(
        work_sizes=dict(work),
        trace_sizes=dict(trace_sizes),
        functions=tuple(functions),
        timeout_s=timeout_s,
        max_events=max_events,
    )
    with prepare(Path(source), opts) as prepared:
        yield prepared


def estimate_source(
    source: Path,
    device: str = "zc702",
    work: dict[str, int] | None = None,
    trace_sizes: dict[str, int] | None = None,
    functions: tuple[str, ...] = (),
    timeout_s: float = 120.0,
) -> FPGAReport:
    """``cgpredict fpga``: trace ``source`` and estimate its kernels on ``device``."""

    dev = load_fpga_device(device)
    with traced_source(Path(source), work or {}, trace_sizes or {}, functions, timeout_s) as t:
        t0 = time.perf_counter()
        rep = estimate_trace(t.trace, dev, t.sizes, t.trace_sizes, t.work_sizes)
        secs = {**t.seconds, "analysis": time.perf_counter() - t0}
    return replace(rep, seconds=secs)


__all__ = [
    "FPGAEstimateError",
    "estimate_region",
    "estimate_source",
    "estimate_trace",
    "traced_source",
]
