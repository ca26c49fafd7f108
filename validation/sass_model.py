"""The model side of the SASS check: cgpredict's per-thread counts of a port's kernels in the
check's classes (``sass_check.py`` compares them with the SASS; split out of it by concept)."""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ptx_check  # noqa: E402
import sass_blind  # noqa: E402
import sass_user  # noqa: E402

C_DIR = ptx_check.C_DIR
SUMMARY = (
    "ld_global", "st_global", "ld_shared", "st_shared", "fp32", "integer", "branch",
    "barrier", "other", "total",
)  # fmt: skip


def model_op_class(opcode: str, ty: str, detail: str) -> tuple[str, int]:
    """(class, instructions) cgpredict counts for one executed LLVM operation."""
    from cgpredict.compute import CVT_OPS, ptx_cost

    cost, is_sfu, is_fp = ptx_cost(opcode, ty, detail)
    if opcode in ("br", "switch"):
        return "branch", cost
    if is_sfu or opcode in CVT_OPS or (is_fp and ty.startswith("double")):
        return "other", cost  # FP64 too: DADD/DFMA/DMUL are other in the SASS (sass_class)
    return ("fp32" if is_fp else "integer"), cost


#: the check's classes (sass_counts.sass_class) of each compute.SASS_EXPANSION entry: its fast
#: path in the sm_90 SASS of validation/cuda/ops/arith_ops.cu (``sass_ops.py
#: --check-classes``, sass_ops.check_expansions; tests/test_sass_ops.py compares the two):
#: FFMA and FCHK fp32, IADD3/ISETP/IMAD.HI integer, the test branch to the slow path branch,
#: MUFU, BSSY/BSYNC and the constant moves other; each sums to the expansion's total. An
#: IEEE fdiv: MUFU.RCP, BSSY, BSYNC other, FCHK + 5 FFMA fp32, the BRA; FP64 (DFMA, DMUL)
#: other, as sass_class has it
EXPANSION_CLASSES: dict[str, dict[str, int]] = {
    "sdiv_i32": {"integer": 20, "other": 4},
    "srem_i32": {"integer": 19, "other": 3},
    "udiv_i32": {"integer": 15, "other": 3},
    "urem_i32": {"integer": 13, "other": 4},
    "sdiv_pow2_i32": {"integer": 2},
    "srem_pow2_i32": {"integer": 3},
    "sdiv_const_i32": {"integer": 3, "other": 1},
    "srem_const_i32": {"integer": 4, "other": 1},
    "srem_quotient_i32": {"integer": 3},
    "urem_quotient_i32": {"integer": 1, "other": 1},
    "fdiv_f32": {"fp32": 6, "branch": 1, "other": 3},
    "sqrt_f32": {"fp32": 4, "integer": 2, "branch": 1, "other": 3},
    "exp_f32": {"fp32": 5, "integer": 1, "other": 3},
    "log_f32": {"fp32": 19, "integer": 4, "other": 3},
    "sin_f32": {"fp32": 15, "integer": 6, "branch": 1, "other": 4},
    "cos_f32": {"fp32": 15, "integer": 7, "branch": 1, "other": 4},
    "pow_f32": {"fp32": 49, "integer": 6, "branch": 1, "other": 8},
    "fdiv_f64": {"fp32": 3, "integer": 1, "branch": 1, "other": 11},
    "sqrt_f64": {"integer": 5, "branch": 1, "other": 12},
}  # fmt: skip


def model_op_classes(opcode: str, ty: str, detail: str) -> tuple[tuple[str, int], ...]:
    """(class, instructions) pairs cgpredict counts for one executed LLVM operation: an
    expanded one (compute.SASS_EXPANSION) split as its SASS fast path is
    (EXPANSION_CLASSES), any other one whole in its class (model_op_class)."""
    from cgpredict.compute import sass_op

    key = sass_op(opcode, ty, detail)
    if key in EXPANSION_CLASSES:
        return tuple(sorted(EXPANSION_CLASSES[key].items()))
    return (model_op_class(opcode, ty, detail),)


