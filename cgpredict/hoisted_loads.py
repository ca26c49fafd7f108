"""Loads the IR hoists out of a thread's mapped loops, which every CUDA thread runs itself
(issue 24, SPEC §2.4, eq. (12L)).

clang's -O1 (the trace's IR) moves a load that does not change with the mapped loop's
index out of that loop when nothing the loop stores may alias it (the restrict ports):
GEMVER k1's ``u1[i]`` and ``u2[i]`` into the row block of its outer mapped loop (once per row
of 64 threads in the trace), Gram-Schmidt k2's ``R[k][k]`` before its mapped ``i`` loop (once
a launch). The CUDA port has no loop to hoist it from: every thread that uses the value loads
it, as the sm_90 SASS shows (``validation/sass_check.py``: gemver_k1 restrict runs 5
``LDG`` a thread, gs_k2 restrict 2, as their plain ports). Per such load a thread issues:

* the ``LDG`` itself (``HOISTED_LOAD_INSTS``), weighed by the share of threads that run a
  block using its value (the most-run user's executions per thread, at most 1: the
  ``hoisted_load_insts`` of eq. (12L));
* its array's parameter load (``LDC.64``): the array is one of the PTX-level entry's array
  parameters (``compute.kernel_entry_insts``: an ``ld.param`` and a ``cvta`` each, the
  ``cvta`` none in the SASS: ``sass_entry.region_arrays``), where the trace's memory
  instructions, assigned to threads only inside the mapped loops, leave it out;
* its address, which the thread forms from its own index (GEMVER: ``u1 + i``, the row's
  address ``sass_entry`` counts once a thread) or from the launch's shared values (``&R[k][k]``:
  the hoisted address computations of ``sass_entry.hoisted_addresses``, eq. (12h), which
  count the load's address as used by the blocks that use its value).

The warp-level memory cost is not modelled: every lane of a warp reads one address (one
request, an L1 hit after the first warp of an SM), against the rows' own traffic. The count
is an issue slot of the thread (``machine_code.MachineExtras.hoisted_loads``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .frontend.tracefile import Trace
from .memory.shared import array_name
from .parallelism import ir_module
from .scalar_args import hoisted_scalars

#: the LDG of a load the IR hoists out of the mapped loops, per thread that uses its value
HOISTED_LOAD_INSTS = 1

_NAME = re.compile(r"%([\w.$-]+)")


@dataclass(frozen=True)
class HoistedLoad:
    """One load the IR hoists out of a thread's mapped loops: its memory instruction id, its
    array, its IR value and address names, and the mapped blocks that use the value."""

    sid: int
    array: str
    value: str
    address: str
    users: tuple[int, ...]


def _used_in(fn, inner: dict[str, int]) -> dict[str, set[int]]:
    """Per IR value name, the blocks of ``inner`` (label -> block id) whose instructions use
    it as an operand, ``phi`` nodes apart: a value entering the mapped loop through a phi is
    a loop-carried one's start (a reduction's accumulator, ``s`` of dot_reduce, loaded
    before the loop and stored after it), which the port's threads do not load each: its
    atomic reduction (``atomics``) combines their partial sums instead."""
    used: dict[str, set[int]] = {}
    for blk in fn.blocks:
        bid = inner.get(blk.label)
        if bid is None:
            continue
        for ins in blk.instrs:
            if ins.opcode == "phi":
                continue
            for name in _NAME.findall(ins.text):
                used.setdefault(name, set()).add(bid)
    return used


def _pointer(ins) -> str:
    """The pointer operand's name of an IR ``load`` (``load float, ptr %p, align 4``)."""
    m = re.search(r"ptr\s+%([\w.$-]+)", ins.text)
    return m.group(1) if m else ""


def hoisted_loads(trace: Trace, region: int, function: str,
                  inner: set[int]) -> tuple[HoistedLoad, ...]:
    """The loads of ``region`` in ``function`` outside the blocks ``inner`` (the innermost
    mapped loops' blocks) whose values ``inner``'s blocks use (module docstring). The k-th
    load or store of a block is its k-th memory instruction (``loopbody.mem_by_label``).
    A file-scope scalar read only before the loops is not one: the port passes it as a
    kernel argument (``scalar_args.hoisted_scalars``, eq. (12s)), as a function-form
    kernel's coefficients (Deriche's) show."""
    h = trace.header
    fn = ir_module(h.ir_text).functions.get(function)
    if fn is None:
        return ()
    labels = {h.blocks[b].label: b for b in inner if h.blocks[b].function == function}
    used = _used_in(fn, labels)
    args = hoisted_scalars(h, region)
    mem: dict[str, list] = {}
    for m in h.mem:
        blk = h.blocks[m.block]
        if m.region == region and blk.function == function and m.block not in inner:
            mem.setdefault(blk.label, []).append(m)
    out = []
    for blk in fn.blocks:
        ops = [ins for ins in blk.instrs if ins.opcode in ("load", "store")]
        ids = sorted(mem.get(blk.label, []), key=lambda m: m.id)
        if not ids or len(ids) != len(ops):
            continue
        for ins, m in zip(ops, ids):
            name = (ins.result or "").lstrip("%")
            if ins.opcode == "load" and m.kind == "load" and name in used \
                    and m.base not in args:
                out.append(HoistedLoad(sid=m.id, array=array_name(m.base), value=name,
                                       address=_pointer(ins), users=tuple(sorted(used[name]))))
    return tuple(out)


def hoisted_load_insts(loads: tuple[HoistedLoad, ...], per_thread) -> float:
    """Eq. (12L): the LDGs per thread of the loads the IR hoists out of the mapped loops, each
    weighed by the share of threads that run a block using its value (its most-run user's
    executions per thread, ``per_thread``, at most 1)."""
    return float(sum(
        HOISTED_LOAD_INSTS * min(max(per_thread.get(b, 0.0) for b in ld.users), 1.0)
        for ld in loads if ld.users
    ))


def hoisted_arrays(loads: tuple[HoistedLoad, ...]) -> frozenset[str]:
    """The arrays the hoisted ``loads`` read: array parameters of the port's kernel."""
    return frozenset(ld.array for ld in loads) - {""}
