"""One region mapped onto the GPU at the trace size (``RegionSetup``): its shared-memory tiles,
the warps resident on the SMs, the per-block growth to the work size, and the memory analysis
of its pseudo-warps with reuse scaled to the work size (SPEC §2.2, §2.3, §2.6).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ..block import Block
from ..carveout import launch_carveout
from ..devices import GPUDevice
from ..frontend.tracefile import Trace
from ..memory.gather_wait import queue_turns_l1
from ..memory.l1scale import LoopGrowth, sweep_growth
from ..memory.l1share import block_lines, partners, shared_blocks, sharers_given
from ..memory.lru import CacheConfig
from ..memory.reuse import CacheScale
from ..memory.shared import StagedAccess, array_name
from ..memory.staging import staging_setup
from ..memory.transactions import L1Config, MemoryAnalysis, analyze_memory
from ..occupancy import BlockDoesNotFit, occupancy
from ..prediction import PredictionError, RunOptions
from ..registers import estimate_registers, full_occupancy_registers
from ..scaling import SizeModel
from ..warps import WarpTrace, mapped_loops
from .checks import tile_problem
from .launch_loops import loop_unroll_at, trip


@dataclass(frozen=True, eq=False)
class RegionSetup:
    """One region mapped onto the GPU at the trace size, and what scales it to the work size:
    what the memory analysis and the launch models of ``analyze_region`` share."""

    trace: Trace
    region: int
    launch: int  # the recorded launch whose pseudo-warps stand for every launch, eq. (RL)
    wt: WarpTrace
    d1: list  # the loops mapped to x (1-D) or y (2-D), and to x (2-D) (warps.mapped_loops)
    d2: list
    sizes: SizeModel
    tsz: dict[str, int]
    wsz: dict[str, int]
    factor: dict  # per block: work-size count / trace-size count (_block_factors)
    warps_per_batch: int  # warps resident on an SM at once (resident_warps)
    staged: tuple[StagedAccess, ...] = ()
    shared_spec: tuple | None = None  # see staging.staging_setup
    l1_bytes: int = 0  # the L1 the launch's carve-out leaves (carveout.py, eq. (SC3))

    @property
    def grid(self) -> int:
        return self.wt.grid_dims

    @property
    def block(self) -> Block:
        return self.wt.block


def setup_region(
    trace: Trace,
    region: int,
    launch: int,
    wt: WarpTrace,
    device: GPUDevice,
    opts: RunOptions,
    sizes: SizeModel,
    tsz: dict[str, int],
    wsz: dict[str, int],
    warnings: list[str],
    halo_bytes: int = 0,
) -> RegionSetup:
    """The region's shared-memory tiles (SPEC §2.6), resident warps per SM and growth to
    the work size; one line when a tile or the block cannot fit the device."""
    info = trace.header.region(region)
    problem = tile_problem(trace.header, info, device)
    if problem:
        raise PredictionError(f"kernel {info.name}: {problem}")
    staged, shared_spec = staging_setup(
        trace, region, wt, device, wt.block, opts.stage, launch, warnings, opts.stage_copy,
        own_copy=opts.tile_copy,
    )
    smem = (int(shared_spec[2]) if shared_spec else 0) + halo_bytes
    try:
        warps_per_batch = resident_warps(device, wt.block, opts.registers_per_thread, smem)
        carve = launch_carveout(device, wt.block.threads, opts.registers_per_thread, smem)
    except BlockDoesNotFit as exc:
        raise PredictionError(f"kernel {info.name}: {exc}") from None
    d1, d2 = mapped_loops(trace, region)
    return RegionSetup(
        trace=trace,
        region=region,
        launch=launch,
        wt=wt,
        d1=d1,
        d2=d2,
        sizes=sizes,
        tsz=tsz,
        wsz=wsz,
        factor=_block_factors(trace, region, wt.grid_dims, sizes, tsz, wsz),
        warps_per_batch=warps_per_batch,
        staged=staged,
        shared_spec=shared_spec,
        l1_bytes=carve.l1_bytes,
    )


def region_memory(
    setup: RegionSetup, device: GPUDevice, gathers: tuple[tuple[int, float], ...] = (),
    l1_gathers: tuple[tuple[int, float], ...] = (),
) -> MemoryAnalysis:
    """The memory analysis of the launch's pseudo-warps (SPEC §2.3): patterns, L1 and L2
    transactions, reuse scaled to the work size (_cache_scale), the ``gathers``' L2 reuse and
    the ``l1_gathers``' L1 reuse grown by their arrays' growth (footprint.py, (LP1)-(LP2))."""
    h = setup.trace.header
    per_l1, sharers = _l1_placement(setup, device)
    l1 = _l1_config(device, setup.wt, setup.block, per_l1, _l1_growth(setup), sharers,
                    l1_gathers, setup.l1_bytes, coherent_loads(setup.trace, setup.region))
    if l1 is not None:
        l1 = dataclasses.replace(l1, gather_waits=_gather_waits(setup, device, l1_gathers))
    return analyze_memory(
        setup.wt,
        np.array([m.bytes for m in h.mem] or [4]),
        CacheConfig(device.l2_line_bytes, device.l2_sets, device.l2_ways),
        setup.warps_per_batch,
        dataclasses.replace(_cache_scale(setup), gathers=gathers,
                            partitions=device.l2_partitions),
        device.l2_sector_bytes,
        l1,
        is_store(setup.trace),
        array_ids(setup.trace),
        device.dram_fill_bytes,
    )


def array_ids(trace: Trace) -> np.ndarray:
    """A dense id of each static memory instruction's array (eq. (SM1) compares them)."""
    names = [array_name(m.base) for m in trace.header.mem]
    ids = {n: k for k, n in enumerate(dict.fromkeys(names))}
    return np.array([ids[n] for n in names] or [0], np.int64)


