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
   cycle of the AXI port for streamed arrays; DSP MII: the smallest II whose shared operator
   instances, ceil(uses / II) per class, fit the DSP budget.
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

Trace size -> work size: trip counts and entries come from the ``SizeModel`` (as the GPU
side), array sizes from the IR global types with each dimension equal to a traced size macro
replaced by its work value. The operator table is per device file (its clock).
"""

from __future__ import annotations

import ast
import contextlib
import math
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import dddg
from .errors import CGPredictError
from .fpga_device import (  # noqa: F401  (re-exported: the FPGA API in one place)
    ENV_VAR,
    OP_CLASSES,
    RESOURCES,
    SCHEMA_VERSION,
    FPGADevice,
    FPGADeviceError,
    OperatorCost,
    Resources,
    bundled_fpga_dir,
    list_fpga_devices,
    load_fpga_device,
    parse_fpga_device,
)
from .instrument.irtext import parse_module
from .instrument.memtrace import InstrumentError, type_bytes
from .scaling import SizeModel, TripModel
from .tracefile import Trace


class FPGAEstimateError(CGPredictError):
    exit_code = 2


# ---- results -----------------------------------------------------------------------------


@dataclass(frozen=True)
class DesignPoint:
    pipeline: bool
    unroll: int
    jam: int
    partition: int

    def pragmas(self, line: int) -> tuple[str, ...]:
        out = []
        if self.pipeline:
            out.append(f"#pragma HLS pipeline II=<ii>  (loop at line {line})")
        if self.unroll > 1:
            out.append(f"#pragma HLS unroll factor={self.unroll}  (loop at line {line})")
        if self.jam > 1:
            out.append(
                f"unroll-and-jam the enclosing loop by {self.jam} "
                f"(#pragma HLS unroll factor={self.jam} on it)"
            )
        if self.partition > 1:
            out.append(
                f"#pragma HLS array_partition cyclic factor={self.partition} "
                f"(arrays of loop {line})"
            )
        return tuple(out)


@dataclass(frozen=True)
class LoopEstimate:
    loop_id: int
    line: int
    point: DesignPoint
    trip_count: float
    entries: float
    ii: int
    rec_mii: int
    port_mii: int
    dsp_mii: int
    depth: int
    compute_cycles: float
    stream_bytes: float
    stream_ms: float
    compute_ms: float
    time_ms: float
    bound: str  # recurrence | memory ports | DSP | bandwidth | latency
    resources: Resources
    pragmas: tuple[str, ...]
    points_explored: int


@dataclass(frozen=True)
class ArrayPlacement:
    name: str
    bytes: int
    on_chip: bool
    read: bool
    written: bool
    partition: int


@dataclass(frozen=True)
class KernelEstimate:
    name: str
    location: str
    launches: int
    loops: tuple[LoopEstimate, ...]
    arrays: tuple[ArrayPlacement, ...]
    other_cycles: float
    transfer_bytes: float
    transfer_ms: float
    time_ms: float
    resources: Resources
    fits: bool
    bound: str
    warnings: tuple[str, ...]


@dataclass(frozen=True)
class FPGAReport:
    source: str
    device: str
    clock_mhz: float
    budget: Resources
    work_sizes: dict[str, int]
    trace_sizes: dict[str, int]
    kernels: tuple[KernelEstimate, ...]
    warnings: tuple[str, ...]
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def total_ms(self) -> float:
        return sum(k.time_ms for k in self.kernels)


# ---- per-loop analysis ----------------------------------------------------------------------


MAX_UNROLL = 64  # largest unroll (and jam) factor explored


@dataclass(frozen=True)
class _Loop:
    info: Any  # LoopInfo
    body: dddg.LoopBody
    deps: tuple[dddg.MemDep, ...]
    strides: dict[int, tuple[int | None, int | None]]
    jam_ok: bool
    jam_max: int
    trip: float
    entries: float
    perfect: bool
    access_work: dict[int, float]  # mem id -> executions at the work size
    window_len: int = MAX_UNROLL + 1  # iterations of the longest traced window entry


def _trip(model: TripModel | None, sizes: dict[str, int]) -> float:
    if model is None:
        return 1.0
    try:
        return max(model(sizes), 0.0)
    except KeyError:
        return model.alpha


def _ratio(sizes: SizeModel, lid: int, tsz, wsz) -> float:
    t0, t1 = _trip(sizes.trips.get(lid), tsz), _trip(sizes.trips.get(lid), wsz)
    return t1 / t0 if t0 > 0 else 1.0


def _ancestors(loops, lid: int) -> list:
    out, p = [], loops[lid].parent
    while p >= 0:
        out.append(loops[p])
        p = loops[p].parent
    return out


def _block_work_counts(
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


def _analyze_loop(
    trace, region, lp, fn, mem_by_label, counts, sizes, tsz, wsz, launch, launch_ratio
) -> _Loop:
    h = trace.header
    labels = [h.blocks[b].label for b in lp.blocks]
    body = dddg.loop_body(fn, labels, mem_by_label)
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
    trip = _trip(sizes.trips.get(lp.id), wsz)
    entries_trace = float(trace.loop_entries[:, lp.id].sum()) if trace.loop_entries.size else 1.0
    entries = entries_trace * launch_ratio
    for a in anc:
        entries *= _ratio(sizes, a.id, tsz, wsz)
    perfect = parent is not None and all(
        all(op[0] not in _FLOAT_OR_MEM for op in h.blocks[b].ops)
        for b in parent.blocks
        if b not in lp.blocks
    )
    jam_max = int(max(1, _trip(sizes.trips.get(parent.id), wsz))) if parent is not None else 1
    access = {m.id: counts.get(m.block, 0.0) for m in h.mem if m.id in pos}
    return _Loop(
        lp,
        body,
        deps,
        dddg.strides(window),
        jam_ok,
        jam_max,
        max(_snap(trip), 1.0),
        max(_snap(entries), 1.0),
        perfect,
        access,
        max((len(e) for e in window.entries), default=0),
    )


def _snap(x: float) -> float:
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
    pbody = dddg.loop_body(fn, labels, mem_by_label)
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


# ---- design points ------------------------------------------------------------------------


def _pow2(limit: float, cap: int) -> list[int]:
    out, k = [], 1
    while k <= min(limit, cap):
        out.append(k)
        k *= 2
    return out or [1]


def _copies(lp: _Loop, o: dddg.Op, u: int, v: int) -> int:
    inner, outer = lp.strides.get(o.mem_id, (None, None)) if o.mem_id >= 0 else (None, None)
    cu = 1 if (o.mem_id >= 0 and inner == 0) else u
    cv = 1 if (o.mem_id >= 0 and outer == 0) else v
    return cu * cv


def _contiguous(lp: _Loop, o: dddg.Op, bytes_: int, v: int) -> tuple[bool, bool]:
    inner, outer = lp.strides.get(o.mem_id, (None, None))
    return (
        inner is not None and abs(inner) == bytes_,
        v > 1 and outer is not None and abs(outer) == bytes_,
    )


def _evaluate(
    lp: _Loop,
    pt: DesignPoint,
    dev: FPGADevice,
    on_chip: set[str],
    elem_bytes: dict[int, int],
    budget: Resources,
    arr_bytes: dict[str, int] | None = None,
) -> LoopEstimate | None:
    u, v, p = pt.unroll, pt.jam, pt.partition
    ops = [
        o
        for o in lp.body.ops
        if o.index not in lp.body.induction and o.klass not in dddg.FREE_CLASSES
    ]
    uses: dict[str, int] = {}
    bank_acc: dict[str, int] = {}
    beats: dict[tuple[str, str], int] = {}
    stream_bytes = 0.0
    axi_elems = lambda b: max(dev.axi_port_bytes // max(b, 1), 1)
    for o in ops:
        c = _copies(lp, o, u, v)
        uses[o.klass] = uses.get(o.klass, 0) + c
        if o.mem_id < 0:
            continue
        b = elem_bytes.get(o.mem_id, 4)
        if o.array in on_chip:
            bank_acc[o.array] = bank_acc.get(o.array, 0) + _per_bank(lp, o, b, u, v, p)
            continue
        cin, cout = _contiguous(lp, o, b, v)
        inner, outer = lp.strides.get(o.mem_id, (None, None))
        cu = 1 if inner == 0 else u
        cv = 1 if outer == 0 else v
        n = (
            cv * math.ceil(cu / axi_elems(b))
            if cin
            else (cu * math.ceil(cv / axi_elems(b)) if cout else cu * cv)
        )
        key = (o.array, o.klass)
        beats[key] = beats.get(key, 0) + n
        per = b if (cin or cout or inner == 0) else max(b, dev.dram_min_transfer_bytes)
        n_acc = lp.access_work.get(o.mem_id, 0.0)
        if inner == 0:
            n_acc /= lp.trip
        if outer == 0 and v > 1:
            n_acc /= v
        stream_bytes += n_acc * per
    port_mii = max(
        [math.ceil(a / dev.bram_ports) for a in bank_acc.values()] + list(beats.values()) + [1]
    )
    rec_mii = dddg.recurrence_mii(_static(lp, dev), u)
    dsp_mii = _dsp_mii(uses, dev, budget.dsp) if pt.pipeline else 1
    ii = max(rec_mii, port_mii, dsp_mii)
    depth = _depth(lp, dev, u, v, p, on_chip, beats)
    groups = math.ceil(lp.entries / v)
    n_iter = math.ceil(lp.trip / u)
    if pt.pipeline:
        if lp.perfect:
            cycles = (groups * n_iter - 1) * ii + depth
        else:
            cycles = groups * ((n_iter - 1) * ii + depth)
        share = ii
    else:
        cycles = groups * n_iter * max(depth, port_mii)
        share = 1
    res = Resources()
    for k, n in uses.items():
        c = dev.op.get(k, dev.op["call"])
        inst = math.ceil(n / share)
        res = res + Resources(inst * c.dsp, 0, inst * c.lut, inst * c.ff)
    res = res + Resources(
        0,
        0,
        dev.loop_lut * 2 + dev.bank_mux_lut * p * len(bank_acc),
        dev.loop_ff * 2 + 32 * depth * (u * v if pt.pipeline else 1),
    )
    res = res + _partition_extra(lp, p, dev, on_chip, arr_bytes or {})
    if not res.fits(budget):
        return None
    hz = dev.clock_mhz * 1e6
    compute_ms = cycles / hz * 1e3
    stream_ms = stream_bytes / (dev.dram_bandwidth_gbps * 1e9) * 1e3
    if stream_ms > compute_ms:
        bound = "bandwidth"
    elif not pt.pipeline:
        bound = "latency"
    else:
        # ties go to the first in priority order: recurrence, memory ports, DSP
        bound = (
            next(
                name
                for name, m in (
                    ("recurrence", rec_mii),
                    ("memory ports", port_mii),
                    ("DSP", dsp_mii),
                )
                if m == ii
            )
            if ii > 1
            else "throughput"
        )
    return LoopEstimate(
        lp.info.id,
        lp.info.line,
        pt,
        lp.trip,
        lp.entries,
        ii,
        rec_mii,
        port_mii,
        dsp_mii,
        depth,
        float(cycles),
        stream_bytes,
        stream_ms,
        compute_ms,
        max(compute_ms, stream_ms),
        bound,
        res,
        tuple(s.replace("<ii>", str(ii)) for s in pt.pragmas(lp.info.line)),
        0,
    )


def _per_bank(lp: _Loop, o: dddg.Op, b: int, u: int, v: int, p: int) -> int:
    """Accesses to the busiest of ``p`` cyclic banks by the copies of access ``o``. The U
    copies along the inner loop, ``s`` elements apart, fall in p / gcd(p, s) distinct banks
    (``a[4 * i]`` by 32 banks: 8); the V jammed copies are taken to spread (the enclosing
    loop's index is another dimension of the array, partitioned on its own)."""
    inner, outer = lp.strides.get(o.mem_id, (None, None))
    cu = 1 if inner == 0 else u
    cv = 1 if outer == 0 else v
    c = cu * cv
    du = cu
    if inner is not None and inner != 0 and cu > 1:
        step = abs(inner) // b if abs(inner) % b == 0 else 1
        du = min(cu, p // math.gcd(p, step))
    return math.ceil(c / max(min(p, du * cv), 1))


def _partition_extra(
    lp: _Loop, p: int, dev: FPGADevice, on_chip: set[str], arr_bytes: dict[str, int]
) -> Resources:
    """BRAM36 and LUT RAM that partitioning the loop's on-chip arrays in ``p`` banks adds to
    their unpartitioned storage (which the kernel's base budget already holds)."""
    out = Resources()
    if p <= 1:
        return out
    for a in sorted({o.array for o in lp.body.mem_ops if o.array in on_chip}):
        if a not in arr_bytes:
            continue
        b1, l1 = _bram(dev, arr_bytes[a], 1)
        bp, lp_ = _bram(dev, arr_bytes[a], p)
        out = out + Resources(0, max(bp - b1, 0), max(lp_ - l1, 0), 0)
    return out


def _dsp_mii(uses: dict[str, int], dev: FPGADevice, dsp_budget: float) -> int:
    """Resource MII of the DSPs: the smallest II whose shared instances fit the budget."""

    def need(ii: int) -> int:
        return sum(math.ceil(n / ii) * dev.op.get(k, dev.op["call"]).dsp for k, n in uses.items())

    lo, hi = 1, max(max(uses.values(), default=1), 1)
    if need(hi) > dsp_budget:
        return hi  # even one instance of each does not fit: the point will be rejected
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if need(mid) > dsp_budget else (lo, mid)
    return lo


def _static(lp: _Loop, dev: FPGADevice):
    return dddg.static_graph(lp.body, lp.deps, dev.latency)


def _depth(lp, dev, u, v, p, on_chip, beats) -> int:
    g = dddg.build_dddg(lp.body, u, lp.deps, dev.latency)
    cap = {}
    for o in lp.body.mem_ops:
        key = f"{o.array}:{o.klass if o.array not in on_chip else 'ram'}"
        if o.array in on_chip:
            cap[key] = max(dev.bram_ports * p // max(v, 1), 1)
        else:
            cap[key] = max(1, 1)
    res_of = lambda a: (
        f"{a['op'].array}:{a['klass'] if a['op'].array not in on_chip else 'ram'}"
        if a["op"].mem_id >= 0
        else None
    )
    return dddg.schedule(g, cap, res_of)[1]


def explore_loop(
    lp: _Loop,
    dev: FPGADevice,
    on_chip: set[str],
    elem_bytes: dict[int, int],
    budget: Resources,
    max_unroll: int = MAX_UNROLL,
    arr_bytes: dict[str, int] | None = None,
) -> list[LoopEstimate]:
    """Every design point of the loop that fits ``budget``, fastest first. A loop that stores
    to an array it also loads unrolls at most by the traced window's length: a dependence at
    a longer distance would be invisible."""
    out = []
    jams = _pow2(lp.jam_max, max_unroll) if lp.jam_ok else [1]
    stored = {o.array for o in lp.body.mem_ops if o.klass == "store"}
    loaded = {o.array for o in lp.body.mem_ops if o.klass == "load"}
    u_cap = max_unroll
    if stored & loaded:
        u_cap = min(u_cap, max(lp.window_len - 1, 1))
    n = 0
    for pipe in (True, False):
        for u in _pow2(lp.trip, u_cap):
            for v in jams:
                if u * v > max_unroll * 2:
                    continue
                for p in _pow2(u * v, 64):
                    n += 1
                    est = _evaluate(
                        lp, DesignPoint(pipe, u, v, p), dev, on_chip, elem_bytes, budget, arr_bytes
                    )
                    if est is not None:
                        out.append(est)
    # points within 1% of each other are equally fast: prefer the smaller design
    out.sort(
        key=lambda e: (
            math.floor(math.log(max(e.time_ms, 1e-12)) / math.log(1.01)),
            e.resources.share(budget),
            e.point.unroll * e.point.jam,
        )
    )
    return [_with_count(e, n) for e in out]


def _with_count(e: LoopEstimate, n: int) -> LoopEstimate:
    from dataclasses import replace

    return replace(e, points_explored=n)


# ---- kernel ---------------------------------------------------------------------------------

_GLOBAL = re.compile(r"^@([\w.$-]+) = .*?(?:global|constant) ((?:\[\d+ x )+)(\w+)\]")


_DECL = re.compile(r"\b([A-Za-z_]\w*)\s*((?:\[[^\]\[;{}]+\]\s*)+)(?=[;=,)])")


def _size_expr(text: str, sizes: dict[str, int]) -> int | None:
    """An array dimension of the source (``NI``, ``M + 16``, ``4 * N``) at `sizes`, or None
    when it names something else or is not integer arithmetic."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None

    def ev(n: ast.AST) -> int:
        if isinstance(n, ast.Constant) and isinstance(n.value, int):
            return n.value
        if isinstance(n, ast.Name) and n.id in sizes:
            return sizes[n.id]
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            a, b = ev(n.left), ev(n.right)
            if isinstance(n.op, ast.Add):
                return a + b
            if isinstance(n.op, ast.Sub):
                return a - b
            if isinstance(n.op, ast.Mult):
                return a * b
            return a // b  # C integer division
        raise ValueError(text)

    try:
        return ev(tree)
    except (ValueError, ZeroDivisionError):
        return None


def _declared_dims(source_text: str) -> dict[str, list[str]]:
    """Dimension expressions of the arrays the source declares (``float A[NI][NJ + 1];``)."""
    out: dict[str, list[str]] = {}
    for m in _DECL.finditer(source_text):
        out.setdefault(m.group(1), re.findall(r"\[([^\]]+)\]", m.group(2)))
    return out


def _array_bytes(
    ir_text: str, tsz: dict[str, int], wsz: dict[str, int], source_text: str = ""
) -> dict[str, int]:
    """Bytes of every global array at the work size. The dimensions come from the source's
    declaration evaluated at the work sizes when it evaluates, at the trace sizes, to the IR's
    dimensions; otherwise each IR dimension equal to a traced size is scaled to its work
    value (ambiguous when two macros share a trace value)."""
    declared = _declared_dims(source_text)
    out = {}
    for line in ir_text.split("\n"):
        m = _GLOBAL.match(line)
        if not m:
            continue
        dims = [int(x) for x in re.findall(r"\[(\d+) x ", m.group(2))]
        exprs = declared.get(m.group(1).split(".")[0], [])
        traced = [_size_expr(e, tsz) for e in exprs]
        if exprs and traced == dims:
            work = [_size_expr(e, {**tsz, **wsz}) for e in exprs]
            scaled = math.prod(work) if all(w is not None and w > 0 for w in work) else 0
        else:
            scaled = 1
            for d in dims:
                macro = next((k for k, v in tsz.items() if v == d), None)
                scaled *= wsz.get(macro, d) if macro else d
        try:
            out[m.group(1)] = scaled * type_bytes(m.group(3))
        except InstrumentError:  # an element type we do not size: fall back to the trace
            pass
    return out


def _bram(dev: FPGADevice, nbytes: int, p: int) -> tuple[int, int]:
    """(BRAM36, LUT) of an array of nbytes split in p banks."""
    bank = math.ceil(nbytes / p)
    if bank <= dev.lutram_max_bytes:
        return 0, p * math.ceil(bank * 8 / 64)
    return p * math.ceil(bank / dev.bram36_bytes), 0


def estimate_region(
    trace: Trace,
    region: int,
    dev: FPGADevice,
    sizes: SizeModel,
    tsz: dict[str, int],
    wsz: dict[str, int],
) -> KernelEstimate:
    h = trace.header
    info = h.region(region)
    rows = np.flatnonzero((trace.launches["region"] == region) & (trace.launches["recorded"] == 1))
    if not len(rows):
        raise FPGAEstimateError(f"kernel {info.name}: no launch was recorded (did it run?)")
    launches_trace = int((trace.launches["region"] == region).sum())
    launches = max(round(_trip(sizes.launches.get(region), wsz)), 1)
    launch_ratio = launches / max(launches_trace, 1)
    counts = _block_work_counts(trace, region, sizes, tsz, wsz, launch_ratio)
    mod = parse_module(h.ir_text)
    mem_by_label = dddg.mem_by_label(h, region)
    loops = [lp for lp in h.loops if lp.region == region]
    inner = [lp for lp in loops if not any(c.parent == lp.id for c in loops)]
    warnings: list[str] = _call_warnings(h, region, info.name)
    analysed = [
        _analyze_loop(
            trace,
            region,
            lp,
            mod.functions[lp.function],
            mem_by_label,
            counts,
            sizes,
            tsz,
            wsz,
            int(rows[0]),
            launch_ratio,
        )
        for lp in inner
    ]
    # arrays: sizes, placement
    sizes_b = _array_bytes(h.ir_text, tsz, wsz, h.source_text)
    mems = [m for m in h.mem if m.region == region]
    names = sorted({m.base.split("[")[0] for m in mems})
    elem = {m.id: m.bytes for m in mems}
    arr_bytes = {
        a: sizes_b.get(
            a,
            _touched(
                trace,
                int(rows[0]),
                [m.id for m in mems if m.base.split("[")[0] == a],
                launch_ratio,
                counts,
                mems,
            ),
        )
        for a in names
    }
    usable = dev.usable()
    on_chip: set[str] = set()
    used = 0
    for a in sorted(names, key=lambda x: arr_bytes[x]):
        need = _bram(dev, arr_bytes[a], 1)[0]
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
    loop_budget = Resources(
        usable.dsp, usable.bram36 - base.bram36, usable.lut - base.lut, usable.ff - base.ff
    )
    choices = [
        explore_loop(lp, dev, on_chip, elem, loop_budget, arr_bytes=arr_bytes) for lp in analysed
    ]
    chosen, fits = _combine(choices, loop_budget, analysed)
    # partition BRAM of on-chip arrays
    part = {a: 1 for a in on_chip}
    for lp, est in zip(analysed, chosen):
        for o in lp.body.mem_ops:
            if o.array in on_chip and est is not None:
                part[o.array] = max(part[o.array], est.point.partition)
    bram = sum(_bram(dev, arr_bytes[a], part[a])[0] for a in on_chip)
    lutram = sum(_bram(dev, arr_bytes[a], part[a])[1] for a in on_chip)
    res = Resources(0, bram + dev.axi_port_bram36 * len(streamed), base.lut + lutram, base.ff)
    for lp, est in zip(analysed, chosen):
        if est is not None:  # the partition storage is counted above, once per array
            extra = _partition_extra(lp, est.point.partition, dev, on_chip, arr_bytes)
            r = est.resources
            res = res + Resources(r.dsp, r.bram36 - extra.bram36, r.lut - extra.lut, r.ff)
    if not res.fits(usable):
        fits = False
        warnings.append(f"{info.name}: no explored design fits the {dev.name} budget")
    inner_blocks = {b for lp in inner for b in lp.blocks}
    other = 0.0
    for b in h.blocks:
        if b.region == region and b.id not in inner_blocks and counts.get(b.id, 0.0) > 0:
            other += counts[b.id] * _block_cycles(
                mod.functions[b.function], b.label, dev, mem_by_label
            )
    transfer = (
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
    hz = dev.clock_mhz * 1e6
    transfer_ms = transfer / (dev.dram_bandwidth_gbps * 1e9) * 1e3
    loop_ms = sum(e.time_ms for e in chosen if e is not None)
    total = loop_ms + other / hz * 1e3 + transfer_ms
    arrays = tuple(
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
    loops_out = tuple(e for e in chosen if e is not None)
    bound = max(loops_out, key=lambda e: e.time_ms).bound if loops_out else "latency"
    if transfer_ms > loop_ms:
        bound = "transfers"
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
    )


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


def _touched(trace, launch, ids, launch_ratio, counts, mems) -> int:
    ev = np.asarray(trace.launch_events(launch))
    tags = ev >> np.uint64(48)
    sel = np.isin(tags, np.array(ids, dtype=np.uint64))
    n = len(np.unique(ev[sel] & np.uint64((1 << 48) - 1)))
    trace_acc = sum(float(trace.bb_counts[:, m.block].sum()) for m in mems if m.id in ids)
    work_acc = sum(counts.get(m.block, 0.0) for m in mems if m.id in ids)
    elem = max((m.bytes for m in mems if m.id in ids), default=4)
    return int(n * elem * max(work_acc / trace_acc if trace_acc else 1.0, 1.0))


def _block_cycles(fn, label: str, dev: FPGADevice, mem_by_label) -> int:
    body = dddg.loop_body(fn, [label], mem_by_label)
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
    (``pipeline.prepare``); the trace lives while the context is open."""
    from .pipeline import RunOptions, prepare

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
    from dataclasses import replace

    dev = load_fpga_device(device)
    with traced_source(Path(source), work or {}, trace_sizes or {}, functions, timeout_s) as t:
        t0 = time.perf_counter()
        rep = estimate_trace(t.trace, dev, t.sizes, t.trace_sizes, t.work_sizes)
        secs = {**t.seconds, "analysis": time.perf_counter() - t0}
    return replace(rep, seconds=secs)


__all__ = [
    "OP_CLASSES",
    "ArrayPlacement",
    "DesignPoint",
    "FPGADevice",
    "FPGADeviceError",
    "FPGAEstimateError",
    "FPGAReport",
    "KernelEstimate",
    "LoopEstimate",
    "OperatorCost",
    "Resources",
    "estimate_region",
    "estimate_source",
    "estimate_trace",
    "explore_loop",
    "list_fpga_devices",
    "load_fpga_device",
    "parse_fpga_device",
    "traced_source",
]
