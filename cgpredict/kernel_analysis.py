"""Analysis of one kernel (region) of a trace: warps, memory, computation, shared memory,
scaling to the work size, and the model, launch by launch (SPEC §2.2-2.6).

``analyze_region`` runs the steps in turn: the first recorded launch (``_first_launch``), its
pseudo-warps (``_region_warps``), the tiles, resident warps and growth to the work size
(``_setup`` -> ``RegionSetup``), the memory analysis (``_region_memory``), every launch
modelled (``_model_launches``, ``_LaunchContext.model``) and the report (``_kernel_report``).

Over 500 lines for now: the launch model (``_LaunchContext`` and its helpers) is to move to
a module of its own once the reductions/atomics work in this module has landed (issue 27).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections import Counter
from dataclasses import dataclass

import numpy as np

from .analysis_memo import AnalysisMemo
from .atomics import (
    AtomicSite,
    PortShape,
    as_atomics,
    atomic_notes,
    drop_covered,
    find_sites,
    port_costs,
    site_sids,
    with_shared,
)
from .block import Block, MappingError
from .cache import CacheConfig
from .compute import (
    ComputeCounts,
    compute_counts,
    integer_insts,
    kernel_entry_insts,
    loop_unroll,
)
from .devices import GPUDevice
from .energy import predict_energy
from .footprint import SizeCheck, check_lines, moved_warning, size_check
from .memory import (
    COAL,
    CONST,
    UNCOAL,
    L1Config,
    MemoryAnalysis,
    analyze_memory,
    warm_start,
)
from .models import LaunchGeometry, kernel_time, launch_geometry
from .models import predict as model_predict
from .occupancy import BlockDoesNotFit, occupancy
from .parallelism import ThreadBodies, thread_bodies
from .port import restoring_stores
from .prediction import DEFAULT_BLOCKS, KernelReport, MemInstrReport, PredictionError, RunOptions
from .profile import KernelProfile, PatternCounts, SharedMemoryCounts, StoreCounts
from .residency import Resident, region_arrays, resident_arrays
from .reuse import CacheScale
from .scaling import SizeModel, TripModel
from .shared import (
    StagedAccess,
    array_layouts,
    array_name,
    transposed_addresses,
)
from .soa import soa_addresses, struct_arrays
from .staging import staging_setup
from .tile_exchange import tile_exchanged_addresses
from .tracefile import TAG_BEGIN, Trace
from .warps import (
    Origin,
    WarpTrace,
    form_warps,
    form_warps_auto,
    mapped_loops,
    single_thread,
)


def function_line(ir_text: str, name: str) -> int:
    """Source line of function ``name`` (a --function kernel) from the IR's debug info; 0
    when it has none."""
    m = re.search(rf'DISubprogram\(name: "{re.escape(name)}",[^\n]*?\bline: (\d+)', ir_text)
    return int(m.group(1)) if m else 0


def _trip(model: TripModel, sizes: dict[str, int]) -> float:
    try:
        return max(model(sizes), 0.0)
    except KeyError:
        return model.alpha


def _began(trace: Trace, region: int) -> bool:
    """Whether the events hold a BEGIN of ``region`` (a launch that began, with no end)."""
    ev = np.asarray(trace.events)
    begins = ev[(ev >> np.uint64(48)) == TAG_BEGIN]
    return bool(((begins >> np.uint64(32)) & np.uint64(0xFFFF) == region).any())


@dataclass(frozen=True, eq=False)
class RegionSetup:
    """One region mapped onto the GPU at the trace size, and what scales it to the work size:
    what the memory analysis and the launch models of ``analyze_region`` share."""

    trace: Trace
    region: int
    launch: int  # the first recorded launch: its pseudo-warps stand for every launch
    wt: WarpTrace
    d1: list  # the loops mapped to x (1-D) or y (2-D), and to x (2-D) (warps.mapped_loops)
    d2: list
    sizes: SizeModel
    tsz: dict[str, int]
    wsz: dict[str, int]
    factor: dict  # per block: work-size count / trace-size count (_block_factors)
    warps_per_batch: int  # warps resident on an SM at once (_resident_warps)
    staged: tuple[StagedAccess, ...] = ()
    shared_spec: tuple[int, float, int, float] | None = None  # see staging.staging_setup

    @property
    def grid(self) -> int:
        return self.wt.grid_dims

    @property
    def block(self) -> Block:
        return self.wt.block


def analyze_region(
    trace: Trace,
    region: int,
    device: GPUDevice,
    opts: RunOptions,
    sizes: SizeModel,
    tsz: dict[str, int],
    wsz: dict[str, int],
    memo: AnalysisMemo | None = None,
) -> KernelReport:
    """Predict one region of a trace. ``memo`` keeps the pseudo-warps formed per
    (region, launch, grid, block) for the next analysis of the same trace (they depend on
    the trace and the block only: not on the device, the model or the work size)."""
    info = trace.header.region(region)
    launch = _first_launch(trace, region, info)
    warnings: list[str] = []
    plain = _region_warps(trace, region, launch, device, opts, memo, warnings)
    wt = _remapped(trace, region, plain, opts)
    sites = find_sites(trace, region, wt.grid_dims, wt, device.l2_sector_bytes)
    warnings += drop_covered(_mapping_warnings(trace, wt, info.name), sites)
    warnings += atomic_notes(sites, info.name, opts.reduce)
    warnings += _thread_warnings(wt, info.name, device)
    setup = _setup(trace, region, launch, wt, device, opts, sizes, tsz, wsz, warnings)
    check = size_check(trace, region, sizes, tsz, wsz, device)
    mem = _region_memory(setup, device, check.gathers)
    ctx = _LaunchContext(
        trace=trace,
        region=region,
        grid=setup.grid,
        block=setup.block,
        d1=setup.d1,
        d2=setup.d2,
        sizes=sizes,
        tsz=tsz,
        wsz=wsz,
        factor=setup.factor,
        mem=mem,
        opts=opts,
        device=device,
        name=info.name,
        staged=setup.staged,
        shared_spec=setup.shared_spec,
        bodies=thread_bodies(trace, region, setup.grid),
        busiest=_busiest_share(wt),
        restores=_restores(trace, region, launch, plain, wt, opts, memo),
        sites=sites,
        shape=PortShape(
            threads_per_block=setup.block.threads,
            blocks=0,
            resident_blocks=max(  # every SM's
                setup.warps_per_batch * device.warp_size // setup.block.threads, 1
            ),
            warp_size=device.warp_size,
            sector_bytes=device.l2_sector_bytes,
            level=opts.reduce,
        ),
    )
    return _kernel_report(setup, ctx, _model_launches(setup, ctx), check, warnings)


def _remapped(trace: Trace, region: int, wt: WarpTrace, opts: RunOptions) -> WarpTrace:
    """The pseudo-warps with the addresses of the layout changes of ``opts`` (the advisor's
    fixes): transposed arrays, structs as arrays, accesses exchanged inside 32x32 tiles (a
    padded shared-memory transposition) or inside a row's loops (a warp per row)."""
    if opts.transpose:
        wt = _transposed(trace, wt, opts.transpose)
    if opts.soa:
        wt = _as_soa(trace, wt, opts.soa)
    if opts.tile_exchange:
        wt = _tile_exchanged(trace, wt, opts.tile_exchange)
    if opts.row_exchange:
        inner = {b for lp in trace.header.loops if lp.region == region
                 and lp.depth > wt.grid_dims for b in lp.blocks}
        wt = _tile_exchanged(trace, wt, opts.row_exchange, inner)
    return wt


