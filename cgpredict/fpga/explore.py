"""Design points of one innermost loop (SPEC §5): pipelining, unroll U, unroll-and-jam V,
cyclic partition P; II = max(recurrence MII, port MII, DSP MII); cycles
(ceil(T/U) - 1) * II + depth per entry; streamed bytes bounded by the bandwidth."""

from __future__ import annotations

import math
from dataclasses import replace

from ..instrument import loopbody
from . import dddg
from .arrays import bram_cost
from .device import FPGADevice, Resources
from .loops import MAX_UNROLL, AnalyzedLoop
from .results import DesignPoint, LoopEstimate

# ---- design points ------------------------------------------------------------------------


def powers_of_two(limit: float, cap: int) -> list[int]:
    out, k = [], 1
    while k <= min(limit, cap):
        out.append(k)
        k *= 2
    return out or [1]


def _copies(lp: AnalyzedLoop, o: loopbody.Op, u: int, v: int) -> int:
    inner, outer = lp.strides.get(o.mem_id, (None, None)) if o.mem_id >= 0 else (None, None)
    cu = 1 if (o.mem_id >= 0 and inner == 0) else u
    cv = 1 if (o.mem_id >= 0 and outer == 0) else v
    return cu * cv


def _contiguous(lp: AnalyzedLoop, o: loopbody.Op, bytes_: int, v: int) -> tuple[bool, bool]:
    inner, outer = lp.strides.get(o.mem_id, (None, None))
    return (
        inner is not None and abs(inner) == bytes_,
        v > 1 and outer is not None and abs(outer) == bytes_,
    )


def _evaluate(
    lp: AnalyzedLoop,
    pt: DesignPoint,
    dev: FPGADevice,
    on_chip: set[str],
    elem_bytes: dict[int, int],
    budget: Resources,
    arr_bytes: dict[str, int] | None = None,
) -> LoopEstimate | None:
    """One design point of loop ``lp``: its II (recurrence, memory ports, DSP), depth,
    cycles, resources and bound; None when it does not fit ``budget``."""
    u, v, p = pt.unroll, pt.jam, pt.partition
    ops = [
        o
        for o in lp.body.ops
        if o.index not in lp.body.induction and o.klass not in loopbody.FREE_CLASSES
    ]
    uses, bank_acc, beats, stream_bytes = _accesses(lp, ops, dev, on_chip, elem_bytes, u, v, p)
    port_mii = max(
        [math.ceil(a / dev.bram_ports) for a in bank_acc.values()] + list(beats.values()) + [1]
    )
    rec_mii = _rec_mii(lp, dev, u)
    dsp_mii = dsp_resource_mii(uses, dev, budget.dsp) if pt.pipeline else 1
    ii = max(rec_mii, port_mii, dsp_mii)
    depth = scheduled_depth(lp, dev, u, v, p, on_chip, beats)
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
    res = _loop_resources(lp, pt, dev, uses, share, len(bank_acc), depth, on_chip, arr_bytes)
    if not res.fits(budget):
        return None
    hz = dev.clock_mhz * 1e6
    compute_ms = cycles / hz * 1e3
    stream_ms = stream_bytes / (dev.dram_bandwidth_gbps * 1e9) * 1e3
    bound = _bound(stream_ms, compute_ms, pt.pipeline, ii, rec_mii, port_mii, dsp_mii)
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


