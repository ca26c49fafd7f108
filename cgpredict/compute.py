"""Computation analysis (SPEC §2.4): executed LLVM operations -> PTX-equivalent instructions.

The table below says how many PTX instructions one LLVM operation becomes. Choices:

* an ``fmul`` whose only user is an ``fadd``/``fsub`` fuses into one ``fma`` (counted 0 here,
  the add counts 1); ``llvm.fmuladd``/``llvm.fma`` are one ``fma``;
* a loop iteration is one add, one compare and one branch, as nvcc emits it (``add``,
  ``setp``, ``@p bra``; SPEC §2.4 names the add and the branch, the PTX shows the compare
  too); unconditional branches fall through (0);
* a kernel's entry (``kernel_entry_insts``): per thread, what nvcc emits before the loops:
  the thread index per grid dimension, the bounds guard and a pointer per array;
* ``getelementptr``: one integer multiply-add (``mad.wide``) per variable index; constant
  offsets fold into the ld/st address (0);
* integer casts, ``bitcast``, ``ptrtoint``, ``phi``, ``alloca`` are free (0), as on the GPU the
  registers are reused; float<->int and float<->double conversions are one ``cvt`` each;
* division, remainder, square root, exp/log/trigonometric functions go to the special
  function unit (SFU) and are counted separately as well as in the total;
* loads and stores are memory instructions, counted by the memory analysis, not here.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass

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

    def scaled(self, factor: float) -> "ComputeCounts":
        return ComputeCounts(
            self.total * factor, self.sfu * factor, self.fp * factor, self.unknown_calls
        )


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
    if opcode == "br":
        return (1 if detail == "cond" else 0), False, False
    if opcode == "getelementptr":
        return int(detail or 0), False, False
    if opcode in CVT_OPS:
        return 1, False, fp
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


def runtime_trip_depth(moves_one_element: bool, stores: int) -> int:
    """Source iterations per trip of the sm_90 SASS of a loop bounded by a run-time size:
    nvcc's UNROLL_RUNTIME, times PTXAS_UNROLL when ptxas unrolls again. It does when the loop
    has an access that moves one element per iteration (16 iterations' addresses are one
    pointer plus immediate offsets, one 64-bit add a trip) and at most one global store per
    iteration; a loop whose every access moves by a row per iteration, or with two stores
    (plain pointers: each reloads after the other), keeps nvcc's 4. The rule is read from
    the SASS of the ports' hot loops (59 of 60; DERICHE's backward column pass is 16)."""
    deeper = moves_one_element and stores <= 1
    return UNROLL_RUNTIME * (PTXAS_UNROLL if deeper else 1)


def integer_insts(block_ops) -> float:
    """PTX-equivalent integer and branch instructions of one execution of a block's ops
    ((opcode, type, detail, count) tuples): the loop control and address arithmetic that
    unrolling folds away when they follow the induction variables."""
    total = 0.0
    for opcode, ty, detail, k in block_ops:
        cost, is_sfu, is_fp = ptx_cost(opcode, ty, detail)
        if cost > 0 and not is_sfu and not is_fp and opcode not in ("fcmp", "call"):
            total += cost * k
    return total


def kernel_entry_insts(grid_dims: int, arrays: int) -> int:
    """PTX instructions a kernel runs once per thread before its loops: per grid dimension
    ``mov`` of %tid, %ctaid and %ntid, a ``mad`` and the bound's ``setp``; one guard branch;
    per array parameter its ``ld.param`` and ``cvta.to.global``."""
    return 5 * grid_dims + 1 + 2 * arrays


def compute_counts(ops: Counter) -> ComputeCounts:
    """PTX-equivalent totals of executed operations keyed by (opcode, type, detail)."""
    total = sfu = fp = 0.0
    unknown = set()
    for (opcode, ty, detail), n in ops.items():
        cost, is_sfu, is_fp = ptx_cost(opcode, ty, detail)
        if opcode == "call" and _call_cost(detail)[0] < 0:
            unknown.add(detail)
        total += cost * n
        sfu += cost * n if is_sfu else 0
        fp += cost * n if is_fp else 0
    return ComputeCounts(total, sfu, fp, tuple(sorted(unknown)))
