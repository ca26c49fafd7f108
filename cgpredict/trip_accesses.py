"""How a loop's accesses move, read from its IR (issue 24, SPEC §2.4): which index steps one
element an iteration, the pointer ptxas advances for an access, the loop-invariant values an
address is offset by, and whether the loop multiplies only loaded pairs. ``runtime_trips``
(eqs. (12a)-(12d)) and ``whole_loops`` (12wu) weigh a trip's pointers and copies from them.
"""

from __future__ import annotations

from dataclasses import dataclass

from .frontend.tracefile import Trace
from .gep_text import gep_index_types, split_top
from .instrument import loopbody
from .loop_blocks import own_blocks
from .machine_code import address_geps, offset_root
from .parallelism import ir_module


@dataclass(frozen=True)
class LoopIR:
    """A traced loop's own blocks as IR: its body (``loopbody.LoopBody``), the text of its
    ``getelementptr`` instructions and its function's instructions, each by result name."""

    body: loopbody.LoopBody
    geps: dict[str, str]
    defs: dict


def loop_ir(trace: Trace, loop) -> LoopIR | None:
    """The ``LoopIR`` of ``loop`` (a ``LoopInfo`` of ``trace``), None when its function is not
    in the trace's IR: what ``runtime_trips`` and ``whole_loops`` read its accesses from."""
    h = trace.header
    mod = ir_module(h.ir_text)
    if loop.function not in mod.functions:
        return None
    fn = mod.functions[loop.function]
    labels = {h.blocks[b].label for b in own_blocks(trace, loop)}
    body = loopbody.loop_body(fn, labels, loopbody.mem_by_label(h, loop.region))
    geps = {
        ins.result.lstrip("%"): ins.text
        for blk in fn.blocks if blk.label in labels
        for ins in blk.instrs if ins.opcode == "getelementptr" and ins.result
    }  # fmt: skip
    defs = {ins.result.lstrip("%"): ins for blk in fn.blocks for ins in blk.instrs if ins.result}
    return LoopIR(body=body, geps=geps, defs=defs)


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
    for g in address_geps(body.ops, o):
        for idx, ty in gep_index_types(geps.get(body.ops[g].name.lstrip("%"), "")):
            k = by_name.get(idx.lstrip("%"))
            if k is not None and not ty.startswith(("[", "{", "<")) and _unit_step(body, k):
                return True
    return False


def pointer_key(body: loopbody.LoopBody, o, geps: dict[str, str]) -> tuple:
    """The pointer ptxas advances for memory op ``o``: its array and the indices of its
    address, each body value taken at its root (``offset_root``: ``k + 1`` is ``k``'s pointer
    plus an immediate offset) and each value from outside the loop by name (``A[i][k]`` and
    ``A[j][k]`` are two pointers into one array); a constant index is no pointer of its own
    (``p[j].y``: ``gep i8, %p_j, i64 4`` is ``p[j]``'s pointer, the 4 an immediate offset,
    where the constant's text ``4`` once matched the body's unnamed value ``%4``)."""
    by_name = {op.name.lstrip("%"): op.index for op in body.ops if op.name}
    idx: set = set()
    for g in address_geps(body.ops, o):
        for name, _ in gep_index_types(geps.get(body.ops[g].name.lstrip("%"), "")):
            if not name.startswith("%"):
                continue  # a constant index (a field's byte offset): an immediate offset
            k = by_name.get(name.lstrip("%"))
            idx.add(offset_root(body.ops, k) if k is not None else name)
        idx |= {n for n in _gep_base(geps.get(body.ops[g].name.lstrip("%"), ""))
                if n.lstrip("%") not in by_name}
    return (o.array, frozenset(idx))


def _gep_base(text: str) -> list[str]:
    """The base pointer operand of a ``getelementptr`` instruction text, as a list (empty
    when the text is not one)."""
    parts = split_top(text.split("=", 1)[-1].split(", !")[0])
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
    for g in address_geps(body.ops, o):
        text = geps.get(body.ops[g].name.lstrip("%"), "")
        names = [(n, True) for n, _ in gep_index_types(text)]
        for n, index in names + [(b, False) for b in _gep_base(text)]:
            if n.startswith("%") and n.lstrip("%") not in in_body:
                out |= _outside_roots(n, defs, index)
    return out


def products_of_loads(body: loopbody.LoopBody, loads: set[int]) -> bool:
    """Whether the loop multiplies only pairs of values it loads at advancing addresses
    (``loads``: their body op indices): every floating-point multiply of ``body`` (an
    ``fmuladd``'s too) has two operands, both in ``loads``, and there is one."""
    muls = [o for o in body.ops if o.klass in ("fmul", "dmul")]
    return bool(muls) and all(len(o.operands) == 2 and set(o.operands) <= loads for o in muls)
