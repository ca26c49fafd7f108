"""The whole prediction: trace -> warps -> memory + computation analysis -> model -> report.

``predict_source`` is what ``cgpredict run`` calls; ``analyze_trace`` does the same from a saved
trace (``cgpredict run --from-trace``), so the model can be re-run without a compiler.
"""

from __future__ import annotations

import dataclasses
import math
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .cache import CacheConfig
from .compute import ComputeCounts, compute_counts
from .devices import GPUDevice, load_device
from .energy import predict_energy
from .errors import CGPredictError
from .memory import (COAL, CONST, PATTERN_NAMES, UNCOAL, CacheScale, L1Config, MemoryAnalysis,
                     analyze_memory)
from .models import predict as model_predict
from .profile import KernelProfile, PatternCounts, SharedMemoryCounts
from .regions import mark_regions
from .shared import (StagedAccess, array_layouts, array_name, staged_accesses, tile_bytes,
                     transpose_addresses)
from .scaling import (PROBES, SizeModel, TripModel, default_sizes, overridable_sizes,
                      probe_sizes)
from .tracefile import Trace
from .tracer import TraceOptions, trace_program
from .warps import (Block, MappingError, WarpTrace, form_warps, form_warps_auto,
                    mapped_loops, perfectly_nested)

SCHEMA_VERSION = 1
DEFAULT_BLOCKS = {1: Block(256, 1), 2: Block(32, 32)}


class PredictionError(CGPredictError):
    exit_code = 2


@dataclass(frozen=True)
class RunOptions:
    """What to predict: block shape and grid, device, model, sizes and tracing limits."""

    block: Block | None = None
    grid: int | None = None
    device: str = "tk1"
    model: str = "cgpredict"
    work_sizes: dict[str, int] = field(default_factory=dict)
    trace_sizes: dict[str, int] = field(default_factory=dict)
    functions: tuple[str, ...] = ()
    timeout_s: float = 120.0
    max_events: int = 200_000_000
    registers_per_thread: int = 32
    batch_mode: str = "whole"
    max_launches: int = 2  # launches per kernel whose memory events are recorded and analysed
    transpose: tuple[str, ...] = ()  # 2-D arrays to analyse in transposed layout (advisor)
    stage: tuple[tuple[str, int, int], ...] = ()  # extra shared-memory tiles (advisor)


@dataclass(frozen=True)
class MemInstrReport:
    """One static memory instruction of a kernel, as the GPU would see it."""

    id: int
    text: str
    location: str
    kind: str
    pattern: str
    shares: tuple[float, float, float]  # of its warp instructions: coal, uncoal, const
    l2_trans_per_warp: float
    l2_hit_rate: float
    per_thread: float  # executions per thread at the work size


@dataclass(frozen=True)
class KernelReport:
    name: str
    location: str
    grid_dims: int
    block: str
    grid_threads: tuple[int, int]  # (x, y) at the work size
    blocks: int
    launches: int
    profile: KernelProfile
    result: object  # models.ModelResult
    mem: tuple[MemInstrReport, ...]
    l2_hit_rate: float
    warnings: tuple[str, ...]
    total_ms: float  # every launch at the work size
    distinct_launches: int = 1  # launches of the trace that needed their own model evaluation
    energy_mj: float | None = None  # every launch; None when the device has no energy table

    @property
    def time_ms(self) -> float:
        return self.total_ms


@dataclass(frozen=True)
class Report:
    source: str
    device: str
    model: str
    work_sizes: dict[str, int]
    trace_sizes: dict[str, int]
    kernels: tuple[KernelReport, ...]
    warnings: tuple[str, ...]
    seconds: dict[str, float]

    @property
    def total_ms(self) -> float:
        return sum(k.time_ms for k in self.kernels)

    @property
    def total_energy_mj(self) -> float | None:
        parts = [k.energy_mj for k in self.kernels]
        return None if not parts or any(p is None for p in parts) else sum(parts)


AUTO_TRACE_START = 32


