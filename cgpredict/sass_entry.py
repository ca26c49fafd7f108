"""A kernel's entry code as the sm_90 SASS has it, against the PTX-level count (issue 24,
SPEC §2.4).

``compute.kernel_entry_insts`` counts what nvcc's PTX runs before a thread's loops, and the
trace adds the mapped loops' own control: per grid dimension a ``mad`` (the index
``blockIdx * blockDim + threadIdx``) and the guard's ``setp``, per array a ``cvta.to.global``,
and the C loop mapped to the threads' induction ``add`` and exit compare, executed once
per thread. Read from the sm_90 SASS of the corpus's loop-free kernels (covar_reduce,
deriche_hsum, fdtd_k2/k3, gemver_k1: ``validation/sass_check.py``), ptxas emits instead:

* per grid dimension the index's ``IMAD`` and the guard's ``ISETP`` (as the PTX);
* no ``cvta``: the SASS addresses global memory with the generic address (``LDG`` through the
  memory descriptor, ``machine_code.MEMORY_DESCRIPTOR_INSTS``);
* no loop control for the mapped loop: a thread runs one of its iterations, whose bound
  test is the guard's ``ISETP``;
* an ``IADD3`` per mapped dimension whose C loop starts at a constant other than 0
  (``for (j = 1; ...)``: the index is ``1 + blockIdx * blockDim + threadIdx``);
* for a 2-D thread one instruction forming its row index (``LEA``/``SHF`` of ``i * W``),
  shared by every array of the row's stride, where the IR forms a row pointer per array
  once per row (1/W per thread in the trace: fdtd_k2's ``ex[i]`` and ``hz[i]``, one ``LEA``
  in the SASS);
* for a 2-D thread, one more index instruction (``LEA``/``IMAD``) per distinct linear form
  whose row is the thread's inner (x) index: an access ``B[j][i]`` of ``B = A^T`` (the user
  transpose) is ``j * W + i`` where the row index above is ``i * W + j``; the IR splits it into
  a column offset ``B + i`` formed once per row (a row pointer above) and a row step
  ``getelementptr [W x T], %col, %j`` in the thread's body, whose PTX-level ``mad`` the
  address fold (``address_offsets.folded_address_insts``: one instruction per base) drops:
  ``row_steps``, eq. (12t);
* the addresses the outer mapped loop of a 2-D grid completes itself (``u1[i]`` in
  gemver_k1: the IR computes it once per row, every CUDA thread computes its own ``i`` and
  the address with it: an ``IMAD.WIDE`` per thread);
* the 64-bit address per array base, as the PTX's ``mad.wide`` the model counts already
  (``address_offsets.folded_address_insts`` keeps one per base).

* a ``UIADD3`` per distinct size plus or minus a constant that the mapped loops' C bounds
  compare with (``for (i = 1; i < NI - 1; i++)``: conv2d and conv3d 2, fdtd_k3 2; the user
  jacobi2d's ``N - 1`` twice, 1): the port's size is a run-time kernel parameter (as the
  measured PolyBench/GPU kernels', and as ``machine_code.SIZE_LOAD_INSTS`` has it), so
  ptxas computes ``ni - 1`` once a thread in a uniform register (``UIADD3 UR4, UR4, -0x1,
  URZ``), once for both guards that compare with it, before the guard. The IR has folded
  the macro (``i < 63``), so the bound is read from the loop's ``for`` header in the traced
  source (``frontend.loop_bounds.offset_size_bounds``; the sizes are the trace's macros).

* for a 2-D thread, the compares the IR hoists out of its inner mapped loop into the row
  (the outer mapped loop's blocks, run once per row in the trace) that the thread's own
  blocks then branch or select on (fdtd_k1's ``if (i == 0)``: ``icmp eq i, 0`` once per row,
  an ``ISETP.NE`` after the guard in every thread of the SASS): each counts once per thread
  (``row_tests``, eq. (12v)), as ``thread_shares`` weighs a row block;

* the addresses the IR computes once per launch before the mapped loops, from values every
  thread shares (the host loop's ``k`` of Gram-Schmidt: ``&R[k][k]``, the column ``A + k``
  that ``A[i][k]`` indexes further), which every CUDA thread forms itself: one instruction
  per distinct address computation (a ``getelementptr`` outside the mapped loops that their
  blocks use, directly or through another such one), where two arrays of one row shape
  offset by the same index share it (gs_k2's ``A[i][k]`` and ``Q[i][k]``: one ``IMAD
  i * 0x2000 + k``; ``&R[k][k]``: an ``IMAD k * 0x2001`` and its ``IMAD.WIDE``: 2),
  weighed by the share of threads that run a block using it (gs_k1's ``t == 0``: 1/256):
  ``hoisted_address_insts``, eq. (12h); for a block of a 2-D thread's outer mapped loop
  (run once per row in the trace, once by every CUDA thread) that share is its executions
  per row (``thread_shares``, eq. 12h2: conv3d's plane addresses, 3 a thread); the address of a
  load the IR hoists with them (restrict gs_k2's ``R[k][k]``: ``cgpredict.hoisted_loads``,
  eq. (12L)) counts as used by the blocks that use the loaded value, every thread loading it.

Before a loop a thread runs sequentially ptxas forms each pointer the loop advances as a
64-bit address (``IMAD.WIDE`` of the index into the array's base: one per array the loop
addresses at a moving address, ``machine_code.loop_arrays``), where the PTX-level count has
the loop's first addresses inside its (unrolled, folded) body: ``loop_pointer_insts``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .frontend.loop_bounds import condition_at, offset_size_bounds
from .frontend.tracefile import Trace
from .hoisted_loads import HoistedLoad, hoisted_arrays, hoisted_loads
from .loop_counter import loop_inductions
from .parallelism import ir_module
from .row_forms import row_forms

#: the PTX's cvta.to.global per array parameter (compute.kernel_entry_insts); none in SASS
CVTA_INSTS = 1
#: the row index of a 2-D thread (LEA/SHF of i * W), once per thread
ROW_INDEX_INSTS = 1
#: a 2-D thread's second linear form, j * W + i (LEA), per distinct row step (eq. 12t)
ROW_STEP_INSTS = 1
#: the IADD3 of a mapped index whose C loop starts at a constant other than 0
START_OFFSET_INSTS = 1
#: the IMAD.WIDE forming one pointer a sequential loop advances, per entry
LOOP_POINTER_INSTS = 1
#: the UIADD3 of a mapped loop's bound that is a run-time size plus or minus a constant
BOUND_OFFSET_INSTS = 1
#: per distinct address computation the IR hoists before the mapped loops (IMAD/IMAD.WIDE)
HOISTED_ADDRESS_INSTS = 1
#: the ISETP of a compare the IR hoists into a 2-D thread's row, per thread (eq. (12v))
ROW_TEST_INSTS = 1


@dataclass(frozen=True)
class EntryShape:
    """What the SASS entry code of a region depends on in its code, found once per region:
    the mapped loops' latch blocks with their loop-control instructions (the induction add and
    the exit compare the PTX-level count has and the SASS does not), its grid dimensions,
    its global arrays and its mapped indices that start at a non-zero constant."""

    grid: int = 1
    arrays: int = 0
    latches: tuple[tuple[int, int], ...] = ()  # (block id, loop-control instructions)
    rows: tuple[tuple[int, int], ...] = ()  # (block id, row pointers): a 2-D thread's rows
    row_addresses: tuple[tuple[int, int], ...] = ()  # (block id, addresses it completes)
    # (block id, distinct row steps): rows indexed by the inner mapped index (eq. 12t)
    row_steps: tuple[tuple[int, int], ...] = ()
    start_offsets: int = 0
    bound_offsets: int = 0  # distinct sizes plus or minus a constant the bounds compare with
    # (block ids using them, address computations): the addresses hoisted before the mapped
    # loops (hoisted_addresses)
    hoisted: tuple[tuple[tuple[int, ...], int], ...] = ()
    # a 2-D thread: the blocks of its outer mapped loop outside the inner one (the trace runs
    # them once per row, every CUDA thread once) and that loop's header (run once per row)
    row_blocks: frozenset[int] = frozenset()
    row_headers: tuple[int, ...] = ()
    # the loads the IR hoists out of the mapped loops, run by every thread (eq. (12L))
    hoisted_loads: tuple[HoistedLoad, ...] = ()
    # (block id, compares): a 2-D thread's row compares its inner blocks test (eq. (12v))
    row_tests: tuple[tuple[int, int], ...] = ()
    # (block id, distinct row forms past the first): rows of unrelated indices (eq. (12q))
    row_forms: tuple[tuple[int, int], ...] = ()


def _latch_control(ops) -> int:
    """The loop-control instructions among a latch block's ops ((opcode, type, detail, count)
    tuples): its integer add (the induction step) and its compare feeding the branch, at most
    one each."""
    adds = sum(k for opcode, ty, _, k in ops if opcode == "add" and ty.startswith("i"))
    cmps = sum(k for opcode, _, detail, k in ops if opcode == "icmp" and detail == "branch")
    return min(adds, 1) + min(cmps, 1)


def _row_geps(fn, labels: set[str]) -> dict[str, tuple[int, int]]:
    """Per IR block of ``labels``, (row pointers, complete addresses) among its
    ``getelementptr`` instructions: a gep whose result only other geps index further (a row
    ``A[i]``) or one a load or store uses (``u1[i]``)."""
    uses: dict[str, set[str]] = {}
    for blk in fn.blocks:
        for ins in blk.instrs:
            for name in re.findall(r"%([\w.$-]+)", ins.text):
                uses.setdefault(name, set()).add(ins.opcode)
    out: dict[str, tuple[int, int]] = {}
    for blk in fn.blocks:
        if blk.label not in labels:
            continue
        rows = addrs = 0
        for ins in blk.instrs:
            if ins.opcode != "getelementptr" or not ins.result:
                continue
            used = uses.get(ins.result.lstrip("%"), set())
            addrs += bool(used & {"load", "store"})
            rows += bool(used) and used <= {"getelementptr"}
        out[blk.label] = (rows, addrs)
    return out


def _row_steps(fn, labels: set[str]) -> dict[str, int]:
    """Per IR block of ``labels`` (a 2-D thread's inner mapped blocks), its distinct row
    steps (eq. 12t): ``getelementptr`` instructions over a row type (``[W x T]``) whose
    first index is a run-time value and whose base is a pointer offset by a run-time index
    (or a later index a run-time value), one per (row type, index) pair: a row the thread's
    inner index selects, combined with another index, a linear form ``j * W + i``."""
    seen: set[tuple[str, str]] = set()
    out: dict[str, int] = {}
    offset = {ins.result.lstrip("%") for blk in fn.blocks for ins in blk.instrs
              if ins.opcode == "getelementptr" and ins.result
              and any(i.split()[-1].startswith("%") for i in _gep_key(ins, set())[1])}
    for blk in fn.blocks:
        if blk.label not in labels:
            continue
        for ins in blk.instrs:
            if ins.opcode != "getelementptr" or not ins.result:
                continue
            ty, idx = _gep_key(ins, set())[:2]
            ops = ins.text.split("=", 1)[-1].split(", !")[0].split(",")
            base = ops[1].split()[-1] if len(ops) > 1 else ""
            moving = [i.split()[-1].startswith("%") for i in idx]
            # a row the inner index selects, combined with another run-time index: a base
            # offset by one (the column B + i) or a later index (a row pointer's own
            # IMAD.WIDE, syr2k's B[j] before its k loop, is no second form)
            if ty.startswith("[") and moving[:1] == [True] and (
                    base.lstrip("%") in offset or any(moving[1:])):
                key = (ty, idx[0].split()[-1])
                if key not in seen:
                    seen.add(key)
                    out[blk.label] = out.get(blk.label, 0) + 1
    return out


def _row_tests(fn, rows: set[str], inner: set[str]) -> dict[str, int]:
    """Per IR block of ``rows`` (a 2-D thread's row blocks), its integer compares whose
    result an instruction of the blocks ``inner`` (the thread's own) uses: a test the IR
    hoisted out of the inner mapped loop, which every CUDA thread makes (eq. (12v))."""
    used: set[str] = set()
    for blk in fn.blocks:
        if blk.label in inner:
            for ins in blk.instrs:
                used.update(re.findall(r"%([\w.$-]+)", ins.text.split("=", 1)[-1]))
    out: dict[str, int] = {}
    for blk in fn.blocks:
        if blk.label in rows:
            n = sum(1 for ins in blk.instrs if ins.opcode == "icmp" and ins.result
                    and ins.result.lstrip("%") in used)
            if n:
                out[blk.label] = n
    return out


def mapped_chain(trace: Trace, mapped: list[int]) -> list:
    """The mapped loops of a thread: the innermost ones ``mapped`` and the loops around them
    (the outer mapped loop of a 2-D grid)."""
    h = trace.header
    out: dict[int, object] = {}
    for lid in mapped:
        q = lid
        while q >= 0:
            out[q] = h.loops[q]
            q = h.loops[q].parent
    return list(out.values())


def _latches(trace: Trace, loop) -> list[int]:
    """Block ids of ``loop``'s latches: its blocks with an IR edge back to its header."""
    h = trace.header
    mod = ir_module(h.ir_text)
    if loop.function not in mod.functions:
        return []
    blocks = {b.label: b for b in mod.functions[loop.function].blocks}
    return [b for b in loop.blocks
            if h.blocks[b].label in blocks
            and loop.header in blocks[h.blocks[b].label].successors]


def _starts_off_zero(trace: Trace, loop) -> bool:
    """Whether ``loop``'s induction starts at a constant other than 0 (``for (j = 1; ...)``)."""
    found = loop_inductions(trace, loop)
    return any(i.constant_start and int(i.start) != 0 and i.step > 0 for i in found[:1])


def _bound_offsets(trace: Trace, loop) -> frozenset[tuple[str, int]]:
    """The sizes plus or minus a constant that ``loop``'s ``for`` condition compares with
    (``i < NI - 1``: ``("NI", -1)``), read from the traced source (module docstring)."""
    h = trace.header
    cond = condition_at(h.source_text, loop.line) if h.source_text else None
    return offset_size_bounds(cond, h.macros) if cond else frozenset()


def _gep_key(ins, hoisted: set[str]) -> tuple:
    """What ptxas computes for one ``getelementptr``: its source type and indices, and its
    base where that is another hoisted address (else the array: arrays of one shape offset
    by one index share the index arithmetic)."""
    parts = ins.text.split("=", 1)[-1].split(", !")[0].split(",")
    ops = [p.strip() for p in parts]
    base = ops[1].split()[-1].lstrip("%") if len(ops) > 1 else ""
    ty = " ".join(w for w in ops[0].split() if w not in ("getelementptr", "inbounds", "nuw",
                                                         "nusw"))
    return (ty, tuple(ops[2:]), base if base in hoisted else "")


def hoisted_addresses(fn, inside: dict[str, int], loads: tuple[HoistedLoad, ...] = ()
                      ) -> tuple[tuple[tuple[int, ...], int], ...]:
    """Per group of using blocks, the distinct address computations the IR hoists before
    the mapped loops (module docstring, eq. 12h): the ``getelementptr`` instructions of
    ``fn`` outside the blocks ``inside`` (label -> block id: the mapped loops' blocks) whose
    results those blocks use, and the hoisted ones those index further; the address of a
    load hoisted with them (``loads``, eq. (12L)) is used by the blocks using its value."""
    defs = {ins.result.lstrip("%"): ins for blk in fn.blocks if blk.label not in inside
            for ins in blk.instrs if ins.result and ins.opcode == "getelementptr"}
    users: dict[str, set[int]] = {}
    for blk in fn.blocks:
        if blk.label in inside:
            for ins in blk.instrs:
                for name in re.findall(r"%([\w.$-]+)", ins.text.split("=", 1)[-1]):
                    if name in defs:
                        users.setdefault(name, set()).add(inside[blk.label])
    for ld in loads:  # (12L): every thread forms the hoisted load's address itself
        if ld.address in defs:
            users.setdefault(ld.address, set()).update(ld.users)
    todo = list(users)
    while todo:  # the hoisted addresses a used one indexes further
        name = todo.pop()
        for base in re.findall(r"%([\w.$-]+)", defs[name].text.split("=", 1)[-1]):
            if base in defs and not users.get(base, set()) >= users[name]:
                users[base] = users.get(base, set()) | users[name]
                todo.append(base)
    keys: dict[tuple, set[int]] = {}
    for name, blocks in users.items():
        keys.setdefault(_gep_key(defs[name], set(users)), set()).update(blocks)
    groups: dict[tuple[int, ...], int] = {}
    for blocks in keys.values():
        groups[tuple(sorted(blocks))] = groups.get(tuple(sorted(blocks)), 0) + 1
    return tuple(sorted(groups.items()))


def region_arrays(trace: Trace, chain: list, hoisted: frozenset[str] = frozenset()) -> int:
    """Distinct global arrays of ``compute.kernel_entry_insts``'s array parameters (one
    ``cvta`` each in the PTX, none in the SASS): those the mapped loops ``chain`` address and
    those their region stores to after them (a reduction's accumulator, stored once a launch
    after the mapped loop: a pointer parameter of the port, its atomic's address, and one of
    the launch's memory instructions). A load the IR hoists before the mapped loops is not
    one of them (not assigned to threads: Gram-Schmidt's restrict ``R[k][k]``), but the arrays
    of the loads hoisted out of them that every thread runs (``hoisted``, eq. (12L)) are.
    A load in a 2-D thread's row blocks is one of them either way."""
    from .memory.shared import array_name

    h = trace.header
    blocks = {b for lp in chain for b in lp.blocks}
    regions = {lp.region for lp in chain}
    return len(({array_name(m.base) for m in h.mem
                 if m.block in blocks or (m.region in regions and m.kind == "store")}
                | hoisted) - {""})


def entry_shape(trace: Trace, grid: int, mapped: list[int]) -> EntryShape:
    """The ``EntryShape`` of the region whose innermost mapped loops are ``mapped`` on a
    ``grid``-D grid."""
    chain = mapped_chain(trace, mapped)
    h = trace.header
    latches = tuple(
        (b, _latch_control(h.blocks[b].ops)) for lp in chain for b in _latches(trace, lp)
    )
    inner = {b for lid in mapped for b in h.loops[lid].blocks}
    outer = sorted({b for lp in chain for b in lp.blocks} - inner - {b for b, _ in latches})
    mod = ir_module(h.ir_text)
    fn = mod.functions.get(chain[0].function) if chain else None
    geps = _row_geps(fn, {h.blocks[b].label for b in outer}) if fn is not None else {}
    found = [(b, *geps.get(h.blocks[b].label, (0, 0))) for b in outer]
    inside = {h.blocks[b].label: b for lp in chain for b in lp.blocks
              if h.blocks[b].function == chain[0].function} if chain else {}
    outer_loops = [lp for lp in chain if lp.id not in mapped]
    ids = {lp.id for lp in chain}
    own = inner - {b for lp in h.loops if lp.id not in ids for b in lp.blocks}
    steps = _row_steps(fn, {h.blocks[b].label for b in own}) if fn is not None and grid >= 2 \
        else {}
    forms = row_forms(fn, {h.blocks[b].label for b in own}) if fn is not None and grid >= 2 \
        else {}
    loads = hoisted_loads(trace, chain[0].region, chain[0].function, inner) if chain else ()
    row_blocks = frozenset(b for lp in outer_loops for b in lp.blocks) - inner
    tests = _row_tests(fn, {h.blocks[b].label for b in row_blocks},
                       {h.blocks[b].label for b in inner}) if fn is not None else {}
    return EntryShape(
        grid=grid,
        arrays=region_arrays(trace, chain, hoisted_arrays(loads)),
        latches=tuple((b, n) for b, n in latches if n),
        rows=tuple((b, r) for b, r, _ in found if r),
        row_addresses=tuple((b, a) for b, _, a in found if a),
        row_steps=tuple((b, steps[h.blocks[b].label]) for b in sorted(own)
                        if steps.get(h.blocks[b].label)),
        start_offsets=sum(_starts_off_zero(trace, lp) for lp in chain),
        bound_offsets=len(frozenset().union(*(_bound_offsets(trace, lp) for lp in chain))),
        hoisted=hoisted_addresses(fn, inside, loads) if fn is not None else (),
        row_blocks=row_blocks,
        row_headers=tuple(b for lp in outer_loops for b in lp.blocks
                          if h.blocks[b].label == lp.header),
        hoisted_loads=loads,
        row_tests=tuple((b, tests[h.blocks[b].label]) for b in sorted(row_blocks)
                        if tests.get(h.blocks[b].label)),
        row_forms=tuple((b, forms[h.blocks[b].label]) for b in sorted(own)
                        if forms.get(h.blocks[b].label)),
    )


def entry_delta(shape: EntryShape, per_thread) -> float:
    """SASS entry integer instructions per thread less the PTX-level ones the model counts
    (module docstring): no cvta per array and no mapped loop control (``per_thread``: block
    executions per thread), a 2-D thread's row index and the addresses of its row once per
    thread (the trace's row pointers out), the addresses hoisted before the mapped loops
    (eq. 12h), a 2-D thread's row steps (eq. 12t), an add per offset start and a uniform add
    per bound that is a size plus or minus a constant, and a 2-D thread's row compares once
    per thread (eq. (12v))."""
    control = sum(per_thread.get(b, 0.0) * n for b, n in shape.latches)
    rows = sum(per_thread.get(b, 0.0) * n for b, n in shape.rows)
    row = ROW_INDEX_INSTS - rows if shape.rows else 0.0
    addrs = sum(max(1.0 - per_thread.get(b, 0.0), 0.0) * n for b, n in shape.row_addresses)
    steps = sum(ROW_STEP_INSTS * min(per_thread.get(b, 0.0), 1.0) * n  # (12t), (12q)
                for b, n in (*shape.row_steps, *shape.row_forms))
    shares = thread_shares(shape, per_thread)
    hoisted = hoisted_address_insts(shape.hoisted, shares)
    tests = row_test_insts(shape.row_tests, per_thread, shares)  # (12v)
    return float(
        row + addrs + steps + hoisted + tests
        + START_OFFSET_INSTS * shape.start_offsets
        + BOUND_OFFSET_INSTS * shape.bound_offsets - CVTA_INSTS * shape.arrays
        - control
    )


def thread_shares(shape: EntryShape, per_thread) -> dict[int, float]:
    """``per_thread`` (block executions per thread) with a 2-D thread's row blocks
    (``EntryShape.row_blocks``) per row instead: the trace runs them once per row of its
    outer mapped loop (``row_headers``' executions), every CUDA thread once (its own row),
    so a block that every row runs once is run by every thread (eq. 12h2)."""
    rows = sum(per_thread.get(b, 0.0) for b in shape.row_headers)
    if not rows:
        return dict(per_thread)
    return {b: n / rows if b in shape.row_blocks else n for b, n in per_thread.items()}


def row_test_insts(tests, per_thread, shares) -> float:
    """Eq. (12v): the compares of a 2-D thread's row blocks (``EntryShape.row_tests``) that
    every thread makes (an ISETP at its block's ``thread_shares`` weight, at most 1) less
    those the PTX-level count has (once per row: ``per_thread``)."""
    return float(sum(
        ROW_TEST_INSTS * n * max(min(shares.get(b, 0.0), 1.0) - per_thread.get(b, 0.0), 0.0)
        for b, n in tests
    ))


def hoisted_address_insts(hoisted, per_thread) -> float:
    """Eq. (12h): the instructions per thread forming the addresses the IR hoists before the
    mapped loops (``EntryShape.hoisted``), each weighed by the share of threads that run a
    block using it (its most-run user's executions per thread, at most 1; ``entry_delta``
    passes ``thread_shares``, eq. 12h2, for a 2-D thread's row blocks)."""
    return float(sum(
        HOISTED_ADDRESS_INSTS * n * min(max(per_thread.get(b, 0.0) for b in blocks), 1.0)
        for blocks, n in hoisted
    ))


def loop_pointer_insts(arrays: int) -> int:
    """IMAD.WIDEs before one entry of a sequential loop: one per pointer it advances."""
    return LOOP_POINTER_INSTS * arrays

