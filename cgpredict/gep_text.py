"""The index operands of an LLVM ``getelementptr`` instruction's text and the types they step
over (``A[k][j]``: a row, ``A[i][k]``: an element): what runtime_trips reads an access's
stride from."""

from __future__ import annotations

_GEP_FLAGS = frozenset(("getelementptr", "inbounds", "nuw", "nusw"))


def split_top(text: str) -> list[str]:
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
    parts = split_top(text.split("=", 1)[-1].split(", !")[0])
    ty = " ".join(w for w in parts[0].split() if w not in _GEP_FLAGS)
    out = []
    for k, idx in enumerate(parts[2:]):
        if k:
            ty = _element(ty)
        out.append((idx.split()[-1], ty))
    return out
