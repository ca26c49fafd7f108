"""How the unrolled trip of a loop bounded by a run-time size tests its end (issue 24,
SPEC §2.4), from the traced loop's induction: what decides whether ptxas unrolls it again.

nvcc (LLVM's runtime unroller) unrolls such a loop 4 times (``compute.UNROLL_RUNTIME``) and
runs the left-over iterations in a 1-iteration remainder loop. Where the remainder goes
follows LLVM's ``isEpilogProfitable``: after the unrolled loop (an epilogue) when an integer
phi of the header starts at a constant, before it (a prologue) otherwise. The trip's exit
test then takes one of three forms in the PTX (read from the ``nvcc -O3 -arch=sm_90``
PTX and SASS of probe loops: row-stride recurrences counting up from 0, from a run-time k,
down from n - 1, down from n - 1 to a run-time m, down from a constant to m; row-stride
sums from 0 and from k; two-store recurrences from 0 and from k):

* prologue (start at a run-time value: ``for (i = k; i < n; i++)``, and every loop counting
  down from a size, which is a run-time parameter in the ports): the trip compares its
  own index with the bound (``setp.lt.s32 %p, %r_i, %r_n``, ``setp.gt.s32 %p, %r_i, 4``);
* epilogue, counting down (``for (i = 1023; i >= m; i--)``): a down-counter to 0
  (``add.s32 %r, %r, -4; setp.ne.s32 %p, %r, 0``);
* epilogue, counting up from a constant (``for (i = 0; i < n; i++)``): when the index is
  needed by an address (an access moving by a row: nvcc recomputes the 32-bit row index
  ``i * H + j`` every trip) the counter counts up and the test adds the remainder's
  negative offset first (``add.s32 %r20, %r4, %r25; setp.ne.s32 %p, %r20, 0``); when every
  access moves one element, the addresses are pointer increments and LLVM's loop strength
  reduction turns the index into a down-counter (the second form).

ptxas unrolls the trip 4 times more (``compute.PTXAS_UNROLL``) in the first two forms, whose
trip count it reads off the test, and keeps nvcc's 4 in the third (the probes: the six loops
not counting up from 0 are 16 deep, the three row-stride ones from 0 are 4; the ports:
Deriche's backward column pass 16, its forward one 4).
``compute.runtime_trip_depth`` takes ``counts_up_from_constant`` for it. LLVM's test looks at
every integer phi of the header; this rule reads the inductions only (an integer
accumulator starting at 0 in a loop from a run-time start would make the remainder an
epilogue: not modelled, no corpus loop has one).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .frontend.tracefile import Trace
from .parallelism import ir_module

_INCOMING = re.compile(r"\[\s*([^,\]]+?)\s*,\s*%([\w.$\"-]+)\s*\]")
_INT_LITERAL = re.compile(r"-?\d+")


@dataclass(frozen=True)
class Induction:
    """One integer induction of a loop header: its start value as the IR writes it (a
    literal, or an SSA name for a value computed before the loop) and its step."""

    start: str
    step: int

    @property
    def constant_start(self) -> bool:
        """Whether the induction starts at a compile-time constant (LLVM's ConstantInt)."""
        return bool(_INT_LITERAL.fullmatch(self.start))


def _step(instr_text: str, phi: str) -> int | None:
    """The constant step of ``add <ty> %phi, C`` / ``sub <ty> %phi, C`` (None otherwise)."""
    body = instr_text.split(", !")[0]
    m = re.match(r"(add|sub)\b[\w ]*?\bi\d+\s+(\S+),\s*(\S+)$", body.strip())
    if not m:
        return None
    op, a, b = m.groups()
    if a == phi and _INT_LITERAL.fullmatch(b):
        return int(b) if op == "add" else -int(b)
    if op == "add" and b == phi and _INT_LITERAL.fullmatch(a):
        return int(a)
    return None


def header_inductions(fn, header: str, inside: set[str]) -> tuple[Induction, ...]:
    """The integer inductions of the loop with header block ``header`` of IR function
    ``fn`` (``inside``: the loop's block labels): header phis of an integer type whose value
    from inside the loop is the phi plus a constant."""
    defs = {i.result.lstrip("%").strip('"'): i for b in fn.blocks for i in b.instrs if i.result}
    blk = next((b for b in fn.blocks if b.label == header), None)
    if blk is None:
        return ()
    out = []
    for ins in blk.instrs:
        if ins.opcode != "phi" or not re.match(r"phi\s+i\d+\s", ins.text):
            continue
        incoming = _INCOMING.findall(ins.text.split(", !")[0])
        starts = [v for v, frm in incoming if frm.strip('"') not in inside]
        nexts = [v for v, frm in incoming if frm.strip('"') in inside]
        if len(starts) != 1 or len(nexts) != 1 or not nexts[0].startswith("%"):
            continue
        upd = defs.get(nexts[0].lstrip("%").strip('"'))
        step = _step(upd.text, ins.result or "") if upd is not None else None
        if step:
            out.append(Induction(start=starts[0], step=step))
    return tuple(out)


def loop_inductions(trace: Trace, loop) -> tuple[Induction, ...]:
    """The inductions ``header_inductions`` recognises at ``loop``'s header in its function's
    IR; none when the function is not in the module."""
    h = trace.header
    mod = ir_module(h.ir_text)
    if loop.function not in mod.functions:
        return ()
    inside = {h.blocks[b].label for b in loop.blocks}
    return header_inductions(mod.functions[loop.function], loop.header, inside)


def counts_down(trace: Trace, loop) -> bool:
    """Whether ``loop``'s first recognised header induction steps down
    (``for (j = H - 1; j >= 0; j--)``; a grid-stride loop, which counts up from the thread's
    index, does not)."""
    found = loop_inductions(trace, loop)
    return bool(found) and found[0].step < 0


def counts_up_from_constant(trace: Trace, loop) -> bool:
    """Whether ``loop`` counts up from a compile-time constant (``for (i = 0; i < n; i++)``):
    nvcc's unrolled trip then keeps an up-counting index and an offset exit test, which
    ptxas does not unroll again (module docstring). A loop without a recognised induction
    counts as such (nvcc's 4 a trip, the rule before this one)."""
    found = loop_inductions(trace, loop)
    if not found:
        return True
    return any(ind.constant_start and ind.step > 0 for ind in found)
