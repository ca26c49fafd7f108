"""One launch of a kernel modelled (SPEC §2.3-2.5): its per-thread counts from the trace's
block and loop counts grown to the work size, the memory profile per pattern, the shared-memory
counts of a tiled kernel, the instruction mix, ILP/MLP and critical path, then the model, its
energy and geometry (``LaunchContext.model`` -> ``LaunchModel``).

Beside it: how the port's code runs the region's loops (``launch_loops``: unrolls, run-time
trips), a tiled launch's shared memory (``launch_shared``) and the parts of a launch's model
that its region's launches share, the lane factors included (``launch_parts``).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ..atomics import AtomicSite, PortShape, as_atomics, port_costs, site_sids, with_shared
from ..block import Block
from ..compute import ComputeCounts, branch_insts, compute_counts, integer_insts
from ..convoy import convoy_step, convoy_warps
from ..devices import GPUDevice
from ..dram_rounds import walking_warps, with_walkers
from ..energy import predict_energy
from ..frontend.tracefile import Trace
from ..halo import HaloSpec
from ..loop_fold import loop_folds
from ..machine_code import MachineShape, machine_extras, machine_shape
from ..memory.inflight import chain_dram_sectors, chain_load_latency
from ..memory.shared import StagedAccess, array_name
from ..memory.transactions import COAL, CONST, UNCOAL, MemoryAnalysis
from ..models import LaunchGeometry, launch_geometry
from ..models import predict as model_predict
from ..occupancy import BlockDoesNotFit
from ..parallelism import Parallelism, ThreadBodies, plain_order
from ..prediction import MemInstrReport, PredictionError, RunOptions
from ..profile import KernelProfile
from ..register_block import RegisterBlock, grid_rows
from ..scaling import SizeModel
from ..warps import WarpTrace
from ..whole_loops import whole_shape
from .launch_loops import RegionLoops, region_loops, sized_loops, strip_unroll, trip
from .launch_parts import (
    body_counts,
    kept_part,
    lane_counts,
    mem_counts,
    memory_part,
    sm_share_of,
)
from .launch_phases import launch_phases
from .launch_shared import shared_counts, tiled_staging_code

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


@dataclass(frozen=True)
class LaunchModel:
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
class LaunchCounts:
    """What a thread of one launch executes (``LaunchContext.counts``): its pseudo-threads,
    each block's executions per thread, the instruction counts (SPEC §2.4), the instructions
    unrolling folds away and the thread's ILP and MLP."""

    threads: float
    per_thread: Mapping[int, float]  # read-only: shared by the analyses that keep it
    extents: tuple[float, float]  # (x, y) pseudo-threads at the work size
    comp: ComputeCounts
    folded: float
    par: Parallelism


@dataclass(frozen=True)
class CriticalPaths:
    """The critical paths of a launch's busiest thread (``LaunchContext.paths``): ``chain``
    its loads and dependent instructions in cycles (models/bounds.py, eqs. (C1), (C2), (CV),
    (Q1)), ``compute`` its dependent arithmetic alone, ``loads_in_flight`` the chain with a
    trip's loads one at a time over that with no DRAM queue (eq. (22m)), ``hoisted`` the
    mean thread's periods of the loads ptxas hoists above the stores (eq. (22h))."""

    chain: float
    compute: float
    loads_in_flight: float
    hoisted: float
    alone: float = 0.0  # ``chain`` of one warp alone on its sub-partition, eq. (LTq2)


#: (region, grid_dims, rows a thread, threads a traced thread, block scales, strip unrolls,
#: work sizes (the trace's loops grow to them: LaunchContext.factor follows), trace row)
LaunchCountsKey = tuple[int, int, int, float, tuple[tuple[int, float], ...],
                        tuple[tuple[int, int], ...], tuple[tuple[str, int], ...], int]


