"""Reductions and atomics: locations that every thread of a kernel updates (issue 25 item 3).

A C loop mapped to GPU threads may update a location that other iterations update too:

* an **atomic** site: a read-modify-write of a location that several pseudo-threads touch,
  at a data-dependent address (``hist[data[i] & 255]++``): the trace shows a load and a
  store of the same access that the inter-thread dependence check (warps._dependence) finds
  shared. A port does it with one atomic per update (RED at the L2);
* a **reduction**: an accumulator that the mapped loop carries from one iteration to the
  next only through an associative operation (``s += x[i] * y[i]``, kept in a register by
  the compiler), or a read-modify-write of one single location. A port reduces within each
  warp by shuffles and adds one partial per warp with an atomic (or, the advisor's fix, one
  per block through shared memory).

A plain load and store of such a location would race; the prediction is that of the port.
Its costs (AtomicCounts, per thread) go to the atomic bound of models/bounds.py: the L2
applies the updates of one address one after another (``atomic_address_cycles`` each, eq.
(A1)) and each L2 slice its sector passes one after another (l2_slices.py, eq. (A2): the
busiest slice's share comes from each site's traced addresses), the request sectors ride the L2
store path, the locations are read from DRAM once and written back once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from .frontend.tracefile import Trace
from .instrument import loopbody
from .l2_slices import SliceMap, SliceStats, slice_stats
from .parallelism import traced_loop_body
from .profile import AtomicCounts, SharedMemoryCounts

__all__ = [
    "AtomicSite",
    "PortCosts",
    "PortShape",
    "REDUCE_LEVELS",
    "ReductionCode",
    "as_atomics",
    "atomic_counts",
    "atomic_notes",
    "drop_covered",
    "find_sites",
    "port_costs",
    "reduction_code",
    "site_sids",
    "with_shared",
]

#: where partial results are combined before the global atomics: each warp (the plain
#: port) or each block (the advisor's block reduction and shared-memory privatisation)
REDUCE_LEVELS = ("warp", "block")
#: operator classes that combine an accumulator associatively (loopbody.op_class)
_ASSOCIATIVE = frozenset({"iadd", "fadd", "dadd", "imul", "fmul", "dmul", "logic"})


#: an access whose requests all go to one slice (a device without slice figures)
_ONE_SLICE = SliceStats(requests_per_warp=1.0, busiest_share=1.0, locations_share=1.0)


@dataclass(frozen=True)
class AtomicSite:
    """One location (or set of locations) updated by every thread, as traced."""

    kind: str  # "atomic" (data-dependent locations) | "reduction" (one accumulator)
    text: str  # the access as written (``hist[data[i]&(BINS-1)]``, ``s``)
    location: str  # file:line
    sids: tuple[int, ...] = ()  # its static loads and stores (none: a register accumulator)
    addresses: int = 1  # distinct locations updated at the trace size
    hot_share: float = 1.0  # the busiest location's share of the updates
    sectors_per_warp: float = 1.0  # L2 request sectors of one warp instruction's updates
    lanes_per_address: float = 1.0  # mean greatest lanes of one warp instruction on one location
    store_block: int = -1  # the block whose executions count the updates (-1: one per thread)
    bytes: int = 4  # bytes of one location
    is_float: bool = False  # a floating-point add (the L2 applies it slower on one address)
    # L2 slices (l2_slices.py): sector passes per warp instruction (lanes on one address in
    # passes of their own), the busiest slice's share of them and of the distinct locations
    slices: SliceStats = _ONE_SLICE


def _event_sids(wt) -> np.ndarray:
    """The static instruction of every event of warp trace ``wt``."""
    counts = np.diff(np.append(wt.inst_start, len(wt.addr)))
    return np.repeat(wt.inst_sid, counts)


def _address_stats(wt, sid: int, sector: int, smap: SliceMap | None = None
                   ) -> tuple[int, float, float, float, SliceStats]:
    """(distinct addresses, busiest address's share, sectors per warp instruction, greatest
    lanes on one address per warp instruction, L2 slice figures: one slice without ``smap``)
    of static instruction ``sid``'s events."""
    counts = np.diff(np.append(wt.inst_start, len(wt.addr)))
    inst = np.repeat(np.arange(len(wt.inst_start)), counts)
    mask = _event_sids(wt) == sid
    addr, inst = wt.addr[mask].astype(np.uint64), inst[mask]
    if not len(addr):
        return 0, 0.0, 0.0, 0.0, _ONE_SLICE
    _, per_addr = np.unique(addr, return_counts=True)
    n_insts = len(np.unique(inst))
    pairs = np.stack([inst, (addr // np.uint64(sector)).astype(np.int64)])
    sectors = np.unique(pairs, axis=1).shape[1]  # distinct (instruction, sector) pairs
    order = np.lexsort((addr, inst))
    a, i = addr[order], inst[order]
    new_run = np.concatenate([[True], (a[1:] != a[:-1]) | (i[1:] != i[:-1])])
    starts = np.flatnonzero(new_run)
    runs = np.diff(np.append(starts, len(a)))
    run_inst = i[starts]
    first = np.concatenate([[True], run_inst[1:] != run_inst[:-1]])
    most = np.maximum.reduceat(runs, np.flatnonzero(first))
    slices = slice_stats(addr, inst, smap or _WHOLE_L2)
    return (len(per_addr), float(per_addr.max() / len(addr)), sectors / n_insts,
            float(most.mean()), slices)


_WHOLE_L2 = SliceMap(slices=1, interleave_bytes=1)  # a device without slice figures
_FLOAT_TYPES = frozenset({"half", "float", "double"})


def _rmw_sites(trace: Trace, wt, sector: int, smap: SliceMap | None) -> list[AtomicSite]:
    """Atomic sites: a shared store whose access text a shared load of the same block
    repeats (the read-modify-write of one location)."""
    dep = wt.dependence
    if dep is None or dep.forwarded:
        return []
    h = trace.header
    out = []
    for st in dep.store_ids:
        m = h.mem[st]
        loads = [s for s in dep.other_ids
                 if h.mem[s].base == m.base and h.mem[s].block == m.block]
        if not loads:
            continue
        n, hot, sectors, lanes, slices = _address_stats(wt, st, sector, smap)
        out.append(AtomicSite(
            kind="atomic" if n > 1 else "reduction", text=m.base,
            location=f"{m.file}:{m.line}", sids=(*loads, st), addresses=max(n, 1),
            hot_share=hot, sectors_per_warp=sectors, lanes_per_address=lanes,
            store_block=m.block, bytes=m.bytes, is_float=m.type in _FLOAT_TYPES,
            slices=slices,
        ))
    return out


def _is_reduction(body: loopbody.LoopBody, phi: int, kept: frozenset[int] = frozenset()
                  ) -> bool:
    """True when header phi ``phi`` is only combined with each iteration's value by one
    associative operation chain ending in its latch value, and nothing else reads it but
    stores of ``kept`` (static stores of one location every thread writes: the accumulator
    kept in memory too, where pointers may alias)."""
    users: dict[int, list[int]] = {}
    for o in body.ops:
        for k in o.operands:
            users.setdefault(k, []).append(o.index)
    end = body.ops[phi].carried
    cur, cls = phi, None
    for _ in range(8):
        used = users.get(cur, [])
        if len(used) != 1:
            return False
        nxt = body.ops[used[0]]
        if nxt.klass not in _ASSOCIATIVE or cls not in (None, nxt.klass):
            return False
        cur, cls = nxt.index, nxt.klass
        if cur == end:
            return all(body.ops[u].klass == "store" and body.ops[u].mem_id in kept
                       for u in users.get(end, []))
    return False


def loop_reductions(trace: Trace, region: int, depth: int) -> int | None:
    """How many accumulators the region's loops at ``depth`` reduce (_is_reduction); None
    when one of them stores, carries any other value (a recurrence) or holds a deeper loop:
    its iterations could not be split between the lanes of a warp (a warp per row)."""
    h = trace.header
    mine = [lp for lp in h.loops if lp.region == region and lp.depth >= depth]
    if any(lp.depth > depth for lp in mine):
        return None
    mem = loopbody.mem_by_label(h, region)
    n = 0
    for lp in mine:
        body = traced_loop_body(h, lp, mem)
        if body is None or any(o.klass == "store" for o in body.ops):
            return None
        for o in body.ops:
            if o.klass == "phi" and o.carried >= 0 and o.index not in body.induction:
                if not _is_reduction(body, o.index):
                    return None
                n += 1
    return n


def _one_location_stores(trace: Trace, wt, sector: int) -> frozenset[int]:
    """Stores of the launch's inter-thread dependence that write one location only."""
    dep = wt.dependence
    if dep is None or dep.forwarded:
        return frozenset()
    return frozenset(s for s in dep.store_ids if _address_stats(wt, s, sector)[0] == 1)


def _register_sites(trace: Trace, region: int, grid: int, kept: frozenset[int] = frozenset()
                    ) -> list[AtomicSite]:
    """Reductions kept in a register: accumulators carried by a mapped loop (depth <= grid),
    also stored every iteration only by ``kept`` stores (see _is_reduction)."""
    h = trace.header
    out = []
    mem = loopbody.mem_by_label(h, region)
    for lp in h.loops:
        body = traced_loop_body(h, lp, mem) if lp.region == region and lp.depth <= grid else None
        if body is None:
            continue
        for o in body.ops:
            if (o.klass == "phi" and o.carried >= 0 and o.index not in body.induction
                    and _is_reduction(body, o.index, kept)):
                stores = tuple(sorted(
                    u.mem_id for u in body.ops if u.klass == "store" and u.mem_id in kept
                    and o.carried in u.operands))
                text, outside = ((h.mem[stores[0]].base, ()) if stores
                                 else _accumulator_accesses(trace, region, lp.blocks))
                out.append(AtomicSite(
                    kind="reduction", text=text, sids=stores or outside,
                    location=f"{h.source_name}:{lp.line}", bytes=_type_bytes(o.type),
                    is_float=o.type in _FLOAT_TYPES,
                ))
    return out


def _type_bytes(ty: str) -> int:
    """Bytes of an IR scalar type (``double``, ``i64``: 8; others 4)."""
    return 8 if ty in ("double", "i64") else 4


def _accumulator_accesses(trace: Trace, region: int, loop_blocks
                          ) -> tuple[str, tuple[int, ...]]:
    """The access that stores the accumulator after the loop (its only store outside the
    loop's blocks) and the static loads and that store of it outside the loop (the C loads
    ``s`` before the mapped loop and stores it after, once a launch; the port has neither:
    its atomics update ``s``), else ('an accumulator', ())."""
    h = trace.header
    inside = set(loop_blocks)
    outs = {m.base for m in h.mem
            if m.region == region and m.kind == "store" and m.block not in inside}
    if len(outs) != 1:
        return "an accumulator", ()
    name = outs.pop()
    sids = tuple(m.id for m in h.mem
                 if m.region == region and m.base == name and m.block not in inside)
    return name, sids


def find_sites(trace: Trace, region: int, grid: int, wt, sector_bytes: int,
               smap: SliceMap | None = None) -> tuple[AtomicSite, ...]:
    """The region's locations updated by every thread: atomic sites and reductions (their
    requests mapped to L2 slices by ``smap``; None: a device without slice figures)."""
    rmw = _rmw_sites(trace, wt, sector_bytes, smap)
    taken = site_sids(tuple(rmw))
    kept = _one_location_stores(trace, wt, sector_bytes) - taken
    return tuple(rmw + _register_sites(trace, region, grid, kept))


def site_sids(sites: tuple[AtomicSite, ...]) -> frozenset[int]:
    """Static loads and stores that the sites' atomics replace (out of the memory model)."""
    return frozenset(s for site in sites for s in site.sids)


@dataclass(frozen=True)
class PortShape:
    """What the port's atomics depend on besides the sites: block size, resident blocks of
    the whole GPU, blocks of the launch, where partials are combined (REDUCE_LEVELS)."""

    threads_per_block: int
    resident_blocks: int
    blocks: int
    warp_size: int
    sector_bytes: int
    level: str = "warp"


@dataclass(frozen=True)
class ReductionCode:
    """Instructions per thread of a warp reduction's port besides its atomic (eq. (A3)),
    as the sm_90 SASS of ``validation/cuda/user/dot_reduce.cu`` runs them: log2(warp)
    shuffles (SHFL.DOWN) and as many adds; since every lane must reach the shuffles, the
    guard cannot end the thread (EXIT): it branches around the work inside a reconvergence
    region (BSSY, BSYNC) after the partial is set to zero for the lanes past the bound
    (HFMA2.MMA), and the lane test before the atomic is a LOP3 and a predicated EXIT."""

    shuffles: float  # SHFL (class other)
    adds: float  # FADD (fp32)
    reconverge: float = 3.0  # BSSY, BSYNC, the zero partial (other)
    lane_test: float = 1.0  # LOP3 of the lane index (integer)
    lane_exit: float = 1.0  # the predicated EXIT of the lanes but the first (branch)

    @property
    def total(self) -> float:
        return self.shuffles + self.adds + self.reconverge + self.lane_test + self.lane_exit


def reduction_code(warp_size: int) -> ReductionCode:
    """The warp reduction's code per thread (ReductionCode) for ``warp_size`` lanes."""
    steps = math.log2(warp_size)
    return ReductionCode(shuffles=steps, adds=steps)


def _reduction_counts(site: AtomicSite | None, shape: PortShape
                      ) -> tuple[AtomicCounts, float, float]:
    """(atomics, extra instructions, barriers) per thread of a reduction: the warp's code
    (``reduction_code``: shuffles, adds, the guard's reconvergence and the lane test, eq.
    (A3)) and one atomic per warp, or with ``block`` the warps' partials through shared
    memory (a store, a barrier, a load, the first warp's shuffles) and one atomic per block.
    ``site`` None: an int accumulator (the SASS check reads the instructions only)."""
    code = reduction_code(shape.warp_size)
    steps = code.shuffles + code.adds
    hot_float = site is not None and site.is_float
    if shape.level == "block":
        wpb = max(shape.threads_per_block / shape.warp_size, 1.0)
        per = 1.0 / shape.threads_per_block
        counts = AtomicCounts(insts=1.0 / wpb, ops=per, trans=1.0 / wpb, hot_share=1.0,
                              footprint_bytes=shape.sector_bytes, requests=per,
                              slice_share=1.0, hot_float=hot_float)
        return counts, code.total + 2 + steps / wpb, 1.0
    per = 1.0 / shape.warp_size
    return AtomicCounts(insts=1.0, ops=per, trans=1.0, hot_share=1.0,
                        footprint_bytes=shape.sector_bytes, requests=per, slice_share=1.0,
                        hot_float=hot_float), code.total, 0.0


def _atomic_counts(site: AtomicSite, shape: PortShape, updates: float
                   ) -> tuple[AtomicCounts, float]:
    """(atomics, shared accesses' conflict degree) per thread of an atomic site of
    ``updates`` per thread: one global atomic each, or with ``block`` (privatisation) one
    shared-memory atomic each and each resident block's bins merged once."""
    sectors = math.ceil(site.addresses * site.bytes / shape.sector_bytes)
    foot = float(sectors * shape.sector_bytes)
    if shape.level == "block":
        threads = max(shape.threads_per_block * shape.blocks, 1)
        merges = min(shape.blocks, shape.resident_blocks) * site.addresses / threads
        per_warp = shape.warp_size * site.bytes / shape.sector_bytes
        trans = merges * per_warp / shape.warp_size  # a merge instruction: one pass (A2)
        return AtomicCounts(insts=merges, ops=merges, trans=trans,
                            hot_share=1.0 / site.addresses, footprint_bytes=foot,
                            requests=trans, slice_share=site.slices.locations_share,
                            hot_float=site.is_float), site.lanes_per_address
    requests = updates * site.slices.requests_per_warp / shape.warp_size
    return AtomicCounts(insts=updates, ops=updates, trans=updates * site.sectors_per_warp,
                        hot_share=site.hot_share, footprint_bytes=foot, requests=requests,
                        slice_share=site.slices.busiest_share, hot_float=site.is_float), 0.0


@dataclass(frozen=True)
class PortCosts:
    """The atomics of a kernel's sites and what else their port adds, per thread."""

    atomics: AtomicCounts = AtomicCounts()
    extra_insts: float = 0.0  # shuffles and their adds, shared stores and loads
    barriers: float = 0.0
    shared: tuple[tuple[float, float], ...] = ()  # (conflict degree, accesses) per thread


def atomic_counts(sites: tuple[AtomicSite, ...], per_thread: dict[int, float],
                  shape: PortShape) -> PortCosts:
    """The port's costs per thread (``per_thread``: executions of each block id)."""
    parts, extra, bars, shared = [], 0.0, 0.0, []
    for site in sites:
        if site.kind == "reduction":
            c, x, b = _reduction_counts(site, shape)
            extra, bars = extra + x, bars + b
        else:
            updates = per_thread.get(site.store_block, 0.0)
            c, lanes = _atomic_counts(site, shape, updates)
            if lanes:
                shared.append((lanes, updates))
                extra += updates  # the shared atomic is an instruction of the thread
        parts.append(c)
    return PortCosts(atomics=_merged(parts), extra_insts=extra, barriers=bars,
                     shared=tuple(shared))


def _merged(parts: list[AtomicCounts]) -> AtomicCounts:
    """Sum of several sites' counts; the busiest address's share weighted by operations."""
    if not parts:
        return AtomicCounts()
    ops = sum(p.ops for p in parts)
    hottest = max(parts, key=lambda p: p.ops * p.hot_share)
    requests = sum(p.requests for p in parts)
    busiest = max(p.requests * p.slice_share for p in parts)  # sites' slices not known apart
    return AtomicCounts(
        insts=sum(p.insts for p in parts), ops=ops, trans=sum(p.trans for p in parts),
        hot_share=hottest.ops * hottest.hot_share / ops if ops else 0.0,
        footprint_bytes=sum(p.footprint_bytes for p in parts), requests=requests,
        slice_share=busiest / requests if requests else 0.0, hot_float=hottest.hot_float,
    )


def atomic_notes(sites: tuple[AtomicSite, ...], name: str, level: str) -> list[str]:
    """The report's line per site: what is updated by every thread and how it is predicted."""
    out = []
    for s in sites:
        if s.kind == "reduction":
            how = ("warp shuffles and one atomicAdd per warp" if level == "warp" else
                   "a block reduction (shuffles, shared memory) and one atomicAdd per block")
            out.append(
                f"{name}: {s.text} ({s.location}) is a reduction over the threads (every "
                f"thread adds to it): predicted as a port with {how}, not as the racy "
                f"plain loop"
            )
        else:
            how = ("one atomicAdd at the L2 per update" if level == "warp" else
                   "shared-memory atomics on per-block bins, merged with one atomicAdd "
                   "per bin and block")
            out.append(
                f"{name}: {s.text} ({s.location}) is updated by every thread at "
                f"data-dependent locations ({s.addresses} at the trace size, the busiest "
                f"taking {s.hot_share:.1%} of the updates): predicted with {how}, not as "
                f"a racy load and store"
            )
    return out


def port_costs(sites: tuple[AtomicSite, ...], per_thread: dict[int, float],
               shape: PortShape | None, blocks: int) -> PortCosts:
    """atomic_counts of one launch of ``blocks`` blocks (nothing without sites)."""
    if not sites or shape is None:
        return PortCosts()
    return atomic_counts(sites, per_thread, replace(shape, blocks=blocks))


def as_atomics(reports, sites: tuple[AtomicSite, ...]) -> list:
    """The memory instruction reports with the sites' loads and stores shown as atomics
    (no pattern of their own, no L2 hit rate: the L2 applies them)."""
    sids = site_sids(sites)
    return [replace(r, pattern="atomic", l2_hit_rate=0.0, l2_trans_per_warp=0.0)
            if r.id in sids else r for r in reports]


def with_shared(shared: SharedMemoryCounts, port: PortCosts) -> SharedMemoryCounts:
    """``shared`` with the privatised bins' shared atomics added (conflict degree: the most
    lanes of a warp instruction on one bin)."""
    if not port.shared:
        return shared
    extra = sum(x * n for x, n in port.shared)
    return replace(
        shared,
        insts_by_conflict=shared.insts_by_conflict + port.shared,
        wavefronts=shared.wavefronts + extra if shared.wavefronts else 0.0,
        bytes_per_block=shared.bytes_per_block + int(port.atomics.footprint_bytes),
    )


def drop_covered(warnings: list[str], sites: tuple[AtomicSite, ...]) -> list[str]:
    """The mapping warnings less the inter-thread dependence line when atomic sites (which
    the report names in their own line) account for the shared locations."""
    if not any(s.sids for s in sites):
        return warnings
    return [w for w in warnings if "locations written by one pseudo-thread" not in w]
