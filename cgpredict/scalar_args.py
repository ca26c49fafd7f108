"""The kernel arguments a port passes for the C's file-scope scalar variables, and their
constant-bank loads in the SASS (issue 24, SPEC §2.4).

A C kernel of the corpus reads its coefficients from file-scope variables
(``static float alpha = 1.5f;``: GEMM, SYRK, SYR2K, GESUMMV, GEMVER). The program never
writes them, so clang -O1 folds each value into the instructions that use it (``fmul float
%x, 1.5``) and drops the variable: the traced IR and the PTX-level count have an immediate
operand. A CUDA port cannot read a host variable: it passes each as a kernel argument
(PolyBench/GPU's ``gemm_kernel(..., DATA_TYPE alpha, DATA_TYPE beta, ...)``, and so do the
ports, ``validation/cuda``), which lives in the constant bank, and ptxas loads it into a
register once per thread (``ULDC UR5, c[0x0][0x21c]``, class other), eq. (12s):

    scalar_arg_insts = SCALAR_ARG_LOAD_INSTS x (folded file-scope scalars the kernel names)

Read from the sm_90 SASS of the ports without unrolling (``validation/sass_check.py``):
GEMM's alpha and beta 2 ULDC, GESUMMV's 2, SYRK transposed's 2, GEMVER k2's beta and k3's
alpha 1 each. A constant (``#define``, ``const float``) stays an immediate in a port, as in
the user ports (``validation/cuda/user``): only a variable of a basic type, not ``const``,
counts. GEMM tiled loads its two adjacent, 8-byte aligned arguments as one ``ULDC.64``: one
instruction for two there (the parameter layout is the port's; not modelled).

The scalars are found in the traced IR's debug information (a ``DIGlobalVariable`` of a
``DIBasicType`` that the module no longer defines: folded) and the kernel's use of one in
its source lines (``RegionInfo.line`` to ``end_line``, comments left out): the IR keeps no
use of a folded value.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .frontend.tracefile import Trace

#: constant-bank loads per scalar kernel argument a thread reads (ULDC/LDC, class other)
SCALAR_ARG_LOAD_INSTS = 1

_GLOBAL_VAR = re.compile(r'^!\d+ = distinct !DIGlobalVariable\(name: "(\w+)".*?type: !(\d+)',
                         re.M)
_BASIC_TYPE = re.compile(r"^!(\d+) = !DIBasicType\(", re.M)
_DEFINED = re.compile(r"^@([\w.$]+) = ", re.M)
_COMMENT = re.compile(r"//.*?$|/\*.*?\*/", re.M | re.S)


@lru_cache(maxsize=8)  # one IR text per trace, read by every analysis of its regions
def folded_scalars(ir_text: str) -> frozenset[str]:
    """The file-scope scalar variables of the module's source that clang folded away: each
    ``DIGlobalVariable`` whose type is a ``DIBasicType`` (not const, not an array) and
    which the IR no longer defines as a global."""
    basic = set(_BASIC_TYPE.findall(ir_text))
    defined = set(_DEFINED.findall(ir_text))
    return frozenset(
        name for name, ty in _GLOBAL_VAR.findall(ir_text) if ty in basic and name not in defined
    )


def named_in(source: str, first: int, last: int, names: frozenset[str]) -> frozenset[str]:
    """Those of ``names`` that lines ``first`` to ``last`` (1-based, inclusive) of ``source``
    name as a word, outside comments."""
    text = _COMMENT.sub(" ", "\n".join(source.split("\n")[first - 1 : last]))
    words = set(re.findall(r"[A-Za-z_]\w*", text))
    return frozenset(n for n in names if n in words)


def scalar_args(trace: Trace, region: int) -> int:
    """Kernel arguments a port of ``region`` passes for the C's folded file-scope scalars
    that the kernel's source lines read."""
    h = trace.header
    r = h.region(region)
    scalars = folded_scalars(h.ir_text)
    return len(named_in(h.source_text, r.line, r.end_line, scalars)) if scalars else 0


def scalar_arg_insts(args: int) -> int:
    """Constant-bank loads per thread of ``args`` scalar kernel arguments, eq. (12s)."""
    return SCALAR_ARG_LOAD_INSTS * args