@dataclass(frozen=True)
class LaunchContext:
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
    shared_spec: tuple | None = None  # see staging.staging_setup
    bodies: ThreadBodies = ThreadBodies()  # the thread's code, for ILP and MLP
    busiest: float = 1.0  # the busiest thread's memory events / the mean thread's
    warps: WarpTrace | None = dataclasses.field(default=None, compare=False)  # (sm_share.py)
    restores: frozenset[int] = frozenset()  # stores of an accumulator (port.restoring_stores)
    reloads: frozenset[int] = frozenset()  # loads of what those stored (port.reloading_loads)
    sites: tuple[AtomicSite, ...] = ()  # locations every thread updates (atomics.py)
    shape: PortShape | None = None  # what their port's atomics depend on
    halo: HaloSpec | None = None  # a stencil's tile with its halo (halo.py)
    # per basic block: how a fix changes its executions per thread (a warp per row)
    block_scale: dict[int, float] = dataclasses.field(default_factory=dict)
    thread_scale: float = 1.0  # threads launched per traced thread (a warp per row: 32)
    reg_block: RegisterBlock | None = None  # R outputs a thread along y (register_block.py)
    rows: int = 1  # that R (1: not register-blocked)
    scale: tuple[tuple[int, float], ...] = ()  # (sid, warp insts kept): halo, register blocks
    # memory_profile's launch-independent rows, by stats object (its launches share them)
    _mem_kept: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)
    # LaunchCounts by LaunchCountsKey: the trace's AnalysisMemo.counts (every analysis)
    counts_kept: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)
    # launch_parts.LaunchRow by region, work sizes and L2: the trace's AnalysisMemo.rows
    rows_kept: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)
    # the memory profile and the critical path of the launches, by what they read of a
    # launch (launch_parts.py): the region's launches of this analysis share them
    _parts_kept: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)
    # the region's trip records and each launch's lane factors (D1): the AnalysisMemo's lanes
    lanes_kept: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)

    def extents(self, row: int) -> tuple[float, float]:
        """(x, y) pseudo-threads of trace launch ``row``, scaled to the work size."""
        tr = self.trace
        inner = self.d2 if self.grid == 2 else self.d1
        if not inner:  # single_thread: one thread per call
            return 1.0, 1.0
        iters = float(tr.loop_iters[row, inner].sum())
        entries = float(tr.loop_entries[row, inner].sum())
        x = iters / entries * self.thread_scale if entries else 0.0
        y = entries if self.grid == 2 else 1.0
        x *= self.ratio(inner[0])
        if self.grid == 2:
            y *= self.ratio(self.d1[0])
            if self.rows > 1:  # R rows a thread: the last thread row guards the tail
                y = grid_rows(y, self.rows)
        return round(x, 6), round(y, 6)

    def ratio(self, loop: int) -> float:
        """How loop ``loop``'s iterations an entry grow from the traced sizes to the work
        sizes (1 for a loop with no trip model)."""
        m = self.sizes.trips.get(loop)
        if m is None:
            return 1.0
        t = trip(m, self.tsz)
        return trip(m, self.wsz) / t if t > 0 else 1.0

    def model(self, row: int, mem: MemoryAnalysis | None = None) -> tuple[LaunchModel]:
        """The launch of trace row ``row``, with ``mem`` (the region's memory analysis, or
        that with the data earlier launches left in the L2)."""
        mem = self.mem if mem is None else mem
        h = self.trace.header
        counts = self.counts(row)
        threads, per_thread = counts.threads, counts.per_thread
        gx, gy, blocks = self.grid_blocks(row)
        skip = {a.sid for a in self.staged} | site_sids(self.sites)
        mem_reports, patterns, stores, bytes_per_access, entry = kept_part(
            self._parts_kept, "memory", mem, mem_counts(h, mem, per_thread),
            lambda: memory_part(self, per_thread, mem, skip),
        )
        shared, sync = shared_counts(self, row, per_thread, threads)
        port = port_costs(self.sites, per_thread, self.shape, blocks)
        mem_reports = as_atomics(mem_reports, self.sites)
        shared = with_shared(shared, port)
        par = counts.par
        comp, folded = lane_counts(self, row, counts)  # a warp's slowest lane: (D1)-(D3)
        paths = self.paths(per_thread, mem, shared.bytes_per_block, blocks)
        sass = machine_extras(
            self.machine_shape, lambda lid: self.entries_per_thread(row, lid, threads),
            per_thread, touches_global=bool(mem.instrs), staging_stores=shared.load_insts,
            staging_code=tiled_staging_code(self, row, threads),
        )
        unknown = ", ".join(comp.unknown_calls)
        warnings = [f"calls to {unknown} counted as one instruction each"] if unknown else []
        profile = KernelProfile(
            name=self.name,
            threads_per_block=self.block.threads,
            blocks=blocks,
            coal=patterns[COAL],
            uncoal=patterns[UNCOAL],
            const=patterns[CONST],
            comp_insts=max(comp.total - folded, 0.0) + entry + port.extra_insts
            + port.atomics.insts + sass.total,
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
            chain_cycles=paths.chain,
            alone_chain_cycles=paths.alone,
            compute_chain_cycles=paths.compute,
            folded_insts=folded,
            machine_insts=sass.added,
            address_folded_insts=sass.folded_addresses,
            staging_code=sass.staging_code,
            # (12rw): the row work every thread runs, by pipe
            pipes=comp.pipes.less_integer(folded, comp.foldable).plus(sass.row_work.pipes),
            loads_in_flight=paths.loads_in_flight,
            hoisted_load_cycles=paths.hoisted,
            sm_share=sm_share_of(self, row, counts, (gx, gy), blocks, shared.bytes_per_block),
            program_launches=len(self.trace.launches),  # (LWl)
            phases=kept_part(self._parts_kept, "phases", mem, mem_counts(h, mem, per_thread),
                             lambda: launch_phases(self, per_thread, mem, skip,
                                                   bytes_per_access)),  # (PH)
        )
        result, energy_mj, geometry = self.predicted(profile)
        return (
            LaunchModel(
                profile,
                result,
                (int(gx), int(gy)),
                blocks,
                tuple(mem_reports),
                tuple(warnings),
                energy_mj,
                geometry,
                mem.l2_hit_rate,
            ),
        )

    def paths(self, per_thread: Mapping[int, float], mem: MemoryAnalysis, shared_bytes: int,
              blocks: int) -> CriticalPaths:
        """The CriticalPaths of a launch with ``per_thread`` counts, memory analysis ``mem``
        and ``blocks`` blocks of ``shared_bytes`` of shared memory each. They read the thread
        bodies' counts alone (body_counts), so the region's launches share them
        (kept_part); ``n``, the warps of a sub-partition that run a chain's steps together,
        eq. (CV)."""
        bodies = body_counts(self.bodies, per_thread)
        n = convoy_warps(self.device, self.block.threads, self.opts.registers_per_thread,
                         shared_bytes, blocks)
        w = walking_warps(self.device, self.block.threads, self.opts.registers_per_thread,
                          shared_bytes, blocks, self.busiest)  # (Q1w)
        chain, serial, hoisted, flat, alone = kept_part(
            self._parts_kept, "chain", mem, (bodies, n, w), lambda: (
                self.chain_cycles(per_thread, mem, warps=n, walkers=w),
                self.chain_cycles(per_thread, mem, False),  # a trip's loads one at a time
                self.chain_cycles(per_thread, mem, None),  # the hoisted loads' periods, (22h)
                self.chain_cycles(per_thread, mem, queue=False),  # no (Q1) queue
                self.chain_cycles(per_thread, mem, walkers=w) if n > 1 else None,  # (LTq2)
            ))
        compute = kept_part(
            self._parts_kept, "compute chain", mem, bodies,
            lambda: self.bodies.compute_chain(per_thread, self.unroll, self.device),
        )
        return CriticalPaths(chain, compute, serial / flat if flat > 0 else 1.0, hoisted,
                             chain if alone is None else alone)

    def counts(self, row: int) -> LaunchCounts:
        """The LaunchCounts of trace row ``row``. They depend on the row, the grid (its
        mapped loops), the work sizes (the growth of every loop to them: a sweep analyses one
        trace at several), the rows a thread, a warp per row's
        threads and block scales and a tiling's strip unroll, not on the block shape, the
        layout or the memory analysis: kept in ``counts_kept`` for the trace's next
        analyses."""
        key: LaunchCountsKey = (*self._counts_key, row)
        got = self.counts_kept.get(key)
        if got is None:
            threads, per_thread = self.per_thread(row)
            ops = self.trace.header.blocks
            got = self.counts_kept[key] = LaunchCounts(
                threads=threads,
                per_thread=MappingProxyType(per_thread),
                extents=self.extents(row),
                comp=self.instructions(per_thread),
                folded=self.bodies.unrolled_savings(
                    per_thread, lambda b: integer_insts(ops[b].ops), self.unroll, self.kept,
                    lambda b: branch_insts(ops[b].ops)),
                par=self.bodies.parallelism(per_thread, plain_order(self.trace, self.staged)),
            )
        return got

    @functools.cached_property
    def _counts_key(self) -> tuple:
        """LaunchCountsKey less the trace row: the same for every launch of the context."""
        return (
            self.region, self.grid, self.rows, self.thread_scale,
            tuple(sorted(self.block_scale.items())),
            tuple(sorted(strip_unroll(self.shared_spec, self.staged, self.halo).items())),
            tuple(sorted(self.wsz.items())),
        )

    def per_thread(self, row: int) -> tuple[float, dict[int, float]]:
        """The pseudo-threads of trace row ``row`` and each block's executions per thread,
        grown to the work size (``factor``)."""
        tr, h = self.trace, self.trace.header
        inner = self.d2 if self.grid == 2 else self.d1
        threads = float(tr.loop_iters[row, inner].sum()) / self.rows if inner else 1.0
        bb = tr.bb_counts[row].astype(np.float64)
        per_thread = {
            b.id: (bb[b.id] / threads if threads else 0.0) * self.factor.get(b.id, 1.0)
            for b in h.blocks
            if b.region in (self.region, -1)
        }
        for b, f in self.block_scale.items():
            per_thread[b] = per_thread.get(b, 0.0) * f
        return threads, per_thread

    def grid_blocks(self, row: int) -> tuple[float, float, int]:
        """The (x, y) threads of trace row ``row`` at the work size and its blocks; one line
        when CUDA would refuse the grid."""
        gx, gy = self.counts(row).extents
        problem = grid_problem(gx, gy, self.block)
        if problem:
            raise PredictionError(f"kernel {self.name}: {problem}")
        return gx, gy, max(math.ceil(gx / self.block.x) * math.ceil(gy / self.block.y), 1)

    def instructions(self, per_thread: dict[int, float]) -> ComputeCounts:
        """The instruction counts per thread (SPEC §2.4): every block's operations times its
        executions per thread, less the folds of the loops nvcc unrolls whole (eq. (12f))."""
        ops: Counter = Counter()
        for b in self.trace.header.blocks:
            n = per_thread.get(b.id, 0.0)
            if not n:
                continue
            for opcode, ty, detail, k in b.ops:
                ops[(opcode, ty, detail)] += n * k
        folds = loop_folds(self.trace, self.bodies.loop_ids, self.unroll)
        return compute_counts(ops).plus(folds.saving(per_thread), -1.0)

    def predicted(self, profile: KernelProfile) -> tuple[object, float | None, LaunchGeometry]:
        """The model's result for ``profile``, its energy (None: no energy table) and launch
        geometry; one line when the block does not fit an SM."""
        try:
            result = model_predict(
                profile, self.device, self.opts.model, **_model_options(self.opts)
            )
        except BlockDoesNotFit as exc:
            raise PredictionError(f"kernel {self.name}: {exc}") from None
        est = predict_energy(profile, self.device, result.time_ms)
        geometry = launch_geometry(profile, self.device)
        return result, (est.total_mj if est else None), geometry

    def chain_cycles(self, per_thread: dict, mem: MemoryAnalysis, in_flight: bool | None = True,
                     queue: bool = True, warps: int = 1, walkers: float = 1.0) -> float:
        """The critical path of the launch's busiest thread (models/bounds.py): the mean
        thread's body executions times ``busiest``, each iteration its chain
        (parallelism.body_chain) with every load at its own mean latency (an L1 or L2 hit
        on a line in flight at its fetch's: memory.inflight.chain_load_latency, eqs. (C1),
        (C2)), a reload of what the thread stored (``reloads``) at the L1's on a GPU whose
        L1 caches global loads (the write-through L1 keeps the stored line: ncu counts
        GESUMMV's reloads as L1 hits), else at the L2's (the store went to the L2). In the
        plain port every global access keeps its program order (memory_recurrence). A
        register-blocked thread's R outputs are independent (``__restrict__``): one output's
        path. ``in_flight`` False: each iteration's chain on its own; None: the mean thread's
        periods of the loads ptxas hoists above the stores (ThreadBodies.hoisted_cycles, (22h)).
        ``queue``: DRAM loads in flight queue ((Q1)); ``warps``: a sub-partition's (CV);
        ``walkers``: the launch's warps walking DRAM rounds at once, which load a round's
        trip (eq. (Q1w), dram_rounds.walking_warps)."""
        dev, staged = self.device, {a.sid for a in self.staged}
        big, mems = self.outgrown_arrays, self.trace.header.mem
        lat = {s.sid: chain_load_latency(s, dev, array_name(mems[s.sid].base) in big)
               for s in mem.instrs}
        own = dev.op_latencies.dram_sigma > 0  # (Q1o): a (Q1r) round counts its own fetches
        far = {s.sid: chain_dram_sectors(s, array_name(mems[s.sid].base) in big, own)
               for s in mem.instrs if queue and s.sid not in staged | set(self.reloads)}
        reload = dev.l1_latency_cycles if dev.l1_caches_global_loads else dev.l2_latency_cycles
        lat.update({**dict.fromkeys(self.reloads, reload),
                    **dict.fromkeys(staged, dev.shared_latency_cycles)})
        ordered = plain_order(self.trace, self.staged)

        def load_cycles(sid: int) -> float:
            return lat.get(sid, dev.l2_latency_cycles)

        if in_flight is None:  # (22h): the mean thread, as (22)'s memory periods count
            return self.bodies.hoisted_cycles(per_thread, load_cycles, self.unroll, ordered)
        busiest = {b: n * self.busiest / self.rows for b, n in per_thread.items()}
        return self.bodies.chain_cycles(
            busiest, load_cycles, dev.fp_latency_cycles, dev.inst_latency_cycles, self.unroll,
            ordered, with_walkers(dev.op_latencies, walkers), in_flight,
            lambda sid: far.get(sid, (0.0, 1.0)),
            convoy_step(dev, warps, mem.instrs, staged | set(self.reloads)))

    @functools.cached_property
    def outgrown_arrays(self) -> frozenset[str]:
        """The region's arrays larger than the device's L2 at the work size (eq. (C2))."""
        names = {array_name(m.base) for m in self.trace.header.mem} - {""}
        cap = self.device.l2_bytes
        return frozenset(a for a in names if (self.sizes.array_bytes(a, self.wsz) or 0) > cap)

    @functools.cached_property
    def machine_shape(self) -> MachineShape:
        """The region's machine_code.MachineShape, found once (its launches share it)."""
        inner = self.d2 if self.grid == 2 else self.d1
        skip = {a.sid for a in self.staged}
        shape = machine_shape(self.trace, self.region, self.grid, inner, skip)
        return whole_shape(shape, self.trace, self.loops.whole, skip)  # eq. (12wu)

    def entries_per_thread(self, row: int, loop: int, threads: float) -> float:
        """Entries of ``loop`` per thread in trace launch ``row``, at the work size (they
        grow as the blocks around the loop do: the enclosing loop's header, or for a helper's
        outermost loop the helper's blocks outside its loops: _block_factors)."""
        h = self.trace.header
        if not threads:
            return 0.0
        n = float(self.trace.loop_entries[row, loop]) / threads
        lp = h.loops[loop]
        if lp.parent >= 0:
            head = h.loops[lp.parent].header
            around = [b for b in h.loops[lp.parent].blocks if h.blocks[b].label == head]
        else:
            looped = {b for other in h.loops for b in other.blocks}
            around = [
                b.id for b in h.blocks
                if b.function == lp.function and b.region == lp.region and b.id not in looped
            ]  # fmt: skip
        return n * (self.factor.get(around[0], 1.0) if around else 1.0)

    @functools.cached_property
    def loops(self) -> RegionLoops:
        """How the port's code runs the loops of the region's thread bodies (launch_loops):
        found once for the region (the trace's loop counts over all launches)."""
        return region_loops(self.trace, self.bodies.loop_ids, self.ratio,
                            strip_unroll(self.shared_spec, self.staged, self.halo),
                            sized_loops(self.sizes.trips))  # eq. (12sz)

    def unroll(self, loop: int) -> int:
        """How many iterations nvcc unrolls loop ``loop`` into one trip (loop_unroll_at)."""
        return self.loops.unroll(loop)

    def kept(self, loop: int, cls: str = "all") -> float | None:
        """Instructions of class ``cls`` per source iteration the SASS keeps of loop
        ``loop``'s control and addresses; None: not bounded by a run-time size."""
        return self.loops.kept(loop, cls)

def _model_options(opts: RunOptions) -> dict:
    return {"batch_mode": opts.batch_mode} if opts.model == "cgpredict" else {}