def _restores(
    trace: Trace, region: int, launch: int, plain: WarpTrace, wt: WarpTrace, opts: RunOptions,
    memo: AnalysisMemo | None,
) -> frozenset[int]:
    """``port.restoring_stores`` of the launch's warps ``wt`` (``plain`` before the layout
    changes of ``opts``). With a ``memo``: that of ``plain``, kept once for every block shape
    (analysis_memo), and only the stores of the arrays a layout change moves decided anew:
    the function decides each static store from its own events alone, and the others' are
    those of ``plain``."""
    store = _is_store(trace)
    if memo is None:
        return restoring_stores(
            wt.addr, wt.lane, wt.inst_start, wt.inst_warp, wt.inst_sid, store)
    key = (region, launch, plain.grid_dims)
    if key not in memo.restores:
        memo.restores[key] = restoring_stores(
            plain.addr, plain.lane, plain.inst_start, plain.inst_warp, plain.inst_sid, store)
    kept = memo.restores[key]
    changed = set(opts.transpose) | set(opts.soa) | set(opts.tile_exchange) \
        | set(opts.row_exchange)
    moved = store & np.array([array_name(m.base) in changed for m in trace.header.mem]
                             or [False])
    if wt is plain or not moved.any():
        return kept
    again = restoring_stores(wt.addr, wt.lane, wt.inst_start, wt.inst_warp, wt.inst_sid, moved)
    return frozenset(s for s in kept if not moved[s]) | again


def _is_store(trace: Trace) -> np.ndarray:
    """True per static memory instruction of the trace that is a store."""
    return np.array([m.kind == "store" for m in trace.header.mem] or [False])


def _first_launch(trace: Trace, region: int, info) -> int:
    """The first launch of ``region`` whose events were recorded; one line saying why when
    the kernel never ran (or began and never ended)."""
    rows = np.flatnonzero((trace.launches["region"] == region) & (trace.launches["recorded"] == 1))
    if len(rows):
        return int(rows[0])
    if info.line == 0:
        how = f"did not run: the program never called the function {info.function}"
    elif _began(trace, region):
        how = (
            "began but never ended: the program left its loop nest before the loop ended "
            "(a return, goto, exit() or longjmp out of it); a kernel runs its loop to the end"
        )
    else:
        how = "did not run: the program never reached its loop nest"
    raise PredictionError(f"kernel {info.name} {how}")


