"""Arrays of a kernel for the FPGA estimate: their sizes at the work size (from the source's
declarations or the IR globals) and their BRAM cost when split in banks."""

from __future__ import annotations

import ast
import math
import re

import numpy as np

from ..instrument.memtrace import InstrumentError, type_bytes
from .device import FPGADevice

# ---- kernel ---------------------------------------------------------------------------------

_GLOBAL = re.compile(r"^@([\w.$-]+) = .*?(?:global|constant) ((?:\[\d+ x )+)(\w+)\]")


_DECL = re.compile(r"\b([A-Za-z_]\w*)\s*((?:\[[^\]\[;{}]+\]\s*)+)(?=[;=,)])")


def _size_expr(text: str, sizes: dict[str, int]) -> int | None:
    """An array dimension of the source (``NI``, ``M + 16``, ``4 * N``) at `sizes`, or None
    when it names something else or is not integer arithmetic."""
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError:
        return None

    def ev(n: ast.AST) -> int:
        if isinstance(n, ast.Constant) and isinstance(n.value, int):
            return n.value
        if isinstance(n, ast.Name) and n.id in sizes:
            return sizes[n.id]
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        if isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            a, b = ev(n.left), ev(n.right)
            if isinstance(n.op, ast.Add):
                return a + b
            if isinstance(n.op, ast.Sub):
                return a - b
            if isinstance(n.op, ast.Mult):
                return a * b
            return a // b  # C integer division
        raise ValueError(text)

    try:
        return ev(tree)
    except (ValueError, ZeroDivisionError):
        return None


def _declared_dims(source_text: str) -> dict[str, list[str]]:
    """Dimension expressions of the arrays the source declares (``float A[NI][NJ + 1];``)."""
    out: dict[str, list[str]] = {}
    for m in _DECL.finditer(source_text):
        out.setdefault(m.group(1), re.findall(r"\[([^\]]+)\]", m.group(2)))
    return out


def array_bytes(
    ir_text: str, tsz: dict[str, int], wsz: dict[str, int], source_text: str = ""
) -> dict[str, int]:
    """Bytes of every global array at the work size. The dimensions come from the source's
    declaration evaluated at the work sizes when it evaluates, at the trace sizes, to the IR's
    dimensions; otherwise each IR dimension equal to a traced size is scaled to its work
    value (ambiguous when two macros share a trace value)."""
    declared = _declared_dims(source_text)
    out = {}
    for line in ir_text.split("\n"):
        m = _GLOBAL.match(line)
        if not m:
            continue
        dims = [int(x) for x in re.findall(r"\[(\d+) x ", m.group(2))]
        exprs = declared.get(m.group(1).split(".")[0], [])
        traced = [_size_expr(e, tsz) for e in exprs]
        if exprs and traced == dims:
            work = [_size_expr(e, {**tsz, **wsz}) for e in exprs]
            scaled = math.prod(work) if all(w is not None and w > 0 for w in work) else 0
        else:
            scaled = 1
            for d in dims:
                macro = next((k for k, v in tsz.items() if v == d), None)
                scaled *= wsz.get(macro, d) if macro else d
        try:
            out[m.group(1)] = scaled * type_bytes(m.group(3))
        except InstrumentError:  # an element type we do not size: fall back to the trace
            pass
    return out


def bram_cost(dev: FPGADevice, nbytes: int, p: int) -> tuple[int, int]:
    """(BRAM36, LUT) of an array of nbytes split in p banks."""
    bank = math.ceil(nbytes / p)
    if bank <= dev.lutram_max_bytes:
        return 0, p * math.ceil(bank * 8 / 64)
    return p * math.ceil(bank / dev.bram36_bytes), 0



def touched_bytes(trace, launch, ids, launch_ratio, counts, mems) -> int:
    """Distinct bytes the instructions ``ids`` touch in one launch (an array reached through
    a pointer, as a swapped Jacobi grid), scaled to the work size by the growth of their
    accesses per launch: ``counts`` hold every work-size launch, the trace's counts every
    traced launch, so their ratio carries ``launch_ratio`` (work over traced launches), which
    sizes no array."""
    ev = np.asarray(trace.launch_events(launch))
    tags = ev >> np.uint64(48)
    sel = np.isin(tags, np.array(ids, dtype=np.uint64))
    n = len(np.unique(ev[sel] & np.uint64((1 << 48) - 1)))
    trace_acc = sum(float(trace.bb_counts[:, m.block].sum()) for m in mems if m.id in ids)
    work_acc = sum(counts.get(m.block, 0.0) for m in mems if m.id in ids)
    elem = max((m.bytes for m in mems if m.id in ids), default=4)
    per_launch = work_acc / trace_acc / max(launch_ratio, 1e-12) if trace_acc else 1.0
    return int(n * elem * max(per_launch, 1.0))


