"""Loop bounds a CUDA port knows only at run time: the sizes are kernel parameters.

PolyBench/GPU as measured (PolyBench-ACC's CUDA, ``/work/shared/measurements``) passes the
sizes to every kernel (``gemm_kernel(int ni, int nj, int nk, ...)``) and bounds its loops
by ``_PB_NK`` = ``POLYBENCH_LOOP_BOUND(NK, nk)``, the run-time ``nk``; the C traced here has
the compile-time macro ``NK``. Where the trip count is known the compiler may assume that
the loop runs: for ``tmp[i] = 0; for (j < NY) tmp[i] += ...`` clang keeps the sum in a
register and deletes the first store, which the store after the loop overwrites. nvcc,
which does not know that ``ny > 0``, keeps both stores (a loop of no iteration leaves
``tmp[i] = 0``) and tests for zero trips before the loop (the sm_90 SASS of every
``__restrict__`` port: ``validation/results/sass-check.md``). So, inside the marked kernels,
each comparison of a loop condition with a size is made against an opaque copy of the size
(an empty ``asm`` hands back the value it is given, as a kernel parameter holds it) in the
unoptimised IR, before -O1 runs: -O1 then makes of the loop what it makes of the port's.
Values, addresses and trip counts are unchanged; the copy costs no instruction
(``compute._call_cost``: ``asm``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .ctext import IDENT, bracket_end, function_body

_FOR = re.compile(r"\bfor\s*\(")
#: a comparison operator (not a shift, an arrow or part of another operator)
_COMPARE = re.compile(r"(?<![<>=!\-])(<=|>=|!=|<|>)(?![<>=])")
_LOCATION = re.compile(r"^!(\d+) = !DILocation\(line: (\d+), column: (\d+)", re.M)
_ICMP = re.compile(
    r"^(\s+)(%[\w.$-]+) = icmp (\w+) (i\d+) ([^,]+), ([^,]+), !dbg !(\d+)(.*)$", re.M
)
_INT = re.compile(r"-?\d+")


def _condition(text: str, start: int, end: int) -> tuple[int, int] | None:
    """(start, end) offsets of the condition of the ``for`` header between ``start`` and
    ``end`` (its parentheses excluded): the text between its two top-level semicolons."""
    semis, depth = [], 0
    for i in range(start, end):
        depth += text[i] == "("
        depth -= text[i] == ")"
        if text[i] == ";" and depth == 0:
            semis.append(i)
    return (semis[0] + 1, semis[1]) if len(semis) == 2 else None


def _position(text: str, offset: int) -> tuple[int, int]:
    """(line, column), both 1-based as in clang's debug locations, of ``offset``."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def _headers(text: str, first: int, last: int) -> list[tuple[int, int]]:
    """(offset of ``(``, offset of its ``)``) of every ``for`` header starting on lines
    ``first`` to ``last`` (1-based), in text order."""
    out = []
    for m in _FOR.finditer(text):
        if first <= _position(text, m.start())[0] <= last:
            out.append((m.end() - 1, bracket_end(text, m.end() - 1, "(", ")") - 1))
    return out


def _mapped(text: str, heads: list[tuple[int, int]], most: int) -> int:
    """How many of the leading ``heads`` are the thread-mapped loops: at most ``most``,
    each nested right in the one before (only blanks and a ``{`` between)."""
    n = 1 if heads else 0
    while n < min(most, len(heads)):
        between = text[heads[n - 1][1] + 1 : text.rfind("for", 0, heads[n][0])]
        if between.strip() not in ("", "{"):
            break
        n += 1
    return n


def bound_sites(
    text: str, spans: Iterable[tuple[int, int, int]], sizes: Iterable[str]
) -> frozenset[tuple[int, int]]:
    """(line, column) of every comparison operator in the condition of a ``for`` of a
    kernel whose condition names one of ``sizes`` (the size macros): what the port's kernel
    compares with a run-time parameter. ``spans``: (first line, last line, grid) of each
    kernel (grid 0: found later, at most 2); its leading thread-mapped loops are left as
    they are (their bounds are the grid's, and the kernel's markers stay where they are).
    Conditions joined by ``&&`` / ``||`` count part by part."""
    names = set(sizes)
    out: set[tuple[int, int]] = set()
    for first, last, grid in spans:
        heads = _headers(text, first, last)
        for head, close in heads[_mapped(text, heads, grid or 2) :]:
            cond = _condition(text, head + 1, close)
            if cond is None:
                continue
            part_start = cond[0]
            for part in re.split(r"(&&|\|\|)", text[cond[0] : cond[1]]):
                if part not in ("&&", "||") and names & set(IDENT.findall(part)):
                    for op in _COMPARE.finditer(part):
                        out.add(_position(text, part_start + op.start()))
                part_start += len(part)
    return frozenset(out)


