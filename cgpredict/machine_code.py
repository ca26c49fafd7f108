"""Machine-code (SASS) instructions a kernel issues beyond its PTX-level count (SPEC §2.4).

``compute.py`` counts what nvcc's PTX holds. ptxas adds a few instructions that have no PTX
counterpart, each one an issue slot of the GPU. Read from the sm_90 SASS of every corpus
port (``validation/sass_check.py``, ``validation/results/sass-check.md``):

* the prologue: ``LDC R1, c[0x0][0x28]`` (the stack pointer) in every kernel, one
  ``LDC``/``LDC.64`` of the size parameters the guard compares with (the ports' sizes are
  kernel parameters; the C's are macros the PTX-level count has as immediates),
  ``ULDC.64 UR4, c[0x0][0x208]`` (the global-memory descriptor every ``LDG``/``STG`` names)
  in every kernel that touches global memory, and a ``ULDC`` per scalar kernel argument
  the port passes for a C file-scope variable clang folded (``scalar_args``: alpha, beta);
* before a loop a thread runs sequentially, a register set-up per entry: one move
  (``MOV``/``HFMA2.MMA``/``CS2R``) per value the loop carries (its induction variable and
  each accumulator: a ``phi`` of its header) for the initial value, and one per array the
  loop addresses (the pointer parameter copied from the constant bank into the registers
  the loop advances, where straight-line code reads it as one ``LDC.64``);
* a tiled kernel's staging stores (``STS``): one per element a thread copies into shared
  memory, as many as its staging loads, and the code of its staging loop around them
  (element index, bounds and address arithmetic, loop control: ``memory.staging_code``);
* the entry code as ptxas emits it (``sass_entry``: no ``cvta`` and no mapped loop control,
  a 2-D thread's row index and its row's addresses once per thread, an add per mapped index
  starting off 0) and one ``IMAD.WIDE`` per pointer a sequential loop advances, formed before
  each entry (``loop_pointers``);
* and two the other way: in the code a thread runs once, ptxas computes one 64-bit address
  per array and index and folds the constant offsets of the other accesses into the load or
  store (``LDG [R4.64+0x4000]``), where the PTX has an address computation per access; and
  the zero-trip test of a thread's first loop merges into the thread's guard (one predicated
  ``EXIT`` for ``i >= n || m < 1``) when the thread writes nothing before the test and nothing
  when the loop does not run (``zero_trip_tests.merged_zero_trip_tests``: MVT, GEMVER k3,
  Deriche's forward passes; ATAX's ``tmp[i] = 0`` before its loop keeps the two apart);
* the loads the IR hoists out of the mapped loops (restrict GEMVER k1's ``u1[i]``, Gram-Schmidt
  k2's ``R[k][k]``), which every thread of the port runs: an ``LDG`` each (``hoisted_loads``,
  eq. (12L)), counted here because the trace's memory instructions leave them out;
* the arithmetic the IR hoists into a 2-D thread's row block, which every thread runs
  (``row_work``, eq. (12rw): bilinear's ``floorf(sy)`` and ``(int)fy``).

Nothing here needs nvcc: the counts follow from the trace (loops, their header ``phi``
operations and the arrays their blocks address) and the shared-memory analysis.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .address_offsets import Offset, folded_address_insts, induction_starts, pointer_offset
from .frontend.tracefile import Trace
from .guard_exits import GuardExits, guard_exits
from .hoisted_loads import hoisted_load_insts
from .instrument import loopbody
from .instrument.memtrace import gep_variable_indices
from .loop_blocks import own_blocks
from .merged_exits import merged_exits
from .parallelism import ir_module
from .profile import StagingCounts
from .reconvergence import loop_reconvergence
from .row_forms import body_rows
from .row_work import RowWork, row_ops, row_work
from .sass_entry import EntryShape, entry_delta, entry_shape, loop_pointer_insts
from .scalar_args import (
    factor_uses,
    folded_scalars,
    kept_factor_insts,
    named_in,
    scalar_arg_insts,
    scalar_args,
    unit_scalars,
)
from .shared_products import shared_product_insts, shared_products
from .zero_trip_tests import merged_test_entries

#: LDC of the stack pointer, in every kernel's SASS
STACK_POINTER_INSTS = 1
#: ULDC.64 of the global-memory descriptor, in every kernel that loads or stores globally
MEMORY_DESCRIPTOR_INSTS = 1
#: LDC/LDC.64 of the sizes the guard compares with: kernel parameters in the ports (the
#: ports' "Sizes", validation/cuda/common.cuh), adjacent ones read as one LDC.64
SIZE_LOAD_INSTS = 1


@dataclass(frozen=True)
class MachineExtras:
    """Per-thread SASS instructions beyond the PTX-level count, by what they are for."""

    prologue: float = 0.0  # stack pointer and memory descriptor loads (class other)
    loop_setup: float = 0.0  # initial values and pointer copies before loops (class other)
    reconvergence: float = 0.0  # BSSY, BSYNC around divergent loops (class other, eq. (12rv))
    staging_stores: float = 0.0  # STS of a tiled kernel's staging (class st_shared)
    folded_addresses: float = 0.0  # PTX address instructions ptxas folds (class integer)
    merged_tests: float = 0.0  # zero-trip tests merged into the guard (class branch)
    # the SASS entry code less the PTX-level one (sass_entry.entry_delta, class integer)
    entry_code: float = 0.0
    loop_pointers: float = 0.0  # IMAD.WIDE per pointer a loop advances (class integer)
    # FMUL by a unit scalar's kernel argument, folded away in the IR (scalar_args, class fp32)
    kept_factors: float = 0.0
    # a tiled kernel's staging loop code (memory.staging_code), by SASS class
    staging_code: StagingCounts = StagingCounts()
    # LDG of the loads the IR hoists out of the mapped loops, per thread (hoisted_loads,
    # eq. (12L), class ld_global): an issue slot each, their warp's one address not modelled
    hoisted_loads: float = 0.0
    guard_exits: GuardExits = GuardExits()  # not run by threads leaving at the guard (12g)
    row_work: RowWork = RowWork()  # a 2-D thread's row work, once per row traced (12rw)
    shared_products: float = 0.0  # FMUL of a product multiply-adds share (class fp32, (12fm))
    merged_exits: float = 0.0  # exit tests branched on with the header's (class branch, (12xb))

    @property
    def other(self) -> float:
        """The moves and constant loads among them (SASS class ``other``)."""
        return self.prologue + self.loop_setup + self.reconvergence

    @property
    def added(self) -> float:
        """The issue slots the SASS has beyond the PTX count (``KernelProfile.machine_insts``)."""
        return self.other + self.staging_stores + self.staging_code.total + self.hoisted_loads

    @property
    def total(self) -> float:
        """The change to the PTX-level compute count per thread."""
        return (self.added - self.folded_addresses - self.merged_tests + self.entry_code
                + self.loop_pointers + self.kept_factors - self.guard_exits.total
                + self.row_work.insts + self.shared_products - self.merged_exits)

    @property
    def integer(self) -> float:
        """The change to the integer class: entry code and loop pointers less folded
        addresses."""
        return self.entry_code + self.loop_pointers - self.folded_addresses


def prologue_insts(touches_global: bool, scalars: int = 0) -> int:
    """Constant loads every kernel's SASS starts with: the stack pointer, the sizes its
    guard compares with (one ``LDC``/``LDC.64``: covar_reduce's ``m`` and ``n``, MM's ``n``),
    the global memory descriptor when the kernel has a global load or store, and those of
    its ``scalars`` scalar kernel arguments (``scalar_args``, eq. (12s))."""
    return (STACK_POINTER_INSTS + SIZE_LOAD_INSTS
            + (MEMORY_DESCRIPTOR_INSTS if touches_global else 0) + scalar_arg_insts(scalars))


def loop_setup_insts(carried: int, arrays: int) -> int:
    """Moves before one entry of a sequential loop: an initial value per carried value and
    a pointer copy per array it addresses."""
    return carried + arrays


_DILOCATION = re.compile(r"^!(\d+) = !DILocation\(line: (\d+)", re.M)
_DBG = re.compile(r"!dbg !(\d+)")


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
    own = own_blocks(trace, loop)
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


def offset_root(ops, k: int) -> int:
    """The value an index op offsets by a constant: through casts and adds of one body
    operand (``i + 1``, ``sext(j - 1)``), as ptxas folds them into the address."""
    while ops[k].klass in ("cast", "iadd") and len(ops[k].operands) == 1:
        k = ops[k].operands[0]
    return k


def address_geps(ops, o) -> list[int]:
    """The ``getelementptr`` ops of the body that compute memory op ``o``'s address, through
    geps of geps (a constant byte offset on a computed row: ``gep i8, %row, -4``)."""
    out: list[int] = []
    todo = [u for u in o.operands if ops[u].klass == "gep"]
    while todo:
        g = todo.pop()
        if g not in out:
            out.append(g)
            todo += [u for u in ops[g].operands if ops[u].klass == "gep"]
    return out


def address_bases(body: loopbody.LoopBody, skip: set[int]) -> dict[int, tuple]:
    """Per global memory op of ``body`` (its trace id), the base ptxas computes its address
    from: its array and the roots (``offset_root``) of its address's variable indices. Accesses
    with one base share one 64-bit address; their constant offsets fold into the load or
    store (``LDG [R4.64+0x4000]``)."""
    ops = body.ops
    out = {}
    for o in body.mem_ops:
        if o.mem_id in skip or not o.array:
            continue
        geps = address_geps(ops, o)
        roots = frozenset(
            offset_root(ops, v) for g in geps for v in ops[g].operands if ops[v].klass != "gep"
        )
        out[o.mem_id] = (o.array, roots)
    return out


def straight_line_blocks(trace: Trace, region: int, grid: int, mapped: list[int]) -> list[int]:
    """The blocks of the innermost mapped loops ``mapped`` outside every sequential loop: the
    code a thread runs once (``grid`` mapped dimensions)."""
    h = trace.header
    inner = {b for lp in h.loops if lp.region == region and lp.depth > grid for b in lp.blocks}
    return sorted({b for lid in mapped for b in h.loops[lid].blocks} - inner)


@dataclass(frozen=True)
class AddressUse:
    """One global access of the code a thread runs once: its block, the ``getelementptr``
    ops that compute its address with their index instructions, and its address base."""

    block: int
    geps: tuple[tuple[int, int], ...]  # (gep op index in the body, its instructions)
    base: tuple
    offset: Offset | None = None  # from the thread's own element (address_offsets, (12n))


@dataclass(frozen=True)
class MachineShape:
    """What the SASS extras of a region depend on in its code, found once per region:
    the set-up moves of each loop a thread runs sequentially and the global accesses of
    the code it runs once (``machine_extras`` weighs them per launch)."""

    loop_setups: tuple[tuple[int, int], ...] = ()  # (loop id, loop_setup_insts)
    reconvergence: tuple[tuple[int, int], ...] = ()  # (loop id, BSSY + BSYNC): eq. (12rv)
    accesses: tuple[AddressUse, ...] = ()
    merged_tests: tuple[int, ...] = ()  # block ids: merged_zero_trip_tests
    # (test, entering successor) block ids of those tests: merged_test_entries
    merged_entries: tuple[tuple[int, int], ...] = ()
    entry: EntryShape = EntryShape()  # sass_entry.entry_shape
    loop_pointers: tuple[tuple[int, int], ...] = ()  # (loop id, sass_entry.loop_pointer_insts)
    scalar_args: int = 0  # scalar kernel arguments for folded C file-scope variables
    # (block ids holding the line, uses): unit scalars used as factors (kept_factors)
    kept_factors: tuple[tuple[tuple[int, ...], int], ...] = ()
    row_ops: tuple[tuple[int, tuple], ...] = ()  # (block, ops): row_work.row_ops (12rw)
    shared_products: tuple[tuple[int, ...], ...] = ()  # shared_products.shared_products (12fm)
    merged_exits: tuple[int, ...] = ()  # latch block ids: merged_exits.merged_exits (12xb)


def straight_line_uses(
    trace: Trace, region: int, grid: int, mapped: list[int], skip: set[int]
) -> tuple[AddressUse, ...]:
    """The global accesses of the code a thread runs once (``straight_line_blocks``) whose
    address needs an index instruction at the PTX level, with their bases
    (``address_bases``)."""
    h = trace.header
    blocks = straight_line_blocks(trace, region, grid, mapped)
    mod = ir_module(h.ir_text)
    if not blocks or h.loops[mapped[0]].function not in mod.functions:
        return ()
    fn = mod.functions[h.loops[mapped[0]].function]
    labels = {h.blocks[b].label for b in blocks}
    cost = {
        ins.result.lstrip("%"): gep_variable_indices(ins)
        for blk in fn.blocks
        if blk.label in labels
        for ins in blk.instrs
        if ins.opcode == "getelementptr" and ins.result
    }
    body = loopbody.loop_body(fn, labels, loopbody.mem_by_label(h, region))
    bases, rows = address_bases(body, skip), body_rows(fn, labels)  # (12q): a row apart
    defs = {ins.result.lstrip("%"): ins for blk in fn.blocks for ins in blk.instrs if ins.result}
    starts = induction_starts(fn)
    out = []
    for o in body.mem_ops:
        if o.mem_id in bases:
            names = [body.ops[g].name.lstrip("%") for g in address_geps(body.ops, o)]
            geps = tuple((g, cost.get(n, 0)) for g, n in zip(address_geps(body.ops, o), names))
            row = frozenset(rows[n][0] for n in names if n in rows)
            if any(c for _, c in geps):
                off = pointer_offset(defs, body.ops[geps[0][0]].name.lstrip("%"), starts)
                base = (*bases[o.mem_id], row)
                out.append(AddressUse(h.mem[o.mem_id].block, geps, base, off))
    return tuple(out)


def _sequential(trace: Trace, region: int, grid: int) -> list:
    """The loops a thread of ``region`` runs sequentially (below its ``grid`` mapped ones)
    and the loops of helper functions (region -1)."""
    return [lp for lp in trace.header.loops
            if (lp.region == region and lp.depth > grid) or lp.region == -1]


def loop_pointers(trace: Trace, region: int, grid: int, skip: set[int]) -> tuple:
    """(loop id, ``sass_entry.loop_pointer_insts``) of each sequential loop of ``region``:
    the IMAD.WIDE per pointer it advances (``loop_arrays``)."""
    return tuple((lp.id, loop_pointer_insts(loop_arrays(trace, lp, skip)))
                 for lp in _sequential(trace, region, grid))


def loop_setups(trace: Trace, region: int, grid: int, skip: set[int]) -> tuple:
    """(loop id, ``loop_setup_insts``) of each loop below the ``grid`` mapped ones of
    ``region`` and of each loop of a helper function (region -1: entered when a launch
    calls it); ``skip`` as for ``loop_arrays``."""
    return tuple(
        (lp.id, loop_setup_insts(carried_values(trace, lp), loop_arrays(trace, lp, skip)))
        for lp in _sequential(trace, region, grid))


def kept_factors(trace: Trace, region: int) -> tuple[tuple[tuple[int, ...], int], ...]:
    """Per source line of ``region`` that uses a unit scalar as a factor
    (``scalar_args.unit_scalars``, ``factor_uses``): the region's blocks holding an IR
    instruction of that line (its ``!dbg`` location) and the uses, eq. (12u)."""
    h = trace.header
    scalars = folded_scalars(h.ir_text)
    r = h.region(region)
    units = unit_scalars(h.source_text, named_in(h.source_text, r.line, r.end_line, scalars))
    uses = factor_uses(h.source_text, r.line, r.end_line, units) if units else {}
    if not uses:
        return ()
    line_of = {m: int(n) for m, n in _DILOCATION.findall(h.ir_text)}
    ids = {(b.function, b.label): b.id for b in h.blocks if b.region == region}
    at: dict[int, set[int]] = {}
    for name, fn in ir_module(h.ir_text).functions.items():
        for blk in fn.blocks:
            bid = ids.get((name, blk.label))
            for ins in blk.instrs if bid is not None else ():
                m = _DBG.search(ins.text)
                line = line_of.get(m.group(1), 0) if m else 0
                if line in uses:
                    at.setdefault(line, set()).add(bid)
    return tuple((tuple(sorted(at[k])), n) for k, n in sorted(uses.items()) if k in at)


def machine_shape(
    trace: Trace, region: int, grid: int, mapped: list[int], skip: set[int]
) -> MachineShape:
    """The ``MachineShape`` of ``region`` on a ``grid``-D grid (``mapped``: its innermost
    mapped loops; ``skip``: its memory instructions that are not global accesses)."""
    merged, entry = merged_test_entries(trace, region, grid), entry_shape(trace, grid, mapped)
    return MachineShape(
        loop_setups=loop_setups(trace, region, grid, skip),
        reconvergence=loop_reconvergence(trace, _sequential(trace, region, grid), grid),
        accesses=straight_line_uses(trace, region, grid, mapped, skip),
        merged_tests=tuple(dict.fromkeys(t for t, _ in merged)),  # a test once
        merged_entries=merged,
        entry=entry,
        loop_pointers=loop_pointers(trace, region, grid, skip),
        scalar_args=scalar_args(trace, region),
        kept_factors=kept_factors(trace, region),
        row_ops=row_ops(trace.header, entry),  # (12rw)
        shared_products=shared_products(trace, region),  # (12fm)
        merged_exits=merged_exits(trace, region, grid),  # (12xb)
    )


def machine_extras(
    shape: MachineShape,
    entries_per_thread,
    per_thread,
    *,
    touches_global: bool,
    staging_stores: float,
    staging_code: StagingCounts = StagingCounts(),
) -> MachineExtras:
    """The SASS instructions per thread of one launch beyond its PTX count: ``shape``
    weighed by each loop's entries per thread (``entries_per_thread(loop id)``) and each
    block's executions per thread (``per_thread``); ``staging_code``: a tiled kernel's
    staging loop code (memory.staging_code)."""
    def weighed(per_loop) -> float:
        return sum(n * insts for lid, insts in per_loop if (n := entries_per_thread(lid)))

    return MachineExtras(
        prologue=float(prologue_insts(touches_global, shape.scalar_args)),
        loop_setup=weighed(shape.loop_setups),
        reconvergence=weighed(shape.reconvergence),  # eq. (12rv)
        staging_stores=staging_stores,
        staging_code=staging_code,
        folded_addresses=folded_address_insts(shape.accesses, per_thread),
        merged_tests=float(sum(per_thread.get(b, 0.0) for b in shape.merged_tests)),
        entry_code=entry_delta(shape.entry, per_thread),
        loop_pointers=weighed(shape.loop_pointers),
        kept_factors=kept_factor_insts(shape.kept_factors, per_thread),
        hoisted_loads=hoisted_load_insts(shape.entry.hoisted_loads, per_thread),  # (12L)
        guard_exits=guard_exits(shape.merged_entries, per_thread,  # (12g)
                                after_guard_loads(shape, touches_global)),
        row_work=row_work(shape.row_ops, shape.entry, per_thread),  # (12rw)
        shared_products=shared_product_insts(shape.shared_products, per_thread),  # (12fm)
        merged_exits=float(sum(per_thread.get(b, 0.0) for b in shape.merged_exits)),  # (12xb)
    )


def after_guard_loads(shape: MachineShape, touches_global: bool) -> int:
    """The constant loads after the guard (eq. (12g)): arrays, sizes, descriptor, scalars."""
    stack = STACK_POINTER_INSTS  # before the guard
    return shape.entry.arrays + prologue_insts(touches_global, shape.scalar_args) - stack
