"""The tiled design of a kernel's loop nest (SPEC §5, tiling with on-chip buffers).

The design the published HLS accelerators use (loop tiling with BRAM buffers, Zhong et al.):

* **Tiles.** Every loop L of the nest (source order kept) is split into a tile loop of
  ``n_L = ceil(N_L / T_L)`` iterations and a point loop of ``T_L``.
* **Buffers.** Every array gets one BRAM buffer holding the part of it a tile touches: per
  array dimension (a distinct address coefficient of the affine access, ``affine.py``) the tile
  extent of the loop moving it, plus the halo of constant offsets (``A[i+1]``, stencils);
  loops with equal coefficients share a dimension (``T_a + T_b - 1``).
* **Reuse.** A buffer is refilled when a tile loop that moves it advances, so it is filled
  ``prod_{L <= last(X)} n_L`` times, ``last(X)`` the innermost tile loop moving array X (eq.
  T1); written arrays are written back as often, read-write ones both.
* **Bursts.** A fill moves rows along the array's contiguous dimension (coefficient = element
  size) as AXI bursts; each row is rounded up to ``dram_min_transfer_bytes``. Rows that span
  a whole array row continue each other (one sequential run); otherwise every row starts a
  run at a new address, which opens a DDR row. The fills move through ``axi_ports`` ports of
  ``axi_port_bytes`` per cycle (read and write channels apart) and the DDR at its published
  efficiency per direction, reads and write-backs that overlap sharing it (turnaround), plus
  a fixed row-miss cost per run (eq. T2, ``transfer.py``): a 2048 x 8 column strip read and
  written back in 32-byte bursts gets 63% of the DDR peak, a row strip 87%.
* **Compute.** The innermost point loop is pipelined and unrolled by U. A reduction carried
  only through an add (``s += a * b``) is summed by an adder tree (tree-height reduction, as in
  Lin-Analyzer's DDDG), so its recurrence MII is that of one iteration; any other recurrence
  grows with U (eq. T3). Buffers read by the unrolled copies are partitioned cyclically along
  the dimension the inner loop moves, by the smallest P whose 2-port banks keep the port MII
  within max(recurrence MII, DSP MII). Each of the U copies has its own operator cores
  (``explore.instances``), so U is capped by the DSPs: a float multiply-add lane is fmul 3 +
  fadd 2 DSP48E1, and the ZC702's usable 176 hold 32 lanes.
  Per tile: ``(prod_outer T * ceil(T_in/U) - 1) * II + depth`` when the nest is perfect
  (HLS flattens it), else ``prod_outer T * ((ceil(T_in/U) - 1) * II + depth)``; times the
  number of tiles (eq. T4).
* **Overlap.** With double buffering (two copies of every buffer filled more than once) the
  fills of the next tile overlap the compute of this one: ``max(compute, transfer) + first
  fill``; without it they add: ``compute + transfer`` (eq. T5).

Every point must fit the device's usable DSP / BRAM36 / LUT / FF; the exploration counts the
points it evaluated, skips tile sizes whose buffers cannot fit even unpartitioned, and keeps
the Pareto front (time, resource share, DRAM transfer time) of the rest. Of the points within
1% of the fastest it reports the one with the shortest transfers (long bursts, little data: the
most slack under the transfer estimate), then the smaller one.
"""

from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import dataclass, replace

from ..instrument import loopbody
from . import dddg
from .affine import AffineAccess, AffineNest
from .arrays import bram_cost
from .device import FPGADevice, Resources
from .explore import dsp_resource_mii, instances, powers_of_two, scheduled_depth
from .hls import tiled_pragmas, tiled_structure
from .loops import MAX_UNROLL, AnalyzedLoop
from .results import Buffer, TiledEstimate
from .transfer import Flow, burst_efficiency, transfer_cycles

ADD_CLASSES = frozenset({"fadd", "dadd", "iadd"})
MAX_TILE = 4096  # largest tile size explored per loop


@dataclass(frozen=True)
class _Core:
    """What one unroll factor U costs in the pipelined inner loop, independent of tiles."""

    unroll: int
    uses: dict
    rec_mii: int
    dsp_mii: int
    depth: int


def tree_reduction(lp: AnalyzedLoop) -> bool:
    """Are all recurrences of the loop register reductions through an add (``s += ...``), so
    that an unrolled body can sum its copies in a tree and add once to the accumulator?"""
    if any(d.distance >= 1 for d in lp.deps):
        return False
    for o in lp.body.ops:
        if o.klass == "phi" and o.carried >= 0 and o.index not in lp.body.induction:
            if lp.body.ops[o.carried].klass not in ADD_CLASSES:
                return False
    return True