def _accesses(lp: AnalyzedLoop, ops, dev: FPGADevice, on_chip: set[str],
              elem_bytes: dict[int, int], u: int, v: int, p: int):
    """(operator uses by class and copies, accesses per busiest bank of each on-chip array,
    AXI beats per streamed array and class, bytes streamed) of the unrolled body."""
    uses: dict[str, dict[int, int]] = {}
    bank_acc: dict[str, int] = {}
    beats: dict[tuple[str, str], int] = {}
    stream_bytes = 0.0
    axi_elems = lambda b: max(dev.axi_port_bytes // max(b, 1), 1)
    for o in ops:
        c = _copies(lp, o, u, v)
        by = uses.setdefault(o.klass, {})
        by[c] = by.get(c, 0) + 1
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
    return uses, bank_acc, beats, stream_bytes


def _loop_resources(lp: AnalyzedLoop, pt: DesignPoint, dev: FPGADevice, uses, share: int,
                    banked: int, depth: int, on_chip: set[str],
                    arr_bytes: dict[str, int] | None) -> Resources:
    """The operators (shared every ``share`` cycles), the loop control, bank multiplexers,
    pipeline registers and partitioning of one design point."""
    u, v, p = pt.unroll, pt.jam, pt.partition
    res = Resources()
    for k, inst in instances(uses, share).items():
        c = dev.op.get(k, dev.op["call"])
        res = res + Resources(inst * c.dsp, 0, inst * c.lut, inst * c.ff)
    res = res + Resources(
        0,
        0,
        dev.loop_lut * 2 + dev.bank_mux_lut * p * banked,
        dev.loop_ff * 2 + 32 * depth * (u * v if pt.pipeline else 1),
    )
    res = res + partition_extra(lp, p, dev, on_chip, arr_bytes or {})
    return res


def _bound(stream_ms: float, compute_ms: float, pipelined: bool, ii: int, rec_mii: int,
           port_mii: int, dsp_mii: int) -> str:
    """What bounds the loop: bandwidth, latency (not pipelined), what sets its II, or
    throughput (II 1)."""
    if stream_ms > compute_ms:
        bound = "bandwidth"
    elif not pipelined:
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
    return bound


def _per_bank(lp: AnalyzedLoop, o: loopbody.Op, b: int, u: int, v: int, p: int) -> int:
    """Accesses to the busiest of ``p`` cyclic banks by the copies of access ``o``. The U
    copies along the inner loop, ``s`` elements apart, fall in p / gcd(p, s) distinct banks
    (``a[4 * i]`` by 32 banks: 8); the V jammed copies are taken to spread (the enclosing
    loop's index is another dimension of the array, partitioned on its own). An index the
    trace shows no stride for (``hist[data[i]]``: data-dependent) has no static bank: its
    copies may all meet in one bank, however many there are."""
    inner, outer = lp.strides.get(o.mem_id, (None, None))
    cu = 1 if inner == 0 else u
    cv = 1 if outer == 0 else v
    c = cu * cv
    if inner is None:
        return c
    du = cu
    if inner is not None and inner != 0 and cu > 1:
        step = abs(inner) // b if abs(inner) % b == 0 else 1
        du = min(cu, p // math.gcd(p, step))
    return math.ceil(c / max(min(p, du * cv), 1))


def partition_extra(
    lp: AnalyzedLoop, p: int, dev: FPGADevice, on_chip: set[str], arr_bytes: dict[str, int]
) -> Resources:
    """BRAM36 and LUT RAM that partitioning the loop's on-chip arrays in ``p`` banks adds to
    their unpartitioned storage (which the kernel's base budget already holds)."""
    out = Resources()
    if p <= 1:
        return out
    for a in sorted({o.array for o in lp.body.mem_ops if o.array in on_chip}):
        if a not in arr_bytes:
            continue
        b1, l1 = bram_cost(dev, arr_bytes[a], 1)
        bp, lp_ = bram_cost(dev, arr_bytes[a], p)
        out = out + Resources(0, max(bp - b1, 0), max(lp_ - l1, 0), 0)
    return out


def instances(uses: dict[str, dict[int, int]], ii: int) -> dict[str, int]:
    """Operator instances per class of a loop pipelined at ``ii`` (HLS binding).

    ``uses[class]`` maps a copy count c to the number n of distinct operations of the body
    with c copies each (c = the unroll factor, times the jam factor; 1 for an access that
    unrolling does not replicate). An instance is shared only by operations the modulo
    schedule puts in different cycles mod II. The c copies of one operation are identical
    and independent, so the schedule starts them in the same cycle, and the levels of an
    adder tree are one adder latency apart (a multiple of the II when the adder's recurrence
    sets it): each copy needs its own instance. Only the n distinct operations can take
    turns over the II: ``c * ceil(n / II)`` instances. (An explicit ``#pragma HLS
    allocation`` could force more sharing; the explored designs use pipeline, unroll and
    partition only, as the published accelerators do.)"""
    return {
        k: sum(c * math.ceil(n / max(ii, 1)) for c, n in by.items()) for k, by in uses.items()
    }


def dsp_resource_mii(uses: dict[str, dict[int, int]], dev: FPGADevice, dsp_budget: float) -> int:
    """Resource MII of the DSPs: the smallest II whose instances (``instances``) fit the
    budget; when even the largest useful II does not fit, that II (the point is rejected)."""

    def need(ii: int) -> int:
        return sum(
            n * dev.op.get(k, dev.op["call"]).dsp for k, n in instances(uses, ii).items()
        )

    lo = 1
    hi = max([n for by in uses.values() for n in by.values()] + [1])
    if need(hi) > dsp_budget:
        return hi  # the copies alone do not fit: the point will be rejected
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if need(mid) > dsp_budget else (lo, mid)
    return lo


def _static(lp: AnalyzedLoop, dev: FPGADevice):
    return dddg.static_graph(lp.body, lp.deps, dev.latency)


_DEPTH_MEMO: dict = {}
_REC_MEMO: dict = {}


def _rec_mii(lp, dev, u: int) -> int:
    """recurrence_mii of the loop's static graph at unroll U (memoised per loop and U)."""
    key = (lp.body, lp.deps, dev.source_path, dev.name, u)
    if key not in _REC_MEMO:
        if len(_REC_MEMO) > 20000:
            _REC_MEMO.clear()
        _REC_MEMO[key] = dddg.recurrence_mii(_static(lp, dev), u)
    return _REC_MEMO[key]


def scheduled_depth(lp, dev, u, v, p, on_chip, beats) -> int:
    """Scheduled length of U iterations under the memory ports (memoised: the exploration
    asks for the same (U, ports) many times)."""
    ports = max(dev.bram_ports * p // max(v, 1), 1)
    key = (lp.body, lp.deps, dev.source_path, dev.name, u, frozenset(on_chip), ports)
    if key not in _DEPTH_MEMO:
        if len(_DEPTH_MEMO) > 20000:
            _DEPTH_MEMO.clear()
        _DEPTH_MEMO[key] = _depth_uncached(lp, dev, u, v, p, on_chip)
    return _DEPTH_MEMO[key]


def _depth_uncached(lp, dev, u, v, p, on_chip) -> int:
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
    lp: AnalyzedLoop,
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
    jams = powers_of_two(lp.jam_max, max_unroll) if lp.jam_ok else [1]
    stored = {o.array for o in lp.body.mem_ops if o.klass == "store"}
    loaded = {o.array for o in lp.body.mem_ops if o.klass == "load"}
    u_cap = max_unroll
    if stored & loaded:
        u_cap = min(u_cap, max(lp.window_len - 1, 1))
    n = 0
    for pipe in (True, False):
        for u in powers_of_two(lp.trip, u_cap):
            for v in jams:
                if u * v > max_unroll * 2:
                    continue
                for p in powers_of_two(u * v, 64):
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

    return replace(e, points_explored=n)


