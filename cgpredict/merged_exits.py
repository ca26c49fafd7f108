"""Two exit tests an iteration that the SASS branches on once (eq. (12xb)): a loop such as
``while (it < MAXIT && zr * zr + zi * zi <= 4)`` exits from two blocks to the same block: its
latch (``it < MAXIT``) branches to the header, whose test (``|z|^2 <= 4``) computes nothing
with a side effect. nvcc's compiler evaluates the header's test in the latch and branches
once on both predicates (``@!P0 BRA P1``): one conditional branch an iteration fewer than the
IR's two. Read from the sm_90 SASS of the blind mandelbrot, both ports (one BRA an iteration).
"""

from __future__ import annotations

import re

from .frontend.tracefile import Trace
from .parallelism import ir_module

_COND_BR = re.compile(r"^br i1 [^,]+, label %([\w.\-]+), label %([\w.\-]+)")
#: calls a test block may make and still be evaluated early: pure arithmetic intrinsics
_PURE_CALLS = ("@llvm.fmuladd.", "@llvm.fma.", "@llvm.fabs.", "@llvm.minnum.", "@llvm.maxnum.")


def _targets(blk) -> tuple[str, str] | None:
    """The two successors of a block ending in a conditional branch, else None."""
    m = _COND_BR.match(blk.instrs[-1].text) if blk.instrs else None
    return (m.group(1), m.group(2)) if m else None


def _pure(blk) -> bool:
    """Whether the block stores nothing and calls nothing but pure intrinsics."""
    for ins in blk.instrs:
        if ins.opcode == "store" or (ins.opcode == "call"
                                     and not any(c in ins.text for c in _PURE_CALLS)):
            return False
    return True


def merged_exits(trace: Trace, region: int, grid: int) -> tuple[int, ...]:
    """The block ids of latches of ``region``'s sequential loops (below its ``grid`` mapped
    ones) whose exit test and the header's branch as one (eq. (12xb)): the latch exits to
    the block the header exits to, and its other successor is the header, which is pure."""
    h = trace.header
    mod = ir_module(h.ir_text)
    out = []
    for lp in h.loops:
        if lp.region != region or lp.depth <= grid or lp.function not in mod.functions:
            continue
        fn = mod.functions[lp.function]
        labels = {h.blocks[b].label: b for b in lp.blocks}
        blocks = {blk.label: blk for blk in fn.blocks if blk.label in labels}
        head = blocks.get(lp.header)
        exits = _targets(head) if head is not None and _pure(head) else None
        if exits is None:
            continue
        outside = {t for t in exits if t not in labels}
        for label, blk in blocks.items():
            t = _targets(blk)
            if label != lp.header and t and lp.header in t and outside & (set(t) - {lp.header}):
                out.append(labels[label])
    return tuple(out)