def _region_warps(
    trace: Trace,
    region: int,
    launch: int,
    device: GPUDevice,
    opts: RunOptions,
    memo: AnalysisMemo | None,
    warnings: list[str],
) -> WarpTrace:
    """The pseudo-warps of the launch (SPEC §2.2) in the asked or default block shape, the
    grid fixed by the options or the region, else chosen (form_warps_auto); kept in the
    ``memo`` for the first block shape of a launch."""
    info = trace.header.region(region)
    if single_thread(trace, region):
        warnings.append(
            f"{info.name}: the function has no loop to map to threads: predicted as a "
            f"single-thread kernel (one GPU thread runs each call)"
        )
    try:
        is_store = _is_store(trace)
        block2 = opts.block or DEFAULT_BLOCKS[2]
        block1 = opts.block if opts.block and opts.block.y == 1 else DEFAULT_BLOCKS[1]
        for b in {block1, block2}:
            _check_block(b, device, warnings)
        fixed = opts.grid or info.grid
        key = (region, launch, fixed, block2, block1)
        parts = memo.launch_parts if memo is not None else None
        if memo is not None and key in memo.warps:
            wt = memo.warps[key]
        elif fixed:
            block = block2 if fixed == 2 else block1
            wt = form_warps(trace, region, launch, fixed, block, is_store, parts)
        else:
            wt = form_warps_auto(trace, region, launch, block2, block1, is_store, parts)
        if memo is not None and not memo.has_warps_of(region, launch, fixed):
            # the first block shape of a launch only (the advisor re-analyses that one with
            # every fix); a sweep's other shapes are analysed once each and not kept, else
            # their events (tens of bytes each) pile up
            memo.warps[key] = wt
        if wt.grid_dims == 1 and opts.block and opts.block != wt.block:
            warnings.append(replaced_block_warning(info.name, opts.block, wt.block))
    except MappingError as exc:
        raise PredictionError(f"kernel {info.name}: {exc}") from None
    return wt


def replaced_block_warning(name: str, asked: Block, used: Block) -> str:
    """What a 1-D kernel's report says of a 2-D block asked for (it runs in ``used``)."""
    return f"{name} is a 1-D kernel: block {asked} replaced by {used}"


def quiet_block(block: Block, device: GPUDevice) -> bool:
    """Whether ``block`` fits the device and is whole warps: ``_check_block`` says nothing."""
    said: list[str] = []
    try:
        _check_block(block, device, said)
    except MappingError:
        return False
    return not said


def _thread_warnings(wt: WarpTrace, name: str, device: GPUDevice) -> list[str]:
    """Too few pseudo-threads at the trace size for representative cache behaviour."""
    if wt.n_threads == 0:
        return [
            f"{name}: no pseudo-thread made a memory access at the trace size "
            f"(zero iterations?); its prediction is empty"
        ]
    if wt.n_threads < 2 * device.max_threads_per_sm:
        return [
            f"{name}: only {wt.n_threads} pseudo-threads traced, fewer than "
            f"2 x threads_per_SM = {2 * device.max_threads_per_sm}; trace a larger "
            f"size for representative cache behaviour"
        ]
    return []


def _setup(
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
) -> RegionSetup:
    """The region's shared-memory tiles (SPEC §2.6), resident warps per SM and growth to
    the work size; one line when a tile or the block cannot fit the device."""
    info = trace.header.region(region)
    problem = tile_problem(trace.header, info, device)
    if problem:
        raise PredictionError(f"kernel {info.name}: {problem}")
    staged, shared_spec = staging_setup(
        trace, region, wt, device, wt.block, opts.stage, launch, warnings
    )
    try:
        warps_per_batch = _resident_warps(
            device, wt.block, opts.registers_per_thread,
            int(shared_spec[2]) if shared_spec else 0,
        )  # fmt: skip
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
    )


def _region_memory(
    setup: RegionSetup, device: GPUDevice, gathers: tuple[tuple[int, float], ...] = ()
) -> MemoryAnalysis:
    """The memory analysis of the launch's pseudo-warps (SPEC §2.3): patterns, L1 and L2
    transactions, reuse scaled to the work size (_cache_scale), the ``gathers``' reuse grown
    by their arrays' growth (footprint.py)."""
    h = setup.trace.header
    return analyze_memory(
        setup.wt,
        np.array([m.bytes for m in h.mem] or [4]),
        CacheConfig(device.l2_line_bytes, device.l2_sets, device.l2_ways),
        setup.warps_per_batch,
        dataclasses.replace(_cache_scale(setup), gathers=gathers),
        device.l2_sector_bytes,
        _l1_config(device, setup.wt, setup.block),
        _is_store(setup.trace),
    )


@dataclass(frozen=True)
class _Launches:
    """The distinct launch models of a region (``_LaunchModel`` by key: block and loop
    counts and the arrays found in the L2), how many trace launches each stands for, and the
    key of every trace launch."""

    models: dict[bytes, _LaunchModel]
    counts: dict[bytes, int]
    keys: dict[int, bytes]
    energy_mj: float | None  # every trace launch; None when the device has no energy table
    resident: tuple[Resident, ...]
    work_launches: int  # launches at the work size
    rows: int  # launches in the trace


