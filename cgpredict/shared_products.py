"""A product two multiply-adds share (eq. (12fm)): clang contracts each use of ``a * b`` into
its own ``llvm.fmuladd`` (the escape loop's ``zr * zr + zi * zi`` and ``zr * zr - zi * zi +
cr``), which the PTX-level count takes for an FFMA each. nvcc's compiler sees the one product
with two uses, computes it once (``FMUL``) and adds it to each addend (``FADD``): one FP32
instruction more than the calls, per group of two or more calls with the same two factors
and no plain multiply of them (which the count has already). Read from the sm_90 SASS of the
blind mandelbrot, both ports: 8 FP32 an iteration (2 FMUL, 5 FADD, 1 FFMA, FSETP) where the
IR has 7.
"""

from __future__ import annotations

from collections.abc import Mapping

from .frontend.tracefile import Trace
from .instrument.irtext import split_operands
from .parallelism import ir_module

#: FP32 instructions a group of multiply-adds sharing a product adds: its FMUL
SHARED_PRODUCT_INSTS = 1


def _factors(text: str) -> tuple[str, str] | None:
    """The two factors (operand names, sorted) of an ``llvm.fmuladd``/``llvm.fma`` call or an
    ``fmul`` instruction text; None for another instruction or constant factors."""
    if "@llvm.fmuladd." in text or "@llvm.fma." in text:
        args = split_operands(text.split("(", 1)[1].rsplit(")", 1)[0])
    elif text.startswith("fmul "):
        args = split_operands(text.split(" ", 2)[-1].split(", !")[0])
    else:
        return None
    names = [a.split()[-1] for a in args[:2]]
    return tuple(sorted(names)) if all(n.startswith("%") for n in names) else None


def shared_products(trace: Trace, region: int) -> tuple[tuple[int, ...], ...]:
    """Per product that two or more multiply-adds of one function of ``region`` share (and
    no ``fmul`` computes): the ids of the blocks holding those calls, eq. (12fm)."""
    h = trace.header
    ids = {(b.function, b.label): b.id for b in h.blocks if b.region == region}
    out = []
    for name, fn in ir_module(h.ir_text).functions.items():
        calls: dict[tuple, list[int]] = {}
        muls: set[tuple] = set()
        for blk in fn.blocks:
            bid = ids.get((name, blk.label))
            for ins in blk.instrs if bid is not None else ():
                pair = _factors(ins.text)
                if pair is None:
                    continue
                if ins.opcode == "fmul":
                    muls.add(pair)
                else:
                    calls.setdefault(pair, []).append(bid)
        out += [tuple(sorted(set(b))) for p, b in calls.items() if len(b) >= 2 and p not in muls]
    return tuple(out)


def shared_product_insts(groups: tuple[tuple[int, ...], ...],
                         per_thread: Mapping[int, float]) -> float:
    """FMULs per thread of eq. (12fm): one per group each time all of its blocks run (the
    least executions of its blocks: an iteration that runs every use)."""
    return float(sum(SHARED_PRODUCT_INSTS * min(per_thread.get(b, 0.0) for b in g)
                     for g in groups))
