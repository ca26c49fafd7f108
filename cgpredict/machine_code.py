"""Machine-code (SASS) instructions a kernel issues beyond its PTX-level count (SPEC §2.4).

``compute.py`` counts what nvcc's PTX holds. ptxas adds a few instructions that have no PTX
counterpart, each one an issue slot of the GPU. Read from the sm_90 SASS of every corpus
port (``validation/sass_check.py``, ``validation/results/sass-check.md``):

* the prologue: ``LDC R1, c[0x0][0x28]`` (the stack pointer) in every kernel, and
  ``ULDC.64 UR4, c[0x0][0x208]`` (the global-memory descriptor every ``LDG``/``STG`` names)
  in every kernel that touches global memory;
* before a loop a thread runs sequentially, a register set-up per entry: one move
  (``MOV``/``HFMA2.MMA``/``CS2R``) per value the loop carries (its induction variable and
  each accumulator: a ``phi`` of its header) for the initial value, and one per array the
  loop addresses (the pointer parameter copied from the constant bank into the registers
  the loop advances, where straight-line code reads it as one ``LDC.64``);
* a tiled kernel's staging stores (``STS``): one per element a thread copies into shared
  memory, as many as its staging loads.

Nothing here needs nvcc: the counts follow from the trace (loops, their header ``phi``
operations and the arrays their blocks address) and the shared-memory analysis.
"""

from __future__ import annotations

from dataclasses import dataclass

from .instrument import loopbody
from .parallelism import ir_module
from .tracefile import Trace

#: LDC of the stack pointer, in every kernel's SASS
STACK_POINTER_INSTS = 1
#: ULDC.64 of the global-memory descriptor, in every kernel that loads or stores globally
MEMORY_DESCRIPTOR_INSTS = 1


@dataclass(frozen=True)
class MachineExtras:
    """Per-thread SASS instructions beyond the PTX-level count, by what they are for."""

    prologue: float = 0.0  # stack pointer and memory descriptor loads (class other)
    loop_setup: float = 0.0  # initial values and pointer copies before loops (class other)
    staging_stores: float = 0.0  # STS of a tiled kernel's staging (class st_shared)

    @property
    def other(self) -> float:
        """The moves and constant loads among them (SASS class ``other``)."""
        return self.prologue + self.loop_setup

    @property
    def total(self) -> float:
        """Every extra issue slot per thread (added to ``KernelProfile.comp_insts``)."""
        return self.other + self.staging_stores


def prologue_insts(touches_global: bool) -> int:
    """Constant loads every kernel's SASS starts with: the stack pointer, and the global
    memory descriptor when the kernel has a global load or store."""
    return STACK_POINTER_INSTS + (MEMORY_DESCRIPTOR_INSTS if touches_global else 0)


def loop_setup_insts(carried: int, arrays: int) -> int:
    """Moves before one entry of a sequential loop: an initial value per carried value and
    a pointer copy per array it addresses."""
    return carried + arrays


def _own_blocks(trace: Trace, loop) -> set[int]:
    """The blocks of ``loop`` outside its inner loops."""
    own = set(loop.blocks)
    for c in trace.header.loops:
        if c.parent == loop.id:
            own -= set(c.blocks)
    return own


def carried_values(trace: Trace, loop) -> int:
    """Values ``loop`` carries from one iteration to the next: the ``phi`` operations of its
    header block."""
    h = trace.header
    for b in loop.blocks:
        blk = h.blocks[b]
        if blk.label == loop.header and blk.function == loop.function:
            return sum(k for opcode, _, _, k in blk.ops if opcode == "phi")
    return 0


def loop_arrays(trace: Trace, loop, skip: set[int]) -> int:
    """Distinct global arrays the blocks of ``loop`` (inner loops excluded) address at an
    address that changes from one iteration to the next (a ``getelementptr`` of the body
    that is not loop-invariant): the pointers the loop advances. An access at a fixed address
    (a plain port's accumulator) keeps its one ``LDC.64``. ``skip``: memory instructions that
    are not global accesses (staged in shared memory)."""
    h = trace.header
    mod = ir_module(h.ir_text)
    if loop.function not in mod.functions:
        return 0
    own = _own_blocks(trace, loop)
    labels = [h.blocks[b].label for b in own]
    body = loopbody.loop_body(
        mod.functions[loop.function], labels, loopbody.mem_by_label(h, loop.region)
    )
    inv = loopbody.invariant_ops(body.ops)
    names = {
        o.array
        for o in body.mem_ops
        if o.mem_id not in skip
        and any(body.ops[u].klass == "gep" and not inv[u] for u in o.operands)
    }
    return len(names - {""})


def sequential_loop_setup(
    trace: Trace, region: int, grid: int, entries_per_thread, skip: set[int]
) -> float:
    """Loop set-up moves per thread of ``region``: of each loop below the ``grid`` mapped
    ones, its ``loop_setup_insts`` times its entries per thread (``entries_per_thread(loop
    id)``); ``skip`` as for ``loop_arrays``."""
    total = 0.0
    for lp in trace.header.loops:
        if lp.region == region and lp.depth > grid:
            n = entries_per_thread(lp.id)
            if n:
                arrays = loop_arrays(trace, lp, skip)
                total += n * loop_setup_insts(carried_values(trace, lp), arrays)
    return total


def machine_extras(
    trace: Trace,
    region: int,
    grid: int,
    entries_per_thread,
    *,
    touches_global: bool,
    staging_stores: float,
    skip: set[int],
) -> MachineExtras:
    """The SASS instructions per thread of one launch of ``region`` beyond its PTX count
    (``skip``: its memory instructions that are not global accesses)."""
    return MachineExtras(
        prologue=float(prologue_insts(touches_global)),
        loop_setup=sequential_loop_setup(trace, region, grid, entries_per_thread, skip),
        staging_stores=staging_stores,
    )