def _core(
    lp: AnalyzedLoop, dev: FPGADevice, u: int, inner_coef: dict[int, int], dsp: float
) -> _Core:
    uses: dict[str, dict[int, int]] = {}
    for o in lp.body.ops:
        if o.index in lp.body.induction or o.klass in loopbody.FREE_CLASSES:
            continue
        copies = 1 if (o.mem_id >= 0 and inner_coef.get(o.mem_id, 1) == 0) else u
        by = uses.setdefault(o.klass, {})
        by[copies] = by.get(copies, 0) + 1
    g = dddg.static_graph(lp.body, lp.deps, dev.latency)
    tree = tree_reduction(lp)
    rec = dddg.recurrence_mii(g, 1 if tree else u)  # eq. T3
    arrays = {o.array for o in lp.body.mem_ops}
    if tree and u > 1:  # one iteration, then log2(U) levels of the adder tree
        add = max((dev.op[o.klass].latency_cycles for o in lp.body.ops
                   if o.klass in ADD_CLASSES), default=0)
        depth = scheduled_depth(lp, dev, 1, 1, 1, arrays, {}) + math.ceil(math.log2(u)) * add
    else:
        depth = scheduled_depth(lp, dev, u, 1, u, arrays, {})
    return _Core(u, uses, rec, dsp_resource_mii(uses, dev, dsp), depth)


@dataclass(frozen=True)
class _Shape:
    """What tiling needs of one array, independent of the tile sizes."""

    name: str
    elem: int
    dims: tuple[tuple[int, tuple[int, ...]], ...]  # (|coefficient|, loops), outermost first
    halo: tuple[int, ...]  # extra extent per dimension from constant offsets
    last: int  # innermost loop moving it (-1: none)
    row_dim: int  # the contiguous dimension (-1: none)
    inner_dim: int  # 1-based dimension the innermost loop moves (0: none)
    read: bool
    written: bool
    spans: tuple[bool, ...] = ()  # per dimension: its loops' range covers the array's extent


def _spans(dims, halo, trace_trips) -> tuple[bool, ...]:
    """Per dimension, whether the loops moving it cover the array's whole extent there (at the
    trace size: the next outer stride / this stride, in steps), so that a tile spanning the
    loops' range spans an array row and its rows continue each other. Unknown: False."""
    if trace_trips is None:
        return tuple(False for _ in dims)
    out = []
    for d, ((c, ks), h) in enumerate(zip(dims, halo)):
        reach = sum(trace_trips[k] for k in ks) - (len(ks) - 1) + h
        out.append(d > 0 and reach * c >= dims[d - 1][0])
    return tuple(out)