#: a bound that is one name plus or minus an integer (``NI - 1``, ``(NX + 2)``, ``1 + N``)
_SIZE_OFFSET = re.compile(
    r"^\(?\s*(?:([A-Za-z_]\w*)\s*([-+])\s*(\d+)|(\d+)\s*\+\s*([A-Za-z_]\w*))\s*\)?$"
)


def condition_at(text: str, line: int) -> str | None:
    """The condition of the first ``for`` header starting on ``line`` (1-based) of ``text``
    (the text between its two top-level semicolons), or None where there is none."""
    for head, close in _headers(text, line, line)[:1]:
        cond = _condition(text, head + 1, close)
        return None if cond is None else text[cond[0] : cond[1]]
    return None


def header_span(text: str, line: int) -> tuple[int, int] | None:
    """(first, last) source lines (1-based) of the first ``for`` header starting on ``line``,
    or None where none starts there: a loop the compiler kept has its header on them."""
    for _, close in _headers(text, line, line)[:1]:
        return line, _position(text, close)[0]
    return None


def offset_size_bounds(condition: str, sizes: Iterable[str]) -> frozenset[tuple[str, int]]:
    """The values ``condition`` compares with (parts joined by ``&&``/``||``) that are a size
    plus or minus an integer constant (``i < NI - 1``: ``("NI", -1)``): what the port
    computes from its run-time size parameter."""
    names = set(sizes)
    found: set[tuple[str, int]] = set()
    for part in re.split(r"&&|\|\|", condition):
        sides = _COMPARE.split(part)
        for side in sides[::2] if len(sides) == 3 else ():
            m = _SIZE_OFFSET.match(side.strip())
            if m and m.group(1) in names:
                found.add((m.group(1), int(m.group(3)) * (-1 if m.group(2) == "-" else 1)))
            elif m and m.group(5) in names:
                found.add((m.group(5), int(m.group(4))))
    return frozenset(found)


def function_spans(text: str, names: Iterable[str]) -> list[tuple[int, int, int]]:
    """(first line, last line, 0) of the body of each function of ``names`` defined in
    ``text``: the spans of whole-function kernels (``--function``), their grid found later."""
    out = []
    for name in names:
        body = function_body(text, name)
        if body is not None:
            out.append((_position(text, body[0])[0], _position(text, body[1])[0], 0))
    return out


def opaque_bounds(ir_text: str, sites: frozenset[tuple[int, int]]) -> str:
    """``ir_text`` (clang's unoptimised IR) with the integer constant of each ``icmp`` at a
    debug location in ``sites`` replaced by an opaque copy of it: ``call iN asm "", "=r,0"``
    with no side effect and no memory access, so the optimiser may hoist it but not know
    its value."""
    if not sites:
        return ir_text
    at = {int(m.group(1)) for m in _LOCATION.finditer(ir_text)
          if (int(m.group(2)), int(m.group(3))) in sites}
    count = [0]

    def edit(m: re.Match) -> str:
        indent, name, pred, ty, a, b, loc, rest = m.groups()
        if int(loc) not in at:
            return m.group(0)
        right = _INT.fullmatch(b.strip()) is not None
        if not right and _INT.fullmatch(a.strip()) is None:
            return m.group(0)
        const = (b if right else a).strip()
        tmp = f"%__cgp_bound.{count[0]}"
        count[0] += 1
        a, b = (a, tmp) if right else (tmp, b)
        return (
            f'{indent}{tmp} = call {ty} asm "", "=r,0"({ty} {const}) nounwind '
            f"memory(none), !dbg !{loc}\n"
            f"{indent}{name} = icmp {pred} {ty} {a}, {b}, !dbg !{loc}{rest}"
        )

    return _ICMP.sub(edit, ir_text)
