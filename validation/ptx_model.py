"""cgpredict's side of ``ptx_check.py``: per kernel of a polybench_c file, what the model
counts for one thread, per sequential loop (static and executed global loads and stores,
compute instructions per iteration, iterations per thread) and outside the loops, from a
trace at a small size (``trace_sizes``); and the per-thread SASS entry and loop-test figures
that ``sass_check.py`` shares."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
C_DIR = ROOT / "polybench_c"
TRACE_SIZE = 16  # every size macro at the trace (small enough to trace fast, loops iterate)
TILED_TRACE_SIZE = 64  # tiled files need whole 32-wide tiles, and two of them
TMAX_TRACE = 2


def trace_sizes(name: str) -> dict[str, int]:
    """The small size every macro of polybench_c/``name``.c is traced at."""
    from cgpredict.scaling import overridable_sizes

    text = (C_DIR / f"{name}.c").read_text()
    size = TILED_TRACE_SIZE if name.endswith("_tiled") else TRACE_SIZE
    return {n: (TMAX_TRACE if n == "TMAX" else size) for n in overridable_sizes(text)}


@dataclass
class _ModelLoop:
    id: int
    line: int
    depth: int  # relative: 1 = outermost sequential loop
    ld: int  # static global loads in the loop's own blocks
    st: int
    ld_dyn: float  # executed global loads per iteration
    st_dyn: float
    compute: float  # executed compute instructions per iteration
    iters_per_thread: float


@dataclass
class _ModelKernel:
    grid: int
    thread: _ModelLoop
    loops: list[_ModelLoop]
    compute_per_thread: float
    staging_loads_per_thread: float


def model_kernels(name: str, port: str) -> dict[str, _ModelKernel]:
    """cgpredict's per-loop counts for every kernel of polybench_c/``name``.c."""
    from cgpredict.prediction import RunOptions
    from cgpredict.prepared import prepare

    sizes = trace_sizes(name)
    opts = RunOptions(port=port, work_sizes=sizes, trace_sizes=sizes)
    out: dict[str, _ModelKernel] = {}
    with prepare(C_DIR / f"{name}.c", opts) as prep:
        report = prep.analyze(opts)
        for r in prep.trace.header.regions:
            kr = next(k for k in report.kernels if k.name == r.name)
            out[r.name] = _region_model(prep.trace, r.index, kr)
    return out


def _own_blocks(blocks: set[int], children) -> set[int]:
    """``blocks`` less those of the loops ``children`` (a loop's own blocks)."""
    for c in children:
        blocks -= set(c.blocks)
    return blocks


def _counts(h, bb, staged: set[int], blocks: set[int], per: float
            ) -> tuple[int, int, float, float, float]:
    """(static loads, static stores, executed loads, executed stores, executed compute
    instructions) of ``blocks``, the executed ones per ``per`` (iterations or threads);
    ``bb``: executions per basic block, ``staged``: loads read from shared memory instead."""
    from cgpredict.compute import compute_counts

    ld = st = 0
    ld_dyn = st_dyn = 0.0
    for m in h.mem:
        if m.block in blocks and m.block < len(bb) and m.id not in staged:
            n = bb[m.block] / per if per else 0.0
            if m.kind == "load":
                ld, ld_dyn = ld + 1, ld_dyn + n
            else:
                st, st_dyn = st + 1, st_dyn + n
    ops: Counter = Counter()
    for b in h.blocks:
        if b.id in blocks and bb[b.id]:
            for opcode, ty, detail, k in b.ops:
                ops[(opcode, ty, detail)] += bb[b.id] * k
    comp = (compute_counts(ops).total - sass_surplus(ops)) / per if per else 0.0
    return ld, st, ld_dyn, st_dyn, comp


