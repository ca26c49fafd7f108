"""A 2-D thread's row work: the arithmetic the IR hoists into the row block of its outer
mapped loop, run once per row in the trace and once by every CUDA thread (eq. (12rw)).

clang's loop-invariant code motion moves what depends on the outer mapped index alone out of
the inner mapped loop: bilinear's ``sy = (y + 0.5f) * 0.5f - 0.5f``, ``floorf(sy)``, the
conversions ``(float)y`` and ``(int)fy``, the clamps of ``y0`` and ``y1`` sit in the row block
(``sass_entry.EntryShape.row_blocks``), which the trace runs once per row. The port has no row
loop: each thread is its own row and runs them itself (bilinear's sm_90 SASS: I2FP, FADD,
FFMA, F2I.FLOOR, FRND.FLOOR, FADD, the clamps' VIMNMX and IADD3 for y as for x). Per row block
``b`` and operation ``op`` of it that is neither an address (``getelementptr``: the row
pointers and steps of eq. (12t) and (12h2)) nor loop control (a branch, the compare feeding
it, the latches' induction), the missing executions per thread are::

    row_work_insts = sum over row blocks b, ops op of b of
                     insts(op) x max(share(b) - executions per thread of b, 0)        (12rw)

with ``share(b)`` eq. (12h2)'s (``sass_entry.thread_shares``: executions per row, at most 1).
"""

from __future__ import annotations

from dataclasses import dataclass

from .compute import op_pipes, ptx_cost
from .pipes import PipeCounts
from .sass_entry import EntryShape, thread_shares

#: operations that are no row work: addresses (eq. (12t), (12h2)) and loop control
_NOT_WORK = frozenset(("getelementptr", "br", "switch", "phi", "load", "store"))


def is_row_work(opcode: str, detail: str) -> bool:
    """Whether one IR operation of a row block is arithmetic every thread runs (12rw): not an
    address, a branch or the compare feeding one."""
    return opcode not in _NOT_WORK and not (opcode in ("icmp", "fcmp") and detail == "branch")


def row_ops(h, shape: EntryShape) -> tuple[tuple[int, tuple], ...]:
    """(block id, its row-work operations as (opcode, type, detail, count)) per row block of
    ``shape`` (the trace header ``h``'s blocks), the latches (loop control) excluded."""
    latches = {b for b, _ in shape.latches}
    out = []
    for b in sorted(shape.row_blocks - latches):
        ops = tuple(op for op in h.blocks[b].ops if is_row_work(op[0], op[2]))
        if any(ptx_cost(*op[:3])[0] for op in ops):
            out.append((b, ops))
    return tuple(out)


def row_work_weights(shape: EntryShape, per_thread) -> dict[int, float]:
    """Per row block, the executions per thread the trace lacks (12rw): its share of threads
    (eq. (12h2)) less its executions per thread."""
    shares = thread_shares(shape, per_thread)
    return {b: max(min(shares.get(b, 0.0), 1.0) - per_thread.get(b, 0.0), 0.0)
            for b in shape.row_blocks}


def row_work_insts(ops: tuple[tuple[int, tuple], ...], shape: EntryShape, per_thread) -> float:
    """Eq. (12rw): the row work per thread the trace counts once per row (``ops``: row_ops)."""
    w = row_work_weights(shape, per_thread)
    return float(sum(w.get(b, 0.0) * ptx_cost(*op[:3])[0] * op[3]
                     for b, block_ops in ops for op in block_ops))


@dataclass(frozen=True)
class RowWork:
    """Eq. (12rw) per thread: instructions (in the compute count) and by pipe class."""

    insts: float = 0.0
    pipes: PipeCounts = PipeCounts()


def row_work(ops: tuple[tuple[int, tuple], ...], shape: EntryShape, per_thread) -> RowWork:
    """Eq. (12rw) of one launch (``per_thread``: block executions per thread)."""
    return RowWork(insts=row_work_insts(ops, shape, per_thread),
                   pipes=row_work_pipes(ops, shape, per_thread))


def row_work_pipes(ops: tuple[tuple[int, tuple], ...], shape: EntryShape,
                   per_thread) -> PipeCounts:
    """The row work of eq. (12rw) by pipe class (``compute.op_pipes``), for the pipe bound."""
    w = row_work_weights(shape, per_thread)
    out: dict[str, float] = {}
    for b, block_ops in ops:
        for opcode, ty, detail, k in block_ops:
            for cls, n in op_pipes(opcode, ty, detail):
                out[cls] = out.get(cls, 0.0) + w.get(b, 0.0) * n * k
    return PipeCounts(**out)