def class_share(opcode: str, ty: str, detail: str, cls: str) -> float:
    """The share of one operation's instructions that the check puts in class ``cls``."""
    split = model_op_classes(opcode, ty, detail)
    total = sum(n for _, n in split)
    return sum(n for c, n in split if c == cls) / total if total else 0.0


def entry_classes(grid_dims: int, arrays: int) -> dict[str, float]:
    """``compute.kernel_entry_insts`` by class: per dimension 3 moves (other) and a mad and a
    setp (integer), one guard branch, per array an ld.param (other) and a cvta (integer)."""
    return {
        "other": 3.0 * grid_dims + arrays,
        "integer": 2.0 * grid_dims + arrays,
        "branch": 1.0,
    }


@dataclass
class ModelLoop:
    """A C loop one thread runs sequentially: source line, depth (1 = outermost sequential
    loop) and iterations per thread at the traced size."""

    line: int
    depth: int
    iters_per_thread: float
    per_iter: dict[str, float] = field(default_factory=dict)  # own blocks, one iteration
    entries_per_thread: float = 0.0


@dataclass
class ModelKernel:
    """cgpredict's side of one kernel: grid dimensions, sequential loops, classes per thread."""

    grid: int
    loops: list[ModelLoop]
    classes: dict[str, float]
    comp_insts: float  # the model's own compute count per thread (its first launch)
    split_sum: float = 0.0  # the compute classes summed for that launch: comp_insts again

    @property
    def outside(self) -> tuple[float, float]:
        """Global loads and stores per thread outside its sequential loops (the trace's,
        with eq. (12L)'s hoisted loads): what sass_paths weighs the SASS's paths by."""
        return tuple(
            max(self.classes[c] - sum(lp.per_iter.get(c, 0.0) * lp.iters_per_thread
                                      for lp in self.loops), 0.0)
            for c in ("ld_global", "st_global")
        )


def folded_classes(h, bodies, per_thread: dict[int, float], unroll_of, trip_of=None,
                   whole_of=None):
    """What the model subtracts for unrolling (``kernel.launch``: ``folded``, of
    ``ThreadBodies.unrolled_savings`` with ``compute.integer_insts``), split by comparison
    class: the same call with each class's share of every block's integer and branch
    operations (integer; branch; other: conversions to integers) and, for a loop bounded by
    a run-time size (``trip_of(loop id)``: runtime_trips.loop_trip_at, None otherwise), the
    instructions of that class its SASS trip keeps; for a loop unrolled whole
    (``whole_of(loop id)``: launch_loops.unrolled_whole, eq. (12wu)) none. ``per_thread``:
    executions of each block id per thread."""
    from cgpredict.compute import branch_insts, integer_insts

    def kept(cls: str):
        def of(lid: int) -> float | None:
            if whole_of is not None and whole_of(lid):  # eq. (12wu): nothing kept
                return 0.0
            trip = trip_of(lid) if trip_of is not None else None
            return None if trip is None else trip.per_iteration(cls)
        return of

    out = dict.fromkeys(("integer", "branch", "other"), 0.0)
    for cls in out:

        def of(b: int, cls: str = cls) -> float:
            return sum(integer_insts([op]) * class_share(*op[:3], cls) for op in h.blocks[b].ops)

        # the branch class is all branches, the others none (eq. (AF2): own shares)
        out[cls] = bodies.unrolled_savings(per_thread, of, unroll_of, kept(cls),
                                           of if cls == "branch" else None)
    whole = bodies.unrolled_savings(
        per_thread, lambda b: integer_insts(h.blocks[b].ops), unroll_of, kept("all"),
        lambda b: branch_insts(h.blocks[b].ops),
    )
    assert abs(sum(out.values()) - whole) <= 1e-9 * max(1.0, abs(whole)), (out, whole)
    return out


