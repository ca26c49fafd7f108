"""A traced loop's own blocks and the mapped loops around it: the loop structure the
machine-code counts (``machine_code``, ``zero_trip_tests``, ``runtime_trips``) walk."""

from __future__ import annotations

from .frontend.tracefile import Trace


def own_blocks(trace: Trace, loop) -> set[int]:
    """The blocks of ``loop`` outside its inner loops."""
    own = set(loop.blocks)
    for c in trace.header.loops:
        if c.parent == loop.id:
            own -= set(c.blocks)
    return own


def mapped_above(h, m) -> list:
    """The loops enclosing mapped loop ``m`` (the outer mapped loops of a 2-D grid)."""
    out, q = [], m.parent
    while q >= 0:
        out.append(h.loops[q])
        q = h.loops[q].parent
    return out
