"""What the SASS keeps of a loop nvcc unrolls whole (eq. (12wu)): a constant trip count of at
most ``compute.UNROLL_WHOLE`` iterations (``kernel.launch_loops.unrolled_whole``).

Each copy of the body names the induction as an immediate, so nothing of the loop is left
but its body's work: no control (``launch_loops.RegionLoops.kept``: none of its affine share),
no set-up moves before it (the accumulator's first use reads the initial value itself, and
no pointer is copied into registers to be advanced), and an address is its array's base
plus an immediate: an ``IMAD.WIDE`` forms a pointer only where the thread offsets the array
(``in[i + k]``: ``in + 4 i``), none where only the induction does (``c[k]``: the base, an
``LDC.64``). Read from the sm_90 SASS of the blind conv1d (17 taps: 2 IMAD.WIDE, for ``in``
and the store's ``out``) and int_hash (16 rounds: no move before them), both ports.
"""

from __future__ import annotations

import dataclasses

from .frontend.tracefile import Trace
from .instrument import loopbody
from .machine_code import MachineShape, address_geps
from .trip_accesses import invariant_offsets, loop_ir

#: IMAD.WIDE per array a whole-unrolled loop addresses with a thread's offset
OFFSET_POINTER_INSTS = 1


def offset_arrays(trace: Trace, loop, skip: set[int]) -> int:
    """Arrays the blocks of ``loop`` address at a changing address that a loop-invariant
    value offsets (trip_accesses.invariant_offsets: ``in[i + k]``), not the induction alone
    (``c[k]``); ``skip``: memory instructions that are not global accesses."""
    ir = loop_ir(trace, loop)
    if ir is None:
        return 0
    inv = loopbody.invariant_ops(ir.body.ops)
    names = {o.array for o in ir.body.mem_ops
             if o.mem_id not in skip and o.array
             and any(not inv[g] for g in address_geps(ir.body.ops, o))
             and invariant_offsets(ir.body, o, ir.geps, ir.defs)}
    return len(names)


def whole_shape(shape: MachineShape, trace: Trace, whole: frozenset[int],
                skip: set[int]) -> MachineShape:
    """``shape`` with the loops unrolled whole (``whole``: loop ids) keeping no set-up moves
    and an IMAD.WIDE only per array a thread's offset moves (offset_arrays), eq. (12wu)."""
    if not whole:
        return shape
    loops = {lp.id: lp for lp in trace.header.loops}
    pointers = tuple(
        (lid, OFFSET_POINTER_INSTS * offset_arrays(trace, loops[lid], skip)) if lid in whole
        else (lid, n) for lid, n in shape.loop_pointers)
    setups = tuple((lid, n) for lid, n in shape.loop_setups if lid not in whole)
    return dataclasses.replace(shape, loop_pointers=pointers, loop_setups=setups)
