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

Where the folded value is the identity of the multiplication that uses it (``c1 = 1.0f;``,
Deriche's ``imgOut[i][j] = c1 * (Y1[i][j] + Y2[i][j])``), clang folds the multiplication
away with it: the IR has no ``fmul``, while the port multiplies by its kernel argument (an
``FMUL R, R, UR`` per use: the sm_90 SASS of deriche_hsum and deriche_vsum, both ports, has
2 FP32 instructions a thread where the IR has 1), eq. (12u):

    kept_factor_insts = KEPT_FACTOR_INSTS x (uses of a unit scalar as a factor, per execution)

A *unit* scalar is a folded one that every assignment of the source sets to the literal 1
(``unit_scalars``; a chained ``c1 = c2 = 1;`` counts for both); a use as a factor is the
name next to a ``*`` on a line of the kernel (``factor_uses``); each use counts once per
execution of the IR block that holds its line (``machine_code.kept_factors``). A factor
that is not 1 stays in the IR as an immediate (``fmul float %x, 1.5``), counted already.

The scalars are found in the traced IR's debug information (a ``DIGlobalVariable`` of a
``DIBasicType`` that the module no longer defines: folded) and the kernel's use of one in
its source lines (``RegionInfo.line`` to ``end_line``, or the body of a ``--function``
kernel's function; comments left out): the IR keeps no use of a folded value.

The same port reads the same argument when clang does not fold the variable: a kernel
given as a function (``--function``) of a program whose ``main`` writes the variable
(Deriche's coefficients) keeps the global, and the function loads it once, before its
thread loop (LICM; ``hoisted_scalars``). Those loads lie outside the loops mapped to
threads, so no thread is given them (the warps' "unmapped events"): each such variable
is a kernel argument too, counted once, as the folded one of the pragma form (issue 24:
the two forms of Deriche differed by the four coefficients of each pass, -10 %). A
variable the kernel stores, or loads inside its loops (each thread's own load, traced),
is no argument.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .frontend.ctext import function_body
from .frontend.tracefile import Trace
from .frontend.tracefile_format import TraceHeader

#: constant-bank loads per scalar kernel argument a thread reads (ULDC/LDC, class other)
SCALAR_ARG_LOAD_INSTS = 1
#: FP32 instructions per use of a unit scalar as a factor (FMUL by the kernel argument)
KEPT_FACTOR_INSTS = 1

_LITERAL = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?[fF]?")
_CHAIN = re.compile(r"^(?:[A-Za-z_]\w*\s*=(?!=)\s*)+")

_GLOBAL_VAR = re.compile(r'^!\d+ = distinct !DIGlobalVariable\(name: "(\w+)".*?type: !(\d+)',
                         re.M)
_BASIC_TYPE = re.compile(r"^!(\d+) = !DIBasicType\(", re.M)
_DEFINED = re.compile(r"^@([\w.$]+) = ", re.M)
_COMMENT = re.compile(r"//.*?$|/\*.*?\*/", re.M | re.S)


@lru_cache(maxsize=8)  # one IR text per trace, read by every analysis of its regions
def file_scope_scalars(ir_text: str) -> tuple[frozenset[str], frozenset[str]]:
    """(folded, defined): the file-scope scalar variables of the module's source, each
    ``DIGlobalVariable`` whose type is a ``DIBasicType`` (not const, not an array), split
    into those the IR no longer defines as a global (clang folded them) and the others."""
    basic = set(_BASIC_TYPE.findall(ir_text))
    defined = set(_DEFINED.findall(ir_text))
    scalars = {name for name, ty in _GLOBAL_VAR.findall(ir_text) if ty in basic}
    return frozenset(scalars - defined), frozenset(scalars & defined)


def folded_scalars(ir_text: str) -> frozenset[str]:
    """The file-scope scalar variables of the module's source that clang folded away."""
    return file_scope_scalars(ir_text)[0]


def hoisted_scalars(header: TraceHeader, region: int) -> frozenset[str]:
    """The defined file-scope scalars that ``region`` reads only before its loops (a load
    the compiler hoisted out of the thread loop: one value for every thread) and never
    stores; none for a kernel without loops (its single thread's loads are its own)."""
    scalars = file_scope_scalars(header.ir_text)[1]
    in_loops = {b for lp in header.loops if lp.region == region for b in lp.blocks}
    if not scalars or not in_loops:
        return frozenset()
    outside, per_thread = set(), set()
    for m in header.mem:
        if m.region == region and m.base in scalars:
            bucket = per_thread if m.kind != "load" or m.block in in_loops else outside
            bucket.add(m.base)
    return frozenset(outside - per_thread)


def kernel_text(header: TraceHeader, region: int) -> str:
    """The source text of ``region``: its lines, or the body of its function for a kernel
    given by ``--function`` (no lines of its own)."""
    r = header.region(region)
    if r.line:
        return "\n".join(header.source_text.split("\n")[r.line - 1 : r.end_line])
    body = function_body(header.source_text, r.function)
    return header.source_text[body[0] : body[1]] if body else ""


def named_in(source: str, first: int, last: int, names: frozenset[str]) -> frozenset[str]:
    """Those of ``names`` that lines ``first`` to ``last`` (1-based, inclusive) of ``source``
    name as a word, outside comments."""
    return named_in_text("\n".join(source.split("\n")[first - 1 : last]), names)


def named_in_text(text: str, names: frozenset[str]) -> frozenset[str]:
    """Those of ``names`` that ``text`` names as a word, outside comments."""
    words = set(re.findall(r"[A-Za-z_]\w*", _COMMENT.sub(" ", text)))
    return frozenset(n for n in names if n in words)


def scalar_args(trace: Trace, region: int) -> int:
    """Kernel arguments a port of ``region`` passes for the C's file-scope scalars that the
    kernel reads once for all its threads: the folded ones its source text names and the
    defined ones it loads only before its loops (``hoisted_scalars``)."""
    h = trace.header
    folded = folded_scalars(h.ir_text)
    named = named_in_text(kernel_text(h, region), folded) if folded else frozenset()
    return len(named | hoisted_scalars(h, region))


def scalar_arg_insts(args: int) -> int:
    """Constant-bank loads per thread of ``args`` scalar kernel arguments, eq. (12s)."""
    return SCALAR_ARG_LOAD_INSTS * args


def unit_scalars(source: str, names: frozenset[str]) -> frozenset[str]:
    """Those of ``names`` that every assignment in ``source`` (outside comments, at least
    one; an initializer counts, a chain ``a = b = 1`` gives each the last value) sets to
    the literal 1."""
    text = _COMMENT.sub(" ", source)
    out = set()
    for n in names:
        rhs = [_CHAIN.sub("", r).strip()
               for r in re.findall(rf"\b{re.escape(n)}\s*=(?!=)\s*([^;,)]*)[;,]", text)]
        literal = [r for r in rhs if _LITERAL.fullmatch(r)]
        if rhs and len(literal) == len(rhs) and all(float(r.rstrip("fF")) == 1.0 for r in rhs):
            out.add(n)
    return frozenset(out)


def factor_uses(source: str, first: int, last: int, names: frozenset[str]) -> dict[int, int]:
    """Per line ``first`` to ``last`` (1-based) of ``source``, the uses of ``names`` as a
    factor (the name beside a ``*`` that is not ``*=``), comments left out."""
    out: dict[int, int] = {}
    lines = source.split("\n")
    for k in range(max(first, 1), min(last, len(lines)) + 1):
        text = _COMMENT.sub(" ", lines[k - 1])
        n = sum(len(re.findall(rf"\b{re.escape(v)}\s*\*(?!=)|\*\s*{re.escape(v)}\b", text))
                for v in names)
        if n:
            out[k] = n
    return out


def kept_factor_insts(kept, per_thread) -> float:
    """Eq. (12u): FP32 instructions per thread the port keeps for its unit scalars
    (``kept``: (block ids holding a use's line, uses) from ``machine_code.kept_factors``),
    each use once per execution of its most-run block (``per_thread``)."""
    return float(sum(KEPT_FACTOR_INSTS * n * max(per_thread.get(b, 0.0) for b in blocks)
                     for blocks, n in kept))