def _block_classes(
    h, bb, staged: set[int], blocks: set[int] | None, per: float, bodies=None, unroll_of=None,
    trip_of=None, whole_of=None,
) -> dict:
    """cgpredict's executed memory instructions and compute operations by comparison class
    in ``blocks`` (every block when None) of block executions ``bb``, divided by ``per``;
    with ``bodies`` (``parallelism.ThreadBodies``), less what the model folds for unrolling
    (``folded_classes``)."""
    out = dict.fromkeys(SUMMARY, 0.0)
    for m in h.mem:
        if m.block < len(bb) and (blocks is None or m.block in blocks):
            kind = "ld_global" if m.kind == "load" else "st_global"
            out["ld_shared" if m.id in staged else kind] += float(bb[m.block]) / per
    per_thread = {}
    for b in h.blocks:
        n = float(bb[b.id]) if b.id < len(bb) else 0.0
        if n and (blocks is None or b.id in blocks):
            per_thread[b.id] = n / per
            for opcode, ty, detail, k in b.ops:
                for cls, cost in model_op_classes(opcode, ty, detail):
                    out[cls] += cost * k * n / per
    if bodies is not None:
        for cls, n in folded_classes(h, bodies, per_thread, unroll_of, trip_of,
                                     whole_of).items():
            out[cls] -= n
    out["total"] = sum(out[k] for k in SUMMARY if k != "total")
    return out


COMPUTE = ("fp32", "integer", "branch", "other")


#: share of the loop set-up moves (machine_code.loop_setup_insts) ptxas issues as IMAD.MOV
#: (class integer) rather than MOV (other): it alternates the two pipes (read in the
#: no-unroll SASS of MM restrict, 2 of 4, and Deriche's row pass, 4 of 8)
SETUP_MOVES_ON_FMA_PIPE = 0.5


def _entry_integer(
    tr, kr, bb, threads: float, region: int, entries, whole: frozenset[int] = frozenset()
) -> tuple[float, float, float]:
    """The model's SASS entry code less its PTX-level one and the pointers formed before
    each sequential loop (``machine_code.MachineExtras.entry_code`` and ``loop_pointers``,
    class integer), weighed by the block executions ``bb`` and loop ``entries`` over
    ``threads`` threads; and the share of its loop set-up moves that are IMAD.MOV
    (``SETUP_MOVES_ON_FMA_PIPE``: integer, not other); and the FMULs by unit scalars the
    port keeps (``MachineExtras.kept_factors``, class fp32)."""
    from cgpredict.scalar_args import kept_factor_insts

    if not threads:
        return 0.0, 0.0, 0.0
    shape = ptx_check.region_shape(tr, kr, region, whole)  # (12wu): ``whole`` unrolled whole
    setups = ptx_check.loop_weighed(shape.loop_setups, entries, threads)
    entry = ptx_check.sass_entry_insts(shape, bb, threads, entries)
    per_thread = {b: float(bb[b]) / threads for b in range(len(bb)) if bb[b]}
    kept = kept_factor_insts(shape.kept_factors, per_thread)
    return entry, setups * SETUP_MOVES_ON_FMA_PIPE, kept


