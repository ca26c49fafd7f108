"""Execution pipes: the arithmetic the GPU runs at less than its dispatch rate.

An SM dispatches ``1 / inst_cycles_per_warp_inst`` warp instructions a clock (SPEC eq. (12)),
but each instruction also needs its pipe: the CUDA C Programming Guide's table "Throughput of
Native Arithmetic Instructions" gives, per compute capability, the operations (thread lanes)
per clock per SM of each class. A warp instruction of class c occupies its pipe for
``warp_size / rate_c`` clocks, so a warp's issue time is (docs/models.md, eq. (12p))::

    issue_cycles = max(inst_cycles_per_warp_inst x total_insts,
                       max over c of insts_c x warp_size / rate_c)

On the H100 an FP64 instruction costs 0.5 clocks of an SM (64 a clock), twice an FP32 one; on
the GTX 980 8 clocks (4 a clock); an SFU instruction (MUFU: reciprocal, rsqrt, exp2, log2, sin,
cos) 1 to 2 clocks everywhere. Instructions of no listed class (moves, branches, memory) need
only the dispatch. A device file without a [pipes] table has no pipe limit (only dispatch).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

__all__ = ["PIPE_CLASSES", "PipeCounts", "PipeRates", "pipe_cycles"]

#: the instruction classes of the guide's table that the model counts, in a fixed order:
#: FP32 add/mul/FMA; FP64 add/mul/FMA; SFU (MUFU); 32-bit integer add/subtract and bitwise
#: AND/OR/XOR (the same rate on every listed GPU); integer multiply and multiply-add; shift;
#: compare/min/max (integer or float compare and select); type conversions of 32-bit types;
#: type conversions from or to 64-bit types
PIPE_CLASSES = (
    "fp32", "fp64", "sfu", "int_add", "int_mul", "int_shift", "int_cmp", "cvt", "cvt64",
)  # fmt: skip


@dataclass(frozen=True)
class PipeRates:
    """Operations per clock per SM of each pipe class (a device file's [pipes] table); None:
    not given, that class has no limit of its own beyond the dispatch."""

    fp32: float | None = None
    fp64: float | None = None
    sfu: float | None = None
    int_add: float | None = None
    int_mul: float | None = None
    int_shift: float | None = None
    int_cmp: float | None = None
    cvt: float | None = None
    cvt64: float | None = None


@dataclass(frozen=True)
class PipeCounts:
    """Instructions per thread of each pipe class (what ``PipeRates`` prices); a thread's
    instructions of no class (moves, branches, memory) are not here."""

    fp32: float = 0.0
    fp64: float = 0.0
    sfu: float = 0.0
    int_add: float = 0.0
    int_mul: float = 0.0
    int_shift: float = 0.0
    int_cmp: float = 0.0
    cvt: float = 0.0
    cvt64: float = 0.0

    def plus(self, other: PipeCounts, times: float = 1.0) -> PipeCounts:
        """These counts plus ``times`` x ``other``."""
        return PipeCounts(**{
            f.name: getattr(self, f.name) + times * getattr(other, f.name) for f in fields(self)
        })  # fmt: skip

    def scaled(self, factor: float) -> PipeCounts:
        """Every class times ``factor``."""
        return PipeCounts().plus(self, factor)

    @property
    def integer(self) -> float:
        """The integer classes together (add, multiply, shift, compare)."""
        return self.int_add + self.int_mul + self.int_shift + self.int_cmp

    def less_integer(self, folded: float, of: float) -> PipeCounts:
        """These counts with ``folded`` of ``of`` integer and branch instructions (those
        nvcc's unrolling takes away, compute.integer_insts) taken from the integer classes
        in proportion: the same share of each, branches (no class) included in ``of``."""
        if folded <= 0 or of <= 0 or self.integer <= 0:
            return self
        keep = max(of - folded, 0.0) / of
        return PipeCounts(**{
            f.name: getattr(self, f.name) * (keep if f.name.startswith("int_") else 1.0)
            for f in fields(self)
        })  # fmt: skip


_PIPE_CLASSES: tuple[str, ...] = tuple(f.name for f in fields(PipeCounts))


def pipe_cycles(counts: PipeCounts, rates: PipeRates | None,
                warp_size: int) -> tuple[float, str]:
    """(cycles, class) of the busiest pipe for one warp's ``counts`` (eq. (12p)'s second
    term): insts_c x warp_size / rate_c, largest over the classes with a rate; (0, "")
    without rates or counts."""
    if rates is None:
        return 0.0, ""
    best, name = 0.0, ""
    for f in _PIPE_CLASSES:  # fields(PipeCounts)' names, found once
        rate, n = getattr(rates, f), getattr(counts, f)
        if rate and n > 0:
            cycles = n * warp_size / rate
            if cycles > best and math.isfinite(cycles):
                best, name = cycles, f
    return best, name
