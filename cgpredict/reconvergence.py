"""The reconvergence region ptxas puts around a loop that some threads of a warp enter and
others skip (issue 24, eq. (12rv)): its BSSY and BSYNC, SASS instructions without a PTX
counterpart.

Where a loop's zero-trip test compares values that are the same for every thread (a size,
a kernel parameter in the ports: GESUMMV's ``j < n``, the column passes, the matrix
products), the threads of a warp all enter it or all skip it and ptxas branches without a
region. Where the test compares a value that depends on the thread and the thread has code
to run after the loop (a store), ptxas opens a reconvergence region before the test (``BSSY
B0``) and closes it after the loop (``BSYNC B0``), where the threads that skipped the loop
wait for those that ran it: the sm_90 SASS of the user kernels spmv_csr (``k < rowptr[r +
1]``, bounds loaded at the thread's row) and dot_gridstride (``for (k = t; k < n; k +=
NT)``, a start at the thread's index), both ports, one pair a loop entry in their unroll-1
builds, and of probe kernels (``for (i = j; i < n; i++)`` under ``j < n``, ``for (j = i + 1;
j < n; j++)`` under ``i < n`` or ``i < n - 1``, ``for (j = 0; j < i; j++)``, each followed
by ``y[.] = s``). Where nothing follows the loop in the thread, its threads end at its exit
(EXIT) and there is no region (CORR's and COVAR's ``for (j2 = j1 + 1; j2 < m; ...)``: no
BSSY in corr_corr and covar_covar). Two instructions (class other) a loop entry::

    reconvergence_insts = RECONVERGENCE_INSTS x [the loop's zero-trip test depends on the
                          thread and the thread writes memory after the loop]        (12rv)

A zero-trip test is a conditional branch outside the loop to its header or to a preheader
that falls through to it, not the latch of a loop around. A value depends on the thread when
it is computed, through integer arithmetic, casts, phis and the addresses of loads, from the
induction of a mapped loop (the thread's index) or from a load at an address that does
(``rowptr[r + 1]``); a load at a fixed address (a C file-scope scalar) does not. ptxas's
unrolled build also brackets each stage of a run-time trip (the 16-deep trip, its 8- and
4-iteration stages) with a pair of its own; the SASS check's estimate counts the one pair of
the unroll-1 build, as this rule does.
"""

from __future__ import annotations

import functools
import re

from .frontend.tracefile import Trace
from .loop_exits import data_exit
from .parallelism import ir_module

#: IR operations that write memory: what makes the code after a loop need its threads together
_WRITES = frozenset(("store", "atomicrmw", "cmpxchg"))
#: BSSY and BSYNC around a loop whose trip count differs between threads (class other)
RECONVERGENCE_INSTS = 2

_NAME = re.compile(r"%([\w.$\"-]+)")
#: operations whose result depends on the thread when an operand does (loads: their address)
_FOLLOW = frozenset((
    "add", "sub", "mul", "shl", "lshr", "ashr", "and", "or", "xor", "sdiv", "udiv", "srem",
    "urem", "sext", "zext", "trunc", "select", "phi", "load", "getelementptr", "icmp", "call",
))  # fmt: skip
#: and, for a data exit's test (eq. (12x): mandelbrot's |z|^2 <= 4), the floating-point ones
_FOLLOW_DATA = _FOLLOW | frozenset((
    "fadd", "fsub", "fmul", "fdiv", "fneg", "fcmp", "sitofp", "uitofp", "fptosi", "fptoui",
    "fpext", "fptrunc",
))  # fmt: skip


def divergent_loop(trace: Trace, loop, grid: int) -> bool:
    """Eq. (12rv): whether sequential loop ``loop`` of ``trace`` (below the ``grid`` mapped
    loops of its region) has a zero-trip test on a value that depends on the thread; False
    for a loop of a helper function and a function the IR does not hold."""
    h = trace.header
    if loop.region < 0:
        return False
    mapped = tuple(sorted(lp.header for lp in h.loops
                          if lp.region == loop.region and lp.depth <= grid
                          and lp.function == loop.function))
    around, q, outer = [], loop.parent, loop
    while q >= 0:
        around.append(h.loops[q].header)
        outer, q = h.loops[q], h.loops[q].parent
    labels = tuple(sorted(h.blocks[b].label for b in loop.blocks))
    thread = tuple(sorted(h.blocks[b].label for b in outer.blocks))
    exits = data_exit(trace, loop.id)  # its exit tests too: the thread's data ends it
    return bool(mapped) and _divergent(h.ir_text, loop.function, loop.header, labels,
                                       mapped, tuple(sorted(around)), thread, exits)


def reconvergence_insts(divergent: bool) -> int:
    """Eq. (12rv): the BSSY and BSYNC a loop entry runs (none where its entry is uniform)."""
    return RECONVERGENCE_INSTS if divergent else 0


