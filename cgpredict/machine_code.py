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
  memory, as many as its staging loads, and the code of its staging loop around them
  (element index, bounds and address arithmetic, loop control: ``memory.staging_code``);
* and one the other way: in the code a thread runs once, ptxas computes one 64-bit address
  per array and index and folds the constant offsets of the other accesses into the load or
  store (``LDG [R4.64+0x4000]``), where the PTX has an address computation per access.

Nothing here needs nvcc: the counts follow from the trace (loops, their header ``phi``
operations and the arrays their blocks address) and the shared-memory analysis.
"""

from __future__ import annotations

from dataclasses import dataclass

from .compute import PTXAS_UNROLL, UNROLL_RUNTIME, UNROLL_WHOLE, runtime_trip_depth
from .frontend.tracefile import Trace
from .instrument import loopbody
from .instrument.memtrace import gep_variable_indices
from .parallelism import ir_module
from .profile import StagingCounts

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
    folded_addresses: float = 0.0  # PTX address instructions ptxas folds (class integer)
    # a tiled kernel's staging loop code (memory.staging_code), by SASS class
    staging_code: StagingCounts = StagingCounts()

    @property
    def other(self) -> float:
        """The moves and constant loads among them (SASS class ``other``)."""
        return self.prologue + self.loop_setup

    @property
    def added(self) -> float:
        """The issue slots the SASS has beyond the PTX count (``KernelProfile.machine_insts``)."""
        return self.other + self.staging_stores + self.staging_code.total

    @property
    def total(self) -> float:
        """The change to the PTX-level compute count per thread."""
        return self.added - self.folded_addresses


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


def _root(ops, k: int) -> int:
    """The value an index op offsets by a constant: through casts and adds of one body
    operand (``i + 1``, ``sext(j - 1)``), as ptxas folds them into the address."""
    while ops[k].klass in ("cast", "iadd") and len(ops[k].operands) == 1:
        k = ops[k].operands[0]
    return k


def _address_geps(ops, o) -> list[int]:
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
    from: its array and the roots (``_root``) of its address's variable indices. Accesses
    with one base share one 64-bit address; their constant offsets fold into the load or
    store (``LDG [R4.64+0x4000]``)."""
    ops = body.ops
    out = {}
    for o in body.mem_ops:
        if o.mem_id in skip or not o.array:
            continue
        geps = _address_geps(ops, o)
        roots = frozenset(
            _root(ops, v) for g in geps for v in ops[g].operands if ops[v].klass != "gep"
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


@dataclass(frozen=True)
class MachineShape:
    """What the SASS extras of a region depend on in its code, found once per region:
    the set-up moves of each loop a thread runs sequentially and the global accesses of
    the code it runs once (``machine_extras`` weighs them per launch)."""

    loop_setups: tuple[tuple[int, int], ...] = ()  # (loop id, loop_setup_insts)
    accesses: tuple[AddressUse, ...] = ()


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
    bases = address_bases(body, skip)
    out = []
    for o in body.mem_ops:
        if o.mem_id in bases:
            geps = tuple(
                (g, cost.get(body.ops[g].name.lstrip("%"), 0)) for g in _address_geps(body.ops, o)
            )
            if any(c for _, c in geps):
                out.append(AddressUse(h.mem[o.mem_id].block, geps, bases[o.mem_id]))
    return tuple(out)


def folded_address_insts(uses: tuple[AddressUse, ...], per_thread) -> float:
    """Address instructions per thread the PTX-level count has and the SASS folds away:
    of the index instructions of the accesses ``uses`` (each gep once, at its most frequent
    use), all but one per address base; ``per_thread``: block executions per thread."""
    counted: dict[int, float] = {}  # per gep op: its instructions x executions per thread
    weight: dict[tuple, float] = {}  # per address base: its executions per thread
    for u in uses:
        n = per_thread.get(u.block, 0.0)
        for g, c in u.geps:
            counted[g] = max(counted.get(g, 0.0), n * c)
        weight[u.base] = max(weight.get(u.base, 0.0), n)
    return float(max(sum(counted.values()) - sum(weight.values()), 0.0))


def loop_setups(trace: Trace, region: int, grid: int, skip: set[int]) -> tuple:
    """(loop id, ``loop_setup_insts``) of each loop below the ``grid`` mapped ones of
    ``region`` and of each loop of a helper function (region -1: entered when a launch
    calls it); ``skip`` as for ``loop_arrays``."""
    return tuple(
        (lp.id, loop_setup_insts(carried_values(trace, lp), loop_arrays(trace, lp, skip)))
        for lp in trace.header.loops
        if (lp.region == region and lp.depth > grid) or lp.region == -1
    )


def machine_shape(
    trace: Trace, region: int, grid: int, mapped: list[int], skip: set[int]
) -> MachineShape:
    """The ``MachineShape`` of ``region`` on a ``grid``-D grid (``mapped``: its innermost
    mapped loops; ``skip``: its memory instructions that are not global accesses)."""
    return MachineShape(
        loop_setups=loop_setups(trace, region, grid, skip),
        accesses=straight_line_uses(trace, region, grid, mapped, skip),
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
    setup = 0.0
    for lid, insts in shape.loop_setups:
        n = entries_per_thread(lid)
        setup += n * insts if n else 0.0
    return MachineExtras(
        prologue=float(prologue_insts(touches_global)),
        loop_setup=setup,
        staging_stores=staging_stores,
        staging_code=staging_code,
        folded_addresses=folded_address_insts(shape.accesses, per_thread),
    )


# --- ptxas's unrolling of a loop bounded by a run-time size (issue 24) ---------------------
#
# nvcc unrolls such a loop UNROLL_RUNTIME (4) times in its PTX; ptxas unrolls that trip
# PTXAS_UNROLL (4) times more when the loop has an access that moves one element per
# iteration and at most one store (compute.runtime_trip_depth). Of the unrolled trip's
# control and address arithmetic the SASS keeps (read from the sm_90 SASS of the ports'
# hot loops, validation/results/sass-check.md):
#
# * the remaining count's add and its test, one back edge, and the source index itself
#   (IADD3/VIADD): the remainder stage after the unrolled trips computes its addresses from
#   it (PTX: ``mul.wide.s32 %rd, %r_k, 4`` before the 1-iteration loop), so it stays live;
# * per pointer moving one element: its 64-bit add (IADD3 + IADD3.X);
# * per pointer moving by a row: 2, a 64-bit add of the row pointer or, where every access
#   moves by a row (nvcc's 4 a trip), a 32-bit row-index add and the IMAD.WIDE of the address;
# * a *re-based* trip (``rebased_trip``): where the addresses of a 16-deep trip are offset by
#   two or more different loop-invariant values (GEMM's A[i][k] and B[k][j]: the thread's
#   row i and column j; SYRK's A[i][k] and A[j][k]), LLVM's loop strength reduction keeps
#   one induction pointer (a 64-bit add) and re-adds each offset to it: a unit-stride access
#   is then addressed twice a trip (its nvcc trip's first iteration at sext(r + k), the other
#   three at sext(r + k + 1): two addresses, one IMAD.WIDE or pointer add each), and a
#   strided one from its row base, which is the same for every thread (a uniform register
#   pair, UIADD3), plus the thread's offset (IMAD.WIDE), whose addend ptxas first copies into
#   a vector register pair (2 MOV, class other).

#: integer instructions per trip for the loop's control: the remaining count's add and its test
TRIP_CONTROL_INTEGER = 2
#: integer instructions per trip for the source index the remainder stage addresses from
TRIP_INDEX_INTEGER = 1
#: integer instructions per trip per advancing pointer: its 64-bit add (IADD3 + IADD3.X), or,
#: moving by a row in a trip of rows only, the row-index add and the address's IMAD.WIDE
POINTER_ADD_INTEGER = 2
#: re-based trip: the shared induction pointer's 64-bit add (integer, per trip)
REBASED_INDUCTION_INTEGER = 2
#: re-based trip: addresses per unit-stride access a trip (one integer instruction each)
REBASED_UNIT_ADDRESSES = 2
#: re-based trip, per strided access: the IMAD.WIDE adding the thread's offset to the row base
STRIDED_BASE_INTEGER = 1
#: re-based trip, per strided access: the 2 MOV copying the uniform row base (class other)
UNIFORM_BASE_COPY_OTHER = 2
#: branch instructions per trip: the back edge
TRIP_BRANCHES = 1

_GEP_FLAGS = frozenset(("getelementptr", "inbounds", "nuw", "nusw"))


@dataclass(frozen=True)
class RuntimeTrip:
    """What ptxas makes of one loop bounded by a run-time size: source iterations a trip
    and the integer, branch and other instructions each trip keeps."""

    depth: int  # source iterations per trip (16 or 4)
    pointers: int = 0  # distinct address bases the loop advances
    strided: int = 0  # of them, those moving by more than one element per iteration
    stores: int = 0  # global stores per iteration
    rebased: bool = False  # a 16-deep trip whose addresses have 2+ invariant offsets

    @property
    def integer(self) -> float:
        """Integer instructions per trip: control, index, pointer adds and addresses."""
        unit = self.pointers - self.strided
        if self.rebased:
            units = (REBASED_INDUCTION_INTEGER + REBASED_UNIT_ADDRESSES * unit) if unit else 0
            rows = (POINTER_ADD_INTEGER + STRIDED_BASE_INTEGER) * self.strided
        else:
            units, rows = POINTER_ADD_INTEGER * unit, POINTER_ADD_INTEGER * self.strided
        return float(TRIP_CONTROL_INTEGER + TRIP_INDEX_INTEGER + units + rows)

    @property
    def branch(self) -> float:
        """Branch instructions per trip: the back edge."""
        return float(TRIP_BRANCHES)

    @property
    def other(self) -> float:
        """Moves per trip (class other): a re-based trip's uniform row-base copies."""
        return float(UNIFORM_BASE_COPY_OTHER * self.strided if self.rebased else 0)

    def per_iteration(self, cls: str = "all") -> float:
        """Kept instructions per source iteration of class ``cls`` (integer, branch, other,
        all)."""
        n = {"integer": self.integer, "branch": self.branch, "other": self.other,
             "all": self.integer + self.branch + self.other}.get(cls, 0.0)
        return n / self.depth


def _split_top(text: str) -> list[str]:
    """``text`` split at the commas outside brackets (an IR operand list)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "[{<("
        depth -= ch in "]}>)"
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return out + [cur.strip()] if cur.strip() else out


def _element(ty: str) -> str:
    """The element type of an array or vector type (``[64 x float]`` -> ``float``)."""
    inner = ty.strip()[1:-1]
    return inner.split(" x ", 1)[1].strip() if " x " in inner else inner


def gep_index_types(text: str) -> list[tuple[str, str]]:
    """(index operand, the type it steps over) of a ``getelementptr`` instruction text: the
    first index steps over the source element type, each next one over its element."""
    parts = _split_top(text.split("=", 1)[-1].split(", !")[0])
    ty = " ".join(w for w in parts[0].split() if w not in _GEP_FLAGS)
    out = []
    for k, idx in enumerate(parts[2:]):
        if k:
            ty = _element(ty)
        out.append((idx.split()[-1], ty))
    return out


def _unit_step(body: loopbody.LoopBody, k: int) -> bool:
    """Whether body op ``k`` is an induction variable of the loop, through casts and adds of
    loop invariants only: an index that moves by the induction's step (1) per iteration."""
    ops, inv = body.ops, loopbody.invariant_ops(body.ops)
    while k not in body.induction:
        o = ops[k]
        varying = [u for u in o.operands if not inv[u]]
        if o.klass not in ("cast", "iadd") or len(varying) != 1:
            return False
        k = varying[0]
    return True


def access_moves_one_element(body: loopbody.LoopBody, o, geps: dict[str, str]) -> bool:
    """Whether memory op ``o``'s address moves one element per iteration: an index of its
    address computation that is a unit-step induction (``_unit_step``) steps over a scalar
    type (``A[i][k]`` in a ``k`` loop), not over a row (``A[k][j]``); ``geps``: the IR text
    of the body's ``getelementptr`` instructions by result name."""
    by_name = {op.name.lstrip("%"): op.index for op in body.ops if op.name}
    for g in _address_geps(body.ops, o):
        for idx, ty in gep_index_types(geps.get(body.ops[g].name.lstrip("%"), "")):
            k = by_name.get(idx.lstrip("%"))
            if k is not None and not ty.startswith(("[", "{", "<")) and _unit_step(body, k):
                return True
    return False


def pointer_key(body: loopbody.LoopBody, o, geps: dict[str, str]) -> tuple:
    """The pointer ptxas advances for memory op ``o``: its array and the indices of its
    address, each body value taken at its root (``_root``: ``k + 1`` is ``k``'s pointer
    plus an immediate offset) and each value from outside the loop by name (``A[i][k]`` and
    ``A[j][k]`` are two pointers into one array)."""
    by_name = {op.name.lstrip("%"): op.index for op in body.ops if op.name}
    idx: set = set()
    for g in _address_geps(body.ops, o):
        for name, _ in gep_index_types(geps.get(body.ops[g].name.lstrip("%"), "")):
            k = by_name.get(name.lstrip("%"))
            if k is not None:
                idx.add(_root(body.ops, k))
            elif name.startswith("%"):
                idx.add(name)
        idx |= {n for n in _gep_base(geps.get(body.ops[g].name.lstrip("%"), ""))
                if n.lstrip("%") not in by_name}
    return (o.array, frozenset(idx))


def _gep_base(text: str) -> list[str]:
    """The base pointer operand of a ``getelementptr`` instruction text, as a list (empty
    when the text is not one)."""
    parts = _split_top(text.split("=", 1)[-1].split(", !")[0])
    return [parts[1].split()[-1]] if len(parts) > 1 else []


_CASTS = frozenset(("sext", "zext", "trunc", "bitcast"))


def _cast_operand(ins) -> str:
    """The operand of a cast instruction (``sext i32 %i to i64`` -> ``%i``)."""
    parts = ins.text.split(ins.opcode, 1)[-1].split(" to ")[0].split()
    return parts[-1] if parts else ""


def _outside_roots(name: str, defs: dict, index: bool) -> frozenset[str]:
    """The loop-invariant values that a value from outside the loop offsets an address by:
    an index (``index``) is one itself, through casts (a parameter too); a base is one only
    as a row address hoisted out of the loop (a ``getelementptr``: its variable indices and
    its base's), not as an array's own base (a global, a parameter, the plain port's opaque
    pointer)."""
    ins = defs.get(name.lstrip("%"))
    if ins is None or not name.startswith("%"):
        return frozenset((name.lstrip("%"),)) if index and name.startswith("%") else frozenset()
    if ins.opcode in _CASTS and _cast_operand(ins).startswith("%"):
        return _outside_roots(_cast_operand(ins), defs, index)
    if ins.opcode != "getelementptr":
        return frozenset((name.lstrip("%"),)) if index else frozenset()
    out: frozenset[str] = frozenset()
    for idx, _ in gep_index_types(ins.text):
        out |= _outside_roots(idx, defs, True)
    for b in _gep_base(ins.text):
        out |= _outside_roots(b, defs, False)
    return out


def invariant_offsets(body: loopbody.LoopBody, o, geps: dict[str, str], defs: dict) -> frozenset:
    """The loop-invariant values memory op ``o``'s address is offset by (``_outside_roots``
    of each index and base of its address computation defined outside the loop: GEMM's
    A[i][k] by i, B[k][j] by j, x[k] by none); ``defs``: the function's instructions by
    result name."""
    in_body = {op.name.lstrip("%") for op in body.ops if op.name}
    out: frozenset[str] = frozenset()
    for g in _address_geps(body.ops, o):
        text = geps.get(body.ops[g].name.lstrip("%"), "")
        names = [(n, True) for n, _ in gep_index_types(text)]
        for n, index in names + [(b, False) for b in _gep_base(text)]:
            if n.startswith("%") and n.lstrip("%") not in in_body:
                out |= _outside_roots(n, defs, index)
    return out


def rebased_trip(depth: int, offsets) -> bool:
    """Whether a trip of ``depth`` source iterations is re-based (see RuntimeTrip): 16 deep,
    its advancing addresses offset by two or more different sets of loop-invariant values
    (``offsets``: one set per pointer)."""
    return depth == UNROLL_RUNTIME * PTXAS_UNROLL and len({f for f in offsets if f}) >= 2


def runtime_trip(trace: Trace, loop) -> RuntimeTrip:
    """``RuntimeTrip`` of ``loop`` (a loop of the trace bounded by a run-time size): its
    global accesses at an address that changes every iteration, their distinct address
    bases (``pointer_key``: the pointers ptxas advances), which of them move by more than
    an element, and its stores per iteration decide the depth
    (compute.runtime_trip_depth); their invariant offsets whether it is re-based."""
    h = trace.header
    mod = ir_module(h.ir_text)
    if loop.function not in mod.functions:
        return RuntimeTrip(depth=runtime_trip_depth(False, 0))
    fn = mod.functions[loop.function]
    labels = {h.blocks[b].label for b in _own_blocks(trace, loop)}
    body = loopbody.loop_body(fn, labels, loopbody.mem_by_label(h, loop.region))
    geps = {
        ins.result.lstrip("%"): ins.text
        for blk in fn.blocks if blk.label in labels
        for ins in blk.instrs if ins.opcode == "getelementptr" and ins.result
    }  # fmt: skip
    defs = {ins.result.lstrip("%"): ins for blk in fn.blocks for ins in blk.instrs if ins.result}
    inv = loopbody.invariant_ops(body.ops)
    moving: dict[tuple, bool] = {}  # per advancing pointer: moves one element
    offsets: dict[tuple, frozenset] = {}  # per advancing pointer: its invariant offsets
    for o in body.mem_ops:
        if o.mem_id >= 0 and o.array and any(not inv[g] for g in _address_geps(body.ops, o)):
            key = pointer_key(body, o, geps)
            moving[key] = moving.get(key, False) or access_moves_one_element(body, o, geps)
            offsets[key] = invariant_offsets(body, o, geps, defs)
    stores = sum(o.klass == "store" and o.mem_id >= 0 for o in body.mem_ops)
    depth = runtime_trip_depth(any(moving.values()), stores)
    return RuntimeTrip(
        depth=depth,
        pointers=len(moving),
        strided=sum(not unit for unit in moving.values()),
        stores=stores,
        rebased=rebased_trip(depth, offsets.values()),
    )


def loop_iterations(trace: Trace, loop: int, ratio: float) -> float:
    """Iterations an entry of loop ``loop`` of ``trace``, grown by ``ratio`` to the work size."""
    entries = float(trace.loop_entries[:, loop].sum())
    return (float(trace.loop_iters[:, loop].sum()) / entries if entries else 0.0) * ratio


def loop_trip_at(trace: Trace, loop: int, ratio: float = 1.0) -> RuntimeTrip | None:
    """What ptxas makes of loop ``loop`` of ``trace`` when it is bounded by a size, a
    run-time parameter of the port (more than UNROLL_WHOLE iterations an entry at the work
    size: machine_code.runtime_trip); None for straight-line code and constant-trip loops."""
    if loop < 0 or loop_iterations(trace, loop, ratio) <= UNROLL_WHOLE:
        return None
    return runtime_trip(trace, trace.header.loops[loop])
