"""The constants of a library call that ptxas sets once per trip of a run-time loop, not once
per call (issue 24, eq. (12k)): what the SASS check of the user kernels read off softmax.

``expf``'s fast path (compute.SASS_EXPANSION, 9 instructions) reads two constants of its range
reduction, 0x3bbb989d (log2(e)) and 0x437c0000, which ptxas moves into registers (MOV,
HFMA2.MMA or IMAD.MOV.U32: an immediate a FFMA.SAT and a FFMA.RM cannot both take); ``logf``
one (HFMA2.MMA of 0x3e055027's halves). In straight-line code (sfu_heavy) that is 2 moves a
call. In a loop bounded by a run-time size ptxas sets them once per SASS trip, at its top, and
every call of the trip reads them: the sm_90 SASS of the probe loops ``s += expf(a[j])`` (16 a
trip: 2 moves a trip), ``s += expf(a[j] - m)``, ``s += expf(a[j] * m)`` and ``s += expf(a[j]) +
expf(b[j])`` (4 a trip: 2), ``s += logf(a[j])`` (4 a trip: 1) and softmax's sum of expf (4 a
trip: 2, MOV and IMAD.MOV.U32), nvcc 13 ``-O3 -arch=sm_90``. Not where the trip calls a slow
path (an IEEE division or square root: compute.SLOW_PATH_OPS): the call clobbers the
registers, so each call sets its constants again (softmax's output row: 2 a call); ``powf``
sets its three constants per call in the probe ``s += powf(a[j], 1.7f)`` and ``sinf``/``cosf``
branch to their slow path's loop inside the trip: neither is in the table. Per SASS trip of
``depth`` source iterations::

    constant_moves_trip = sum over the kinds k of call the trip runs of C_k
                          - depth x (sum over the loop's calls of C_k per iteration)     (12k)

(C_k = TRIP_CONSTANTS; the second term is what the expansion counts: its moves a call). The
difference is negative: the moves (class other) that the trip does not repeat.

Which move ptxas issues a constant with (eq. (12cm), ``fma_pipe_constant_moves``): in the
straight-line code of a kernel that runs an IEEE fp32 division or a ``sinf``/``cosf``, both
of ``expf``'s constants and ``logf``'s one are IMAD.MOV.U32 (the FMA pipe: class integer of
the SASS check); in a kernel without, HFMA2.MMA and MOV (class other). Read from the sm_90
SASS (nvcc 13, ``-O3 -arch=sm_90``) of 25 one-line probe kernels: the 13 with such an
operation (``expf(a) / b``, ``b / expf(a)``, ``expf(a) + b / c``, ``logf(a) / b``,
``expf(a) * cosf(b)``, ``sinf(b) + logf(a)``, guarded and not) and the user sfu_heavy
(``expf(x) / sqrtf(x + 1)``) all IMAD.MOV.U32; the 12 without (``expf(a) + b``, ``expf(a)``,
``expf(a) * sqrtf(b)``, ``sqrtf(expf(a))``, ``logf(a) + sqrtf(b)``, ...) all HFMA2.MMA and
MOV, a square root's slow-path call notwithstanding. Inside a loop ptxas mixes the two (the
user softmax: 5 of 8 a trip of its output row, 1 of 2 in its sum): not counted there, nor
after an FP64 division (one probe: one of each).
"""

from __future__ import annotations

from .compute import SLOW_PATH_OPS, sass_op
from .frontend.tracefile import Trace
from .loop_blocks import own_blocks

#: per SASS_EXPANSION key, the moves of constants its fast path reads that ptxas sets once per
#: trip of a run-time loop without a slow-path call (the probes of the module docstring)
TRIP_CONSTANTS: dict[str, int] = {"exp_f32": 2, "log_f32": 1}


def runs_slow_path(trace: Trace, loop) -> bool:
    """Whether the blocks of ``loop`` (inner loops excluded) run an operation whose SASS
    calls a slow-path subroutine (compute.SLOW_PATH_OPS: an IEEE division or square root)."""
    h = trace.header
    return any(
        sass_op(opcode, ty, detail) in SLOW_PATH_OPS
        for b in own_blocks(trace, loop) for opcode, ty, detail, _ in h.blocks[b].ops
    )


def trip_constants(trace: Trace, loop) -> tuple[float, int]:
    """(constant moves per source iteration that the loop's own blocks count, in their calls'
    expansions; moves one trip sets, once per kind of call) of ``loop``, eq. (12k). The
    caller leaves them alone where the trip calls a slow path."""
    h = trace.header
    iters = float(trace.loop_iters[:, loop.id].sum()) if trace.loop_iters.size else 0.0
    if iters <= 0:
        return 0.0, 0
    per_iter, kinds = 0.0, set()
    for b in own_blocks(trace, loop):
        runs = float(trace.bb_counts[:, b].sum()) / iters
        for opcode, ty, detail, k in h.blocks[b].ops:
            key = sass_op(opcode, ty, detail)
            if key in TRIP_CONSTANTS and runs > 0:
                per_iter += TRIP_CONSTANTS[key] * k * runs
                kinds.add(key)
    return per_iter, sum(TRIP_CONSTANTS[key] for key in kinds)


def trip_constant_moves(depth: int, per_iteration: float, per_trip: int) -> float:
    """Eq. (12k): the moves a trip of ``depth`` iterations keeps of its calls' constants
    less those the calls' expansions count (``per_iteration`` of them a source iteration):
    ``per_trip`` - depth x per_iteration, 0 without such a call."""
    return float(per_trip) - depth * per_iteration if per_iteration > 0 else 0.0


#: eq. (12cm): the operations whose presence in a kernel makes ptxas move the library calls'
#: constants of its straight-line code by IMAD.MOV.U32 (compute.SASS_EXPANSION keys)
FMA_PIPE_MOVE_OPS = frozenset(("fdiv_f32", "sin_f32", "cos_f32"))


def fma_pipe_constant_moves(trace: Trace, region: int, grid: int,
                            per_thread: dict[int, float]) -> float:
    """Eq. (12cm): the constant moves per thread (TRIP_CONSTANTS a call) of the library
    calls in the straight-line code of ``region`` (outside its loops below the ``grid``
    mapped ones and outside helpers' loops) that ptxas issues as IMAD.MOV.U32, where the
    kernel runs an operation of FMA_PIPE_MOVE_OPS (``per_thread``: executions of each block
    id per thread); 0 otherwise."""
    h = trace.header
    ran = [(b, op) for b, n in per_thread.items() if n > 0 for op in h.blocks[b].ops]
    if not any(sass_op(*op[:3]) in FMA_PIPE_MOVE_OPS for _, op in ran):
        return 0.0
    inner = {b for lp in h.loops if (lp.region == region and lp.depth > grid)
             or lp.region == -1 for b in lp.blocks}
    return sum(TRIP_CONSTANTS[key] * op[3] * per_thread[b] for b, op in ran
               if b not in inner and (key := sass_op(*op[:3])) in TRIP_CONSTANTS)
