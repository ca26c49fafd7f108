"""Loops that leave on a value computed inside them (SPEC §2.4, eq. (12x)): not unrolled.

nvcc's loop unrollers (LLVM's full and runtime unrolling, then ptxas) need the trip count of
a loop at its entry: a constant, or a run-time value the loop does not change (a size
parameter, ``row_ptr[i + 1]`` loaded before the loop). A loop with an exit whose test reads a
value the loop computes from its own data (an escape-time ``while (zr * zr + zi * zi <= 4)``,
a search ``while (a[j] != key)``, a convergence test) has no trip count before it runs: both
keep it at one source iteration a trip, its loop control (the counter's add, its compare,
the branch) run every iteration. The sm_90 SASS of the blind mandelbrot port
(validation/cuda/blind/mandelbrot.cu) runs its loop as 11 instructions an iteration, one
iteration a trip; its Nsight counters (h100-blind-2026-11-27/plain-ncu/mandelbrot-32x32.csv)
show each of the 11 opcodes at 1 or a multiple of 6,917,741 executions, the loop's warp
iterations.

A *data-dependent exit* is a conditional branch of the loop's blocks with a target outside
the loop whose condition depends, within one iteration, on a load, a call or a phi that is
not an induction (``parallelism.affine_share``'s taint: the values unrolling cannot fold).
"""

from __future__ import annotations

import functools
import re

from .frontend.tracefile import Trace
from .instrument import loopbody
from .parallelism import ir_module

_LABEL = re.compile(r"label %([\w.$\"-]+)")


def data_tainted(body: loopbody.LoopBody) -> list[bool]:
    """Per op of ``body``: whether its value depends, within one iteration, on a load, a
    call or a phi that is not one of the body's inductions (ops come before their users
    except through phis, so one pass suffices)."""
    tainted: list[bool] = []
    for o in body.ops:
        tainted.append(
            o.klass in ("load", "call")
            or (o.klass == "phi" and o.index not in body.induction)
            or any(tainted[k] for k in o.operands if k < len(tainted))
        )
    return tainted


def leaving_branches(fn, labels: set[str]) -> list[bool]:
    """Per ``br`` instruction of the blocks ``labels`` of ``fn`` (function order, as
    loopbody.loop_body lists them): whether it is conditional with a target outside them."""
    out = []
    for b in fn.blocks:
        if b.label not in labels:
            continue
        for ins in b.instrs:
            if ins.opcode == "br":
                targets = [t.strip('"') for t in _LABEL.findall(ins.text.split(", !dbg")[0])]
                out.append(len(targets) > 1 and any(t not in labels for t in targets))
    return out


def has_data_exit(body: loopbody.LoopBody, leaving: list[bool]) -> bool:
    """Eq. (12x): whether a leaving branch (``leaving``, per ``br`` op of ``body`` in order)
    tests a tainted value (data_tainted)."""
    tainted = data_tainted(body)
    branches = [o for o in body.ops if o.klass == "br"]
    return any(
        leave and any(tainted[k] for k in br.operands)
        for br, leave in zip(branches, leaving)
    )


def data_exit(trace: Trace, loop: int) -> bool:
    """Whether loop ``loop`` of ``trace`` has a data-dependent exit (eq. (12x)); False for
    straight-line code (loop < 0) and a loop whose function is not in the IR."""
    return loop >= 0 and _data_exit(trace.header.ir_text, *_loop_blocks(trace, loop))


def _loop_blocks(trace: Trace, loop: int) -> tuple[str, tuple[str, ...]]:
    """(function, block labels, its header first) of loop ``loop`` of ``trace``: the key of
    the per-IR caches below."""
    h = trace.header
    lp = h.loops[loop]
    return lp.function, (lp.header,) + tuple(h.blocks[b].label for b in lp.blocks
                                             if h.blocks[b].label != lp.header)


@functools.lru_cache(maxsize=256)
def _data_exit(ir_text: str, function: str, labels: tuple[str, ...]) -> bool:
    """data_exit of the loop of blocks ``labels`` (its header first) of ``function``, once
    per IR text and loop (the memory ids of its loads do not matter: none given)."""
    mod = ir_module(ir_text)
    if function not in mod.functions:
        return False
    fn = mod.functions[function]
    body = loopbody.loop_body(fn, labels, {})
    return has_data_exit(body, leaving_branches(fn, set(labels)))


#: value-preserving steps a trip count is formed by from its loaded bound (sext of
#: ``row_ptr[i + 1]``, a difference of two loaded bounds)
_COUNT_STEPS = frozenset(("sext", "zext", "trunc", "add", "sub", "select"))
#: the intrinsics clang forms a trip count with (``max(n, 1)``), as steps of it
_COUNT_CALLS = ("@llvm.smax.", "@llvm.umax.", "@llvm.smin.", "@llvm.umin.")
_NAME = re.compile(r"%([\w.$-]+)")


def loaded_bound(trace: Trace, loop: int) -> bool:
    """Whether loop ``loop`` of ``trace`` exits on a trip count loaded before it (eq. (12y)):
    a leaving branch compares with a value defined outside the loop that comes, through
    casts and adds (``_COUNT_STEPS``), from a load (CSR's ``k < row_ptr[i + 1]``). nvcc
    unrolls such a loop as one of a run-time size, whatever its iterations; False for
    straight-line code and a loop whose function is not in the IR."""
    return loop >= 0 and _loaded_bound(trace.header.ir_text, *_loop_blocks(trace, loop))


@functools.lru_cache(maxsize=256)
def _loaded_bound(ir_text: str, function: str, labels: tuple[str, ...]) -> bool:
    """loaded_bound of the loop of blocks ``labels`` of ``function``, once per IR text and
    loop."""
    mod = ir_module(ir_text)
    if function not in mod.functions:
        return False
    fn = mod.functions[function]
    inside = set(labels)
    defs = {ins.result.lstrip("%"): (b.label, ins) for b in fn.blocks for ins in b.instrs
            if ins.result}
    todo: list[str] = []
    for b in fn.blocks:
        if b.label not in inside:
            continue
        for ins in b.instrs:
            if ins.opcode == "br" and len(_LABEL.findall(ins.text)) > 1:
                cond = _NAME.findall(ins.text.split(",")[0].split("i1", 1)[-1])
                for c in cond:
                    label, cmp = defs.get(c, ("", None))
                    if cmp is not None and cmp.opcode == "icmp" and label in inside:
                        todo += _NAME.findall(cmp.text.split("=", 1)[-1].split(", !")[0])
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        label, ins = defs.get(name, ("", None))
        if ins is None or name in seen or label in inside:
            continue
        seen.add(name)
        if ins.opcode == "load":
            return True
        if ins.opcode in _COUNT_STEPS or (
                ins.opcode == "call" and any(c in ins.text for c in _COUNT_CALLS)):
            todo += _NAME.findall(ins.text.split("=", 1)[-1].split(", !")[0])
    return False
