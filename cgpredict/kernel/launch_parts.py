"""What the launches of a region share within one analysis: parts of a launch's model that
read only a few of its per-thread counts.

A region launched from a host loop (GRAMSCHMIDT's gs_k3: 512 launches in each of a dozen
analyses of ``advise``) has launches whose per-thread counts differ only in the host's own
blocks (executed once a launch, so 1/threads a thread); the memory profile (SPEC §2.3) reads
the counts of the blocks holding memory instructions, the critical path (models/bounds.py)
those of the thread bodies' blocks. Each is a pure function of those counts and of the
memory analysis, so it is kept by the tuple of the counts it reads and found once: the same
arithmetic on the same values as before, in the same order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from ..block import Block
from ..block_schedule import thread_trips
from ..compute import branch_insts, integer_insts, kernel_entry_insts
from ..devices import GPUDevice
from ..frontend.tracefile_format import TRIP_DTYPE
from ..hoisted_loads import hoisted_arrays
from ..lane_scale import hurst_exponents, lane_spacing, scale_factors
from ..lane_trips import (
    LaneRecords,
    LaneSpan,
    lane_records,
    launch_trip_factors,
    per_warp,
    warp_span,
    warp_trip_factors,
)
from ..memory.carryover import carried_share, carry_facts
from ..memory.residency import Resident, region_arrays, resident_arrays
from ..memory.shared import array_name
from ..memory.transactions import MemoryAnalysis
from ..occupancy import occupancy
from ..parallelism import ThreadBodies
from ..scaling import SizeModel
from ..sm_share import launch_sm_share
from ..smsp_schedule import warp_share, warp_work
from ..warp_spread import spread_work
from .memory_profile import memory_profile

__all__ = ["LaunchRow", "RegionTrips", "body_counts", "kept_part", "lane_counts", "launch_rows",
           "mem_counts", "memory_part", "sm_share_of", "thread_weights"]

T = TypeVar("T")


@dataclass(frozen=True)
class LaunchRow:
    """One trace launch of a region: its row, the arrays an earlier launch left in an L2
    (residency.resident_arrays) and its block and loop counts as bytes (the key of its
    model, less the data left in the L2)."""

    row: int
    resident: tuple[Resident, ...]
    counts_key: bytes
    # (array, share of its sectors found in the L2) of a partly left array, eq. (CO1)
    carried: tuple[tuple[str, float], ...] = ()


def launch_rows(trace, region: int, sizes: SizeModel, wsz: dict[str, int], capacity: float,
                kept: dict, tsz: dict[str, int] | None = None, carry_bytes: float = 0.0
                ) -> tuple[LaunchRow, ...]:
    """The LaunchRow of every launch of ``region`` in ``trace``, the work sizes ``wsz`` and an
    L2 keeping ``capacity`` bytes of whole arrays and ``carry_bytes`` of a sweep (eq. (CO1);
    0 or no trace sizes ``tsz``: none): a function of the trace, so kept in ``kept`` (the
    trace's AnalysisMemo.rows) for its next analyses (GRAMSCHMIDT: 1536 launches in each)."""
    carry = carry_bytes if tsz is not None else 0.0
    key = (region, tuple(sorted(wsz.items())), capacity, carry)
    got = kept.get(key)
    if got is None:
        touched, loaded = region_arrays(trace), region_arrays(trace, "load")
        bytes_of: dict[str, float | None] = {}
        rows = np.flatnonzero(trace.launches["region"] == region)
        res = {int(row): resident_arrays(trace, int(row), sizes, wsz, capacity, touched, loaded,
                                         bytes_of) for row in rows}  # fmt: skip
        carried = _carried(trace, rows, res, sizes, tsz, wsz, carry, touched, loaded, bytes_of,
                           kept)
        got = kept[key] = tuple(
            LaunchRow(
                row=int(row),
                resident=res[int(row)],
                counts_key=trace.bb_counts[row].tobytes() + trace.loop_iters[row].tobytes(),
                carried=carried.get(int(row), ()),
            )
            for row in rows
        )
    return got


def _carried(trace, rows, res, sizes: SizeModel, tsz, wsz, carry: float, touched, loaded,
             bytes_of: dict, kept: dict) -> dict[int, tuple[tuple[str, float], ...]]:
    """Eq. (CO1) for each launch ``rows`` of a region: the arrays it loads that are not
    found whole (``res``) and the share of them an earlier launch left in ``carry`` bytes.
    The trace's CarryFacts (every recorded launch's sectors) are found once for all its
    regions and kept in ``kept``."""
    if carry <= 0 or not len(rows):
        return {}
    mine = loaded.get(int(trace.launches["region"][rows[0]]), frozenset())
    if not _may_carry(trace, rows, res, touched, mine):
        return {}  # no launch loads an array an earlier launch touched: every share is 0
    fkey = ("carry_facts", tuple(sorted(tsz.items())), tuple(sorted(wsz.items())))
    facts = kept.get(fkey)
    if facts is None:
        facts = kept[fkey] = carry_facts(trace, sizes, tsz, wsz, touched)
    size = {a: bytes_of.get(a) if a in bytes_of else sizes.array_bytes(a, wsz)
            for (_, a) in facts.traced}
    feet: dict[int, dict[str, float]] = {}
    return {int(row): carried_share(trace, int(row), facts, carry, touched,
                                    mine - {r.array for r in res[int(row)]}, size, feet)
            for row in rows}


def _may_carry(trace, rows, res, touched, mine: frozenset[str]) -> bool:
    """Whether any launch ``rows`` loads an array not found whole (``res``) that an earlier
    launch touched: else eq. (CO1) gives every launch nothing (``carried_share`` finds no
    earlier toucher), and the trace's CarryFacts (every recorded launch's sectors) are not
    needed (GEMM, SYR2K: one launch)."""
    regions = trace.launches["region"]
    first_of = {int(r): int(i) for r, i in zip(*np.unique(regions, return_index=True))}
    first = {a: min((i for r, i in first_of.items() if a in touched.get(r, ())),
                    default=len(regions)) for a in mine}  # fmt: skip
    return any(int(row) > first[a] for row in rows
               for a in mine - {x.array for x in res[int(row)]})


def mem_counts(header, mem: MemoryAnalysis, per_thread: Mapping[int, float]) -> tuple:
    """The per-thread counts the memory profile reads: those of the block of each static
    memory instruction of ``mem`` (None for a block the launch does not count)."""
    h = header.mem
    return tuple(per_thread.get(h[s.sid].block) for s in mem.instrs)


def body_counts(bodies: ThreadBodies, per_thread: Mapping[int, float]) -> tuple:
    """The per-thread counts the critical path reads: those of every thread body's blocks
    (None for a block the launch does not count)."""
    return tuple(per_thread.get(b) for _, blocks in bodies.bodies for b in blocks)


def kept_part(kept: dict, part: str, mem: MemoryAnalysis, counts: tuple,
              find: Callable[[], T]) -> T:
    """``find()``, kept in ``kept`` by (``part``, the memory analysis, ``counts``): the
    memory analysis by identity (a launch with data left in the L2 has its own,
    residency.warm_start), held with the value so that its id is not reused. The value
    is shared by the launches that ask: it must not be changed."""
    key = (part, id(mem), counts)
    got = kept.get(key)
    if got is None or got[0] is not mem:
        got = kept[key] = (mem, find())
    return got[1]


def memory_part(ctx, per_thread: Mapping[int, float], mem: MemoryAnalysis, skip: set[int]
                ) -> tuple[tuple, tuple, object, int, float]:
    """What the profile of a launch of ``ctx`` (launch.LaunchContext) takes from its memory
    instructions' counts (SPEC §2.3): the reports, patterns and stores (memory_profile; lists
    as tuples, since kept_part shares them), the mean bytes an access and the entry code."""
    h = ctx.trace.header
    reports, patterns, stores = memory_profile(
        ctx.trace, mem, per_thread, ctx.region, skip, ctx.restores, dict(ctx.scale),
        ctx._mem_kept,
    )
    weights = [
        (per_thread.get(h.mem[s.sid].block, 0.0), h.mem[s.sid].bytes)
        for s in mem.instrs
        if s.sid not in skip
    ]
    executed = sum(w for w, _ in weights)
    bytes_per_access = round(sum(w * b for w, b in weights) / executed) if executed else 4
    arrays = {array_name(h.mem[s.sid].base) for s in mem.instrs}
    arrays |= hoisted_arrays(ctx.machine_shape.entry.hoisted_loads)  # eq. (12L)
    entry = kernel_entry_insts(ctx.grid, len(arrays - {""}))
    return tuple(reports), tuple(patterns), stores, bytes_per_access, entry


def lane_counts(ctx, row: int, counts) -> tuple[object, float]:
    """(compute counts, folded instructions) of a launch of ``ctx`` (launch.LaunchContext)
    with a warp running its slowest lane's trips (lane_trips, eqs. (D1)-(D3)): the counts
    of ``counts`` (launch.LaunchCounts, the mean thread's) where no loop below the mapped
    ones differs between the lanes of a work-size warp. The factors depend on the block
    shape, so they are applied here, not in the counts the block shapes share."""
    factors = lane_factors(ctx, row)
    if not factors:
        return counts.comp, counts.folded
    ops = ctx.trace.header.blocks
    warp = per_warp(counts.per_thread, ctx.trace.header.loops, factors)
    folded = ctx.bodies.unrolled_savings(
        warp, lambda b: integer_insts(ops[b].ops), ctx.unroll, ctx.kept,
        lambda b: branch_insts(ops[b].ops))
    return ctx.instructions(warp), folded


def lane_factors(ctx, row: int) -> dict[int, float]:
    """F_L of eq. (D1) for launch ``row`` of ``ctx``: its own trip records, else those of
    the region's recorded launches; none for a thread split or register-blocked by a fix.
    They depend on the records and the span alone, so they are kept for the trace's next
    analyses (``ctx.lanes_kept``, the AnalysisMemo's ``lanes``): GRAMSCHMIDT's advise asked
    5,641 times for 513 distinct ones. A launch's own are found for every launch of the
    region whose are not kept yet, in one pass (launch_trip_factors)."""
    inner = ctx.d2 if ctx.grid == 2 else ctx.d1
    if not inner or ctx.thread_scale != 1 or ctx.rows != 1:
        return {}
    trips = _region_trips(ctx)
    if not len(trips.by_row):
        return {}
    spans = _own_spans(ctx, trips)
    if row in spans:
        key = ("launch", ctx.region, ctx.grid, row, *spans[row])
        if key not in ctx.lanes_kept:
            _own_factors(ctx, trips, spans)
        window, (span, traced) = ctx.lanes_kept[key], spans[row]
    else:
        span, traced = _row_span(ctx, row)
        key = ("pooled", ctx.region, ctx.grid, span, traced)
        window = ctx.lanes_kept.get(key)
        if window is None:
            window = ctx.lanes_kept[key] = warp_trip_factors(trips.by_row, ctx.grid, span,
                                                             traced)
    if not window:
        return window
    spacing = lane_spacing(_traced_xy(ctx, row), ctx.extents(row))
    return scale_factors(window, _hurst(ctx, trips), span, spacing)  # (D4)


def _hurst(ctx, trips: RegionTrips) -> dict[int, float]:
    """H_L of eq. (D4) on the region's records, pooled over its launches; found once."""
    key = ("hurst", ctx.region, ctx.grid)
    got = ctx.lanes_kept.get(key)
    if got is None:
        got = ctx.lanes_kept[key] = hurst_exponents(trips.records)
    return got


@dataclass(frozen=True)
class RegionTrips:
    """The trip records of a region's launches (``by_row``: sorted by launch row, stable, so
    each loop's entries keep their order), the rows that have some (``rows``) and the
    records as eq. (D1) reads them under the context's grid (``records``)."""

    by_row: np.ndarray
    rows: np.ndarray
    records: LaneRecords


def _region_trips(ctx) -> RegionTrips:
    """The RegionTrips of ``ctx``'s region and grid: a function of the trace, found once
    (``ctx.lanes_kept``)."""
    key = ("records", ctx.region, ctx.grid)
    got = ctx.lanes_kept.get(key)
    if got is None:
        trips = getattr(ctx.trace, "trips", None)
        if trips is None or not len(trips):
            trips = np.zeros(0, TRIP_DTYPE)
        t = trips[np.isin(trips["row"], np.flatnonzero(ctx.trace.launches["region"] == ctx.region))]
        t = t[np.argsort(t["row"], kind="stable")]
        got = ctx.lanes_kept[key] = RegionTrips(t, np.unique(t["row"]).astype(np.int64),
                                                lane_records(t, ctx.grid))
    return got


def _row_span(ctx, row: int) -> tuple[LaneSpan, tuple[int, int]]:
    """The window (eq. (D2)) of launch ``row`` of ``ctx`` in its block shape and its traced
    grid (X, Y): X the mean iterations an entry of the innermost mapped loop, Y (a 2-D
    grid) its entries."""
    tx, ty = _traced_xy(ctx, row)
    return warp_span(ctx.block, (tx, ty)), (round(tx), round(ty))


def _traced_xy(ctx, row: int) -> tuple[float, float]:
    """Launch ``row``'s traced grid (X, Y): X the mean iterations an entry of the innermost
    mapped loop, Y (a 2-D grid) its entries; (0, 0 or 1) without a mapped loop."""
    inner = ctx.d2 if ctx.grid == 2 else ctx.d1
    tr = ctx.trace
    key = ("traced xy", ctx.grid, tuple(inner) if inner else (), row)
    got = ctx.lanes_kept.get(key)  # the trace's alone: kept for its next analyses and
    if got is not None and got[0] is tr:  # shapes (held with the trace: its id not reused)
        return got[1]
    entries = float(tr.loop_entries[row, inner].sum()) if inner else 0.0
    tx = float(tr.loop_iters[row, inner].sum()) / entries if entries else 0.0
    xy = (tx, (entries if ctx.grid == 2 else 1.0))
    ctx.lanes_kept[key] = (tr, xy)
    return xy


def _own_spans(ctx, trips: RegionTrips) -> dict[int, tuple[LaneSpan, tuple[int, int]]]:
    """_row_span of every launch with records of its own, by row; found once per context."""
    key = ("own lane spans", ctx.region)
    got = ctx._parts_kept.get(key)
    if got is None:
        got = ctx._parts_kept[key] = {
            int(r): _row_span(ctx, int(r)) for r in trips.rows}
    return got


def _own_factors(ctx, trips: RegionTrips, spans: dict[int, tuple[LaneSpan, tuple[int, int]]]
                 ) -> None:
    """Keep in ``ctx.lanes_kept`` the factors of every launch of ``spans`` (its own records
    at its own span) not kept yet, found in one pass."""
    todo = {r: s for r, s in spans.items()
            if ("launch", ctx.region, ctx.grid, r, *s) not in ctx.lanes_kept}
    for r, f in launch_trip_factors(trips.records, todo).items():
        ctx.lanes_kept[("launch", ctx.region, ctx.grid, r, *todo[r])] = f


def sm_share_of(ctx, row: int, counts, work: tuple[float, float], blocks: int,
                shared_bytes: int) -> float:
    """The busiest SM's work over the mean SM's for launch ``row`` of ``ctx`` on the
    ``work`` grid of ``blocks`` blocks: eq. (B1) (sm_share.py) for at most one block an SM;
    with more blocks, the schedule of the warps on their sub-partitions over the equal
    warps' (smsp_schedule, eqs. (B6)-(B7); a trace coarser than the work's warps drawn by
    (B8), warp_spread.py) where loops below the mapped ones run different trips in
    different threads (the trace's trip records, (B5)'s weights), else 1."""
    dev = ctx.device
    if blocks <= dev.sm_count:
        return launch_sm_share(ctx.warps, work, ctx.block, dev.sm_count)
    by_row = _region_trips(ctx).by_row
    if not len(by_row) or ctx.thread_scale != 1 or ctx.rows != 1:
        return 1.0
    try:
        slots = occupancy(dev, ctx.block.threads, ctx.opts.registers_per_thread,
                          shared_bytes).blocks_per_sm
    except ValueError:  # the block does not fit: predicted() says so
        return 1.0
    lo, hi = np.searchsorted(by_row["row"], [row, row + 1])
    own = row if hi > lo else -1  # its own records, else the region's pooled ones
    tx, ty = _traced_xy(ctx, row)
    txy = (round(tx), round(ty))
    key = ("schedule share", ctx.region, id(ctx.trace), own, txy, tuple(work), ctx.block,
           slots, dev.sm_count)
    got = ctx._parts_kept.get(key)
    if got is None:
        u = _kept_weights(ctx, by_row[lo:hi] if own >= 0 else by_row, counts, txy, own)
        got = 1.0 if u is None else _uneven_share(u, txy, work, ctx.block, dev, slots)
        ctx._parts_kept[key] = got
    return got


def _uneven_share(u: np.ndarray, txy: tuple[int, int], work: tuple[float, float],
                  block: Block, dev: GPUDevice, slots: int) -> float:
    """The uneven schedule's share from the traced weights ``u``: eq. (B7), the warps on
    their sub-partitions, each warp its slowest lane where the trace resolves the work grid
    (a pseudo-thread for each work thread), else a stratified draw from the traced threads
    around its lanes, eq. (B8) (warp_spread.py: a coarser trace cannot tell a block's warps
    apart, and a block holds its slot until its slowest warp ends)."""
    grid = (int(work[0]), int(max(work[1], 1)))
    if txy[0] >= work[0] and txy[1] >= max(work[1], 1):
        warps = warp_work(u, txy, grid, block, dev.warp_size)
    else:  # the block's warps below the trace's lane spacing: their order statistics
        warps = spread_work(u, txy, grid, block, dev.warp_size)  # (B8)
    return warp_share(warps, dev.sm_count, slots, dev.schedulers_per_sm)  # (B7)


def _kept_weights(ctx, trips: np.ndarray, counts, txy: tuple[int, int], own: int
                  ) -> np.ndarray | None:
    """thread_weights, kept for the trace's next analyses (``ctx.lanes_kept``): u(t) reads
    the launch's counts (launch.LaunchCounts, which the block shapes share), its trip
    records and the traced grid, not the block shape (GRAMSCHMIDT's advise asked 5,429
    times for 513 distinct ones). Held with the counts and the trace so that their ids are
    not reused; the array is shared and must not be changed."""
    key = ("thread weights", id(ctx.trace), id(counts), own, txy)
    got = ctx.lanes_kept.get(key)
    if got is None or got[0] is not counts or got[1] is not ctx.trace:
        got = ctx.lanes_kept[key] = (counts, ctx.trace,
                                     thread_weights(ctx, trips, counts, txy, own))
    return got[2]


def thread_weights(ctx, trips: np.ndarray, counts, txy: tuple[int, int], own: int
                   ) -> np.ndarray | None:
    """u(t) of eq. (B5) for each traced pseudo-thread: 1 - sum_L f_L + sum_L f_L T_L(t) /
    mean T_L over the recorded loops L below the mapped ones, f_L the mean thread's share
    of its compute instructions in the blocks whose innermost recorded loop is L; None
    when every thread runs the same trips (or no thread runs any). ``trips`` are launch
    ``own``'s records (-1: the region's pooled ones)."""
    recorded, varied = _varied_trips(ctx, trips, txy, own)
    total = counts.comp.total
    if total <= 0 or not varied:
        return None
    loops = ctx.trace.header.loops
    depth: dict[int, int] = {}
    owner: dict[int, int] = {}
    for lid in recorded:
        for b in loops[lid].blocks:
            if loops[lid].depth > depth.get(b, -1):
                depth[b], owner[b] = loops[lid].depth, lid
    u, weighted = np.ones(max(txy[0], 1) * max(txy[1], 1)), False
    for lid, t in varied.items():
        part = ctx.instructions({b: n for b, n in counts.per_thread.items()
                                 if owner.get(b) == lid}).total
        f = min(max(part / total, 0.0), 1.0)
        u += f * (t / t.mean() - 1.0)
        weighted = weighted or f > 0
    return u if weighted else None


def _varied_trips(ctx, trips: np.ndarray, txy: tuple[int, int], own: int
                  ) -> tuple[set[int], dict[int, np.ndarray]]:
    """The loops below the mapped ones that ``trips`` record, and T_L(t) of eq. (B5) of
    those whose threads run different trips, in loop order: a function of the records and
    the traced grid alone, so kept for the trace's next analyses and block shapes
    (``ctx.lanes_kept``; GRAMSCHMIDT's advise asks for 5,429 launch x shape pairs)."""
    key = ("varied trips", ctx.region, ctx.grid, own, txy)
    got = ctx.lanes_kept.get(key)
    if got is None:
        loops = ctx.trace.header.loops
        recorded = {int(lid) for lid in np.unique(trips["loop"]) if loops[lid].depth > ctx.grid}
        varied = {}
        for lid in sorted(recorded):
            t = thread_trips(trips, ctx.grid, {lid}, txy)
            if t.mean() > 0 and t.min() != t.max():
                varied[lid] = t
        got = ctx.lanes_kept[key] = (recorded, varied)
    return got