def _model_classes(
    tr, kr, bb, threads: float, bodies, unroll_of=None, trip_of=None, region: int = 0,
    entries=None, whole_of=None,
) -> dict[str, float]:
    """cgpredict's per-thread counts by comparison class for the kernel of report ``kr``
    (trace region ``region``) with block executions ``bb`` over ``threads`` threads: its
    operations (less the unrolling fold) and memory instructions, staging loads, barriers,
    entry code and the zero-trip tests merged into the guard."""
    from cgpredict.compute import kernel_entry_insts
    from cgpredict.hoisted_loads import hoisted_arrays
    from cgpredict.memory.shared import array_name
    from cgpredict.trip_constants import fma_pipe_constant_moves
    from cgpredict.zero_trip_tests import merged_zero_trip_tests

    staged = {m.id for m in kr.mem if m.pattern == "shared"}
    out = _block_classes(tr.header, bb, staged, None, threads, bodies, unroll_of, trip_of,
                         whole_of)
    _port_atomics(out, tr.header, kr, bb, threads)
    if staged:  # the model's shared loads: vectors of the elements a thread reads
        out["ld_shared"] = kr.profile.shared.accesses
    out["ld_global"] += kr.profile.shared.load_insts
    out["barrier"] = kr.profile.sync_insts
    whole = frozenset(lp.id for lp in tr.header.loops if whole_of is not None and whole_of(lp.id))
    shape = ptx_check.region_shape(tr, kr, region, whole)
    _hoisted_loads(out, tr.header, shape.entry.hoisted_loads, bb, threads)
    arrays = len(({array_name(m.text) for m in kr.mem}
                  | hoisted_arrays(shape.entry.hoisted_loads)) - {""})
    entry = entry_classes(kr.grid_dims, arrays)
    assert kernel_entry_insts(kr.grid_dims, arrays) == sum(entry.values())
    for cls, n in entry.items():
        out[cls] += n
    # machine_code.MachineExtras: the staging stores (STS, one per staging load), the
    # prologue and loop set-up moves (other), the address instructions ptxas folds (integer)
    out["st_shared"] += kr.profile.shared.load_insts
    staging = kr.profile.staging_code
    out["other"] += kr.profile.machine_insts - kr.profile.shared.load_insts - staging.total
    out["integer"] -= kr.profile.address_folded_insts
    out["other"] += _setup_correction(tr, kr, region, whole, entries, threads)
    entry, moves, kept = _entry_integer(tr, kr, bb, threads, region, entries, whole)
    out["integer"] += entry + moves
    out["other"] -= moves
    out["fp32"] += kept  # machine_code.MachineExtras.kept_factors: FMUL by a unit scalar
    for b in merged_zero_trip_tests(tr, region, kr.grid_dims):  # machine_code.MachineExtras
        out["branch"] -= float(bb[b]) / threads if b < len(bb) and threads else 0.0
    # eq. (12cm): library constants moved by IMAD.MOV.U32 (integer) in a dividing kernel
    per_thread = {b: float(bb[b]) / threads for b in range(len(bb)) if bb[b]} if threads else {}
    moves = fma_pipe_constant_moves(tr, region, kr.grid_dims, per_thread)
    out["integer"] += moves
    out["other"] -= moves
    left = _guard_exits(shape, kr, bb, threads)  # eq. (12g): the threads leaving at the guard
    out["branch"] -= left.branch
    out["other"] -= left.other
    _add_staging_code(out, staging)
    _row_work(out, shape, bb, threads)  # eq. (12rw): MachineExtras.row_work by class
    _exit_tests(out, shape, per_thread)  # eqs. (12fm), (12xb)
    _loop_folds(out, tr, bodies, unroll_of, bb, threads)  # eq. (12f)
    out["total"] = sum(out[k] for k in SUMMARY if k != "total")
    return out


def _loop_folds(out: dict[str, float], tr, bodies, unroll_of, bb, threads: float) -> None:
    """What the model folds across the iterations of the loops nvcc unrolls whole
    (``cgpredict.loop_fold``, eq. (12f), in ``comp_insts``: int_hash's cancelled
    ``h ^= h >> 16`` pairs), by class: its FP32 operations fp32, SFU other, the rest integer."""
    from cgpredict.loop_fold import loop_folds

    if not threads or bodies is None or unroll_of is None:
        return
    per_thread = {b: float(bb[b]) / threads for b in range(len(bb)) if bb[b]}
    saved = loop_folds(tr, bodies.loop_ids, unroll_of).saving(per_thread)
    fp64 = saved.pipes.fp64
    out["fp32"] -= saved.fp - fp64
    out["other"] -= saved.sfu + fp64
    out["integer"] -= saved.total - saved.fp - saved.sfu


