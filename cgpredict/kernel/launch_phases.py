"""A thread's phases: the loops one after another directly in its mapped loop's body, eq. (PH).

softmax (examples/user/softmax.c) runs three loops a row: the maximum, the sum of the
exponentials, the output row. Every warp walks them in the same order, so the whole launch
walks them in step, and each phase's slowest path sets its own time: the two read passes
hold the L1 (a warp instruction's 32 rows, 32 lines), the write pass the L2's store path
(32 partial sectors a warp store). The launch's bounds summed over the whole kernel take
the slower of the two sums (the L1's); the phases add the slower of each (models/bounds.py,
eq. (PH)). Each phase's costs come from the memory profile of its own blocks' counts
(memory_profile with the other blocks' counts left out), priced as the whole launch's are.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..memory.transactions import COAL, CONST, UNCOAL
from ..models.bounds import phase_costs
from ..profile import KernelProfile, PhaseCosts
from .memory_profile import memory_profile

__all__ = ["launch_phases", "phase_blocks"]


def phase_blocks(loops, region: int, mapped) -> tuple[frozenset[int], ...]:
    """The basic blocks (nested loops' included) of each loop of ``region`` whose parent is
    one of the ``mapped`` loops (the innermost loops the grid maps), in loop-id order; ()
    when there are fewer than two: one loop, or straight-line code, is one phase."""
    inner = set(mapped)
    if not inner:
        return ()
    found = tuple(frozenset(lp.blocks) for lp in loops
                  if lp.region == region and lp.parent in inner and lp.blocks)
    return found if len(found) >= 2 else ()


def launch_phases(ctx, per_thread: Mapping[int, float], mem, skip: set[int],
                  bytes_per_access: int) -> tuple[PhaseCosts, ...]:
    """The PhaseCosts of a launch of ``ctx`` (launch.LaunchContext) with ``per_thread``
    executions a block: for each phase (phase_blocks), the memory profile of its blocks'
    executions alone, priced by models.bounds.phase_costs, then the code outside every
    phase (the mapped loop's straight-line code) as one more, so that the phases hold every
    instruction; () for one phase."""
    mapped = ctx.d2 if ctx.grid == 2 else ctx.d1
    phases = phase_blocks(ctx.trace.header.loops, ctx.region, mapped)
    inside = frozenset().union(*phases) if phases else frozenset()
    out = [cost for blocks in phases
           for cost in _phase(ctx, {b: c for b, c in per_thread.items() if b in blocks},
                              mem, skip, bytes_per_access)]
    if len(out) < 2:
        return ()
    rest = {b: c for b, c in per_thread.items() if b not in inside}
    return (*out, *_phase(ctx, rest, mem, skip, bytes_per_access))


def _phase(ctx, own: Mapping[int, float], mem, skip: set[int],
           bytes_per_access: int) -> tuple[PhaseCosts, ...]:
    """(the PhaseCosts of the blocks ``own`` counts,), or () when they count none."""
    if not any(own.values()):
        return ()
    _, patterns, stores = memory_profile(
        ctx.trace, mem, dict(own), ctx.region, skip, ctx.restores, dict(ctx.scale),
        ctx._mem_kept)
    part = KernelProfile(name=ctx.name, threads_per_block=ctx.block.threads, blocks=1,
                         coal=patterns[COAL], uncoal=patterns[UNCOAL], const=patterns[CONST],
                         stores=stores, bytes_per_access=max(bytes_per_access, 1))
    return (phase_costs(part, ctx.device),)