def coherent_loads(trace: Trace, region: int) -> tuple[bool, ...]:
    """Per static memory instruction: False for a load the restrict port reads through the
    read-only path (an array the region never stores: ``const __restrict__``, sm_90's
    LDG.E.CONSTANT), whose fills take no pass of the L1's data stage, eq. (B2f)."""
    h = trace.header
    stored = {array_name(m.base) for m in h.mem if m.kind == "store" and m.region == region}
    return tuple(h.port != "restrict" or m.kind == "store" or array_name(m.base) in stored
                 for m in h.mem)


def is_store(trace: Trace) -> np.ndarray:
    """True per static memory instruction of the trace that is a store."""
    return np.array([m.kind == "store" for m in trace.header.mem] or [False])


def _l1_growth(setup: RegionSetup) -> tuple[LoopGrowth, ...]:
    """Per load of the region inside per-thread loops: how its same-warp reuse grows to the
    work size (l1scale.sweep_growth), from its loops' trip counts, innermost first."""
    h, grid = setup.trace.header, setup.grid
    out = []
    for m in h.mem:
        if m.region != setup.region or m.kind == "store":
            continue
        loops = sorted((lp for lp in h.loops if lp.region == setup.region and lp.depth > grid
                        and m.block in lp.blocks and lp.id in setup.sizes.trips),
                       key=lambda lp: -lp.depth)
        trips = tuple((trip(setup.sizes.trips[lp.id], setup.tsz),
                       trip(setup.sizes.trips[lp.id], setup.wsz)) for lp in loops)
        if trips:
            out.append(sweep_growth(m.id, trips))
    return tuple(out)


def _gather_waits(setup: RegionSetup, device: GPUDevice,
                  l1_gathers: tuple[tuple[int, float], ...]) -> tuple[tuple[int, int], ...]:
    """The region's streamed loads that share an innermost loop with a gather grown past the
    L1, with the pass depth the SASS unrolls that loop to (launch_loops.loop_unroll_at),
    where the SM's other warps' gathers of a pass outlast its L1 (gather_wait, eq. (GW))."""
    h = setup.trace.header
    grown = {s for s, g in l1_gathers if g > 1.0}
    if not grown:
        return ()
    parents = {lp.parent for lp in h.loops}
    inner = {lp.id: lp for lp in h.loops
             if lp.region == setup.region and lp.depth > setup.grid and lp.id not in parents}
    home = {m.id: lid for m in h.mem for lid, lp in inner.items() if m.block in lp.blocks}
    units = (setup.l1_bytes or device.l1_bytes) // (device.l1_alloc_bytes
                                                    or device.l1_line_bytes)
    blk = setup.block  # the SM's warps at the work size: its blocks (blocks_per_sm)
    per_sm = blocks_per_sm(_work_threads(setup), blk.threads, setup.warps_per_batch,
                           device.sm_count) * max(math.ceil(blk.threads / 32), 1)
    out = []
    for lid in sorted({home[s] for s in grown if s in home}):
        lp = inner[lid]
        ratio = 1.0
        if lid in setup.sizes.trips:
            t = trip(setup.sizes.trips[lid], setup.tsz)
            ratio = trip(setup.sizes.trips[lid], setup.wsz) / t if t > 0 else 1.0
        sized = lid in setup.sizes.trips and setup.sizes.trips[lid].sized  # eq. (12sz)
        depth = loop_unroll_at(setup.trace, lid, ratio, sized)
        gathers = sum(home.get(s) == lid for s in grown)
        if not queue_turns_l1(per_sm, depth, gathers, units):
            continue
        out += [(m.id, depth) for m in h.mem if m.kind == "load" and home.get(m.id) == lid
                and m.id not in grown and m.region == lp.region]
    return tuple(out)