def sass_surplus(ops: Counter) -> float:
    """What the model counts beyond the PTX for ``ops`` ((opcode, type, detail) ->
    executions): it counts a division, sqrt or libm call as the SASS runs it
    (``compute.SASS_EXPANSION``), the PTX has one instruction (``div.rn.f32``,
    ``sqrt.rn.f32``, ``div.s32``; before ptxas expands them); it counts a negation its users
    take as an operand modifier as none (``compute.ptx_cost``), the PTX has one (``neg.f32``,
    or ``mul.f32`` + ``sub.f32`` for ``a - b * c``): negative surplus."""
    from cgpredict.compute import SASS_EXPANSION, sass_op

    surplus = 0.0
    for (opcode, ty, detail), n in ops.items():
        if (opcode, detail) == ("fneg", "operand"):  # a SASS operand modifier, a PTX neg/sub
            surplus -= n
        key = sass_op(opcode, ty, detail)
        if key is not None:
            surplus += n * (SASS_EXPANSION[key][0] - 1)
    return surplus


def _thread_surplus(h, bb, region: int, threads: float) -> float:
    """sass_surplus per thread of the blocks a thread of ``region`` runs (its own and its
    helper functions'), ``bb`` the region's executions per block."""
    ops: Counter = Counter()
    for b in h.blocks:
        if b.region in (region, -1) and b.id < len(bb) and bb[b.id]:
            for opcode, ty, detail, k in b.ops:
                ops[(opcode, ty, detail)] += bb[b.id] * k
    return sass_surplus(ops) / threads if threads else 0.0


def _region_model(tr, region: int, kr) -> _ModelKernel:
    """The model's counts of one kernel (``kr`` its report): per sequential loop of a thread
    and for the thread's own blocks outside them."""
    import numpy as np

    from cgpredict.compute import kernel_entry_insts
    from cgpredict.frontend.summary import region_block_counts
    from cgpredict.hoisted_loads import hoisted_arrays, hoisted_load_insts
    from cgpredict.memory.shared import array_name
    from cgpredict.warps import mapped_loops

    h = tr.header
    grid = kr.grid_dims
    staged = {m.id for m in kr.mem if m.pattern == "shared"}
    rows = tr.launches["region"] == region
    bb = region_block_counts(tr, region).astype(np.float64)
    iters = tr.loop_iters[rows].sum(axis=0).astype(np.float64)
    entries = tr.loop_entries[rows].sum(axis=0).astype(np.float64)
    d1, d2 = mapped_loops(tr, region)
    inner = d2 if grid == 2 else d1
    threads = float(sum(iters[i] for i in inner))
    loops = {lp.id: lp for lp in h.loops if lp.region == region}

    def n_iters(lp) -> float:
        return float(iters[lp.id] - (0 if lp.rotated else entries[lp.id]))

    seq = sorted(
        (lp for lp in loops.values() if lp.depth > grid), key=lambda lp: (lp.line, lp.depth)
    )
    mloops = []
    for lp in seq:
        kids = [c for c in loops.values() if c.parent == lp.id]
        c = _counts(h, bb, staged, _own_blocks(set(lp.blocks), kids), n_iters(lp))
        mloops.append(
            _ModelLoop(
                lp.id, lp.line, lp.depth - grid, *c,
                n_iters(lp) / threads if threads else 0.0,
            )
        )
    tblocks: set[int] = set()
    for i in inner:
        tblocks |= set(loops[i].blocks)
    tblocks = _own_blocks(tblocks, [lp for lp in seq if lp.depth == grid + 1])
    *tc, tcomp = _counts(h, bb, staged, tblocks, threads)
    hoisted = region_shape(tr, kr, region).entry.hoisted_loads  # (12L): every thread's own
    if hoisted and threads:
        per_thread = {b: float(bb[b]) / threads for b in range(len(bb)) if bb[b]}
        tc[0] += len(hoisted)
        tc[2] += hoisted_load_insts(hoisted, per_thread)
    arrays = {array_name(m.text) for m in kr.mem} - {""}
    arrays |= hoisted_arrays(hoisted)
    thread = _ModelLoop(-1, 0, 0, *tc, tcomp + kernel_entry_insts(grid, len(arrays)), 1.0)
    # what the model itself counts per thread, before it folds the loop control that
    # nvcc's unrolling removes: this PTX is built with every loop `unroll 1`
    # (sass_check.py compares the folded counts with the unrolled SASS)
    # (less the SASS instructions without a PTX counterpart: machine_code.py)
    p = kr.profile
    total = p.comp_insts + p.folded_insts - p.machine_insts + p.address_folded_insts
    total += _merged_tests(tr, region, grid, rows, inner)
    total += _guard_exits(tr, kr, region, rows, inner)
    total -= _thread_surplus(h, bb, region, threads)
    total -= sass_entry_insts(region_shape(tr, kr, region), bb, threads, entries)
    return _ModelKernel(grid, thread, mloops, total, kr.profile.shared.load_insts)


