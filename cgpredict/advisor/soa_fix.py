"""The AoS->SoA fix (issue #26): an array of structures whose fields a warp reads with the
struct's stride is stored as one array per field, re-predicted from the trace with every
access of it remapped to that layout (soa.py), applied everywhere the array is used."""

from __future__ import annotations

import dataclasses
import re

from ..memory.shared import array_name
from ..prediction import Report, RunOptions
from ..prepared import Prepared
from ..soa import struct_arrays
from .advice import Fix, explained, speedup_of
from .legality import layout_verdict

_FIELD = re.compile(r"^([\w.$]+)((?:\[[^\]]*\])+)\.(\w+)$")


def soa_text(text: str) -> str:
    """``q[i].x`` -> ``q_x[i]``: the same access with one array per field."""
    m = _FIELD.match(text)
    return f"{m.group(1)}_{m.group(3)}{m.group(2)}" if m else text


def soa_candidates(prep: Prepared, base: Report) -> dict[str, list[str]]:
    """Per array of flat structs with an access that is not coalesced: the access texts seen
    (kernel order, no repeats)."""
    structs = struct_arrays(prep.trace.header.ir_text)
    found: dict[str, list[str]] = {}
    for k in base.kernels:
        for m in k.mem:
            arr = array_name(m.text)
            if arr in structs and m.pattern != "coalesced":
                found.setdefault(arr, [])
                if m.text not in found[arr]:
                    found[arr].append(m.text)
    return found


def _code(arr: str, texts: list[str], structs) -> str:
    """The change in CUDA: the fields as arrays of their own, each access rewritten."""
    s = structs[arr]
    fields = sorted({m.group(3) for t in texts if (m := _FIELD.match(t))})
    params = ", ".join(f"{s.c_type} *__restrict__ {arr}_{f}" for f in fields)
    return "\n".join(
        [f"// struct {{...}} {arr}[n] ({s.size} bytes an element) becomes one array of n "
         f"per field",
         f"__global__ void kernel({params}, ...)"]
        + [f"//   {t}  ->  {soa_text(t)}" for t in texts])


def soa_fixes(prep: Prepared, opts: RunOptions, base: Report, notes: list[str]) -> list[Fix]:
    """Each array of structs stored as a structure of arrays, re-predicted."""
    from .fixes import _try_analyze  # the one re-analysis helper of the advisor

    fixes = []
    structs = struct_arrays(prep.trace.header.ir_text)
    for arr, texts in soa_candidates(prep, base).items():
        v = layout_verdict(prep, base, arr, soa_text, permutes=False,
                           what=f"storing {arr} as a structure of arrays")
        if not v.offered:
            notes.append(v.reason)
            continue
        rep = _try_analyze(prep, dataclasses.replace(opts, soa=(arr,)),
                           f"storing {arr} as a structure of arrays", notes)
        if rep is None:
            continue
        ev = tuple(f"{m.text} at {m.location} in {k.name}: {m.pattern} {m.kind}, "
                   f"{m.l2_trans_per_warp:.0f} L2 transactions per warp (a {structs[arr].size}-"
                   f"byte stride across the warp)"
                   for k in base.kernels for m in k.mem if m.text in texts)
        fixes.append(explained(Fix(
            "aos-to-soa",
            f"store {arr} as a structure of arrays",
            f"keep each field of {arr} in an array of its own "
            f"({', '.join(f'{t} -> {soa_text(t)}' for t in texts)}), so that consecutive "
            f"threads read consecutive addresses; {v.reason}",
            ev,
            rep.total_ms,
            speedup_of(base.total_ms, rep.total_ms),
            code=_code(arr, texts, structs),
        ), base, rep))
    return fixes