def resolve_sizes(source_text: str, work: dict[str, int], trace: dict[str, int]):
    """(work sizes, trace sizes, automatic?): the file's defaults and declared trace size,
    overridden by the options. Without a declared or given trace size, the trace size is
    chosen automatically (``prepare`` grows it from AUTO_TRACE_START)."""
    declared = mark_regions(source_text).trace_sizes
    names = set(declared) | set(work) | set(trace) | set(overridable_sizes(source_text))
    defaults = default_sizes(source_text, names)
    work_sizes = {**defaults, **work}
    trace_sizes = {**{n: v for n, v in work_sizes.items()}, **declared, **trace}
    # never trace more than the work: a declared trace size above a small -D is clamped
    trace_sizes = {n: min(v, work_sizes.get(n, v)) for n, v in trace_sizes.items()}
    auto = not declared and not trace and bool(work_sizes)
    if auto:
        trace_sizes = {n: min(v, AUTO_TRACE_START) for n, v in work_sizes.items()}
    return work_sizes, trace_sizes, auto


def min_threads(trace: Trace) -> int:
    """Pseudo-threads of the smallest kernel launch in a trace: the iterations of the depth-2
    loop for a kernel that can be a 2-D grid (grid hint, or perfectly nested), else of the
    depth-1 loop."""
    is_store = np.array([m.kind == "store" for m in trace.header.mem] or [False])
    out = []
    for r in trace.header.regions:
        rows = np.flatnonzero((trace.launches["region"] == r.index)
                              & (trace.launches["recorded"] == 1))
        d1, d2 = mapped_loops(trace, r.index)
        if not len(rows) or not d1:
            continue
        two_d = r.grid == 2 or (r.grid == 0 and perfectly_nested(trace, r.index, int(rows[0]),
                                                                 is_store))
        out.append(int(trace.loop_iters[rows[0], d2 if two_d and d2 else d1].sum()))
    return min(out, default=0)


@dataclass
class Prepared:
    """A traced program ready to be analysed any number of times (advisor sweeps): the trace,
    its trip-count models and sizes. Owns the temporary trace files; use as a context manager."""

    trace: Trace
    sizes: SizeModel
    trace_sizes: dict[str, int]
    work_sizes: dict[str, int]
    seconds: dict[str, float]
    _tmp: tempfile.TemporaryDirectory

    def close(self) -> None:
        self._tmp.cleanup()

    def __enter__(self) -> "Prepared":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def analyze(self, opts: RunOptions, device: GPUDevice | None = None) -> Report:
        t0 = time.perf_counter()
        dev = device or load_device(opts.device)
        rep = analyze_trace(self.trace, dev, opts, self.sizes, self.trace_sizes, self.work_sizes)
        secs = {**self.seconds, "analysis": time.perf_counter() - t0}
        secs["total"] = sum(secs.values())
        return dataclasses.replace(rep, seconds=secs)


def prepare(source: Path, opts: RunOptions, progress=None) -> Prepared:
    """Trace ``source`` at the trace size and fit its trip counts for the work size."""
    t0 = time.perf_counter()
    text = Path(source).read_text()
    work, tsizes, auto = resolve_sizes(text, opts.work_sizes, opts.trace_sizes)
    wanted = 2 * load_device(opts.device).max_threads_per_sm  # SPEC §2.1
    tmpdir = tempfile.TemporaryDirectory(prefix="cgp-run-")
    tmp = tmpdir.name
    try:
        def run(sizes, name, count_only=False):
            o = TraceOptions({k: str(v) for k, v in sizes.items()}, opts.functions, opts.timeout_s,
                             opts.max_events, opts.max_launches, count_only=count_only)
            return trace_program(Path(source), Path(tmp) / name, o)

        _step(progress, "tracing")
        trace = run(tsizes, "trace.cgptrace")
        while auto and min_threads(trace) < wanted and tsizes != work:
            tsizes = {n: min(v * 2, work[n]) for n, v in tsizes.items()}
            _step(progress, f"tracing at {tsizes}")
            trace = run(tsizes, "trace.cgptrace")
        t1 = time.perf_counter()
        if work != tsizes and tsizes:
            _step(progress, "probing loop bounds")
            runs = [(tsizes, trace)]
            for k in range(PROBES):
                probe = {**tsizes, **probe_sizes(tsizes, k)}
                runs.append((probe, run(probe, f"probe{k}.cgptrace", True)))
            sizes_model = SizeModel.from_runs(runs)
        else:
            sizes_model = SizeModel.constant(trace)
        t2 = time.perf_counter()
    except BaseException:
        tmpdir.cleanup()
        raise
    return Prepared(trace, sizes_model, tsizes, work, {"trace": t1 - t0, "probes": t2 - t1},
                    tmpdir)


