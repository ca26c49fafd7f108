"""Analysis of one kernel (region) of a trace: warps, memory, computation, shared memory,
scaling to the work size, and the model, launch by launch (SPEC §2.2-2.6).

``analyze_region`` runs the steps in turn: the recorded launch that stands for the others
(``_first_launch``, eq. (RL)), its pseudo-warps (``_region_warps``), the tiles, resident
warps and growth to the work size (``setup_region`` -> ``RegionSetup``), the memory analysis
(``region_memory``), every launch modelled (``_model_launches``, ``LaunchContext.model``)
and the report (``_kernel_report``).
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

import numpy as np

from ..analysis_memo import AnalysisMemo
from ..atomics import PortShape, atomic_notes, drop_covered, find_sites
from ..block import MappingError
from ..devices import GPUDevice
from ..frontend.port import restoring_stores
from ..frontend.tracefile import TAG_BEGIN, Trace
from ..halo import HaloFigures, HaloSpec, halo_figures, halo_note
from ..memory.carryover import carry_capacity
from ..memory.footprint import (
    SizeCheck,
    check_lines,
    gathered_loads,
    moved_warning,
    pick_spans,
    size_check,
)
from ..memory.residency import Resident, warm_share
from ..memory.shared import array_name
from ..memory.transactions import MemoryAnalysis
from ..models import kernel_time
from ..parallelism import thread_bodies
from ..prediction import DEFAULT_BLOCKS, KernelReport, PredictionError, RunOptions
from ..register_block import (
    RegisterBlock,
    RegisterBlockFigures,
    reg_block_figures,
    reg_block_note,
)
from ..scaling import SizeModel
from ..sm_share import busiest_share
from ..warps import WarpTrace, form_warps, form_warps_auto, single_thread
from .checks import (
    check_block,
    mapping_warnings,
    port_warnings,
    replaced_block_warning,
    resident_notes,
    thread_warnings,
)
from .launch import LaunchContext, LaunchModel
from .launch_loops import trip
from .launch_parts import launch_rows
from .layouts import halo_staged, reg_blocked, remapped, row_warped
from .region import RegionSetup, is_store, region_memory, setup_region, with_registers
from .reloads import launch_reloads
from .standing import standing_launch


def function_line(ir_text: str, name: str) -> int:
    """Source line of function ``name`` (a --function kernel) from the IR's debug info; 0
    when it has none."""
    m = re.search(rf'DISubprogram\(name: "{re.escape(name)}",[^\n]*?\bline: (\d+)', ir_text)
    return int(m.group(1)) if m else 0


def _began(trace: Trace, region: int) -> bool:
    """Whether the events hold a BEGIN of ``region`` (a launch that began, with no end)."""
    ev = np.asarray(trace.events)
    begins = ev[(ev >> np.uint64(48)) == TAG_BEGIN]
    return bool(((begins >> np.uint64(32)) & np.uint64(0xFFFF) == region).any())


def _spans(trace: Trace, region: int, wt: WarpTrace) -> dict[int, float]:
    """The gathers' pick spans on the trace (footprint.pick_spans, eq. (LP2u)); without a
    gather the events are not read (a regrouped trace's stay uncopied: warp_regroup)."""
    sids = gathered_loads(trace, region)
    return pick_spans(wt.addr, wt.inst_start, wt.inst_sid, sids) if sids else {}


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
    wt = laid_out = remapped(trace, region, plain, opts)
    wt, halo = halo_staged(trace, region, wt, opts, device)
    wt, block_scale, thread_scale = row_warped(trace, region, wt, opts)
    opts, regs_from = with_registers(trace, region, plain.grid_dims, opts, device, sizes, tsz, wsz)
    wt, reg_block, opts = reg_blocked(trace, region, wt, opts, device)
    figures = _figures(halo, reg_block, wt.block.threads, opts.registers_per_thread)
    warnings += _figure_notes(info.name, figures)
    sites = find_sites(trace, region, wt.grid_dims, wt, device.l2_sector_bytes,
                       device.slice_map)
    warnings += drop_covered(mapping_warnings(trace, wt, info.name), sites)
    warnings += atomic_notes(sites, info.name, opts.reduce)
    warnings += thread_warnings(wt, info.name, device)
    setup = setup_region(trace, region, launch, wt, device, opts, sizes, tsz, wsz, warnings,
                   halo.bytes_per_block if halo else 0)
    check = size_check(trace, region, sizes, tsz, wsz, device, _spans(trace, region, wt),
                       setup.l1_bytes)
    mem = region_memory(setup, device, check.gathers, check.l1_gathers)
    restores = _restores(trace, region, launch, plain, wt, opts, memo)
    ctx = LaunchContext(
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
        staged=setup.staged + (tuple(a for a in halo.reads if a.sid not in halo.rounds)
                               if halo else ()),
        shared_spec=setup.shared_spec,
        halo=halo,
        block_scale=block_scale,
        thread_scale=thread_scale,
        reg_block=reg_block,
        rows=reg_block.rows if reg_block else 1,
        scale=(halo.scale if halo else ()) + (reg_block.scale if reg_block else ()),
        bodies=_bodies(trace, region, setup.grid, memo),
        busiest=busiest_share(wt),
        warps=wt,
        restores=restores,
        **_memo_kept(memo),
        reloads=launch_reloads(trace, (region, launch, plain.grid_dims, restores), plain,
                               laid_out, wt, opts, memo),
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
    report = _kernel_report(setup, ctx, _model_launches(setup, ctx), check, warnings, figures)
    return dataclasses.replace(report, registers_from=regs_from)


def _memo_kept(memo: AnalysisMemo | None) -> dict[str, dict]:
    """The trace's memo dictionaries a LaunchContext keeps its counts, launch rows and lane
    factors in (fresh ones without a memo)."""
    if memo is None:
        return {"counts_kept": {}, "rows_kept": {}, "lanes_kept": {}}
    return {"counts_kept": memo.counts, "rows_kept": memo.rows, "lanes_kept": memo.lanes}


_Figures = tuple[HaloFigures | None, RegisterBlockFigures | None]


def _figures(halo: HaloSpec | None, reg_block: RegisterBlock | None, threads: int,
             registers: int) -> _Figures:
    """The report's figures of the launch's halo tile (blocks of ``threads``) and register
    blocking (``registers`` a thread, the added ones included); None where there is none."""
    return (None if halo is None else halo_figures(halo, threads),
            None if reg_block is None else reg_block_figures(reg_block, registers))


def _figure_notes(name: str, figures: _Figures) -> list[str]:
    """The lines kernel ``name``'s report carries of its halo tile and register blocking."""
    halo, reg_block = figures
    return ([halo_note(name, halo)] if halo else []) + (
        [reg_block_note(name, reg_block)] if reg_block else [])


def _restores(
    trace: Trace, region: int, launch: int, plain: WarpTrace, wt: WarpTrace, opts: RunOptions,
    memo: AnalysisMemo | None,
) -> frozenset[int]:
    """``port.restoring_stores`` of the launch's warps ``wt`` (``plain`` before the layout
    changes of ``opts``). With a ``memo``: that of ``plain``, kept once for every block shape
    (analysis_memo), and only the stores of the arrays a layout change moves decided anew:
    the function decides each static store from its own events alone, and the others' are
    those of ``plain``. A halo tile, a warp per row or register blocking (of threads that
    share an address) regroups the threads: decided anew."""
    store = is_store(trace)
    # register blocking joins R threads: a store restores in the joined thread only if two
    # of them write one address, an inter-thread dependence ``plain`` would show
    joined = bool(opts.reg_block) and plain.dependence is not None
    if memo is None or opts.halo or opts.row_warp or joined:  # warps regrouped
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


def _bodies(trace: Trace, region: int, grid: int, memo: AnalysisMemo | None):
    """``thread_bodies`` of the region on a ``grid``-D grid, kept in the ``memo`` (a pure
    function of the trace: the block and the layout do not change it)."""
    if memo is None:
        return thread_bodies(trace, region, grid)
    if (region, grid) not in memo.bodies:
        memo.bodies[(region, grid)] = thread_bodies(trace, region, grid)
    return memo.bodies[(region, grid)]


def _first_launch(trace: Trace, region: int, info) -> int:
    """The recorded launch of ``region`` whose pseudo-warps stand for all of them: the first
    that fills a warp, else the first (eq. (RL), standing.py); one line saying why when the
    kernel never ran (or began and never ended)."""
    rows = np.flatnonzero((trace.launches["region"] == region) & (trace.launches["recorded"] == 1))
    if len(rows):
        standing = standing_launch(trace, region)  # (RL)
        return int(rows[0]) if standing is None else standing
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
        stores = is_store(trace)
        block2 = opts.block or DEFAULT_BLOCKS[2]
        block1 = opts.block if opts.block and opts.block.y == 1 else DEFAULT_BLOCKS[1]
        for b in {block1, block2}:
            check_block(b, device, warnings)
        fixed = opts.grid or info.grid
        key = (region, launch, fixed, block2, block1)
        parts = memo.launch_parts if memo is not None else None
        if memo is not None and key in memo.warps:
            wt = memo.warps[key]
        elif fixed:
            block = block2 if fixed == 2 else block1
            wt = form_warps(trace, region, launch, fixed, block, stores, parts)
        else:
            wt = form_warps_auto(trace, region, launch, block2, block1, stores, parts)
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


@dataclass(frozen=True)
class _Launches:
    """The distinct launch models of a region (``LaunchModel`` by key: block and loop
    counts and the arrays found in the L2), how many trace launches each stands for, and the
    key of every trace launch."""

    models: dict[bytes, LaunchModel]
    counts: dict[bytes, int]
    keys: dict[int, bytes]
    energy_mj: float | None  # every trace launch; None when the device has no energy table
    resident: tuple[Resident, ...]
    work_launches: int  # launches at the work size
    rows: int  # launches in the trace


def _model_launches(setup: RegionSetup, ctx: LaunchContext) -> _Launches:
    """Model every launch of the region in the trace. Launches with identical block and loop
    counts (FDTD time steps) and the same data left in the L2 by earlier launches
    (residency.py) are modelled once; launches with the same data left there share one
    memory analysis (warm_start), so that they share the parts of their models kept by it
    (launch_parts.kept_part)."""
    trace, region, sizes, wsz, device = setup.trace, setup.region, setup.sizes, setup.wsz, \
        ctx.device
    h = trace.header
    rows = launch_rows(trace, region, sizes, wsz, device.persist_bytes, ctx.rows_kept, ctx.tsz,
                       carry_capacity(device))
    launches_work = (
        max(int(round(trip(sizes.launches[region], wsz))), 1)
        if region in sizes.launches
        else len(rows)
    )
    models: dict[bytes, LaunchModel] = {}
    counts: dict[bytes, int] = {}
    keys: dict[int, bytes] = {}
    energy = 0.0
    resident: dict[str, Resident] = {}
    # per set of arrays left in the L2: their static instructions as bytes, and the memory
    # analysis with them warm
    warm_of: dict[tuple, tuple[bytes, MemoryAnalysis]] = {}
    for lr in rows:
        res, row = lr.resident, lr.row
        names = frozenset(r.array for r in res)
        if (names, lr.carried) not in warm_of:
            warm = frozenset(
                s.sid for s in ctx.mem.instrs if array_name(h.mem[s.sid].base) in names
            )
            part = dict(lr.carried)  # eq. (CO1): a share of a partly left array
            shares = {s.sid: part[a] for s in ctx.mem.instrs
                      if (a := array_name(h.mem[s.sid].base)) in part}
            warm_of[(names, lr.carried)] = (
                np.array(sorted(warm), np.int64).tobytes() + repr(sorted(shares.items())).encode(),
                warm_share(ctx.mem, {**dict.fromkeys(warm, 1.0), **shares}))
        warm_key, warm_mem = warm_of[(names, lr.carried)]
        key = keys[row] = lr.counts_key + warm_key
        if key not in models:
            models[key] = ctx.model(row, warm_mem)[0]
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
        rows=len(rows),
    )


def _kernel_report(
    setup: RegionSetup, ctx: LaunchContext, ls: _Launches, check: SizeCheck,
    warnings: list[str], figures: _Figures = (None, None),
) -> KernelReport:
    """The region's report: the standing launch's model (eq. (RL)), and every launch at the
    work size (each distinct launch's time and energy weighted by the launches it stands
    for)."""
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
    if check.gathers or check.l1_gathers:  # with the trace's own reuse of the gathers
        plain_mem = region_memory(setup, device)
        plain = dataclasses.replace(ctx, mem=plain_mem).model(setup.launch)[0]
        moved = moved_warning(info.name, check, first.result.time_ms, plain.result.time_ms)
    else:
        moved = []
    warnings = [
        *warnings,
        *first.warnings,
        *moved,
        *resident_notes(ls.resident, device, info.name),
        *port_warnings(first.mem, h.port, info.name),
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
        halo=figures[0],
        reg_block=figures[1],
    )


def _occupancy_limit(geo) -> str:
    """What limits the warps an SM holds: the calculator's factor, or the grid itself when the
    launch has fewer blocks per SM than the calculator allows."""
    if geo.b_blocks < geo.occupancy.blocks_per_sm:
        return "grid size"
    return geo.occupancy.limiting_factor


