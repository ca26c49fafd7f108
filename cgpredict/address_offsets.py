"""The fold of constant offsets into the addresses of the code a thread runs once, and what
an access below the thread's own element keeps of its address (issue 24, eq. (12n)).

ptxas folds the constant offsets of one array's accesses there (``folded_address_insts``;
the accesses: ``machine_code.straight_line_uses``) into one 64-bit address (``LDG
[R4.64+0x4000]``): the PTX computes ``sext(idx + c)`` as ``sext(idx) + c``, which holds
when the 32-bit add cannot wrap (``nsw``). The port's index of a 2-D access is one 32-bit
linear form, ``(i - 1) * NY + j``; an array's one access below the thread's own element gets
an index of its own (``IADD3 R, R_idx, -0x1000``) and a 64-bit address of its own
(``IMAD.WIDE``), one above folds (presumably the reassociated ``i * NY + j - NY`` keeps no
``nsw``; the PTX was not read for it). Read from the sm_90 SASS (nvcc 13,
``-O3 -arch=sm_90``) of fdtd_k1 (``hz[(i - 1) * NY + j]`` beside ``hz[i * NY + j]``: IADD3 +
IMAD.WIDE more than fdtd_k3's ``hz[(i + 1) * NY + j]``, folded as ``+0x4000``) and of probes,
one thread each: ``a[i*N+j] - a[(i-1)*N+j]`` (IADD3 -0x1000, 2 IMAD.WIDE), ``a[i*N+j] -
a[i*N+(j-1)]`` (IADD3 -0x1, 2 IMAD.WIDE), ``a[(i-1)*N+j] + a[(i+1)*N+j]`` (IADD3 -0x1000, one
IMAD.WIDE, the other access at ``+0x8000`` from it), ``a[i*N+j] - a[(i+1)*N+j]`` (one
IMAD.WIDE, ``+0x4000``), and the 1-D ``a[i] - a[i - 1]`` (one IMAD.WIDE, ``-0x4``: a single
index keeps ``nsw``). With two or more distinct offsets below (``a[i*N+j] + a[(i-1)*N+j] +
a[(i-2)*N+j]``, ``a[(i-1)*N+j] + a[(i-2)*N+j]``) every access folds onto the thread's index
(``-0x4000``, ``-0x8000``; which of NVVM's passes tells the two cases apart was not read),
and two arrays at one offset below share its index (``a`` and ``c`` at ``(i-1)*N+j`` and
``i*N+j``: one IADD3, 4 IMAD.WIDE). The offset is from the thread's own element as the port
indexes it: a mapped loop starting at 1 (``for (j = 1; ...)``, the port's ``j = 1 + ...``) makes
``A[i][j - 1]`` offset 0 (conv2d, fdtd_k2, jacobi2d fold every access). Per array, with
``neg`` its distinct negative offsets of a 2-D index and ``own`` whether it has an access
at offset 0::

    unfolded = sum over arrays with |neg| = 1 of own             (IMAD.WIDE)
             + distinct offsets below of those arrays, not an IR add  (IADD3)      (12n)

(with ``own`` the accesses at and above 0 share one address, the one below has its own;
without, those above fold onto the one below: ``+0x8000``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

#: bytes of the scalar types a ``getelementptr`` steps over
_SCALAR_BYTES = {"i1": 1, "i8": 1, "i16": 2, "i32": 4, "i64": 8, "half": 2, "bfloat": 2,
                 "float": 4, "double": 8, "ptr": 8}
_ARRAY = re.compile(r"^\[(\d+) x (.+)\]$")
_NAME = re.compile(r"%([\w.$-]+)")
_INT = re.compile(r"^-?\d+$")
_CASTS = ("sext", "zext", "trunc")


@dataclass(frozen=True)
class Offset:
    """An address's constant byte offset from the thread's own element, its variable index
    terms, and whether an IR ``add`` (counted at the PTX level) supplies the constant."""

    bytes: int = 0
    terms: int = 0
    by_add: bool = False


def type_bytes(ty: str) -> int | None:
    """Bytes of an LLVM type written as ``float`` or ``[64 x [64 x float]]``; None when
    unknown (a struct)."""
    ty = ty.strip()
    m = _ARRAY.match(ty)
    if m:
        inner = type_bytes(m.group(2))
        return None if inner is None else int(m.group(1)) * inner
    return _SCALAR_BYTES.get(ty)


def _element(ty: str) -> str:
    """The element type of an array type (``[64 x float]`` -> ``float``)."""
    m = _ARRAY.match(ty.strip())
    return m.group(2) if m else ty


def _gep_parts(text: str) -> tuple[str, str, list[str]] | None:
    """(source type, base operand, index operands) of a ``getelementptr`` instruction's text."""
    body = text.split(", !")[0]
    body = re.sub(r"^getelementptr(\s+(inbounds|nuw|nusw|inrange\(\S+\)))*\s+", "", body)
    depth, parts, cur = 0, [], ""
    for ch in body:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    parts.append(cur.strip())
    return (parts[0], parts[1], parts[2:]) if len(parts) >= 2 else None