def _shape(name: str, accs: list[AffineAccess], inner: int, trace_trips=None) -> _Shape:
    elem = max(a.bytes for a in accs)
    n = len(accs[0].coef)
    coefs = sorted({abs(c) for a in accs for c in a.coef if c}, reverse=True)
    dims = tuple(
        (c, tuple(k for k in range(n) if any(abs(a.coef[k]) == c for a in accs)))
        for c in coefs
    )
    # halo: constant offsets between the accesses (stencils), each offset split over the
    # dimensions in mixed radix (nearest multiple of each dimension's step)
    ref = min(a.base for a in accs)
    per_dim: list[list[int]] = [[] for _ in dims]
    for a in accs:
        off = (a.base - ref) // max(elem, 1)
        for d, (c, _) in enumerate(dims):
            step = max(c // elem, 1)
            q = round(off / step)
            per_dim[d].append(q)
            off -= q * step
    halo = tuple(max(q) - min(q) for q in per_dim)
    moving = [k for k in range(n) if any(a.coef[k] for a in accs)]
    return _Shape(
        name,
        elem,
        dims,
        halo,
        max(moving) if moving else -1,
        next((d for d, (c, _) in enumerate(dims) if c == elem), -1),
        next((d + 1 for d, (c, ks) in enumerate(dims) if inner in ks), 0),
        any(a.kind == "load" for a in accs),
        any(a.kind == "store" for a in accs),
        _spans(dims, halo, trace_trips),
    )


def _shapes(nest: AffineNest, trace_trips=None) -> list[_Shape]:
    by_array: dict[str, list[AffineAccess]] = {}
    for a in nest.accesses:
        by_array.setdefault(a.array, []).append(a)
    inner = len(nest.loops) - 1
    return [_shape(name, by_array[name], inner, trace_trips) for name in sorted(by_array)]


@dataclass(frozen=True)
class _Geometry:
    """One array's tile at given tile sizes: extents, fills and how its fills reach DRAM."""

    shape: _Shape
    ext: tuple[int, ...]
    bytes: int
    fills: float
    per_fill: float  # DRAM bytes of one fill (read or write), burst rounding included
    row: int
    runs: int  # runs of one fill that start at a non-sequential address (DDR row misses)
    run: int  # contiguous bytes of one run

    def flow(self, rounds: float) -> Flow:
        """The DRAM traffic of ``rounds`` fills (and write-backs) of this buffer (eq. T2)."""
        sh, b, r = self.shape, rounds * self.per_fill, rounds * self.runs
        return Flow(
            read_bytes=b if sh.read else 0.0,
            write_bytes=b if sh.written else 0.0,
            read_runs=r if sh.read else 0.0,
            write_runs=r if sh.written else 0.0,
        )


def _runs(sh: _Shape, ext: tuple[int, ...], row: int, counts) -> tuple[int, int]:
    """Runs per fill and bytes per run: while the tile spans a whole array row (one tile along
    loops that cover the array's extent), the next row continues the run (eq. T2b)."""
    if sh.row_dim < 0:
        return math.prod(ext), sh.elem
    run, k = row, sh.row_dim
    while k > 0 and sh.spans and sh.spans[k] and all(counts[j] == 1 for j in sh.dims[k][1]):
        run, k = run * ext[k - 1], k - 1
    inner = math.prod(ext[sh.row_dim + 1:])  # dimensions finer than the row (none normally)
    return math.prod(ext[:k]) * inner, run


def _geometry(sh: _Shape, tiles, counts, min_transfer: int) -> _Geometry:
    ext = tuple(
        sum(tiles[k] for k in ks) - (len(ks) - 1) + h for (c, ks), h in zip(sh.dims, sh.halo)
    ) or (1,)
    nbytes = math.prod(ext) * sh.elem
    fills = float(math.prod(counts[: sh.last + 1])) if sh.last >= 0 else 1.0  # eq. T1
    row = ext[sh.row_dim] * sh.elem if sh.row_dim >= 0 else sh.elem
    per_fill = nbytes / row * math.ceil(row / min_transfer) * min_transfer
    runs, run = _runs(sh, ext, row, counts) if sh.dims else (1, nbytes)
    return _Geometry(sh, ext, nbytes, fills, per_fill, row, runs, run)


def _buffer(g: _Geometry, dev: FPGADevice, p: int, double: bool) -> Buffer:
    sh = g.shape
    b36, lut = bram_cost(dev, g.bytes, p)
    dbl = double and g.fills > 1
    k = 2 if dbl else 1
    way = "mixed" if (sh.read and sh.written and double) else ("read" if sh.read else "write")
    run = g.run if g.runs > 1 else g.per_fill  # a sequential fill opens one row per fill
    return Buffer(
        sh.name, g.ext, g.bytes, p, sh.inner_dim if p > 1 else 0, dbl, k * b36, k * lut,
        g.fills, g.fills * g.per_fill * (int(sh.read) + int(sh.written)), int(g.row),
        sh.read, sh.written, int(g.run), burst_efficiency(run, dev, way),
    )


def _buffers(
    nest: AffineNest,
    tiles: tuple[int, ...],
    counts: tuple[int, ...],
    dev: FPGADevice,
    partition: dict[str, int],
    double: bool,
    trace_trips: tuple[float, ...] | None = None,
) -> list[Buffer]:
    """The buffers of every array of the nest at these tile sizes (eq. T1, bursts)."""
    return [
        _buffer(_geometry(sh, tiles, counts, dev.dram_min_transfer_bytes), dev,
                partition.get(sh.name, 1), double)
        for sh in _shapes(nest, trace_trips)
    ]


def _partitions(
    nest: AffineNest, lp: AnalyzedLoop, u: int, target: int, dev: FPGADevice
) -> tuple[dict[str, int], int]:
    """Smallest cyclic partition per array keeping its port MII within ``target`` (at most U
    banks), and the resulting port MII."""
    inner = len(nest.loops) - 1
    body_ids = {o.mem_id for o in lp.body.mem_ops}
    acc: dict[str, list[int]] = {}
    for a in nest.accesses:
        if a.mem_id in body_ids:
            acc.setdefault(a.array, []).append(u if a.coef[inner] else 1)
    out, worst = {}, 1
    for name, copies in acc.items():
        p = 1
        while True:
            mii = math.ceil(sum(math.ceil(c / min(p, c)) for c in copies) / dev.bram_ports)
            if mii <= target or p >= u:
                break
            p *= 2
        out[name] = p
        worst = max(worst, mii)
    return out, worst


def _candidates(trip: float) -> list[int]:
    t = max(int(round(trip)), 1)
    out = powers_of_two(t, MAX_TILE)
    if t <= MAX_TILE and t not in out:
        out.append(t)
    return out


def _unroll_costs(nest: AffineNest, lp: AnalyzedLoop, dev: FPGADevice, cores: dict):
    """Per unroll factor: the arrays' partitions and port II (``_partitions``), and the II
    with the operators' resources shared at it."""
    parts = {}
    for u, core in cores.items():
        parts[u] = _partitions(nest, lp, u, max(core.rec_mii, core.dsp_mii), dev)
    ops_res = {}
    for u, core in cores.items():
        ii = max(core.rec_mii, core.dsp_mii, parts[u][1])
        r = Resources()
        for k, m in instances(core.uses, ii).items():
            c = dev.op.get(k, dev.op["call"])
            r = r + Resources(m * c.dsp, 0, m * c.lut, m * c.ff)
        ops_res[u] = (ii, r)
    return parts, ops_res


def _buffer_cost(geo, part: dict, double: bool, dev: FPGADevice,
                 bram_of: dict[tuple[int, int], tuple[int, int]]) -> tuple[int, int, int]:
    """(BRAM36, LUTRAM LUTs, banks) of the tile buffers, each partitioned as ``part`` says
    and doubled when double-buffered and filled more than once (``bram_of``: a memo)."""
    bram = lut = nbanks = 0
    for g in geo:
        p = part.get(g.shape.name, 1)
        key = (g.bytes, p)
        if key not in bram_of:
            bram_of[key] = bram_cost(dev, g.bytes, p)
        b36, lt = bram_of[key]
        k = 2 if (double and g.fills > 1) else 1
        bram += k * b36
        lut += k * lt
        nbanks += p if p > 1 else 0
    return bram, lut, nbanks


def _chosen(kept: list[tuple[float, float, tuple]], nest: AffineNest, lp: AnalyzedLoop,
            trips: tuple[float, ...], lines: tuple[int, ...], dev: FPGADevice, parts: dict,
            names: dict[int, str] | None, trace_trips: tuple[float, ...] | None,
            evaluated: int, skipped: int) -> TiledEstimate:
    """The design chosen among the ``kept`` points (the Pareto front's fastest, ties within
    1% going to the shortest transfers, then the smaller), with its buffers, bound and
    pragmas."""
    hz = dev.clock_mhz * 1e6
    front = _pareto(kept)
    # ties within 1% of the fastest: the one with the shortest transfers (long bursts, little
    # DRAM data: the most slack under the transfer estimate), then the smaller one
    fastest = front[0][0]
    best = min((k for k in front if k[0] <= fastest * 1.01), key=lambda k: (k[2][9], k[1]))
    ms, _, (tiles, counts, u, double, core, ii, port, compute, traffic, transfer, res,
            limit) = best
    bufs = _buffers(nest, tiles, counts, dev, parts[u][0], double, trace_trips)
    if transfer >= compute:  # overlapped or not, the fills take longer than the compute
        bound = "transfers"
    else:
        bound = next(
            (n for n, m in (("recurrence", core.rec_mii), ("memory ports", port),
                            ("DSP", core.dsp_mii)) if m == ii and ii > 1),
            "throughput",
        )
    est = TiledEstimate(
        lines, trips, tiles, u, double, tuple(bufs), ii, core.rec_mii, port, core.dsp_mii,
        core.depth, float(compute), float(traffic), float(transfer),
        traffic / transfer if transfer else float(dev.axi_ports * dev.axi_port_bytes),
        compute / hz * 1e3, transfer / hz * 1e3, ms, bound, res, evaluated, skipped,
        len(front), (), (), transfer_limit=limit,
    )
    est = replace(est, reduction_tree=tree_reduction(lp) and u > 1 and core.rec_mii > 1)
    return replace(
        est, pragmas=tiled_pragmas(est, dev), structure=tiled_structure(est, names or {})
    )



def explore_tiled(
    nest: AffineNest,
    lp: AnalyzedLoop,
    trips: tuple[float, ...],
    lines: tuple[int, ...],
    dev: FPGADevice,
    budget: Resources,
    names: dict[int, str] | None = None,
    trace_trips: tuple[float, ...] | None = None,
) -> tuple[TiledEstimate | None, str]:
    """The fastest tiled design that fits ``budget`` (ties within 1% of the fastest: the
    shortest transfers, then the smaller one), or None with the reason. ``trace_trips``: the
    loops' trips at the trace size, to tell tiles spanning whole array rows (long bursts)."""
    hz = dev.clock_mhz * 1e6
    inner = len(trips) - 1
    inner_coef = {a.mem_id: a.coef[inner] for a in nest.accesses}
    cores = {
        u: _core(lp, dev, u, inner_coef, budget.dsp)
        for u in powers_of_two(trips[inner], MAX_UNROLL)
    }
    axi = Resources(0, dev.axi_port_bram36 * dev.axi_ports, dev.axi_port_lut * dev.axi_ports,
                    dev.axi_port_ff * dev.axi_ports)
    cands = [_candidates(t) for t in trips]
    shapes = _shapes(nest, trace_trips)
    mt = dev.dram_min_transfer_bytes
    loop_lut, loop_ff = dev.loop_lut * 2 * len(trips), dev.loop_ff * 2 * len(trips)
    parts, ops_res = _unroll_costs(nest, lp, dev, cores)
    bram_of: dict[tuple[int, int], tuple[int, int]] = {}
    cap = (budget.dsp, budget.bram36, budget.lut, budget.ff)
    cap1 = tuple(max(b, 1) for b in cap)
    evaluated = skipped = 0
    kept: list[tuple[float, float, tuple]] = []
    for tiles in itertools.product(*cands):
        counts = tuple(math.ceil(t / s) for t, s in zip(trips, tiles))
        geo = [_geometry(sh, tiles, counts, mt) for sh in shapes]
        if sum(bram_cost(dev, g.bytes, 1)[0] for g in geo) + axi.bram36 > budget.bram36:
            skipped += 2 * sum(1 for u in cores if u <= tiles[inner])
            continue
        flow = sum((g.flow(g.fills) for g in geo), Flow())
        one = sum((g.flow(1) for g in geo), Flow())
        traffic = flow.bytes
        moves = {d: transfer_cycles(flow, dev, d) for d in (False, True)}  # eq. T2
        first = transfer_cycles(one, dev, True)[0]
        outer = math.prod(tiles[:inner])
        n_tiles = math.prod(counts)
        for u, core in cores.items():
            if u > tiles[inner]:
                continue
            part, port = parts[u]
            ii, ops = ops_res[u]
            it = math.ceil(tiles[inner] / u)
            if lp.perfect:
                per_tile = (outer * it - 1) * ii + core.depth
            else:
                per_tile = outer * ((it - 1) * ii + core.depth)
            compute = n_tiles * per_tile  # eq. T4
            for double in (False, True):
                evaluated += 1
                transfer, limit = moves[double]
                bram, lut, nbanks = _buffer_cost(geo, part, double, dev, bram_of)
                cycles = max(compute, transfer) + first if double else compute + transfer
                need = (
                    ops.dsp,
                    ops.bram36 + axi.bram36 + bram,
                    ops.lut + axi.lut + lut + loop_lut + dev.bank_mux_lut * nbanks,
                    ops.ff + axi.ff + loop_ff + 32 * core.depth * u,
                )
                if any(x > b for x, b in zip(need, cap)):
                    continue
                res = Resources(*need)
                kept.append((cycles / hz * 1e3, max(x / b for x, b in zip(need, cap1)),
                             (tiles, counts, u, double, core, ii, port, compute, traffic,
                              transfer, res, limit)))
    if not kept:
        return None, (
            f"no tile size fits the {dev.name} budget "
            f"({evaluated} points evaluated, {skipped} skipped: buffers too large)"
        )
    return _chosen(kept, nest, lp, trips, lines, dev, parts, names, trace_trips, evaluated,
                   skipped), ""

def _pareto(points: list[tuple[float, float, tuple]]) -> list[tuple[float, float, tuple]]:
    """The points no other point beats in time, resource share and DRAM transfer time at once
    (the fastest first). Taken in order of time, a point is dominated when an earlier kept one
    has no more share and no longer transfers: the kept (share, transfer) pairs form a
    staircase (share up, transfer down), so the one with the largest share <= this one's holds
    the shortest transfers among them."""
    out = []
    shares: list[float] = []  # staircase, share ascending
    traffic: list[float] = []  # transfer cycles strictly descending along it
    for p in sorted(points, key=lambda x: (x[0], x[1], x[2][9])):
        s, t = p[1], p[2][9]
        k = bisect.bisect_right(shares, s)
        if k and traffic[k - 1] <= t:
            continue
        out.append(p)
        j = k
        while j < len(shares) and traffic[j] >= t:
            j += 1
        shares[k:j] = [s]
        traffic[k:j] = [t]
    return out