def _row_work(out: dict[str, float], shape, bb, threads: float) -> None:
    """A 2-D thread's row work (``cgpredict.row_work``, eq. (12rw), in the model's
    ``comp_insts``), each operation in its comparison class (``model_op_classes``)."""
    from cgpredict.row_work import row_work_weights

    if not threads or not shape.row_ops:
        return
    per_thread = {b: float(bb[b]) / threads for b in range(len(bb)) if bb[b]}
    w = row_work_weights(shape.entry, per_thread)
    for b, ops in shape.row_ops:
        for opcode, ty, detail, k in ops:
            for cls, cost in model_op_classes(opcode, ty, detail):
                out[cls] += w.get(b, 0.0) * cost * k


def _setup_correction(tr, kr, region: int, whole: frozenset[int], entries,
                      threads: float) -> float:
    """The loop set-up moves of the loops the check finds unrolled whole (``whole``, with
    eq. (12sz)'s sized loops left out) less those of the loops the report's launch took for
    whole: it ran at the check's sizes without probes, so a loop bounded by a size of at most
    UNROLL_WHOLE iterations (spmv_ell's K) was a constant one there (eq. (12wu))."""
    from cgpredict.kernel.launch_loops import unrolled_whole

    if not threads or entries is None:
        return 0.0
    plain = frozenset(lp.id for lp in tr.header.loops if unrolled_whole(tr, lp.id))
    if plain == whole:
        return 0.0
    ours = ptx_check.region_shape(tr, kr, region, whole).loop_setups
    theirs = ptx_check.region_shape(tr, kr, region, plain).loop_setups
    return (ptx_check.loop_weighed(ours, entries, threads)
            - ptx_check.loop_weighed(theirs, entries, threads))


def _exit_tests(out: dict[str, float], shape, per_thread: dict[int, float]) -> None:
    """The FMUL of a product multiply-adds share (``MachineExtras.shared_products``, eq.
    (12fm), class fp32) and the exit tests branched on with the header's
    (``merged_exits``, eq. (12xb), class branch), per thread."""
    from cgpredict.shared_products import shared_product_insts

    out["fp32"] += shared_product_insts(shape.shared_products, per_thread)
    out["branch"] -= sum(per_thread.get(b, 0.0) for b in shape.merged_exits)


def _guard_exits(shape, kr, bb, threads: float):
    """What the threads that leave at the guard do not run, per thread (``guard_exits``, eq.
    (12g), in the model's ``comp_insts``): their final branch and constant loads."""
    from cgpredict.guard_exits import GuardExits, guard_exits
    from cgpredict.machine_code import after_guard_loads

    if not threads:
        return GuardExits()
    per_thread = {b: float(bb[b]) / threads for b in range(len(bb)) if bb[b]}
    return guard_exits(shape.merged_entries, per_thread, after_guard_loads(shape, bool(kr.mem)))


def _hoisted_loads(out: dict[str, float], h, loads, bb, threads: float) -> None:
    """The loads the IR hoists out of the mapped loops (``hoisted_loads``, eq. (12L), in the
    model's ``machine_insts``): global loads, every thread its own, where the trace's block
    executions (``_block_classes``) count them once per row or launch."""
    if not threads or not loads:
        return
    n = _hoisted_count(loads, bb, threads)
    per_thread = {b: float(bb[b]) / threads for b in range(len(bb)) if bb[b]}
    traced = sum(per_thread.get(h.mem[ld.sid].block, 0.0) for ld in loads)
    out["ld_global"] += n - traced
    out["other"] -= n


def _hoisted_count(loads, bb, threads: float) -> float:
    """The hoisted loads' LDGs per thread (eq. (12L)) with block executions ``bb``."""
    from cgpredict.hoisted_loads import hoisted_load_insts

    per_thread = {b: float(bb[b]) / threads for b in range(len(bb)) if bb[b]} if threads else {}
    return hoisted_load_insts(loads, per_thread)


