"""Arrays of structures and their structure-of-arrays layout (the advisor's AoS->SoA fix,
issue #26): which globals are 1-D arrays of flat structs, and the addresses the same fields
would have with one array per field.

In the SoA layout of ``struct s a[n]`` the field at byte offset ``off`` of every element lives
in an array of its own starting at ``base + off * n`` (the fields' arrays one after another,
in the struct's order: each array's size is ``n`` times its field's), so element ``i``'s field
moves from ``base + i * size + off`` to ``base + off * n + i * field bytes``."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .instrument.irtext import ELEM_BYTES
from .warps import WarpTrace

__all__ = ["StructArray", "soa_addresses", "struct_arrays"]

_C_TYPES = {"float": "float", "double": "double", "i32": "int", "i64": "long long",
            "i16": "short", "i8": "char"}
_STRUCT = re.compile(r"^(%struct\.[\w.$]+) = type \{ ([^{}]*) \}")
_GLOBAL = re.compile(r"^@([\w.$]+) = .*?global \[(\d+) x (%struct\.[\w.$]+)\]")


@dataclass(frozen=True)
class StructArray:
    """A global ``struct s a[count]`` of scalar fields: its element size and field offsets."""

    name: str
    count: int
    size: int  # bytes per element, padding included
    offsets: tuple[int, ...]  # byte offset of each field
    types: tuple[str, ...] = ()  # each field's C type

    @property
    def c_type(self) -> str:
        """The fields' common C type ("T" when they differ)."""
        return self.types[0] if len(set(self.types)) == 1 else "T"


def _layout(fields: list[str]) -> tuple[int, tuple[int, ...]] | None:
    """(size, offsets) of a struct of scalar fields, C alignment (each field aligned to its
    size, the struct to its largest field); None when a field is not a scalar."""
    if not fields or any(f not in ELEM_BYTES for f in fields):
        return None
    offsets, at = [], 0
    for f in fields:
        b = ELEM_BYTES[f]
        at = -(-at // b) * b
        offsets.append(at)
        at += b
    align = max(ELEM_BYTES[f] for f in fields)
    return -(-at // align) * align, tuple(offsets)


def struct_arrays(ir_text: str) -> dict[str, StructArray]:
    """Every global 1-D array of flat structs in a module, from its IR types."""
    types: dict[str, tuple[int, tuple[int, ...], tuple[str, ...]]] = {}
    out: dict[str, StructArray] = {}
    for line in ir_text.split("\n"):
        m = _STRUCT.match(line)
        if m:
            fields = [f.strip() for f in m.group(2).split(",")]
            lay = _layout(fields)
            if lay is not None:
                types[m.group(1)] = (*lay, tuple(_C_TYPES[f] for f in fields))
        g = _GLOBAL.match(line)
        if g and g.group(3) in types:
            size, offsets, cty = types[g.group(3)]
            out[g.group(1)] = StructArray(name=g.group(1), count=int(g.group(2)), size=size,
                                          offsets=offsets, types=cty)
    return out


def soa_addresses(wt: WarpTrace, moves: list[tuple[list[int], int, StructArray]],
                  access_bytes: np.ndarray) -> np.ndarray:
    """A copy of ``wt``'s event addresses with the accesses of each (static instructions,
    base, struct array) in ``moves`` moved to that array's SoA layout (module docstring)."""
    out = wt.addr.copy()
    if not len(out) or not moves:
        return out
    counts = np.diff(np.append(wt.inst_start, len(out)))
    sid = np.repeat(wt.inst_sid, counts)  # the static instruction of every event
    for sids, base, arr in moves:
        sel = np.isin(sid, np.asarray(sids, np.int64))
        d = out[sel].astype(np.int64) - base
        i, off = d // arr.size, d % arr.size
        out[sel] = (base + off * arr.count + i * access_bytes[sid[sel]]).astype(np.uint64)
    return out
