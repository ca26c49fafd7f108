"""Computation analysis (SPEC §2.4): executed LLVM operations -> PTX-equivalent instructions.

The table below says how many PTX instructions one LLVM operation becomes. Choices:

* an ``fmul`` whose only user is an ``fadd``/``fsub`` fuses into one ``fma`` (counted 0 here,
  the add counts 1); ``llvm.fmuladd``/``llvm.fma`` are one ``fma``;
* an ``fneg`` whose every user is an ``fadd``/``fsub``/``fmul``/``fmuladd``/``fma`` is free
  (detail ``operand``, instrument/opkeys.py): SASS's FADD, FMUL and FFMA negate an operand
  as a modifier, so ptxas folds it (the PTX keeps ``neg.f32`` or ``mul`` + ``sub``: the PTX
  check takes it back, validation/ptx_check.sass_surplus);
* a loop iteration is one add, one compare and one branch, as nvcc emits it (``add``,
  ``setp``, ``@p bra``; SPEC §2.4 names the add and the branch, the PTX shows the compare
  too); unconditional branches fall through (0);
* a kernel's entry (``kernel_entry_insts``): per thread, what nvcc emits before the loops:
  the thread index per grid dimension, the bounds guard and a pointer per array;
* ``getelementptr``: one integer multiply-add (``mad.wide``) per variable index; constant
  offsets fold into the ld/st address (0);
* integer casts, ``bitcast``, ``ptrtoint``, ``phi``, ``alloca`` are free (0), as on the GPU the
  registers are reused; float<->int and float<->double conversions are one ``cvt`` each;
* division, remainder, square root, exp/log/trigonometric and pow are counted as the sm_90
  SASS runs them (``SASS_EXPANSION``): an IEEE ``fdiv`` is one MUFU.RCP and five FFMA
  refinements with a check and a branch to a slow path not taken for ordinary operands, an
  int32 ``/`` by a run-time value a two-dozen-instruction I2F/MUFU.RCP/IMAD.HI sequence, a
  ``logf`` a polynomial of FFMAs; their SFU instructions are counted separately as well as in
  the total;
* every instruction also has a pipe class (``op_pipes``, cgpredict/pipes.py): FP32, FP64,
  SFU, integer add, multiply, shift, compare, conversion; the model prices each class at its
  published rate (eq. (12p));
* loads and stores are memory instructions, counted by the memory analysis, not here.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass, field

from cgpredict.pipes import PipeCounts

ALU_OPS = frozenset(
    "add sub mul shl lshr ashr and or xor icmp fcmp select fadd fsub fmul fneg switch "
    "extractelement insertelement".split()
)
CVT_OPS = frozenset("sitofp uitofp fptosi fptoui fpext fptrunc".split())
FREE_OPS = frozenset(
    "phi sext zext trunc bitcast ptrtoint inttoptr alloca ret unreachable freeze".split()
)
SFU_OPS = frozenset("fdiv frem sdiv udiv srem urem".split())
SFU_CALLS = ("sqrt", "exp", "log", "sin", "cos", "tan", "pow", "atan", "erf", "cbrt", "rsqrt")
ONE_CALLS = (
    "fabs",
    "fmin",
    "fmax",
    "minnum",
    "maxnum",
    "smax",
    "smin",
    "umax",
    "umin",
    "abs",
    "floor",
    "ceil",
    "round",
    "trunc",
    "copysign",
    "fmuladd",
    "fma",
)
FP_TYPES = ("float", "double", "half")


@dataclass(frozen=True)
class ComputeCounts:
    """PTX-equivalent instructions (not memory) executed, in total over what was counted."""

    total: float  # every non-memory instruction, SFU included
    sfu: float
    fp: float
    unknown_calls: tuple[str, ...] = ()
    pipes: PipeCounts = field(default_factory=PipeCounts)  # the same by pipe class
    foldable: float = 0.0  # integer and branch instructions, as integer_insts counts them

    def plus(self, other: "ComputeCounts", times: float = 1.0) -> "ComputeCounts":
        """These counts plus ``times`` x ``other`` (a fold's saving taken off: times -1)."""
        return ComputeCounts(
            self.total + times * other.total, self.sfu + times * other.sfu,
            self.fp + times * other.fp, self.unknown_calls,
            self.pipes.plus(other.pipes, times), self.foldable + times * other.foldable,
        )

    def scaled(self, factor: float) -> "ComputeCounts":
        return ComputeCounts(
            self.total * factor, self.sfu * factor, self.fp * factor, self.unknown_calls,
            self.pipes.scaled(factor), self.foldable * factor,
        )


#: sm_90 SASS of one operation, fast path (validation/sass_ops.py on cuda/ops/arith_ops.cu,
#: nvcc -cubin -O3 -arch=sm_90, nvdisasm; checked by tests/test_sass_ops.py): (instructions,
#: {pipe class: instructions}); the rest of the total are moves, branches and the BSSY/BSYNC
#: around a slow path. Division and remainder of 32-bit integers by a run-time value, by a
#: constant power of two and by another constant (``detail`` "pow2"/"const", memtrace); a
#: remainder whose quotient the code computes too (``detail`` "quotient": x / y and x % y of
#: the same operands, an index decomposition), which nvcc computes from the quotient,
#: x - (x / y) * y (the user kernels' SASS check, validation/results/sass-check-user.md);
#: IEEE fdiv and sqrt (MUFU.RCP/RSQ + FFMA refinement, FCHK and a branch to the slow path;
#: FCHK issues to the SFU pipe as MUFU does: ncu's pipe_xu counts 2 a division);
#: libm's expf (FFMA range reduction + MUFU.EX2), logf, sinf, cosf, powf (FFMA polynomials,
#: no SFU on sinf/cosf's fast path |x| < 105615); double div and sqrt (MUFU.RCP64H/RSQ64H +
#: DFMA Newton steps). Double exp/log/sin/cos/pow call subroutines the check does not follow:
#: not in the table (one SFU instruction each, as before).
SASS_EXPANSION: dict[str, tuple[int, dict[str, int]]] = {
    "sdiv_i32": (24, {"cvt": 2, "int_add": 9, "int_cmp": 4, "int_mul": 4, "sfu": 1}),
    "srem_i32": (22, {"cvt": 2, "int_add": 9, "int_cmp": 4, "int_mul": 4, "sfu": 1}),
    "udiv_i32": (18, {"cvt": 2, "int_add": 7, "int_cmp": 3, "int_mul": 4, "sfu": 1}),
    "urem_i32": (17, {"cvt": 2, "int_add": 6, "int_cmp": 3, "int_mul": 4, "sfu": 1}),
    "sdiv_pow2_i32": (2, {"int_add": 1, "int_shift": 1}),
    "srem_pow2_i32": (3, {"int_add": 2, "int_shift": 1}),
    "sdiv_const_i32": (4, {"int_add": 1, "int_mul": 1, "int_shift": 1}),
    "srem_const_i32": (5, {"int_add": 1, "int_mul": 2, "int_shift": 1}),
    "srem_quotient_i32": (3, {"int_add": 2, "int_mul": 1}),
    "urem_quotient_i32": (2, {"int_mul": 1}),
    "fdiv_f32": (10, {"fp32": 5, "sfu": 2}),
    "sqrt_f32": (10, {"fp32": 4, "int_add": 1, "int_cmp": 1, "sfu": 1}),
    "exp_f32": (9, {"fp32": 5, "int_shift": 1, "sfu": 1}),
    "log_f32": (26, {"cvt": 1, "fp32": 15, "int_add": 3, "int_cmp": 5}),
    "sin_f32": (26, {"cvt": 2, "fp32": 11, "int_add": 2, "int_cmp": 4}),
    "cos_f32": (27, {"cvt": 2, "fp32": 11, "int_add": 3, "int_cmp": 4}),
    "pow_f32": (64, {"cvt": 3, "fp32": 39, "int_add": 5, "int_cmp": 10, "sfu": 1}),
    "fdiv_f64": (16, {"fp32": 1, "fp64": 8, "int_cmp": 2, "sfu": 1}),
    "sqrt_f64": (18, {"fp64": 8, "int_add": 2, "int_cmp": 1, "sfu": 1}),
}
#: the longest register-dependence path through each SASS_EXPANSION entry's fast path, in
#: dependent steps by kind (validation/sass_ops.py --chain, checked by tests/test_sass_ops.py):
#: (MUFU, FP64, other ALU). An IEEE fdiv waits for MUFU.RCP and five FFMA refinements one
#: after another, a sqrtf for MUFU.RSQ and FMUL, FFMA, FFMA; a double division for
#: MUFU.RCP64H and eight DFMA. What one such operation adds to a thread's critical path
#: (op_chain_cycles), where the pipe counts above say what it adds to the issue.
SASS_CHAIN: dict[str, tuple[int, int, int]] = {
    "sdiv_i32": (1, 0, 14), "srem_i32": (1, 0, 14), "udiv_i32": (1, 0, 12),
    "urem_i32": (1, 0, 12), "sdiv_pow2_i32": (0, 0, 2), "srem_pow2_i32": (0, 0, 3),
    "sdiv_const_i32": (0, 0, 4), "srem_const_i32": (0, 0, 5),
    "fdiv_f32": (1, 0, 5), "sqrt_f32": (1, 0, 3), "exp_f32": (1, 0, 6), "log_f32": (0, 0, 16),
    "sin_f32": (0, 0, 12), "cos_f32": (0, 0, 12), "pow_f32": (1, 0, 28),
    "fdiv_f64": (1, 8, 2), "sqrt_f64": (1, 7, 0),
}  # fmt: skip


@dataclass(frozen=True)
class OpLatencies:
    """Cycles from one instruction's issue to a dependent one's, by kind (a device file's
    [timing]: fp_latency_cycles, inst_latency_cycles, fp64_latency_cycles,
    sfu_latency_cycles; the measured chains and loop trip of eqs. (IE), (LT))."""

    fp32: float
    integer: float
    fp64: float
    sfu: float
    # measured cycles one SASS_CHAIN operation adds to a chain (ieee_chains_cycles, eq. (IE)),
    # by SASS_CHAIN key; an operation not named keeps its expansion at the latencies above
    measured: tuple[tuple[str, float], ...] = ()
    # one warp's loop trip: the floor of its control recurrence (UIADD3, ISETP, BRA back) and
    # what the taken back branch adds to a chain through the trip (eq. (LT)); 0: none
    loop_trip: float = 0.0
    loop_branch: float = 0.0
    # how far apart one warp's DRAM sectors in flight together return, cycles a sector (eq. (Q1))
    dram_gap: float = 0.0
    # eq. (Q1r): the spread of one warp's DRAM returns in flight together (sigma, cycles) and
    # a loop load's measured one-load trip over the L2 + DRAM latency (lift), each later
    # load's slot in the round (issue); sigma 0: (Q1) instead
    dram_sigma: float = 0.0
    dram_lift: float = 0.0
    dram_issue: float = 0.0
    # eq. (Q1w): the lift with many warps walking at once (0: the lone lift always), the
    # DRAM's memory controllers (C), and the launch's walking warps W (set per launch,
    # dram_rounds.with_walkers; 1: a lone warp)
    dram_lift_loaded: float = 0.0
    dram_channels: float = 0.0
    dram_walkers: float = 1.0


#: a loop body's operator class (instrument/loopbody.op_class) of each expanded operation
_BODY_EXPANDED = {"fdiv": "fdiv_f32", "ddiv": "fdiv_f64", "fsqrt": "sqrt_f32",
                  "dsqrt": "sqrt_f64"}
#: the classes whose SASS has a branch to an IEEE slow path (a CALL) inside the iteration:
#: ptxas keeps each unrolled copy of such a body behind the previous copy's reconvergence
#: (BSYNC), so one thread's iterations do not overlap (the sm_90 SASS of the user kernel
#: nbody: every copy's loads follow the previous copy's division)
SLOW_PATH_CLASSES = frozenset(_BODY_EXPANDED)


def op_chain_cycles(key: str, lat: OpLatencies) -> float:
    """Cycles one SASS_EXPANSION operation adds to a dependence chain: its SASS_CHAIN steps
    at the device's latencies (ALU steps at the FP32 latency: FFMA, IADD3, IMAD alike), or
    the device's measured chain of it where it has one (eq. (IE))."""
    for name, cycles in lat.measured:
        if name == key:
            return cycles
    sfu, fp64, alu = SASS_CHAIN[key]
    return sfu * lat.sfu + fp64 * lat.fp64 + alu * lat.fp32


def body_op_cycles(klass: str, lat: OpLatencies) -> float:
    """Latency of one loop-body operation of class ``klass`` (loopbody.op_class) that is not
    a memory access: an expanded IEEE division or square root its SASS chain, an FP64 one
    the FP64 latency, another floating point one (f...) the FP32 latency, the rest the
    integer latency. A library call (expf, ...) is one FP32 step: the body does not name
    the callee (a limit: docs/models.md)."""
    if klass in _BODY_EXPANDED:
        return op_chain_cycles(_BODY_EXPANDED[klass], lat)
    if klass.startswith("d"):
        return lat.fp64
    if klass.startswith("f"):
        return lat.fp32
    return lat.integer


_INT_DIV = frozenset(("sdiv", "udiv", "srem", "urem"))
_EXPANDED_CALLS = ("sqrt", "exp", "log", "sin", "cos", "pow")


def sass_op(opcode: str, ty: str, detail: str) -> str | None:
    """The SASS_EXPANSION key of one executed LLVM operation, or None (counted as before).
    A division by a constant of an unsigned type takes the signed constant's sequence. A
    64-bit one takes the 32-bit sequence: sm_90 tests whether both operands' high words are
    zero and then runs it (index arithmetic fits; the others call a subroutine)."""
    double = ty.startswith("double")
    if opcode in _INT_DIV:
        if detail in ("pow2", "const"):
            return f"{'sdiv' if 'div' in opcode else 'srem'}_{detail}_i32"
        if detail == "quotient" and opcode in ("srem", "urem"):
            return f"{opcode}_quotient_i32"
        return f"{opcode}_i32"
    if opcode == "fdiv" and (double or ty.startswith("float")):
        return "fdiv_f64" if double else "fdiv_f32"
    if opcode == "call" and (double or ty.startswith("float")):
        name = detail.removeprefix("llvm.").split(".")[0].lower()
        stem = name[:-1] if name.endswith("f") else name
        if stem in _EXPANDED_CALLS:
            key = f"{stem}_{'f64' if double else 'f32'}"
            return key if key in SASS_EXPANSION else None
    return None


_FP_CLASS = {"float": "fp32", "double": "fp64", "half": "fp32"}
_INT_CLASS = {
    "add": "int_add", "sub": "int_add", "and": "int_add", "or": "int_add", "xor": "int_add",
    "mul": "int_mul", "shl": "int_shift", "lshr": "int_shift", "ashr": "int_shift",
    "icmp": "int_cmp", "select": "int_cmp", "getelementptr": "int_mul",
}  # fmt: skip
_CALL_CLASS = {
    "fabs": "fp", "fma": "fp", "fmuladd": "fp", "fmin": "int_cmp", "fmax": "int_cmp",
    "minnum": "int_cmp", "maxnum": "int_cmp", "smax": "int_cmp", "smin": "int_cmp",
    "umax": "int_cmp", "umin": "int_cmp", "abs": "int_add", "copysign": "int_add",
    "floor": "cvt", "ceil": "cvt", "round": "cvt", "trunc": "cvt",
}  # fmt: skip


def _fp_class(ty: str) -> str:
    """fp32 or fp64 by the operation's type (a vector or pointer type: fp32)."""
    return _FP_CLASS.get(ty.split()[0].rstrip("*"), "fp32")


@functools.lru_cache(maxsize=4096)
def op_pipes(opcode: str, ty: str, detail: str) -> tuple[tuple[str, int], ...]:
    """The pipe classes (cgpredict/pipes.py) of one executed LLVM operation's instructions,
    as (class, instructions) pairs: SASS_EXPANSION's for an expanded one, else one
    instruction of the class its SASS instruction has (FADD/DFMA, IADD3, IMAD, SHF, ISETP or
    FSETP/SEL, F2I/I2F); branches, moves and free operations have none."""
    key = sass_op(opcode, ty, detail)
    if key is not None:
        return tuple(sorted(SASS_EXPANSION[key][1].items()))
    cost, is_sfu, is_fp = ptx_cost(opcode, ty, detail)
    if cost <= 0 or opcode == "br":
        return ()
    if is_sfu:
        return (("sfu", cost),)
    if opcode in CVT_OPS:
        wide = "double" in ty or "double" in detail or "i64" in ty or "i64" in detail
        return (("cvt64" if wide else "cvt", cost),)
    if opcode == "fcmp":
        return (("fp64" if ty.startswith("double") else "int_cmp", cost),)
    if opcode == "call":
        name = detail.removeprefix("llvm.").split(".")[0].lower()
        cls = next((c for k, c in _CALL_CLASS.items() if name.rstrip("f") == k or name == k),
                   None)
        cls = _fp_class(ty) if cls == "fp" else cls
        return ((cls, cost),) if cls else ()
    if is_fp:
        return ((_fp_class(ty), cost),)
    cls = _INT_CLASS.get(opcode)
    return ((cls, cost),) if cls else ()


@functools.lru_cache(maxsize=1024)
def _call_cost(callee: str) -> tuple[int, bool]:
    """(PTX instructions, is SFU) of a call to ``callee`` (libm names, float ``...f`` variants
    and ``llvm.*`` intrinsics)."""
    if callee == "asm":  # the plain port's opaque pointer: a kernel parameter, no instruction
        return 0, False
    name = callee.removeprefix("llvm.").split(".")[0].lower()
    for cand in (name, name[:-1] if name.endswith("f") else name):
        if any(cand.startswith(s) for s in SFU_CALLS):
            return 1, True
        if any(cand == s or cand.startswith(s) for s in ONE_CALLS):
            return 1, False
    return -1, False


@functools.lru_cache(maxsize=4096)
def ptx_cost(opcode: str, ty: str, detail: str) -> tuple[int, bool, bool]:
    """(PTX instructions, is SFU, is floating point) of one executed LLVM operation (asked
    for every operation of every launch modelled: cached)."""
    fp = any(ty.startswith(t) for t in FP_TYPES)
    if opcode in ("load", "store", "atomicrmw", "cmpxchg") or opcode in FREE_OPS:  # memory
        return 0, False, False
    if opcode == "fmul" and detail == "fma":
        return 0, False, False
    if opcode == "fneg" and detail == "operand":  # a negation modifier of its users (SASS)
        return 0, False, False
    if opcode == "br":
        return (1 if detail == "cond" else 0), False, False
    if opcode == "getelementptr":
        return int(detail or 0), False, False
    if opcode in CVT_OPS:
        return 1, False, fp
    key = sass_op(opcode, ty, detail)
    if key is not None:  # as the sm_90 SASS runs it
        total, classes = SASS_EXPANSION[key]
        return total, "sfu" in classes, fp
    if opcode in SFU_OPS:
        return 1, True, fp
    if opcode in ALU_OPS:
        return 1, False, fp
    if opcode == "call":
        n, sfu = _call_cost(detail)
        return (max(n, 1), sfu, fp)
    return 1, False, fp


#: source iterations per trip of a loop that nvcc unrolls without knowing its trip count: a
#: port passes the sizes as kernel parameters, as PolyBench/GPU does (its loop bounds are
#: POLYBENCH_LOOP_BOUND(N, n): the run-time n), and nvcc unrolls such a loop 4 times
UNROLL_RUNTIME = 4
#: ptxas unrolls nvcc's 4-iteration trip of such a loop this many times more (16 source
#: iterations a trip) in 45 of the ports' 60 hot loops (validation/results/sass-check.md,
#: unrolling table): runtime_trip_depth says which
PTXAS_UNROLL = 4
#: a loop of a constant trip count up to this many iterations (a strip-mined tile loop of 32)
#: is unrolled whole: the measured ports' tile loops are 32 iterations a trip in their sm_90
#: SASS (validation/results/sass-check.md, unrolling table)
UNROLL_WHOLE = 32


def loop_unroll(trips_per_entry: float) -> int:
    """Iterations per trip nvcc gives a loop of ``trips_per_entry`` iterations an entry: all
    of them up to UNROLL_WHOLE (a constant trip count of the code, such as a tile's 32),
    else UNROLL_RUNTIME (a trip count that follows a size, a run-time parameter)."""
    if 1 <= trips_per_entry <= UNROLL_WHOLE:
        return max(int(round(trips_per_entry)), 1)
    return UNROLL_RUNTIME


#: the SASS_EXPANSION entries whose fast path branches to a slow-path subroutine (``CALL``
#: with its BSSY/BSYNC: the IEEE division and square root, float and double): a loop that runs
#: one keeps nvcc's trip (runtime_trip_depth)
SLOW_PATH_OPS = frozenset(("fdiv_f32", "sqrt_f32", "fdiv_f64", "sqrt_f64"))


def runtime_trip_depth(
    moves_one_element: bool, stores: int, counts_up: bool = True, slow_path: bool = False
) -> int:
    """Source iterations per trip of the sm_90 SASS of a loop bounded by a run-time size:
    nvcc's UNROLL_RUNTIME, times PTXAS_UNROLL when ptxas unrolls again. ptxas does when it
    can read the trip count off the trip's exit test and the loop has at most one global
    store per iteration (two: plain pointers, each reloads after the other; GESUMMV). It can
    unless the loop counts up from a constant (``counts_up``: loop_counter
    .counts_up_from_constant; nvcc's remainder then follows the unrolled loop and its test
    adds an offset to an up-counting index) and every access moves by a row (nvcc recomputes
    the row index every trip, so the index stays); an access that moves one element makes
    the addresses pointer increments and the index a down-counter to 0. Read from the SASS of
    the ports' 60 hot loops (Deriche's forward column pass 4, its backward one 16) and of
    probe loops (loop_counter). Not modelled: the probes show that two stores which move
    with the loop (to two arrays, by an element or a row) do not keep nvcc's 4; only two at
    a fixed address (GESUMMV's plain accumulators, and a probe like it) do. No corpus loop
    has two moving stores. ptxas does not unroll again a loop whose body runs an operation
    with a slow-path call (``slow_path``: SLOW_PATH_OPS): 16 such iterations exceed what it
    unrolls (17.5 SASS instructions an iteration at least: a probe ``s += 1.0f / a[j]``, 70
    a 4-iteration trip, as ``s += sqrtf(a[j])``; the user ports' n-body j loops, f32 and
    f64, and softmax's output loop: 4 a trip), where ``s += expf(a[j])`` without one gets 16
    (152 instructions a trip). The budget between (a probe of 18 FFMA an iteration keeps
    4, one of 8 gets 16; softmax's sum of expf keeps 4) is not modelled."""
    deeper = stores <= 1 and (moves_one_element or not counts_up) and not slow_path
    return UNROLL_RUNTIME * (PTXAS_UNROLL if deeper else 1)


def _foldable(opcode: str, ty: str, detail: str) -> int:
    """The instructions of one operation that integer_insts counts (0 for the others)."""
    cost, is_sfu, is_fp = ptx_cost(opcode, ty, detail)
    if cost > 0 and not is_sfu and not is_fp and opcode not in ("fcmp", "call"):
        return cost
    return 0


def integer_insts(block_ops) -> float:
    """PTX-equivalent integer and branch instructions of one execution of a block's ops
    ((opcode, type, detail, count) tuples): the loop control and address arithmetic that
    unrolling folds away when they follow the induction variables."""
    return sum(_foldable(opcode, ty, detail) * k for opcode, ty, detail, k in block_ops)


def branch_insts(block_ops) -> float:
    """Of integer_insts, the branches of one execution of a block's ops: the loop's back
    edge and exit, which unrolling folds as the induction's control (eq. (AF2))."""
    return sum(_foldable(opcode, ty, detail) * k for opcode, ty, detail, k in block_ops
               if opcode in ("br", "switch"))


def kernel_entry_insts(grid_dims: int, arrays: int) -> int:
    """PTX instructions a kernel runs once per thread before its loops: per grid dimension
    ``mov`` of %tid, %ctaid and %ntid, a ``mad`` and the bound's ``setp``; one guard branch;
    per array parameter its ``ld.param`` and ``cvta.to.global``."""
    return 5 * grid_dims + 1 + 2 * arrays


def compute_counts(ops: Counter) -> ComputeCounts:
    """PTX-equivalent totals of executed operations keyed by (opcode, type, detail)."""
    total = sfu = fp = foldable = 0.0
    unknown = set()
    pipes: dict[str, float] = {}
    for (opcode, ty, detail), n in ops.items():
        cost, is_sfu, is_fp = ptx_cost(opcode, ty, detail)
        if opcode == "call" and _call_cost(detail)[0] < 0:
            unknown.add(detail)
        total += cost * n
        classes = op_pipes(opcode, ty, detail)
        n_sfu = sum(k for c, k in classes if c == "sfu") if is_sfu else 0
        sfu += n_sfu * n
        fp += cost * n if is_fp else 0
        foldable += _foldable(opcode, ty, detail) * n
        for cls, k in classes:
            pipes[cls] = pipes.get(cls, 0.0) + k * n
    return ComputeCounts(total, sfu, fp, tuple(sorted(unknown)), PipeCounts(**pipes), foldable)
