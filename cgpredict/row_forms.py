"""A 2-D thread's distinct row forms: accesses off rows whose indices are no constant offsets
of each other share no address (eq. (12q), docs/models.md).

The IR of a 2-D thread forms its row pointers once per row, in the row block of the outer
mapped loop (``A[i]``, ``A[i - 1]``: one row index a thread in the SASS, ``sass_entry``), and
the thread's body indexes them by its column. Rows whose indices differ by a constant
(a stencil's ``i - 1``, ``i``, ``i + 1``; ``gep i8, %row, 128``) are one linear form, and the
accesses' constant offsets fold into their loads. Rows whose indices are different values do
not: the blind bilinear reads ``in[y0][x0]``, ``in[y0][x1]``, ``in[y1][x0]`` and ``in[y1][x1]``
with ``y0 = max(fy, 0)`` and ``y1 = min(fy + 1, h - 1)`` (clamps, no constant offset), and its
sm_90 SASS forms each address itself: a ``LEA`` (row * W + column) and an ``IMAD.WIDE`` per
access, 5 + 5 with ``out[y][x]``. So the row an access's pointer comes from is part of its
address base (``row_key``: the roots of the row index, through casts, additions of a
constant and constant byte offsets), and every distinct pair (row, column roots) past the
first is one more index instruction a thread (``row_forms``)::

    row_forms = max(distinct (row key, column roots) of the body's row accesses - 1, 0) (12q)
"""

from __future__ import annotations

import re

_NAME = re.compile(r"%([\w.$-]+)")
_FLAGS = frozenset(("getelementptr", "inbounds", "nuw", "nusw"))
_CASTS = frozenset(("sext", "zext", "trunc"))


def gep_parts(ins) -> tuple[str, tuple[str, ...]]:
    """(pointer operand's name, '' for a global or constant; the names of its variable
    indices) of a ``getelementptr`` instruction."""
    ops = [p.strip() for p in ins.text.split(", !")[0].split(",")]
    ptr = _NAME.search(ops[1]) if len(ops) > 1 else None
    idx = tuple(m.group(1) for o in ops[2:] if (m := _NAME.search(o)))
    return (ptr.group(1) if ptr else ""), idx


def _root(defs: dict, name: str) -> str:
    """The value ``name`` offsets by a constant: through casts and adds of one value."""
    for _ in range(32):
        ins = defs.get(name)
        if ins is None:
            return name
        names = _NAME.findall(ins.text.split(", !")[0])
        if ins.opcode in _CASTS or (ins.opcode in ("add", "sub", "or") and len(names) == 1):
            name = names[0] if names else name
            continue
        return name
    return name


def row_key(defs: dict, ptr: str, inside: set[str]) -> tuple[str, ...]:
    """The row a pointer defined outside the body (``inside``: the body's value names)
    addresses: the roots of its row index, through constant byte offsets; () for none (an
    array parameter, a value the body computes)."""
    for _ in range(32):
        ins = defs.get(ptr)
        if ins is None or ptr in inside or ins.opcode != "getelementptr":
            return ()
        base, idx = gep_parts(ins)
        if idx:
            return tuple(sorted({_root(defs, i) for i in idx}))
        ptr = base  # a constant offset of another row
    return ()


def body_rows(fn, labels: set[str]) -> dict[str, tuple]:
    """Per ``getelementptr`` of the blocks ``labels`` (its result name): (row key of its
    pointer, the roots of its own variable indices) when its pointer is a row formed outside
    them (eq. (12q)); others are not listed."""
    defs = {ins.result.lstrip("%"): ins for blk in fn.blocks for ins in blk.instrs if ins.result}
    body = [ins for blk in fn.blocks if blk.label in labels for ins in blk.instrs]
    inside = {ins.result.lstrip("%") for ins in body if ins.result}
    out = {}
    for ins in body:
        if ins.opcode == "getelementptr" and ins.result:
            ptr, idx = gep_parts(ins)
            key = row_key(defs, ptr, inside)
            if key:
                out[ins.result.lstrip("%")] = (key, tuple(sorted({_root(defs, i) for i in idx})))
    return out


def row_forms(fn, labels: set[str]) -> dict[str, int]:
    """Per block label of ``labels`` (a 2-D thread's inner mapped blocks), the distinct row
    forms (12q) its loads and stores use first, past the thread's first one."""
    rows = body_rows(fn, labels)
    seen: list[tuple] = []
    out: dict[str, int] = {}
    for blk in fn.blocks:
        if blk.label not in labels:
            continue
        for ins in blk.instrs:
            names = _NAME.findall(ins.text.split(", !")[0])
            form = rows.get(names[-1]) if ins.opcode in ("load", "store") and names else None
            if form is not None and form not in seen:
                seen.append(form)
                if len(seen) > 1:
                    out[blk.label] = out.get(blk.label, 0) + 1
    return out