def _model_launches(setup: RegionSetup, ctx: _LaunchContext) -> _Launches:
    """Model every launch of the region in the trace. Launches with identical block and loop
    counts (FDTD time steps) and the same data left in the L2 by earlier launches
    (residency.py) are modelled once."""
    trace, region, sizes, wsz, device = setup.trace, setup.region, setup.sizes, setup.wsz, \
        ctx.device
    h = trace.header
    all_rows = np.flatnonzero(trace.launches["region"] == region)
    launches_work = (
        max(int(round(_trip(sizes.launches[region], wsz))), 1)
        if region in sizes.launches
        else len(all_rows)
    )
    models: dict[bytes, _LaunchModel] = {}
    counts: dict[bytes, int] = {}
    keys: dict[int, bytes] = {}
    energy = 0.0
    touched, loaded = region_arrays(trace), region_arrays(trace, "load")
    resident: dict[str, Resident] = {}
    bytes_of: dict[str, float | None] = {}
    for row in all_rows:
        res = resident_arrays(
            trace, int(row), sizes, wsz, device.persist_bytes, touched, loaded, bytes_of
        )
        names = {r.array for r in res}
        warm = frozenset(
            s.sid for s in ctx.mem.instrs if array_name(h.mem[s.sid].base) in names
        )
        key = keys[int(row)] = (
            trace.bb_counts[row].tobytes() + trace.loop_iters[row].tobytes()
            + np.array(sorted(warm), np.int64).tobytes()
        )  # fmt: skip
        if key not in models:
            models[key] = ctx.model(int(row), warm_start(ctx.mem, warm))[0]
            resident.update({r.array: r for r in res if r.array not in resident})
        counts[key] = counts.get(key, 0) + 1
        lm = models[key]
        energy = None if energy is None or lm.energy_mj is None else energy + lm.energy_mj
    return _Launches(
        models=models,
        counts=counts,
        keys=keys,
        energy_mj=energy,
        resident=tuple(resident.values()),
        work_launches=launches_work,
        rows=len(all_rows),
    )


def _kernel_report(
    setup: RegionSetup, ctx: _LaunchContext, ls: _Launches, check: SizeCheck,
    warnings: list[str],
) -> KernelReport:
    """The region's report: the first launch's model, and every launch at the work size
    (each distinct launch's time and energy weighted by the launches it stands for)."""
    h, device, info = setup.trace.header, ctx.device, setup.trace.header.region(setup.region)
    per_trace_launch = ls.work_launches / max(ls.rows, 1)
    launch_profiles = tuple(
        (ls.models[key].profile, ls.counts[key] * per_trace_launch) for key in ls.models
    )
    parts = kernel_time(
        [(ls.models[key].result.time_ms, ls.counts[key] * per_trace_launch)
         for key in ls.models],
        device,
        ctx.opts.sync,
    )
    energy = None if ls.energy_mj is None else ls.energy_mj * per_trace_launch
    first = ls.models[ls.keys[setup.launch]]
    if check.gathers:  # the prediction with the trace's own reuse of the gathers
        plain_mem = _region_memory(setup, device)
        plain = dataclasses.replace(ctx, mem=plain_mem).model(setup.launch)[0]
        moved = moved_warning(info.name, check, first.result.time_ms, plain.result.time_ms)
    else:
        moved = []
    warnings = [
        *warnings,
        *first.warnings,
        *moved,
        *_resident_notes(ls.resident, device, info.name),
        *_port_warnings(first.mem, h.port, info.name),
    ]
    return KernelReport(
        name=info.name,
        location=f"{h.source_name}:{info.line or function_line(h.ir_text, info.function)}",
        grid_dims=setup.grid,
        block=str(setup.block),
        grid_threads=first.grid_threads,
        blocks=first.blocks,
        launches=ls.work_launches,
        profile=first.profile,
        result=first.result,
        mem=first.mem,
        l2_hit_rate=first.l2_hit_rate,
        warnings=tuple(warnings),
        total_ms=parts.total_ms,
        kernel_ms=parts.kernel_ms,
        launch_ms=parts.launch_ms,
        once_ms=parts.once_ms,
        distinct_launches=len(ls.models),
        energy_mj=energy,
        occupancy=first.geometry.n_warps / device.max_warps_per_sm,
        occupancy_limit=_occupancy_limit(first.geometry),
        batches=first.geometry.waves,
        launch_profiles=launch_profiles,
        size_check=check_lines(check),
    )


MAX_GRID_X = 2**31 - 1  # CUDA's limits on the blocks of a grid
MAX_GRID_YZ = 65535


def grid_problem(gx: float, gy: float, block) -> str | None:
    """Why CUDA would refuse a grid of ``gx`` x ``gy`` threads in ``block``s, or None."""
    bx, by = math.ceil(gx / block.x), math.ceil(gy / block.y)
    if bx <= MAX_GRID_X and by <= MAX_GRID_YZ:
        return None
    return (
        f"a grid of {bx} x {by} blocks of {block} exceeds CUDA's limits (x at most "
        f"{MAX_GRID_X}, y at most {MAX_GRID_YZ} blocks); predict a smaller size"
    )


def tile_problem(h, info, device) -> str | None:
    """Why a ``#pragma cgp shared`` tile cannot fit the device's shared memory per block
    (its elements sized as the kernel accesses the array), or None."""
    for array, rows, cols in info.shared:
        sizes = [m.bytes for m in h.mem if m.region == info.index and array_name(m.base) == array]
        nbytes = rows * cols * max(sizes or [4])
        if nbytes > device.shared_mem_per_block_max_bytes:
            return (
                f"'#pragma cgp shared {array} tile {rows}x{cols}' needs {nbytes} bytes of "
                f"shared memory per block; {device.name} allows "
                f"{device.shared_mem_per_block_max_bytes}"
            )
    return None


@dataclass(frozen=True)
class _LaunchModel:
    profile: KernelProfile
    result: object
    grid_threads: tuple[int, int]
    blocks: int
    mem: tuple[MemInstrReport, ...]
    warnings: tuple[str, ...]
    energy_mj: float | None = None
    geometry: LaunchGeometry | None = None
    l2_hit_rate: float = 0.0