def _index(defs, operand: str, starts: dict[str, int], depth: int = 0) -> Offset:
    """The constant and variable terms of an integer operand (``i64 %iv``, ``i64 -256``):
    through casts and adds of a constant; an induction of ``starts`` counts its start (the
    thread's element is at the thread's index, which starts at 0)."""
    value = operand.split()[-1] if operand.split() else ""
    if _INT.match(value):
        return Offset(int(value), 0)
    ins = defs.get(value.lstrip("%"))
    if ins is None or depth > 16:
        return Offset(0, 1)
    if ins.opcode in _CASTS:
        return _index(defs, ins.text.split(" to ")[0].split(" ", 1)[-1], starts, depth + 1)
    if ins.opcode in ("add", "sub") and ins.text.count(",") >= 1:
        ops = [p.strip() for p in ins.text.split(", !")[0].split(",")[:2]]
        lhs, rhs = ops[0].split()[-1], ops[1].split()[-1]
        if _INT.match(rhs):
            inner = _index(defs, ops[0], starts, depth + 1)
            c = int(rhs) if ins.opcode == "add" else -int(rhs)
            return Offset(inner.bytes + c, inner.terms, True)
        if _INT.match(lhs) and ins.opcode == "add":
            inner = _index(defs, "x " + rhs, starts, depth + 1)
            return Offset(inner.bytes + int(lhs), inner.terms, True)
    if ins.opcode == "phi" and value.lstrip("%") in starts:
        return Offset(starts[value.lstrip("%")], 1)
    return Offset(0, 1)


def pointer_offset(defs, name: str, starts: dict[str, int], depth: int = 0) -> Offset | None:
    """The ``Offset`` of the address ``%name`` (``defs``: SSA name -> its instruction) from its
    array's base, in bytes, through geps of geps; None where a type is unknown."""
    ins = defs.get(name)
    if ins is None or ins.opcode != "getelementptr" or depth > 16:
        return Offset()  # the array itself: a global, an argument, the plain port's asm
    parts = _gep_parts(ins.text)
    if parts is None:
        return None
    ty, base, indices = parts
    m = _NAME.search(base)
    total = pointer_offset(defs, m.group(1), starts, depth + 1) if m else Offset()
    if total is None:
        return None
    c, terms, by_add = total.bytes, total.terms, total.by_add
    for k, idx in enumerate(indices):
        step = type_bytes(ty if k == 0 else _element_at(ty, k))
        if step is None:
            return None
        part = _index(defs, idx, starts)
        c, terms, by_add = c + part.bytes * step, terms + part.terms, by_add or (
            part.by_add and part.bytes != 0)
    return Offset(c, terms, by_add)


def _element_at(ty: str, k: int) -> str:
    """The type the ``k``-th index (k >= 1) of a gep over ``ty`` steps over."""
    for _ in range(k):
        ty = _element(ty)
    return ty


def induction_starts(fn) -> dict[str, int]:
    """Per ``phi`` of ``fn`` with exactly one constant incoming value, that value: the start
    of a loop's induction (``phi i64 [ 1, %pre ], [ %next, %latch ]``)."""
    out: dict[str, int] = {}
    for blk in fn.blocks:
        for ins in blk.instrs:
            if ins.opcode != "phi" or not ins.result:
                continue
            consts = [int(v) for v in re.findall(r"\[\s*(-?\d+)\s*,", ins.text)]
            if len(consts) == 1:
                out[ins.result.lstrip("%")] = consts[0]
    return out


def unfolded_insts(accesses, per_thread) -> float:
    """Eq. (12n): per thread, the index (IADD3) and address (IMAD.WIDE) instructions of the
    accesses below the thread's own element of a 2-D index, which the fold of their array's
    constant offsets leaves out. ``accesses``: (block id, array, ``Offset``) of the code a
    thread runs once; ``per_thread``: block executions per thread."""
    arrays: dict[str, list[tuple[int, Offset]]] = {}
    for block, array, off in accesses:
        arrays.setdefault(array, []).append((block, off))
    indices: dict[int, float] = {}  # per offset below: its index's weight (shared by arrays)
    total = 0.0
    for uses in arrays.values():
        neg = {o.bytes: (b, o) for b, o in uses if o.terms >= 2 and o.bytes < 0}
        if len(neg) != 1:
            continue  # none, or two or more: every access folds (module docstring)
        (b, o), = neg.values()
        n = min(per_thread.get(b, 0.0), 1.0)
        if not o.by_add:
            indices[o.bytes] = max(indices.get(o.bytes, 0.0), n)
        total += n * any(u.bytes == 0 for _, u in uses)  # its own IMAD.WIDE beside the 0's
    return float(total + sum(indices.values()))


def folded_address_insts(uses, per_thread) -> float:
    """Address instructions per thread the PTX-level count has and the SASS folds away:
    of the index instructions of the accesses ``uses`` (``machine_code.AddressUse``: each gep
    once, at its most frequent use), all but one per address base, less those an access
    below the thread's own element of a 2-D index keeps (eq. (12n), ``unfolded_insts``);
    ``per_thread``: block executions per thread."""
    counted: dict[int, float] = {}  # per gep op: its instructions x executions per thread
    weight: dict[tuple, float] = {}  # per address base: its executions per thread
    for u in uses:
        n = per_thread.get(u.block, 0.0)
        for g, c in u.geps:
            counted[g] = max(counted.get(g, 0.0), n * c)
        weight[u.base] = max(weight.get(u.base, 0.0), n)
    # (12n) keeps only what the fold would take: accesses whose base another access shares
    # (a clamped row, eq. (12q), is a base of its own and was never folded)
    shared = Counter(u.base for u in uses)
    kept = unfolded_insts([(u.block, u.base[0], u.offset) for u in uses
                           if u.offset is not None and shared[u.base] > 1], per_thread)
    return float(max(sum(counted.values()) - sum(weight.values()), 0.0) - kept)