def loop_reconvergence(trace: Trace, loops, grid: int) -> tuple[tuple[int, int], ...]:
    """(loop id, ``reconvergence_insts``) of each of ``loops`` (sequential loops of
    ``trace`` below ``grid`` mapped ones): what machine_code.MachineShape keeps, eq. (12rv)."""
    return tuple((lp.id, reconvergence_insts(divergent_loop(trace, lp, grid))) for lp in loops)


def zero_trip_tests(fn, header: str, inside: set[str], around: set[str]) -> list:
    """The conditional branches of IR function ``fn`` that decide whether the loop of header
    ``header`` (blocks ``inside``) is entered: a block outside it that branches to the header,
    or to a preheader that falls through to it, on a condition; not a latch of a loop around
    (a branch to one of the headers ``around``: the enclosing loop's own test)."""
    blocks = {b.label: b for b in fn.blocks}
    preds: dict[str, list[str]] = {}
    for b in fn.blocks:
        for n in b.successors:
            preds.setdefault(n, []).append(b.label)
    out = []
    for p in (p for p in preds.get(header, []) if p not in inside):
        for q in [p] if len(blocks[p].successors) > 1 else preds.get(p, []):
            if len(blocks[q].successors) > 1 and not set(blocks[q].successors) & around:
                out += [ins for ins in blocks[q].instrs if ins.opcode == "br"]
    return out


@functools.lru_cache(maxsize=256)
def _divergent(ir_text: str, function: str, header: str, labels: tuple[str, ...],
               mapped: tuple[str, ...], around: tuple[str, ...],
               thread: tuple[str, ...] = (), exits: bool = False) -> bool:
    """divergent_loop of the loop of header ``header`` and blocks ``labels`` of ``function``
    (``mapped``: the header labels of its region's mapped loops; ``around``: those of the
    loops enclosing it; ``thread``: the blocks of the outermost of them; ``exits``: a loop
    with a data-dependent exit, eq. (12x), whose exit tests are followed too), once per IR
    text and loop."""
    mod = ir_module(ir_text)
    if function not in mod.functions:
        return False
    fn = mod.functions[function]
    where = {ins.result.lstrip("%"): b.label for b in fn.blocks for ins in b.instrs
             if ins.result}
    defs = {ins.result.lstrip("%"): ins for b in fn.blocks for ins in b.instrs if ins.result}
    todo: list[str] = []
    if not writes_after(fn, set(labels), set(around), set(thread)):
        return False  # the threads that skip or leave the loop have nothing left to run
    tests = zero_trip_tests(fn, header, set(labels), set(around))
    if exits:  # eq. (12rv): a data exit on the thread's values ends it at its own trip
        tests += [ins for b in fn.blocks if b.label in labels for ins in b.instrs
                  if ins.opcode == "br" and " label " in ins.text.split(", label", 1)[-1]
                  and ins.text.startswith("br i1")]
    for br in tests:
        todo += _NAME.findall(br.text.split(", label")[0])
    seen, heads, follow = set(), set(mapped), _FOLLOW_DATA if exits else _FOLLOW
    while todo:
        name = todo.pop()
        ins = defs.get(name)
        if ins is None or name in seen or ins.opcode not in follow:
            continue
        seen.add(name)
        if ins.opcode == "phi" and where[name] in heads:
            return True  # a mapped loop's induction: the thread's index
        text = ins.text.split("=", 1)[-1].split(", !")[0]
        if ins.opcode == "call" and "@llvm." not in text:
            continue  # a function's result: not followed
        todo += _NAME.findall(text)
    return False


def writes_after(fn, inside: set[str], around: set[str], thread: set[str]) -> bool:
    """Whether the thread writes memory after the loop of blocks ``inside`` of IR function
    ``fn``, before the next iteration of a loop around (headers ``around``) and within the
    blocks of the outermost (``thread``): a store, an atomic or a call in a block reachable
    from the loop's exits (``y[r] = s`` after CSR's row loop). Without one, ptxas ends the
    thread at the loop's exit (EXIT) and no reconvergence is needed (CORR's and COVAR's
    triangles end the thread's work)."""
    blocks = {b.label: b for b in fn.blocks}
    todo = [n for lab in inside for n in blocks[lab].successors if n not in inside]
    seen: set[str] = set()
    while todo:
        lab = todo.pop()
        if lab in seen or lab in around or lab in inside or lab not in thread:
            continue
        seen.add(lab)
        if any(_writes(ins) for ins in blocks[lab].instrs):
            return True
        todo += blocks[lab].successors
    return False


def _writes(ins) -> bool:
    """Whether one IR instruction writes memory: a store, an atomic, or a call of a function
    (not an intrinsic, not an inline asm: the opaque size copies of loop_bounds)."""
    if ins.opcode in _WRITES:
        return True
    text = ins.text.split(", !")[0]
    return ins.opcode == "call" and "@llvm." not in text and " asm " not in text