def _port_atomics(out: dict[str, float], h, kr, bb, threads: float) -> None:
    """The port of a kernel whose threads update shared locations (cgpredict.atomics, in the
    model's ``comp_insts``): the sites' loads and stores (memory pattern ``atomic``) leave
    the global classes, their atomics (RED, ``profile.atomics.insts``) are other, as the
    SASS's REDG (``sass_class``); per reduction over the threads (the report's line for each)
    the warp's shuffles (SHFL: other) and adds (FADD: fp32, the one reduction of the user
    kernels is a float sum), the guard's reconvergence (BSSY, BSYNC, the zero partial:
    other) and the lane test (LOP3: integer; its EXIT: branch), ``atomics.reduction_code``."""
    from cgpredict.atomics import reduction_code

    for m in kr.mem:
        if m.pattern == "atomic" and threads:
            n = float(bb[h.mem[m.id].block]) / threads if h.mem[m.id].block < len(bb) else 0.0
            out["ld_global" if h.mem[m.id].kind == "load" else "st_global"] -= n
    out["other"] += kr.profile.atomics.insts
    reductions = sum("is a reduction over the threads" in w for w in kr.warnings)
    if reductions:  # the warp level's code (atomics.reduction_code), split into classes
        code = reduction_code(32)
        out["other"] += (code.shuffles + code.reconverge) * reductions
        out["fp32"] += code.adds * reductions
        out["integer"] += code.lane_test * reductions
        out["branch"] += code.lane_exit * reductions


def _add_staging_code(out: dict[str, float], staging) -> None:
    """A tiled kernel's staging loop code (``memory.staging_code``, in the model's
    ``machine_insts``) into its SASS classes: integer, branch and other."""
    for cls in ("integer", "branch", "other"):
        out[cls] += getattr(staging, cls)


#: every size macro at the trace this check runs (TMAX apart): more than compute.UNROLL_WHOLE
#: iterations, so that a loop bounded by a size is what the model takes it for at the
#: measured sizes, a run-time trip count (runtime_trips.loop_trip_at: what nvcc and ptxas make
#: of the ports' run-time bounds), not a short constant loop it would unroll whole
SASS_TRACE_SIZE = 64


def c_source(name: str) -> Path:
    """The C file of port ``name``: polybench_c/NAME.c, or examples/user/NAME.c for a user
    port ``user/NAME``."""
    if name.startswith("user/"):
        return sass_user.USER_C_DIR / f"{name[5:]}.c"
    if name.startswith("blind/"):
        return sass_blind.BLIND_C_DIR / f"{name[6:]}.c"
    return C_DIR / f"{name}.c"


def trace_sizes(name: str) -> dict[str, int]:
    """The size every macro of polybench_c/``name``.c is traced at here (SASS_TRACE_SIZE); a
    user port's, ``sass_user.TRACE_SIZES``."""
    if name.startswith("user/"):
        return dict(sass_user.TRACE_SIZES[name[5:]])
    if name.startswith("blind/"):
        return dict(sass_blind.TRACE_SIZES[name[6:]])
    sizes = ptx_check.trace_sizes(name)
    return {n: (v if n == "TMAX" else SASS_TRACE_SIZE) for n, v in sizes.items()}


@functools.lru_cache(maxsize=None)
def sized_keys(name: str) -> frozenset[tuple[int, int, int]]:
    """The loops of ``name``.c (scaling.loop_keys: region, line, n) whose trip count grows
    with a size macro (eq. (12sz)), from the probes of a run at twice the check's sizes (the
    check traces at its work sizes, where no probe runs and every trip model is a constant)."""
    from cgpredict.prediction import RunOptions
    from cgpredict.prepared import prepare
    from cgpredict.scaling import loop_keys

    sizes = trace_sizes(name)
    opts = RunOptions(port="plain", work_sizes={n: 2 * v for n, v in sizes.items()},
                      trace_sizes=sizes)
    with prepare(c_source(name), opts) as prep:
        keys = loop_keys(prep.trace)
        return frozenset(keys[lid] for lid, m in prep.sizes.trips.items() if m.sized)