def _l1_config(device: GPUDevice, wt: WarpTrace, block: Block,
               blocks_per_sm: int = 1, growth: tuple[LoopGrowth, ...] = (),
               sharers: float = 1.0,
               gathers: tuple[tuple[int, float], ...] = (),
               l1_bytes: int = 0, coherent: tuple[bool, ...] = ()) -> L1Config | None:
    """The L1 of devices that cache global loads there (device file: l1_caches_global_loads):
    the traced blocks go round robin onto ceil(traced blocks / ``blocks_per_sm``) L1s, at
    most sm_count (_l1_placement: k of a packed 1-D trace, else 1: a traced block an L1
    while the trace has fewer blocks than SMs, then blocks sm_count apart share one).
    ``sharers`` (_l1_placement, eq. (L1p)): blocks' worth of lines in a traced block's L1 at
    the work size, so the L1 keeps the ways of the traced blocks it holds (an LRU shared by
    n streams at one rate holds ~1/n each). ``growth``: how each load's reuse across whole
    loop sweeps grows; ``gathers``: the gathers' reuse, grown by their arrays' growth
    (eq. (LP2)); ``l1_bytes``: the L1 the launch's carve-out leaves (eq. (SC3); 0: the
    device's l1_bytes); ``coherent``: the loads whose fills pass the data stage (B2f)."""
    if not device.l1_caches_global_loads:
        return None
    unit = device.l1_alloc_bytes or device.l1_line_bytes  # what the LRU holds, eq. (L1a)
    lines = (l1_bytes or device.l1_bytes) // unit
    ways = min(device.l1_ways * (device.l1_line_bytes // unit), lines)
    sms = max(min(device.sm_count, math.ceil(wt.blocks / max(blocks_per_sm, 1))), 1)
    held = math.ceil(wt.blocks / sms)  # traced blocks on one L1 already
    share = min(held / max(sharers, 1.0), 1.0)
    cfg = CacheConfig(unit, max(lines // ways, 1),
                      max(int(round(ways * share)), 1))
    return L1Config(
        cfg,
        min(device.l2_sector_bytes, device.l1_line_bytes),
        sms,
        max(math.ceil(block.threads / 32), 1),
        growth,
        device.smem_banks,
        device.smem_bank_bytes,
        gathers,
        tag_lines=device.l1_tag_lines,
        line_bytes=device.l1_line_bytes,
        fill_sectors=device.l1_fill_sectors,
        coherent=coherent,
    )


def _l1_placement(setup: RegionSetup, device: GPUDevice) -> tuple[int, float]:
    """How the traced blocks share L1s, as (traced blocks an L1, sharers) for _l1_config,
    eq. (L1p). The work size puts k blocks on an SM, sm_count apart. A 2-D trace is a few
    blocks wide: each traced block keeps its share of an L1 (sharers, l1share). A 1-D trace
    of G blocks packed k an L1 puts them ceil(G / k) apart: exact where they share with
    each other the lines the work size's partners share (S_t = S_w, l1share.shared_blocks),
    while a traced block alone in its share is exact where partners share nothing and
    fetches again the S_w blocks' worth of lines a partner fetched. The 1-D grid takes the
    packing unless it is further off: |S_t - S_w| > S_w, eq. (L1p1) (spmv_ell 128x1: 32
    blocks apart the trace's share about 1 block's worth, the GPU's 132 apart none; nbody:
    every block reads all of pos, S_t = S_w, packed)."""
    if setup.grid not in (1, 2) or not device.l1_caches_global_loads:
        return 1, 1.0
    wt, blk = setup.wt, setup.block
    tx, ty = _work_grid(setup)
    k = blocks_per_sm(tx * ty, blk.threads, setup.warps_per_batch, device.sm_count)
    if k <= 1:
        return 1, 1.0
    nbx, nby = math.ceil(wt.grid_x / blk.x), math.ceil(wt.grid_y / blk.y)
    near = partners(math.ceil(tx / blk.x), math.ceil(ty / blk.y), device.sm_count, k)
    pairs = block_lines(wt, ~is_store(setup.trace), device.l1_line_bytes)
    s_w = shared_blocks(pairs, nbx, nby, near)
    if setup.grid == 1:
        packed = partners(nbx, 1, max(min(device.sm_count, math.ceil(nbx / k)), 1), k)
        if abs(shared_blocks(pairs, nbx, 1, packed) - s_w) <= s_w:
            return k, 1.0
    return 1, sharers_given(near, s_w)


def blocks_per_sm(threads: float, block_threads: int, warps_per_batch: int, sms: int) -> int:
    """Blocks an SM holds at once: its resident blocks (the batch of ``warps_per_batch``
    warps over ``sms`` SMs), fewer when a grid of ``threads`` does not fill every SM that
    deep (blocks go round robin, so ceil(blocks / sms))."""
    wpb = max(math.ceil(block_threads / 32), 1)
    resident = max(warps_per_batch // (wpb * max(sms, 1)), 1)
    blocks = math.ceil(threads / max(block_threads, 1))
    return max(min(resident, math.ceil(blocks / max(sms, 1))), 1)


def _work_threads(setup: RegionSetup) -> float:
    """Threads of the launch at the work size: the traced grid grown by its mapped loops'
    trip ratios."""
    x, y = _work_grid(setup)
    return x * y


def _work_grid(setup: RegionSetup) -> tuple[float, float]:
    """Threads along x and y of the launch at the work size: the traced grid's, each grown
    by its mapped loop's trip ratio (x: the depth-2 loop of a 2-D grid, else the depth-1)."""
    sizes, tsz, wsz, wt, d1, d2 = setup.sizes, setup.tsz, setup.wsz, setup.wt, setup.d1, setup.d2
    dims = [float(wt.grid_x), float(wt.grid_y)]
    for i, loop in enumerate(((d2 if setup.grid == 2 else d1), (d1 if setup.grid == 2 else None))):
        if loop and loop[0] in sizes.trips:
            t = trip(sizes.trips[loop[0]], tsz)
            dims[i] *= max(trip(sizes.trips[loop[0]], wsz) / t if t > 0 else 1.0, 1.0)
    return dims[0], dims[1]


def _inner_blocks(trace: Trace, region: int, grid: int) -> set[int]:
    """Blocks inside the mapped loops (the per-thread part of a kernel)."""
    inner = [lp for lp in trace.header.loops if lp.region == region and lp.depth == grid]
    return {b for lp in inner for b in lp.blocks}


def resident_warps(device: GPUDevice, block: Block, registers: int, smem_bytes: int) -> int:
    """Warps of the active batch (SPEC §2.3): the resident blocks of every SM, from the
    occupancy calculation, whole blocks only (warps are numbered block by block). Raises
    BlockDoesNotFit for a launch the GPU would refuse."""
    occ = occupancy(device, block.threads, registers, smem_bytes)
    return max(occ.blocks_per_sm * occ.warps_per_block * device.sm_count, 1)


def _cache_scale(setup: RegionSetup) -> CacheScale:
    """Reuse-distance growth from trace to work size (reuse.scale_hits)."""
    trace, region, grid, block, wt = (
        setup.trace, setup.region, setup.grid, setup.block, setup.wt
    )
    d1, d2, sizes, tsz, wsz = setup.d1, setup.d2, setup.sizes, setup.tsz, setup.wsz
    factor, warps_per_batch = setup.factor, setup.warps_per_batch
    inner = _inner_blocks(trace, region, grid)
    footprint = max((f for b, f in factor.items() if b in inner), default=1.0)
    xloop = d2 if grid == 2 else d1
    grid_x = 1.0
    if xloop and xloop[0] in sizes.trips:
        t = trip(sizes.trips[xloop[0]], tsz)
        grid_x = trip(sizes.trips[xloop[0]], wsz) / t if t > 0 else 1.0
    warps_per_block = max(math.ceil(block.threads / 32), 1)
    blocks_per_batch = max(warps_per_batch // warps_per_block, 1)
    blocks_per_row = max(math.ceil(wt.grid_x / block.x), 1)
    per_row = max(math.ceil(blocks_per_row / blocks_per_batch), 1) if grid == 2 else 1 << 30
    # warps of one batch at the trace size and at the work size
    threads_work = _work_threads(setup)
    trace_batch = min(max(wt.n_warps, 1), warps_per_batch)
    work_batch = min(max(threads_work / 32, 1.0), warps_per_batch)
    return CacheScale(
        max(footprint, 1.0), max(grid_x, 1.0), per_row, max(work_batch / trace_batch, 1.0),
        loops=_sweep_loops(setup),
    )


def _sweep_loops(setup: RegionSetup) -> tuple[tuple[int, tuple[tuple[int, float], ...]], ...]:
    """Per memory instruction of the region inside growing per-thread loops: those loops
    and their trip ratios work / trace (reuse.CacheScale.loops, eq. (S1))."""
    h, grid = setup.trace.header, setup.grid
    out = []
    for m in h.mem:
        if m.region != setup.region:
            continue
        lps = []
        for lp in h.loops:
            if (lp.region == setup.region and lp.depth > grid and m.block in lp.blocks
                    and lp.id in setup.sizes.trips):
                t = trip(setup.sizes.trips[lp.id], setup.tsz)
                r = trip(setup.sizes.trips[lp.id], setup.wsz) / t if t > 0 else 1.0
                if r > 1.0:
                    lps.append((lp.id, r))
        if lps:
            out.append((m.id, tuple(lps)))
    return tuple(out)


def _block_factors(trace: Trace, region: int, grid: int, sizes: SizeModel, tsz, wsz):
    """Per-thread count growth of each block from trace to work size: the product of
    T(work)/T(trace) over every loop enclosing the block, divided by the growth of the thread
    count (the mapped loops). Blocks inside all mapped loops keep the per-thread loops' ratios;
    a block of the y loop outside the x loop shrinks per thread as x grows. A block of a helper
    function grows like the block that calls it, times its own loops' ratios."""
    h = trace.header
    ratio: dict[int, float] = {}
    for lp in h.loops:
        model = sizes.trips.get(lp.id)
        if lp.region in (region, -1) and model is not None:
            t_trace, t_work = trip(model, tsz), trip(model, wsz)
            ratio[lp.id] = t_work / t_trace if t_trace > 0 else 1.0
    mapped = [lp for lp in h.loops if lp.region == region and lp.depth <= grid]
    thread_growth = 1.0
    for lp in mapped:
        thread_growth *= ratio.get(lp.id, 1.0)
    own: dict[int, float] = {b.id: 1.0 for b in h.blocks if b.region in (region, -1)}
    for lp in h.loops:
        if lp.region in (region, -1) and lp.id in ratio:
            for b in lp.blocks:
                own[b] = own.get(b, 1.0) * ratio[lp.id]
    out = {b.id: own[b.id] / thread_growth for b in h.blocks if b.region == region}
    # helpers, callers first: the calls of the region, then calls made by helpers
    pending = [c for c in h.calls if c.traced]
    for _ in range(len(h.helpers) + 1):
        for call in pending:
            if call.block in out:
                for b in h.blocks:
                    if b.region == -1 and b.function == call.callee:
                        out[b.id] = max(out.get(b.id, 0.0), out[call.block] * own[b.id])
    return out


#: registers a thread when the estimate has nothing to go on (a kernel with no loop in the IR)
FALLBACK_REGISTERS = 32


def with_registers(trace: Trace, region: int, grid: int, opts: RunOptions, device: GPUDevice,
                   sizes: SizeModel, tsz: dict[str, int],
                   wsz: dict[str, int]) -> tuple[RunOptions, str]:
    """``opts`` with the registers a thread set, and where they came from: as given, or
    (``registers_per_thread`` None) estimated from the region's IR (registers.py, eq. (RG1)),
    its loops unrolled as at the work size (loop_unroll_at), within ``device``'s budget for
    full occupancy (eq. (RG2))."""
    if opts.registers_per_thread is not None:
        return opts, "given"
    unroll = {}
    for lp in trace.header.loops:
        if lp.region == region and lp.depth > grid:
            m = sizes.trips.get(lp.id)
            t = trip(m, tsz) if m is not None else 0.0
            unroll[lp.id] = loop_unroll_at(trace, lp.id, trip(m, wsz) / t if t > 0 else 1.0,
                                           m is not None and m.sized)  # eq. (12sz)
    est = estimate_registers(trace, region, grid, unroll, opts.port == "restrict",
                             full_occupancy_registers(device))
    regs = est.registers if est is not None else FALLBACK_REGISTERS
    return dataclasses.replace(opts, registers_per_thread=regs), "estimated"