def region_shape(tr, kr, region: int, whole: frozenset[int] = frozenset()):
    """``machine_code.MachineShape`` of ``region`` as the model forms it for report ``kr``;
    ``whole``: the loops unrolled whole (eq. (12wu), whole_loops.whole_shape)."""
    from cgpredict.machine_code import machine_shape
    from cgpredict.warps import mapped_loops
    from cgpredict.whole_loops import whole_shape

    d1, d2 = mapped_loops(tr, region)
    skip = {m.id for m in kr.mem if m.pattern == "shared"}
    shape = machine_shape(tr, region, kr.grid_dims, d2 if kr.grid_dims == 2 else d1, skip)
    return whole_shape(shape, tr, whole, skip)


def sass_entry_insts(shape, bb, threads: float, entries) -> float:
    """The model's SASS entry code less its PTX-level one and the pointers formed before each
    sequential loop, per thread (``machine_code.MachineExtras.entry_code`` and
    ``loop_pointers``: in ``comp_insts``, not in ``machine_insts``): taken out of the count
    compared with the PTX, which has the PTX-level entry (a cvta per array, the mapped loop's
    add and compare); ``shape`` from ``region_shape``, weighed by the block executions
    ``bb`` and loop ``entries``."""
    from cgpredict.sass_entry import entry_delta

    if not threads:
        return 0.0
    per_thread = {b: float(bb[b]) / threads for b in range(len(bb)) if bb[b]}
    return entry_delta(shape.entry, per_thread) + loop_weighed(shape.loop_pointers, entries,
                                                               threads)


def loop_weighed(pairs, entries, threads: float) -> float:
    """Per thread: the instructions of each (loop id, count) pair times its loop's entries."""
    return sum(float(entries[lid]) / threads * n for lid, n in pairs
               if entries is not None and lid < len(entries))


def _guard_exits(tr, kr, region: int, rows, mapped) -> float:
    """What the model's count (``comp_insts``, its first recorded launch) leaves out for the
    threads that leave at the guard (``guard_exits``, eq. (12g)): the PTX's static count
    keeps them."""
    import numpy as np

    from cgpredict.guard_exits import guard_exits
    from cgpredict.machine_code import after_guard_loads

    shape = region_shape(tr, kr, region)
    first = int(np.flatnonzero(rows & (tr.launches["recorded"] == 1))[0])
    n1 = float(tr.loop_iters[first, mapped].sum()) if len(mapped) else 1.0
    bb = tr.bb_counts[first]
    per_thread = {b: float(bb[b]) / n1 for b in range(len(bb)) if bb[b]} if n1 else {}
    return guard_exits(shape.merged_entries, per_thread,
                       after_guard_loads(shape, bool(kr.mem))).total


def _merged_tests(tr, region: int, grid: int, rows, mapped) -> float:
    """The zero-trip tests per thread that the model's count (``comp_insts``, its first
    recorded launch) leaves out as merged into the guard in the SASS
    (``zero_trip_tests.merged_zero_trip_tests``): the PTX keeps them."""
    import numpy as np

    from cgpredict.zero_trip_tests import merged_zero_trip_tests

    first = int(np.flatnonzero(rows & (tr.launches["recorded"] == 1))[0])
    n1 = float(tr.loop_iters[first, mapped].sum()) if len(mapped) else 1.0
    bb = tr.bb_counts[first]
    blocks = merged_zero_trip_tests(tr, region, grid)
    return sum(float(bb[b]) / n1 for b in blocks if b < len(bb)) if n1 else 0.0