@dataclass(frozen=True)
class _LaunchContext:
    """What modelling one launch of a region needs (the launch's own counts come from the
    trace's per-launch block and loop counts, exact even for launches not recorded)."""

    trace: Trace
    region: int
    grid: int
    block: Block
    d1: list
    d2: list
    sizes: SizeModel
    tsz: dict
    wsz: dict
    factor: dict
    mem: MemoryAnalysis
    opts: RunOptions
    device: GPUDevice
    name: str
    staged: tuple[StagedAccess, ...] = ()
    shared_spec: tuple[int, float, int, float] | None = None  # see staging.staging_setup
    bodies: ThreadBodies = ThreadBodies()  # the thread's code, for ILP and MLP
    busiest: float = 1.0  # the busiest thread's memory events / the mean thread's
    restores: frozenset[int] = frozenset()  # stores of an accumulator (port.restoring_stores)
    sites: tuple[AtomicSite, ...] = ()  # locations every thread updates (atomics.py)
    shape: PortShape | None = None  # what their port's atomics depend on

    def extents(self, row: int) -> tuple[float, float]:
        """(x, y) pseudo-threads of trace launch ``row``, scaled to the work size."""
        tr = self.trace
        inner = self.d2 if self.grid == 2 else self.d1
        if not inner:  # single_thread: one thread per call
            return 1.0, 1.0
        iters = float(tr.loop_iters[row, inner].sum())
        entries = float(tr.loop_entries[row, inner].sum())
        x = iters / entries if entries else 0.0
        y = entries if self.grid == 2 else 1.0
        x *= self._ratio(inner[0])
        if self.grid == 2:
            y *= self._ratio(self.d1[0])
        return round(x, 6), round(y, 6)

    def _ratio(self, loop: int) -> float:
        m = self.sizes.trips.get(loop)
        if m is None:
            return 1.0
        t = _trip(m, self.tsz)
        return _trip(m, self.wsz) / t if t > 0 else 1.0

    def model(self, row: int, mem: MemoryAnalysis | None = None) -> tuple[_LaunchModel]:
        """The launch of trace row ``row``, with ``mem`` (the region's memory analysis, or
        that with the data earlier launches left in the L2)."""
        mem = self.mem if mem is None else mem
        tr, h = self.trace, self.trace.header
        inner = self.d2 if self.grid == 2 else self.d1
        threads = float(tr.loop_iters[row, inner].sum()) if inner else 1.0
        bb = tr.bb_counts[row].astype(np.float64)
        per_thread = {
            b.id: (bb[b.id] / threads if threads else 0.0) * self.factor.get(b.id, 1.0)
            for b in h.blocks
            if b.region in (self.region, -1)
        }
        gx, gy = self.extents(row)
        problem = grid_problem(gx, gy, self.block)
        if problem:
            raise PredictionError(f"kernel {self.name}: {problem}")
        blocks = max(math.ceil(gx / self.block.x) * math.ceil(gy / self.block.y), 1)
        skip = {a.sid for a in self.staged} | site_sids(self.sites)
        mem_reports, patterns, stores = _memory_profile(
            tr, mem, per_thread, self.region, skip, self.restores
        )
        shared, sync = self.shared_counts(row, per_thread, threads)
        port = port_costs(self.sites, per_thread, self.shape, blocks)
        mem_reports, shared = as_atomics(mem_reports, self.sites), with_shared(shared, port)
        ops: Counter = Counter()
        weights = [
            (per_thread.get(h.mem[s.sid].block, 0.0), h.mem[s.sid].bytes)
            for s in mem.instrs
            if s.sid not in skip
        ]
        executed = sum(w for w, _ in weights)
        par = self.bodies.parallelism(per_thread)
        chain = self.chain_cycles(per_thread, mem)
        bytes_per_access = round(sum(w * b for w, b in weights) / executed) if executed else 4
        for b in h.blocks:
            n = per_thread.get(b.id, 0.0)
            if n:
                for opcode, ty, detail, k in b.ops:
                    ops[(opcode, ty, detail)] += n * k
        comp: ComputeCounts = compute_counts(ops)
        folded = self.bodies.unrolled_savings(
            per_thread, lambda b: integer_insts(h.blocks[b].ops), self.unroll
        )
        arrays = {array_name(h.mem[s.sid].base) for s in mem.instrs}
        entry = kernel_entry_insts(self.grid, len(arrays - {""}))
        warnings = []
        if comp.unknown_calls:
            warnings.append(
                f"calls to {', '.join(comp.unknown_calls)} counted as one instruction each"
            )
        profile = KernelProfile(
            name=self.name,
            threads_per_block=self.block.threads,
            blocks=blocks,
            coal=patterns[COAL],
            uncoal=patterns[UNCOAL],
            const=patterns[CONST],
            comp_insts=max(comp.total - folded, 0.0) + entry + port.extra_insts
            + port.atomics.insts,
            sfu_insts=comp.sfu,
            fp_insts=comp.fp,
            registers_per_thread=self.opts.registers_per_thread,
            bytes_per_access=max(bytes_per_access, 1),
            ilp=par.ilp,
            mlp=par.mlp,
            launches=1,
            shared=shared,
            sync_insts=sync + port.barriers,
            stores=stores,
            atomics=port.atomics,
            chain_cycles=chain,
            folded_insts=folded,
        )
        try:
            result = model_predict(
                profile, self.device, self.opts.model, **_model_options(self.opts)
            )
        except BlockDoesNotFit as exc:
            raise PredictionError(f"kernel {self.name}: {exc}") from None
        est = predict_energy(profile, self.device, result.time_ms)
        geometry = launch_geometry(profile, self.device)
        return (
            _LaunchModel(
                profile,
                result,
                (int(gx), int(gy)),
                blocks,
                tuple(mem_reports),
                tuple(warnings),
                est.total_mj if est else None,
                geometry,
                mem.l2_hit_rate,
            ),
        )

    def chain_cycles(self, per_thread: dict, mem: MemoryAnalysis) -> float:
        """The critical path of the launch's busiest thread (models/bounds.py): the mean
        thread's body executions times ``busiest``, each iteration its chain
        (parallelism.body_chain) with every load at its own mean latency."""
        dev = self.device
        staged = {a.sid for a in self.staged}
        lat = {s.sid: _load_latency(s, dev) for s in mem.instrs}
        for sid in staged:
            lat[sid] = dev.shared_latency_cycles

        def load_cycles(sid: int) -> float:
            return lat.get(sid, dev.l2_latency_cycles)

        busiest = {b: n * self.busiest for b, n in per_thread.items()}
        return self.bodies.chain_cycles(
            busiest, load_cycles, dev.fp_latency_cycles, dev.inst_latency_cycles, self.unroll
        )

    @functools.cached_property
    def _unrolls(self) -> dict[int, int]:
        """loop_unroll_at of every loop a thread body runs, found once for the region (the
        trace's loop counts over all launches: the same for each launch modelled)."""
        return {
            lid: loop_unroll_at(self.trace, lid, self._ratio(lid))
            for lid in self.bodies.loop_ids
            if lid >= 0
        }

    def unroll(self, loop: int) -> int:
        """How many iterations nvcc unrolls loop ``loop`` into one trip (loop_unroll_at)."""
        return self._unrolls.get(loop, 1)

    def shared_counts(self, row: int, per_thread: dict, threads: float):
        """SharedMemoryCounts and barriers per thread of a tiled launch (SPEC §2.6)."""
        if not self.staged or self.shared_spec is None:
            return SharedMemoryCounts(), 0.0
        tile_loop, loads_per_phase, nbytes, divisor = self.shared_spec
        iters = float(self.trace.loop_iters[row, tile_loop])
        phases = (iters / threads if threads else 0.0) * self._ratio(tile_loop) / divisor
        by_x: dict[float, float] = {}
        h = self.trace.header
        waves = 0.0
        for a in self.staged:
            count = per_thread.get(h.mem[a.sid].block, 0.0)  # elements read per thread
            total = sum(c for _, c in a.conflicts)
            for x, c in a.conflicts:  # shared loads (vectors of a.vector elements)
                by_x[float(x)] = by_x.get(float(x), 0.0) + count * c / total / a.vector
            waves += count * a.wavefronts
        counts = SharedMemoryCounts(
            load_insts=phases * loads_per_phase,
            insts_by_conflict=tuple(sorted(by_x.items())),
            bytes_per_block=nbytes,
            wavefronts=waves,
        )
        return counts, 2.0 * phases