def model_kernels(name: str, port: str) -> dict[str, ModelKernel]:
    """cgpredict's per-thread classes and sequential loops for every kernel of ``name``.c."""
    import numpy as np

    from cgpredict.frontend.summary import region_block_counts
    from cgpredict.kernel.launch_loops import loop_unroll_at, unrolled_whole
    from cgpredict.parallelism import thread_bodies
    from cgpredict.prediction import RunOptions
    from cgpredict.prepared import prepare
    from cgpredict.runtime_trips import loop_trip_at
    from cgpredict.scaling import loop_keys
    from cgpredict.warps import mapped_loops

    sizes = trace_sizes(name)
    opts = RunOptions(port=port, work_sizes=sizes, trace_sizes=sizes)
    out: dict[str, ModelKernel] = {}
    with prepare(c_source(name), opts) as prep:
        report = prep.analyze(opts)
        tr = prep.trace
        for r in tr.header.regions:
            kr = next(k for k in report.kernels if k.name == r.name)
            grid = kr.grid_dims
            rows = tr.launches["region"] == r.index
            iters = tr.loop_iters[rows].sum(axis=0).astype(np.float64)
            entries = tr.loop_entries[rows].sum(axis=0).astype(np.float64)
            d1, d2 = mapped_loops(tr, r.index)
            mapped = d2 if grid == 2 else d1
            threads = float(sum(iters[i] for i in mapped))
            bodies = thread_bodies(tr, r.index, grid)

            keys = loop_keys(tr)  # eq. (12sz): the loops bounded by a size macro
            sized = {lid for lid, k in keys.items() if k in sized_keys(name)}

            def unroll_of(lid: int, tr=tr) -> int:  # the model's (kernel.launch), traced size
                return loop_unroll_at(tr, lid, sized=lid in sized)

            def trip_of(lid: int, tr=tr):  # the model's run-time loop trips, traced size
                return loop_trip_at(tr, lid, sized=lid in sized)

            def whole_of(lid: int, tr=tr) -> bool:  # eq. (12wu): unrolled whole
                return unrolled_whole(tr, lid, sized=lid in sized)

            seq = sorted(
                (lp for lp in tr.header.loops if lp.region == r.index and lp.depth > grid),
                key=lambda lp: (lp.line, lp.depth),
            )
            staged = {m.id for m in kr.mem if m.pattern == "shared"}
            bb = region_block_counts(tr, r.index)
            loops = []
            for lp in seq:
                n = float(iters[lp.id] - (0 if lp.rotated else entries[lp.id]))
                own = set(lp.blocks)
                for c in tr.header.loops:
                    if c.parent == lp.id:
                        own -= set(c.blocks)
                per_iter = (
                    _block_classes(tr.header, bb, staged, own, n, bodies, unroll_of, trip_of,
                                   whole_of)
                    if n
                    else {}
                )
                loops.append(ModelLoop(lp.line, lp.depth - grid, n / threads, per_iter,
                                       float(entries[lp.id]) / threads))
            # the launch the report's profile is of (kernel.analysis: the first recorded one),
            # split as the report counted it: at the check's sizes, without probes, it takes a
            # loop bounded by a size of at most UNROLL_WHOLE iterations for a constant one
            # (eq. (12sz)'s sized loops are the check's view, not the report's)
            first = int(np.flatnonzero(rows & (tr.launches["recorded"] == 1))[0])
            n1 = float(tr.loop_iters[first, mapped].sum()) if mapped else 1.0
            one = _model_classes(
                tr, kr, tr.bb_counts[first], n1, bodies,
                lambda lid, tr=tr: loop_unroll_at(tr, lid),
                lambda lid, tr=tr: loop_trip_at(tr, lid), r.index,
                tr.loop_entries[first].astype(np.float64),
                lambda lid, tr=tr: unrolled_whole(tr, lid),
            )
            out[r.name] = ModelKernel(
                grid,
                loops,
                _model_classes(tr, kr, bb, threads, bodies, unroll_of, trip_of, r.index,
                               entries, whole_of),
                kr.profile.comp_insts,
                sum(one[c] for c in COMPUTE) + one["st_shared"]  # + the hoisted LDGs (12L)
                + _hoisted_count(ptx_check.region_shape(tr, kr, r.index).entry.hoisted_loads,
                                 tr.bb_counts[first], n1),
            )
    return out