def predict_source(source: Path, opts: RunOptions, progress=None) -> Report:
    """Trace ``source`` at the trace size and predict it at the work size."""
    with prepare(source, opts, progress) as prep:
        _step(progress, "analysing")
        return prep.analyze(opts)


def _step(progress, what: str) -> None:
    if progress is not None:
        progress(what)


def analyze_trace(trace: Trace, device: GPUDevice, opts: RunOptions,
                  sizes: SizeModel | None = None, trace_sizes: dict[str, int] | None = None,
                  work_sizes: dict[str, int] | None = None) -> Report:
    """Predict every region of a trace (work size = trace size unless a SizeModel says)."""
    sizes = sizes or SizeModel.constant(trace)
    tsz = trace_sizes or {}
    wsz = work_sizes or tsz
    warnings = []
    if sizes.inexact():
        lines = sorted({lp.line for lp in trace.header.loops if lp.id in sizes.inexact()})
        warnings.append(f"loops at lines {lines} have trip counts that are not affine in one "
                        f"size macro; their work-size counts are approximate")
    if sizes.folded:
        lines = sorted({line for _, line, _ in sizes.folded})
        warnings.append(f"loops at lines {lines} run at other sizes but were folded away by "
                        f"the compiler at the trace size (a single iteration): counts inside "
                        f"them are underestimated; trace a size where every loop iterates "
                        f"at least twice")
    kernels = []
    for r in trace.header.regions:
        kernels.append(analyze_region(trace, r.index, device, opts, sizes, tsz, wsz))
    return Report(trace.header.source_name, device.name, opts.model, wsz, tsz, tuple(kernels),
                  tuple(warnings), {})


def _trip(model: TripModel, sizes: dict[str, int]) -> float:
    try:
        return max(model(sizes), 0.0)
    except KeyError:
        return model.alpha