def _transposed(trace: Trace, wt: WarpTrace, arrays: tuple[str, ...]) -> WarpTrace:
    """The warp trace with the given 2-D arrays' addresses remapped to transposed layouts."""
    h = trace.header
    layouts = array_layouts(h.ir_text)
    moves = []
    for arr in arrays:
        lay, base = layouts.get(arr), h.globals.get(arr)
        if lay is None or base is None or len(lay.dims) < 2:
            continue
        moves.append(([m.id for m in h.mem if array_name(m.base) == arr], base, lay))
    moved = frozenset(s for sids, _, _ in moves for s in sids)
    return dataclasses.replace(
        wt, addr=transposed_addresses(wt, moves), origin=Origin(wt, None, moved)
    )


def _as_soa(trace: Trace, wt: WarpTrace, arrays: tuple[str, ...]) -> WarpTrace:
    """The warp trace with the given arrays of structs remapped to one array per field
    (soa.py)."""
    h = trace.header
    structs = struct_arrays(h.ir_text)
    moves = [([m.id for m in h.mem if array_name(m.base) == a], h.globals[a], structs[a])
             for a in arrays if a in structs and a in h.globals]
    moved = frozenset(s for sids, _, _ in moves for s in sids)
    access = np.array([m.bytes for m in h.mem] or [4], np.int64)
    return dataclasses.replace(
        wt, addr=soa_addresses(wt, moves, access), origin=Origin(wt, None, moved)
    )


def _tile_exchanged(
    trace: Trace, wt: WarpTrace, arrays: tuple[str, ...], blocks: set[int] | None = None
) -> WarpTrace:
    """The warp trace with the given 2-D arrays' accesses (those in ``blocks`` only, when
    given) exchanged inside 32x32 tiles (tile_exchange.py)."""
    h = trace.header
    layouts = array_layouts(h.ir_text)
    moves = [([m.id for m in h.mem if array_name(m.base) == a
               and (blocks is None or m.block in blocks)], h.globals[a],
              layouts[a].dims[-1], layouts[a].elem_bytes)
             for a in arrays if a in h.globals and a in layouts and len(layouts[a].dims) >= 2]
    moved = frozenset(s for sids, *_ in moves for s in sids)
    return dataclasses.replace(
        wt, addr=tile_exchanged_addresses(wt, moves, 32), origin=Origin(wt, None, moved)
    )


