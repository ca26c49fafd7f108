"""Whether a fix keeps what the program computes (issue #26): a layout change of an array is
offered only when it is applied everywhere the array is used (every kernel that reads or
writes it, re-predicted with the new layout, and the host code that fills or reads it, said
so), and never when it changes the result: on a kernel that only moves data, the layout of
its arrays is the computation (storing a transpose's output transposed makes it a copy)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..frontend.summary import op_counts
from ..memory.shared import array_name
from ..prediction import Report
from ..prepared import Prepared

#: Operations that compute on data (not on addresses): floating-point arithmetic, comparisons
#: and calls on floating-point values (expf, fmaxf, ...).
_FLOAT_TYPES = ("float", "double", "half")
_FLOAT_OPS = ("fadd", "fsub", "fmul", "fdiv", "frem", "fneg", "fcmp")


@dataclass(frozen=True)
class LayoutVerdict:
    """Whether storing ``array`` in another layout may be offered, and where it must apply."""

    array: str
    offered: bool
    reason: str  # why not, when not offered; else where the change applies
    kernels: tuple[str, ...] = ()  # every kernel that reads or writes the array
    written: bool = False  # some kernel writes it (the host or a later kernel reads it)


def subscripts(text: str) -> tuple[str, ...]:
    """``B[j][i]`` -> ``("j", "i")``: the subscripts of an access as written."""
    return tuple(s.strip() for s in re.findall(r"\[([^\]]*)\]", text))


def moves_data_only(prep: Prepared, kernel: str) -> bool:
    """Whether a kernel computes nothing on its data (no floating-point operation, no call on
    floating-point values): its stores only place loaded values elsewhere."""
    region = prep.trace.header.region(kernel).index
    for (opcode, ty, _detail), n in op_counts(prep.trace, region).items():
        if n and (opcode in _FLOAT_OPS or (opcode == "call" and ty in _FLOAT_TYPES)):
            return False
    return True


def makes_copy(texts: list[str], array: str, swapped: str) -> bool:
    """Whether exchanging the last two subscripts of ``array`` (``swapped``: one access after
    the change) gives it the subscripts of another array's access of the same kernel: a
    kernel that moves data between them then moves each element to the same index (a copy)."""
    new = subscripts(swapped)
    return any(array_name(t) != array and subscripts(t) == new for t in texts)


def layout_verdict(
    prep: Prepared, base: Report, array: str, swap, permutes: bool = True, what: str = ""
) -> LayoutVerdict:
    """Whether storing ``array`` in another layout (``swap``: an access text -> the same access
    after the change; ``permutes``: the change moves elements to other indices, as a
    transposition does, not only to other addresses, as AoS->SoA does) keeps the program's
    result, and where it applies."""
    what = what or f"storing {array} transposed"
    users, written = [], False
    for k in base.kernels:
        texts = [m.text for m in k.mem]
        mine = [m for m in k.mem if array_name(m.text) == array]
        if not mine:
            continue
        users.append(k.name)
        written = written or any(m.kind == "store" for m in mine)
        if permutes and moves_data_only(prep, k.name) and any(makes_copy(texts, array, swap(m.text))
                                                 for m in mine):
            return LayoutVerdict(
                array, False,
                f"{what} is not offered: {k.name} only moves data, and "
                f"with {array} transposed it would copy instead of computing what it does "
                f"now (the layout is the computation)", tuple(users), written)
    host = ("the host code that reads it after the kernels" if written
            else "the host code that fills it")
    return LayoutVerdict(
        array, True,
        f"applied everywhere {array} is used: in {', '.join(users)} (re-predicted with the new "
        f"layout) and in {host}, which must use the new layout too",
        tuple(users), written)


def copy_allowed(verdict: LayoutVerdict) -> bool:
    """A transposed copy made once is valid only for an array no kernel writes (else the copy
    would be stale after the write)."""
    return verdict.offered and not verdict.written