def analyze_region(trace: Trace, region: int, device: GPUDevice, opts: RunOptions,
                   sizes: SizeModel, tsz: dict[str, int], wsz: dict[str, int]) -> KernelReport:
    h = trace.header
    info = h.region(region)
    rows = np.flatnonzero((trace.launches["region"] == region) & (trace.launches["recorded"] == 1))
    if not len(rows):
        raise PredictionError(f"kernel {info.name}: no launch was recorded (did it run?)")
    launch = int(rows[0])
    warnings: list[str] = []
    try:
        is_store = np.array([m.kind == "store" for m in h.mem] or [False])
        block2 = opts.block or DEFAULT_BLOCKS[2]
        block1 = opts.block if opts.block and opts.block.y == 1 else DEFAULT_BLOCKS[1]
        for b in {block1, block2}:
            _check_block(b, device, warnings)
        fixed = opts.grid or info.grid
        if fixed:
            block = block2 if fixed == 2 else block1
            wt = form_warps(trace, region, launch, fixed, block, is_store)
        else:
            wt = form_warps_auto(trace, region, launch, block2, block1, is_store)
        grid, block = wt.grid_dims, wt.block
        if grid == 1 and opts.block and opts.block != block:
            warnings.append(f"{info.name} is a 1-D kernel: block {opts.block} replaced by {block}")
    except MappingError as exc:
        raise PredictionError(f"kernel {info.name}: {exc}") from None
    if opts.transpose:
        wt = _transposed(trace, wt, opts.transpose)
    access_bytes = np.array([m.bytes for m in h.mem] or [4])
    cache = CacheConfig(device.l2_line_bytes, device.l2_sets, device.l2_ways)
    warps_per_batch = max(device.max_threads_per_sm * device.sm_count // 32, 1)
    warnings += _mapping_warnings(trace, wt, info.name)
    if wt.n_threads < 2 * device.max_threads_per_sm:
        warnings.append(f"{info.name}: only {wt.n_threads} pseudo-threads traced, fewer than "
                        f"2 x threads_per_SM = {2 * device.max_threads_per_sm}; trace a larger "
                        f"size for representative cache behaviour")

    staged, shared_spec = _shared_setup(trace, region, wt, device, block, opts.stage)
    d1, d2 = mapped_loops(trace, region)
    factor = _block_factors(trace, region, grid, sizes, tsz, wsz)
    scale = _cache_scale(trace, region, grid, block, wt, d1, d2, sizes, tsz, wsz, factor,
                         warps_per_batch)
    mem = analyze_memory(wt, access_bytes, cache, warps_per_batch, scale,
                         device.l2_sector_bytes, _l1_config(device, wt, block), is_store)
    all_rows = np.flatnonzero(trace.launches["region"] == region)
    launches_work = max(int(round(_trip(sizes.launches[region], wsz))), 1) \
        if region in sizes.launches else len(all_rows)
    ctx = _LaunchContext(trace, region, grid, block, d1, d2, sizes, tsz, wsz, factor, mem,
                         opts, device, info.name, staged, shared_spec)
    # Launches with identical block and loop counts (FDTD time steps) are modelled once.
    cache: dict[bytes, tuple] = {}
    total_ms, energy = 0.0, 0.0
    for row in all_rows:
        key = trace.bb_counts[row].tobytes() + trace.loop_iters[row].tobytes()
        if key not in cache:
            cache[key] = ctx.model(int(row))
        lm = cache[key][0]
        total_ms += lm.result.time_ms
        energy = None if energy is None or lm.energy_mj is None else energy + lm.energy_mj
    per_trace_launch = launches_work / max(len(all_rows), 1)
    total_ms *= per_trace_launch
    energy = None if energy is None else energy * per_trace_launch
    first = cache[trace.bb_counts[launch].tobytes() + trace.loop_iters[launch].tobytes()][0]
    warnings += first.warnings
    return KernelReport(
        name=info.name, location=f"{h.source_name}:{info.line}", grid_dims=grid,
        block=str(block), grid_threads=first.grid_threads, blocks=first.blocks,
        launches=launches_work, profile=first.profile, result=first.result,
        mem=first.mem, l2_hit_rate=mem.l2_hit_rate, warnings=tuple(warnings),
        total_ms=total_ms, distinct_launches=len(cache), energy_mj=energy)


@dataclass(frozen=True)
class _LaunchModel:
    profile: KernelProfile
    result: object
    grid_threads: tuple[int, int]
    blocks: int
    mem: tuple[MemInstrReport, ...]
    warnings: tuple[str, ...]
    energy_mj: float | None = None


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
    shared_spec: tuple[int, float, int, float] | None = None  # see _shared_setup

    def extents(self, row: int) -> tuple[float, float]:
        """(x, y) pseudo-threads of trace launch ``row``, scaled to the work size."""
        tr = self.trace
        inner = self.d2 if self.grid == 2 else self.d1
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

    def model(self, row: int) -> tuple[_LaunchModel]:
        tr, h = self.trace, self.trace.header
        inner = self.d2 if self.grid == 2 else self.d1
        threads = float(tr.loop_iters[row, inner].sum())
        bb = tr.bb_counts[row].astype(np.float64)
        per_thread = {b.id: (bb[b.id] / threads if threads else 0.0) * self.factor.get(b.id, 1.0)
                      for b in h.blocks if b.region in (self.region, -1)}
        gx, gy = self.extents(row)
        blocks = max(math.ceil(gx / self.block.x) * math.ceil(gy / self.block.y), 1)
        skip = {a.sid for a in self.staged}
        mem_reports, patterns = _memory_profile(tr, self.mem, per_thread, self.region, skip)
        shared, sync = self.shared_counts(row, per_thread, threads)
        ops: Counter = Counter()
        for b in h.blocks:
            n = per_thread.get(b.id, 0.0)
            if n:
                for opcode, ty, detail, k in b.ops:
                    ops[(opcode, ty, detail)] += n * k
        comp: ComputeCounts = compute_counts(ops)
        warnings = []
        if comp.unknown_calls:
            warnings.append(f"calls to {', '.join(comp.unknown_calls)} counted as one "
                            f"instruction each")
        profile = KernelProfile(
            name=self.name, threads_per_block=self.block.threads, blocks=blocks,
            coal=patterns[COAL], uncoal=patterns[UNCOAL], const=patterns[CONST],
            comp_insts=comp.total, sfu_insts=comp.sfu, fp_insts=comp.fp,
            registers_per_thread=self.opts.registers_per_thread, launches=1,
            shared=shared, sync_insts=sync,
        )
        result = model_predict(profile, self.device, self.opts.model,
                               **_model_options(self.opts))
        est = predict_energy(profile, self.device, result.time_ms)
        return (_LaunchModel(profile, result, (int(gx), int(gy)), blocks, tuple(mem_reports),
                             tuple(warnings), est.total_mj if est else None),)


    def shared_counts(self, row: int, per_thread: dict, threads: float):
        """SharedMemoryCounts and barriers per thread of a tiled launch (SPEC §2.6)."""
        if not self.staged or self.shared_spec is None:
            return SharedMemoryCounts(), 0.0
        tile_loop, loads_per_phase, nbytes, divisor = self.shared_spec
        iters = float(self.trace.loop_iters[row, tile_loop])
        phases = (iters / threads if threads else 0.0) * self._ratio(tile_loop) / divisor
        by_x: dict[float, float] = {}
        h = self.trace.header
        for a in self.staged:
            count = per_thread.get(h.mem[a.sid].block, 0.0)
            total = sum(c for _, c in a.conflicts)
            for x, c in a.conflicts:
                by_x[float(x)] = by_x.get(float(x), 0.0) + count * c / total
        return (SharedMemoryCounts(phases * loads_per_phase, tuple(sorted(by_x.items())), nbytes),
                2.0 * phases)


def _transposed(trace: Trace, wt: WarpTrace, arrays: tuple[str, ...]) -> WarpTrace:
    """The warp trace with the given 2-D arrays' addresses remapped to transposed layouts."""
    h = trace.header
    layouts = array_layouts(h.ir_text)
    events = wt.events.copy()
    for arr in arrays:
        lay, base = layouts.get(arr), h.globals.get(arr)
        if lay is None or base is None or len(lay.dims) < 2:
            continue
        sids = [m.id for m in h.mem if array_name(m.base) == arr]
        mine = np.isin(events["sid"], sids)
        events["addr"][mine] = transpose_addresses(events["addr"][mine], base, lay)
    return dataclasses.replace(wt, events=events)


def _shared_setup(trace: Trace, region: int, wt: WarpTrace, device: GPUDevice, block: Block,
                  extra: tuple = ()):
    """Staged accesses and (tile loop, staging loads per phase, tile bytes, phase divisor) of a
    tiled kernel. ``extra`` stages arrays of an untiled kernel (the advisor's modelled tiling):
    its innermost loop then counts tile phases every ``tile columns`` iterations."""
    h = trace.header
    hints = tuple(h.region(region).shared) + tuple(extra)
    if not hints:
        return (), None
    layouts = array_layouts(h.ir_text)
    texts = {m.id: m.base for m in h.mem if m.region == region}
    staged = staged_accesses(wt, texts, hints, layouts, device.smem_banks,
                             device.smem_bank_bytes, h.globals)
    if not staged:
        return (), None
    loops = [lp for lp in h.loops if lp.region == region]
    blk = h.mem[staged[0].sid].block
    inner = max((lp for lp in loops if blk in lp.blocks), key=lambda lp: lp.depth, default=None)
    if inner is None:
        return (), None
    strip_mined = bool(h.region(region).shared) and inner.parent >= 0
    tile_loop = inner.parent if strip_mined else inner.id
    divisor = 1.0 if strip_mined else float(max(c for _, _, c in hints))
    used = {a.array for a in staged}
    hints = tuple(x for x in hints if x[0] in used)
    loads = sum(math.ceil(r * c / block.threads) for _, r, c in hints)
    return staged, (tile_loop, float(loads), tile_bytes(hints, layouts), divisor)


def _l1_config(device: GPUDevice, wt: WarpTrace, block: Block) -> L1Config | None:
    """The L1 of devices that cache global loads there (device file: l1_caches_global_loads)."""
    if not device.l1_caches_global_loads:
        return None
    lines = device.l1_bytes // device.l1_line_bytes
    ways = min(device.l1_ways, lines)
    cfg = CacheConfig(device.l1_line_bytes, max(lines // ways, 1), ways)
    sms = max(min(device.sm_count, wt.blocks), 1)
    return L1Config(cfg, min(device.l2_sector_bytes, device.l1_line_bytes), sms,
                    max(math.ceil(block.threads / 32), 1))


def _inner_blocks(trace: Trace, region: int, grid: int) -> set[int]:
    """Blocks inside the mapped loops (the per-thread part of a kernel)."""
    inner = [lp for lp in trace.header.loops if lp.region == region and lp.depth == grid]
    return {b for lp in inner for b in lp.blocks}


def _cache_scale(trace, region, grid, block, wt, d1, d2, sizes, tsz, wsz, factor,
                 warps_per_batch) -> CacheScale:
    """Reuse-distance growth from trace to work size (memory.scale_hits)."""
    footprint = max((f for b, f in factor.items()
                     if b in _inner_blocks(trace, region, grid)), default=1.0)
    xloop = d2 if grid == 2 else d1
    grid_x = 1.0
    if xloop and xloop[0] in sizes.trips:
        t = _trip(sizes.trips[xloop[0]], tsz)
        grid_x = _trip(sizes.trips[xloop[0]], wsz) / t if t > 0 else 1.0
    warps_per_block = max(math.ceil(block.threads / 32), 1)
    blocks_per_batch = max(warps_per_batch // warps_per_block, 1)
    blocks_per_row = max(math.ceil(wt.grid_x / block.x), 1)
    per_row = max(blocks_per_row // blocks_per_batch, 1) if grid == 2 else 1 << 30
    return CacheScale(max(footprint, 1.0), max(grid_x, 1.0), per_row)


def _model_options(opts: RunOptions) -> dict:
    return {"batch_mode": opts.batch_mode} if opts.model == "cgpredict" else {}


def _check_block(block: Block, device: GPUDevice, warnings: list[str]) -> None:
    if block.threads > device.max_threads_per_block:
        raise MappingError(f"block {block} has {block.threads} threads; {device.name} allows "
                           f"at most {device.max_threads_per_block} per block")
    if block.x % 32 and block.threads % 32:
        warnings.append(f"block {block}: {block.threads} threads is not a multiple of the warp "
                        f"size; the last warp of each block is partly idle")


def _block_factors(trace: Trace, region: int, grid: int, sizes: SizeModel, tsz, wsz):
    """Per-thread count growth of each block from trace to work size: the product of
    T(work)/T(trace) over every loop enclosing the block, divided by the growth of the thread
    count (the mapped loops). Blocks inside all mapped loops keep the per-thread loops' ratios;
    a block of the y loop outside the x loop shrinks per thread as x grows."""
    ratio: dict[int, float] = {}
    for lp in trace.header.loops:
        model = sizes.trips.get(lp.id)
        if lp.region == region and model is not None:
            t_trace, t_work = _trip(model, tsz), _trip(model, wsz)
            ratio[lp.id] = t_work / t_trace if t_trace > 0 else 1.0
    mapped = [lp for lp in trace.header.loops if lp.region == region and lp.depth <= grid]
    thread_growth = 1.0
    for lp in mapped:
        thread_growth *= ratio.get(lp.id, 1.0)
    out: dict[int, float] = {b.id: 1.0 / thread_growth for b in trace.header.blocks
                             if b.region == region}
    for lp in trace.header.loops:
        if lp.region == region and lp.id in ratio:
            for b in lp.blocks:
                out[b] = out.get(b, 1.0 / thread_growth) * ratio[lp.id]
    return out


def _mapping_warnings(trace: Trace, wt: WarpTrace, name: str) -> list[str]:
    out = []
    h = trace.header

    if wt.unmapped_events:
        out.append(f"{name}: {wt.unmapped_events} memory events lie outside the mapped loops "
                   f"(loop invariants hoisted by the compiler, or an imperfect nest); they are "
                   f"not assigned to threads")
    if wt.divergent_insts:
        out.append(f"{name}: {wt.divergent_insts} of {wt.n_insts} warp instructions diverge "
                   f"(threads of a warp run different memory instructions)")
    if wt.dependence and wt.dependence.forwarded:
        out.append(f"{name}: inter-thread dependence: a loop mapped to threads carries a value "
                   f"stored by one pseudo-thread to the next (the compiler forwards it in a "
                   f"register); the GPU port needs another mapping or synchronisation")
    elif wt.dependence:
        d = wt.dependence
        names = ", ".join(sorted({h.mem[s].base for s in d.store_ids + d.other_ids}))
        out.append(f"{name}: inter-thread dependence: {d.addresses} locations written by one "
                   f"pseudo-thread are used by another ({names}); the GPU port needs "
                   f"synchronisation or another mapping")
    return out


def _memory_profile(trace: Trace, mem: MemoryAnalysis, per_thread: dict[int, float],
                    region: int, skip: set[int] = frozenset()):
    """Per-instruction reports and the per-pattern counts of the profile (SPEC §2.3)."""
    h = trace.header
    insts = np.zeros(3)
    l2 = np.zeros(3)
    dram = np.zeros(3)
    served = np.zeros(3)
    reports = []
    for s in mem.instrs:
        m = h.mem[s.sid]
        count = per_thread.get(m.block, 0.0)
        if s.sid in skip:  # staged in shared memory: modelled by shared_counts
            reports.append(MemInstrReport(
                id=s.sid, text=m.base, location=f"{m.file}:{m.line}", kind=m.kind,
                pattern="shared", shares=(0.0, 0.0, 0.0), l2_trans_per_warp=0.0,
                l2_hit_rate=0.0, per_thread=count))
            continue
        total = s.total_warp_insts
        shares = tuple(w / total for w in s.warp_insts) if total else (0.0, 0.0, 0.0)
        for p in range(3):
            if s.warp_insts[p]:
                n = count * shares[p]
                insts[p] += n
                l2[p] += n * s.l2_trans[p] / s.warp_insts[p]
                dram[p] += n * s.dram_trans[p] / s.warp_insts[p]
                served[p] += n * s.l1_served[p] / s.warp_insts[p]
        reports.append(MemInstrReport(
            id=s.sid, text=m.base, location=f"{m.file}:{m.line}", kind=m.kind,
            pattern=s.pattern, shares=shares,
            l2_trans_per_warp=sum(s.l2_trans) / total if total else 0.0,
            l2_hit_rate=s.l2_hit_rate, per_thread=count))
    patterns = []
    for p in range(3):
        reaching = insts[p] - served[p]  # warp instructions that go past the L1
        patterns.append(PatternCounts(
            insts[p], l2[p] / reaching if reaching > 1e-12 else 0.0,
            dram[p] / reaching if reaching > 1e-12 else 0.0,
            served[p] / insts[p] if insts[p] else 0.0))
    return reports, patterns


__all__ = ["RunOptions", "Report", "KernelReport", "MemInstrReport", "predict_source", "prepare",
           "Prepared",
           "analyze_trace", "PATTERN_NAMES"]
