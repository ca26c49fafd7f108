"""The static body of an innermost loop read from the module's IR text (``irtext``).

Both the GPU model (``parallelism``: the instruction-level parallelism of a thread's loop) and
the FPGA estimator (``fpga.dddg``: its data-dependence graph, SPEC §5) work on it:

* ``loop_body`` reads the static body of a loop from the module's IR text (``irtext``) and turns
  every instruction into an ``Op`` with an operator class (``fadd``, ``fmul``, ``load``, ...).
  ``llvm.fmuladd`` is split into an ``fmul`` and an ``fadd``, as HLS implements it (no fused
  unit), so a recurrence through the accumulator sees only the adder's latency. SSA operands
  give the register edges; a header ``phi`` whose incoming value is defined in the body carries
  that value to the next iteration (distance 1). Phis whose cycle holds only integer adds are
  *induction variables*: unrolling computes their copies as ``iv + k`` in parallel, so they are
  kept out of the recurrences and of the DDDG.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .irtext import CAST_OPCODES, Function, split_operands
from .memtrace import mem_kind

__all__ = [
    "FREE_CLASSES", "LoopBody", "Op", "invariant_ops", "loop_body", "mem_by_label", "op_class",
]


_VALUE = re.compile(r"%([\w.$-]+|\"[^\"]+\")")
# operations that are wiring in hardware: no latency, no resources
FREE_CLASSES = frozenset({"phi", "gep", "cast", "br", "ret"})
_FLOAT = {"float": "f", "half": "f", "bfloat": "f", "double": "d"}


@dataclass(frozen=True)
class Op:
    """One operation of a loop body. ``operands`` are indices of body ops it uses (same
    iteration); ``carried`` (phis only) is the index of the body op whose value of the previous
    iteration it receives, or -1. ``mem_id`` is the static memory instruction id of the trace."""

    index: int
    name: str  # SSA result ("%7") or "" for stores/branches; fmuladd parts get ".mul" / ".add"
    klass: str  # operator class: a key of the device's operator table, or a FREE_CLASSES one
    type: str
    operands: tuple[int, ...] = ()
    carried: int = -1
    mem_id: int = -1
    array: str = ""


@dataclass(frozen=True)
class LoopBody:
    """The static body of an innermost loop, in execution order, and its induction phis."""

    ops: tuple[Op, ...]
    induction: frozenset[int]  # op indices of induction phis and their updates

    @property
    def mem_ops(self) -> tuple[Op, ...]:
        return tuple(o for o in self.ops if o.mem_id >= 0)


def op_class(opcode: str, ty: str, callee: str | None = None) -> str:
    """Operator class of an IR instruction (the key of the operator tables)."""
    fd = _FLOAT.get(ty, "")
    if opcode in ("fadd", "fsub"):
        return "dadd" if fd == "d" else "fadd"
    if opcode in ("fmul", "fdiv"):
        return ("d" if fd == "d" else "f") + opcode[1:]
    if opcode in ("frem",):
        return "ddiv" if fd == "d" else "fdiv"
    if opcode == "fneg":
        return "logic"
    if opcode == "fcmp":
        return "fcmp"
    if opcode in ("add", "sub"):
        return "iadd"
    if opcode == "mul":
        return "imul"
    if opcode in ("sdiv", "udiv", "srem", "urem"):
        return "idiv"
    if opcode in ("and", "or", "xor", "shl", "lshr", "ashr"):
        return "logic"
    if opcode in ("icmp", "select", "load", "store", "phi", "br", "ret"):
        return opcode
    if opcode == "getelementptr":
        return "gep"
    if opcode in ("sext", "zext", "trunc", "bitcast", "ptrtoint", "inttoptr", "freeze"):
        return "cast"
    if opcode in ("sitofp", "uitofp", "fptosi", "fptoui", "fpext", "fptrunc"):
        return "fcvt"
    if opcode == "call" and callee:
        base = callee.split(".")
        if callee.startswith("llvm.sqrt") or callee in ("sqrtf", "sqrt"):
            return "dsqrt" if fd == "d" or callee == "sqrt" else "fsqrt"
        if callee.startswith(("llvm.fabs", "llvm.copysign")):
            return "logic"
        if callee.startswith(("llvm.smax", "llvm.smin", "llvm.umax", "llvm.umin")):
            return "select"
        if base[:2] in (["llvm", "maxnum"], ["llvm", "minnum"]):
            return "fcmp"
    return "call"


def _result_type(opcode: str, text: str) -> str:
    words = [
        w
        for w in text.split()
        if w
        not in (
            "nuw",
            "nsw",
            "exact",
            "fast",
            "nnan",
            "ninf",
            "nsz",
            "arcp",
            "contract",
            "afn",
            "reassoc",
            "disjoint",
            "nneg",
            "tail",
            "volatile",
        )
    ]
    if opcode == "call":
        m = re.search(r"call\s+(?:\w+\s+)*?([\w<>]+)\s+@", text)
        return m.group(1) if m else ""
    if opcode in ("load",):
        return split_operands(" ".join(words[1:]))[0]
    if opcode == "store":
        return words[1]
    if opcode in ("icmp", "fcmp"):
        return words[2] if len(words) > 2 else ""
    if opcode in CAST_OPCODES:
        return words[1] if len(words) > 1 else ""
    return words[1] if len(words) > 1 else ""


def _array(base: str) -> str:
    return base.split("[")[0].strip() or "?"


def mem_by_label(header, region: int) -> dict[str, list[tuple[int, str]]]:
    """(memory instruction id, base text) of the region's loads and stores per block label, in
    program order: the ``mem_ids`` of ``loop_body``. ``header``: a trace header."""
    out: dict[str, list[tuple[int, str]]] = {}
    for m in header.mem:
        if m.region == region:
            out.setdefault(header.blocks[m.block].label, []).append((m.id, m.base))
    return out


def loop_body(
    fn: Function, labels: Iterable[str], mem_ids: Mapping[str, list[tuple[int, str]]]
) -> LoopBody:
    """The ops of the blocks ``labels`` of ``fn`` (header first, in function order).

    ``mem_ids[label]`` lists (memory instruction id, base text) of the loads and stores of that
    block in order, so the k-th load/store of the block gets the k-th id.
    """
    wanted = set(labels)
    blocks = [b for b in fn.blocks if b.label in wanted]
    header = blocks[0].label if blocks else ""
    ops: list[Op] = []
    by_name: dict[str, int] = {}
    pending_phis: list[tuple[int, str]] = []
    pending_merges: list[tuple[int, list[str]]] = []
    for b in blocks:
        mems = list(mem_ids.get(b.label, ()))
        for ins in b.instrs:
            body = ins.text.split(", !dbg")[0]
            ty = _result_type(ins.opcode, body)
            used = [m.strip('"') for m in _VALUE.findall(body)]
            if ins.opcode == "phi":
                inside = [
                    val[1:].strip('"')
                    for val, frm in (
                        (v.strip(), f.strip('"'))
                        for v, f in re.findall(r"\[\s*([^,\]]+),\s*%([\w.$\"-]+)\s*\]", body)
                    )
                    if frm in wanted and val.startswith("%")
                ]
                k = len(ops)
                ops.append(Op(k, ins.result or "", "phi", ty))
                if b.label == header:
                    # a header phi: the value of the latch comes from the previous iteration
                    if inside:
                        pending_phis.append((k, inside[-1]))
                elif inside:
                    # a join (if/else merge) inside the body: same-iteration operands
                    pending_merges.append((k, inside))
            elif ins.opcode == "call" and (ins.callee or "").startswith("llvm.fmuladd"):
                ops.extend(_fmuladd_ops(len(ops), ins.result or "", ty, body, by_name))
            elif ins.opcode == "call" and (ins.callee or "").startswith(
                ("llvm.dbg", "llvm.lifetime")
            ):
                continue
            else:
                klass = op_class(ins.opcode, ty, ins.callee)
                if ins.opcode == "icmp" or ins.opcode == "fcmp":
                    ty = _result_type(ins.opcode, body)
                operands = tuple(by_name[u] for u in used if u in by_name)
                mem_id, array = -1, ""
                if mem_kind(ins.opcode) and mems:  # the trace's memory instructions
                    mem_id, base = mems.pop(0)
                    array = _array(base)
                k = len(ops)
                ops.append(Op(k, ins.result or "", klass, ty, operands, -1, mem_id, array))
            if ins.result:
                by_name[ins.result.lstrip("%").strip('"')] = len(ops) - 1
    fixed = _with_phis(ops, by_name, pending_phis, pending_merges)
    return LoopBody(tuple(fixed), _induction(fixed))


def _fmuladd_ops(k: int, result: str, ty: str, body: str,
                 by_name: dict[str, int]) -> tuple[Op, Op]:
    """``llvm.fmuladd`` as the multiply and the add it fuses (ops ``k`` and ``k + 1``)."""
    a, bb, c = (_ref(x, by_name) for x in _call_args(body)[:3])
    return (
        Op(k, result + ".mul", op_class("fmul", ty), ty, tuple(x for x in (a, bb) if x >= 0)),
        Op(k + 1, result, op_class("fadd", ty), ty, tuple(x for x in (k, c) if x >= 0)),
    )


def _with_phis(ops: list[Op], by_name: dict[str, int], pending_phis: list[tuple[int, str]],
               pending_merges: list[tuple[int, list[str]]]) -> list[Op]:
    """The ops with the operands of their phis: a header phi carries its latch value from
    the previous iteration; a join inside the body takes its operands of this iteration."""
    fixed = list(ops)
    for k, name in pending_phis:
        if name in by_name:
            o = fixed[k]
            fixed[k] = Op(o.index, o.name, o.klass, o.type, o.operands, by_name[name])
    for k, names in pending_merges:
        o = fixed[k]
        opnds = tuple(dict.fromkeys(by_name[n] for n in names if n in by_name))
        fixed[k] = Op(o.index, o.name, o.klass, o.type, opnds, o.carried)
    return fixed


def _call_args(body: str) -> list[str]:
    inner = body[body.index("(", body.index("@")) + 1 : body.rindex(")")]
    return split_operands(inner)


def _ref(arg: str, by_name: dict[str, int]) -> int:
    m = _VALUE.search(arg)
    return by_name.get(m.group(1).strip('"'), -1) if m else -1


def invariant_ops(ops) -> list[bool]:
    """Which of a body's ops compute the same value in every iteration (``_invariant``)."""
    return _invariant(list(ops))


def _invariant(ops: list[Op]) -> list[bool]:
    """Which ops compute the same value in every iteration: no phi, load or call among them
    or their (body) operands. Operands outside the body (constants, values defined before the
    loop) are not listed, so an op whose operands are all outside is invariant."""
    inv = [False] * len(ops)
    for o in ops:  # operands come before their users, except through phis (not invariant)
        inv[o.index] = o.klass not in ("phi", "load", "store", "call", "br", "ret") and all(
            u < o.index and inv[u] for u in o.operands
        )
    return inv


def _induction(ops: list[Op]) -> frozenset[int]:
    """Integer phis updated by an integer add of themselves and a loop-invariant step
    (``iv.next = add iv, step``). ``j = j + nxt[j]`` is a recurrence, not an induction."""
    out: set[int] = set()
    inv = _invariant(ops)
    for o in ops:
        if o.klass != "phi" or o.carried < 0 or _FLOAT.get(o.type):
            continue
        upd = ops[o.carried]
        if (
            upd.klass == "iadd"
            and o.index in upd.operands
            and all(u == o.index or inv[u] for u in upd.operands)
            and upd.operands.count(o.index) == 1
        ):
            out.update((o.index, upd.index))
    return frozenset(out)