def _l1_config(device: GPUDevice, wt: WarpTrace, block: Block) -> L1Config | None:
    """The L1 of devices that cache global loads there (device file: l1_caches_global_loads)."""
    if not device.l1_caches_global_loads:
        return None
    lines = device.l1_bytes // device.l1_line_bytes
    ways = min(device.l1_ways, lines)
    cfg = CacheConfig(device.l1_line_bytes, max(lines // ways, 1), ways)
    sms = max(min(device.sm_count, wt.blocks), 1)
    return L1Config(
        cfg,
        min(device.l2_sector_bytes, device.l1_line_bytes),
        sms,
        max(math.ceil(block.threads / 32), 1),
    )


def _inner_blocks(trace: Trace, region: int, grid: int) -> set[int]:
    """Blocks inside the mapped loops (the per-thread part of a kernel)."""
    inner = [lp for lp in trace.header.loops if lp.region == region and lp.depth == grid]
    return {b for lp in inner for b in lp.blocks}


def _resident_warps(device: GPUDevice, block: Block, registers: int, smem_bytes: int) -> int:
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
        t = _trip(sizes.trips[xloop[0]], tsz)
        grid_x = _trip(sizes.trips[xloop[0]], wsz) / t if t > 0 else 1.0
    warps_per_block = max(math.ceil(block.threads / 32), 1)
    blocks_per_batch = max(warps_per_batch // warps_per_block, 1)
    blocks_per_row = max(math.ceil(wt.grid_x / block.x), 1)
    per_row = max(math.ceil(blocks_per_row / blocks_per_batch), 1) if grid == 2 else 1 << 30
    # warps of one batch at the trace size and at the work size
    threads_work = float(wt.grid_x) * float(wt.grid_y) * max(grid_x, 1.0)
    if grid == 2 and d1 and d1[0] in sizes.trips:
        t = _trip(sizes.trips[d1[0]], tsz)
        threads_work *= max(_trip(sizes.trips[d1[0]], wsz) / t if t > 0 else 1.0, 1.0)
    trace_batch = min(max(wt.n_warps, 1), warps_per_batch)
    work_batch = min(max(threads_work / 32, 1.0), warps_per_batch)
    return CacheScale(
        max(footprint, 1.0), max(grid_x, 1.0), per_row, max(work_batch / trace_batch, 1.0)
    )


def _model_options(opts: RunOptions) -> dict:
    return {"batch_mode": opts.batch_mode} if opts.model == "cgpredict" else {}


def _occupancy_limit(geo) -> str:
    """What limits the warps an SM holds: the calculator's factor, or the grid itself when the
    launch has fewer blocks per SM than the calculator allows."""
    if geo.b_blocks < geo.occupancy.blocks_per_sm:
        return "grid size"
    return geo.occupancy.limiting_factor


def _check_block(block: Block, device: GPUDevice, warnings: list[str]) -> None:
    if block.threads > device.max_threads_per_block:
        raise MappingError(
            f"block {block} has {block.threads} threads; {device.name} allows "
            f"at most {device.max_threads_per_block} per block"
        )
    if block.x % 32 and block.threads % 32:
        warnings.append(
            f"block {block}: {block.threads} threads is not a multiple of the warp "
            f"size; the last warp of each block is partly idle"
        )


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
            t_trace, t_work = _trip(model, tsz), _trip(model, wsz)
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


def _resident_notes(resident, device: GPUDevice, name: str) -> list[str]:
    """Say which arrays the kernel finds in the L2 from earlier launches (residency.py)."""
    # scalars (a coefficient in a global) count in the model, not in the note
    items = sorted((r for r in resident if r.bytes >= device.l2_line_bytes), key=lambda r: r.array)
    if not items:
        return []
    what = ", ".join(
        f"{r.array} ({_mb(r.bytes)}, {_mb(r.since_bytes)} touched since)" for r in items
    )
    return [
        f"{name}: {what} still in the L2 from an earlier launch (up to "
        f"{_mb(device.persist_bytes)} persist): their first reads hit"
    ]


def _mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.1f} KB"


def _port_warnings(mem: tuple[MemInstrReport, ...], port: str, name: str) -> list[str]:
    """Name the accumulators a plain port stores on every iteration (port.py)."""
    kept = sorted({f"{m.text} ({m.location})" for m in mem if m.restored})
    if port != "plain" or not kept:
        return []
    return [
        f"{name}: {', '.join(kept)} stored on every iteration: in a plain port the array "
        f"pointers may alias, so nvcc keeps the accumulator in memory; __restrict__ "
        f"pointers or a local accumulator keep it in a register (--port restrict)"
    ]


def _mapping_warnings(trace: Trace, wt: WarpTrace, name: str) -> list[str]:
    out = []
    h = trace.header

    if wt.unmapped_events:
        out.append(
            f"{name}: {wt.unmapped_events} memory events lie outside the mapped loops "
            f"(loop invariants hoisted by the compiler, or an imperfect nest); they are "
            f"not assigned to threads"
        )
    if wt.divergent_insts:
        out.append(
            f"{name}: {wt.divergent_insts} of {wt.n_insts} warp instructions diverge "
            f"(lanes masked off by branches or by trip counts that differ between threads)"
        )
    if wt.dependence and wt.dependence.forwarded:
        out.append(
            f"{name}: inter-thread dependence: a loop mapped to threads carries a value "
            f"stored by one pseudo-thread to the next (the compiler forwards it in a "
            f"register); the GPU port needs another mapping or synchronisation"
        )
    elif wt.dependence:
        d = wt.dependence
        names = ", ".join(sorted({h.mem[s].base for s in d.store_ids + d.other_ids}))
        out.append(
            f"{name}: inter-thread dependence: {d.addresses} locations written by one "
            f"pseudo-thread are used by another ({names}); the GPU port needs "
            f"synchronisation or another mapping"
        )
    return out


def loop_unroll_at(trace: Trace, loop: int, ratio: float = 1.0) -> int:
    """How many iterations nvcc unrolls loop ``loop`` of ``trace`` into one trip
    (compute.loop_unroll), its iterations an entry grown by ``ratio`` to the work size: a loop
    of at most UNROLL_WHOLE iterations an entry (a strip-mined tile loop) is one of constant
    trip count in the port's code; a longer one is bounded by a size, a run-time parameter
    of the port. 1 for straight-line code (loop -1)."""
    if loop < 0:
        return 1
    entries = float(trace.loop_entries[:, loop].sum())
    per_entry = float(trace.loop_iters[:, loop].sum()) / entries if entries else 0.0
    return loop_unroll(per_entry * ratio)


def _load_latency(s, device: GPUDevice) -> float:
    """Mean latency of static load ``s`` (memory.InstrMemStats): the L1's for the warp
    instructions it serves, else the L2's plus DRAM's for the share of transactions that
    miss (SPEC eq. (2))."""
    total = max(s.total_warp_insts, 1)
    l1 = sum(s.l1_served) / total
    l2 = sum(s.l2_trans)
    miss = sum(s.dram_trans) / l2 if l2 else 0.0
    beyond = device.l2_latency_cycles + min(miss, 1.0) * device.dram_latency_cycles
    return l1 * device.l1_latency_cycles + (1 - l1) * beyond


def _busiest_share(wt) -> float:
    """How many times the mean pseudo-thread's memory events the busiest thread makes: a
    warp instruction holds at most one event of each lane, so the busiest warp's instruction
    count is its busiest lane's events at most (1 when every thread works alike)."""
    threads = max(wt.grid_x, 1) * max(wt.grid_y, 1)
    if not wt.n_events or not len(wt.inst_warp):
        return 1.0
    most = float(np.bincount(wt.inst_warp).max())
    return max(most / (wt.n_events / threads), 1.0)


def _memory_profile(
    trace: Trace,
    mem: MemoryAnalysis,
    per_thread: dict[int, float],
    region: int,
    skip: set[int] = frozenset(),
    restores: frozenset[int] = frozenset(),
):
    """Per-instruction reports and the per-pattern counts of the profile (SPEC §2.3)."""
    h = trace.header
    insts, l2, dram, served = [0.0] * 3, [0.0] * 3, [0.0] * 3, [0.0] * 3
    st_insts, st_l2, st_dram = [0.0] * 3, [0.0] * 3, [0.0] * 3
    write_back = 0.0
    reports = []
    for s in mem.instrs:
        m = h.mem[s.sid]
        count = per_thread.get(m.block, 0.0)
        staged = s.sid in skip  # staged in shared memory: modelled by shared_counts
        total = 0 if staged else s.total_warp_insts
        shares = tuple(w / total for w in s.warp_insts) if total else (0.0, 0.0, 0.0)
        for p in range(3):
            if shares[p]:
                n = count * shares[p]
                insts[p] += n
                l2[p] += n * s.l2_trans[p] / s.warp_insts[p]
                dram[p] += n * s.dram_trans[p] / s.warp_insts[p]
                served[p] += n * s.l1_served[p] / s.warp_insts[p]
                if m.kind == "store":
                    st_insts[p] += n
                    st_l2[p] += n * s.l2_trans[p] / s.warp_insts[p]
                    st_dram[p] += n * s.dram_trans[p] / s.warp_insts[p]
                    write_back += n * s.written[p] / s.warp_insts[p]
        reports.append(
            MemInstrReport(
                id=s.sid,
                text=m.base,
                location=f"{m.file}:{m.line}",
                kind=m.kind,
                pattern="shared" if staged else s.pattern,
                shares=shares,
                l2_trans_per_warp=sum(s.l2_trans) / total if total else 0.0,
                l2_hit_rate=0.0 if staged else s.l2_hit_rate,
                per_thread=count,
                restored=s.sid in restores and count > 1.5,
            )
        )
    patterns = []
    for p in range(3):
        reaching = insts[p] - served[p]  # warp instructions that go past the L1
        patterns.append(
            PatternCounts(
                insts[p],
                l2[p] / reaching if reaching > 1e-12 else 0.0,
                dram[p] / reaching if reaching > 1e-12 else 0.0,
                served[p] / insts[p] if insts[p] else 0.0,
            )
        )
    stores = StoreCounts(
        *(
            PatternCounts(n, st_l2[p] / n, st_dram[p] / n) if n > 1e-12 else PatternCounts()
            for p, n in enumerate(st_insts)
        ),
        write_back_trans=write_back,
    )
    return reports, patterns, stores
