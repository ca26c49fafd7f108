"""Kernel regions marked in C source with ``#pragma cgp`` lines (SPEC §2.1).

``#pragma cgp kernel [name] [grid=1|2] [bounds=runtime|constant]`` before a ``for`` statement
marks that loop nest as one GPU kernel (``grid=`` fixes how many outer loops map to threads, as
the CUDA port does; ``bounds=constant`` says the port bounds its loops by the size macros
themselves, so that nvcc knows their trip counts: eq. (12ct), ``runtime_trips``).
``#pragma cgp shared ARRAY tile TYxTX`` (between the kernel pragma and its loop) names an array
that a block stages in shared memory (SPEC §2.6). ``#pragma cgp trace NAME=V ...`` declares the
file's reference trace size.

The source is rewritten, line numbers unchanged, so that each region is bracketed by calls
``__cgp_region_begin(R)`` / ``__cgp_region_end(R)`` that survive into the IR as markers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import RegionError
from .ctext import (
    IDENT,
    comment_lines,
    function_body,
    function_nests,
    in_spans,
    skip_space,
    statement_end,
    word_at,
)
from .port import indexed_arrays, plain_port_brackets

_PRAGMA = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+cgp\b(.*)$")
_TILE = re.compile(r"^(\d+)x(\d+)$")

#: the markers are ``nomerge``: the optimiser may not merge two kernels' marker calls into one
#: whose region number is a phi (tail merging, code sinking), which would lose their bounds
PRELUDE = (
    "__attribute__((nomerge)) void __cgp_region_begin(int region);\n"
    "__attribute__((nomerge)) void __cgp_region_end(int region);\n"
)


@dataclass(frozen=True)
class SharedHint:
    """An array staged in shared memory by each block, in tiles of rows x cols elements."""

    array: str
    tile_rows: int
    tile_cols: int


@dataclass(frozen=True)
class RegionSpec:
    """One marked kernel: its index, name, source lines and shared-memory hints."""

    index: int
    name: str
    line: int  # line of the `for` that starts the region (1-based)
    end_line: int
    shared: tuple[SharedHint, ...] = ()
    function: str | None = None  # set for regions given by --function
    grid: int = 0  # 0: choose automatically
    bounds: str = "runtime"  # "constant": the port's loop bounds are compile-time (eq. (12ct))


@dataclass(frozen=True)
class MarkedSource:
    """The rewritten source, its regions and the declared trace size."""

    text: str
    regions: tuple[RegionSpec, ...]
    trace_sizes: dict[str, int]
    # --function kernels whose body holds several loop nests: each nest is its own region
    # (one launch each, as a port gives each parallel nest its own kernel)
    split_functions: tuple[str, ...] = ()
    # '#pragma cgp shared' hints written inside the body of a --function kernel (kept whole)
    function_shared: dict[str, tuple[SharedHint, ...]] = field(default_factory=dict)


def read_source(path) -> str:
    """The text of a C source file (any name: it is compiled as C), or a one-line RegionError
    (missing, unreadable, not UTF-8, or not a regular file: a FIFO would block, a device
    never end, a directory has no text)."""
    import os
    import stat

    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
            raise RegionError(f"cannot read {path} as C source: {kind}")
        data = open(path, "rb").read()
    except OSError as exc:
        raise RegionError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise RegionError(f"{path}: not a UTF-8 text file") from None


def _parse_kernel(args: str, lineno: int, index: int) -> tuple[str, int, str]:
    """Name, grid hint and loop bounds of a ``#pragma cgp kernel [name] [grid=1|2]
    [bounds=runtime|constant]`` line."""
    grid, bounds = 0, "runtime"
    words = []
    for item in args.split():
        if item.startswith("grid="):
            if item not in ("grid=1", "grid=2"):
                raise RegionError(f"line {lineno}: want grid=1 or grid=2, got {item!r}")
            grid = int(item[5:])
        elif item.startswith("bounds="):
            if item not in ("bounds=runtime", "bounds=constant"):
                raise RegionError(
                    f"line {lineno}: want bounds=runtime or bounds=constant, got {item!r}")
            bounds = item[7:]
        else:
            words.append(item)
    name = " ".join(words) or f"kernel{index}"
    if not IDENT.fullmatch(name):
        raise RegionError(f"line {lineno}: kernel name {name!r} is not an identifier")
    return name, grid, bounds


def _parse_sizes(args: str, lineno: int) -> dict[str, int]:
    sizes = {}
    for item in args.split():
        name, eq, value = item.partition("=")
        if not eq or not IDENT.fullmatch(name) or not value.isdigit():
            raise RegionError(
                f"line {lineno}: bad '#pragma cgp trace' item {item!r} (want NAME=INT)"
            )
        sizes[name] = int(value)
    return sizes


def _parse_shared(args: str, lineno: int) -> SharedHint:
    parts = args.split()
    if len(parts) != 3 or parts[1] != "tile" or not _TILE.match(parts[2]):
        raise RegionError(f"line {lineno}: want '#pragma cgp shared ARRAY tile ROWSxCOLS'")
    rows, cols = (int(x) for x in _TILE.match(parts[2]).groups())
    if rows <= 0 or cols <= 0:
        raise RegionError(f"line {lineno}: tile {parts[2]}: want positive ROWSxCOLS")
    return SharedHint(parts[0], rows, cols)


def mark_regions(
    source: str, port: str = "restrict", functions: tuple[str, ...] = ()
) -> MarkedSource:
    """Find the ``#pragma cgp`` lines of ``source`` and bracket each region with markers.

    With ``port="plain"`` each region's arrays, and those of the bodies of the kernel
    ``functions`` (``--function``), are also reached through opaque pointers, as plain kernel
    parameters are in CUDA (``port.py``)."""
    lines = source.split("\n")
    offsets = _line_offsets(lines)
    regions: list[RegionSpec] = []
    trace_sizes: dict[str, int] = {}
    pending: tuple[int, str, int, str] | None = None
    shared: list[SharedHint] = []
    edits: dict[int, str] = {}  # line index -> replacement text
    ends: list[tuple[int, str]] = []  # (char offset just after the region, text put there)
    commented = comment_lines(source, offsets)
    bodies = {n: b for n in functions if (b := function_body(source, n)) is not None}
    fn_hints: list[tuple[int, str, SharedHint]] = []  # (offset, function, hint)
    for idx, line in enumerate(lines):
        m = None if idx in commented else _PRAGMA.match(line)
        if not m:
            if pending is not None and line.strip():
                region, end = _close_region(source, offsets, idx, pending, shared, len(regions))
                regions.append(region)
                opening, closing = "", ""
                if port == "plain":
                    arrays = indexed_arrays(source[offsets[idx] : end], source)
                    opening, closing = plain_port_brackets(arrays, region.index)
                ends.append((end, f"{closing} __cgp_region_end({region.index});"))
                edits[pending[0]] = f"__cgp_region_begin({region.index}); {opening}".rstrip()
                pending, shared = None, []
            continue
        words = m.group(1).split(None, 1)
        verb, args = (words[0], words[1] if len(words) > 1 else "") if words else ("", "")
        lineno = idx + 1
        if verb == "kernel":
            if pending is not None:
                raise RegionError(
                    f"line {lineno}: kernel pragma follows another with no loop between"
                )
            name, grid, bounds = _parse_kernel(args, lineno, len(regions))
            pending = (idx, name, grid, bounds)
            edits[idx] = ""
        elif verb == "shared":
            owner = next((n for n, (a, b) in bodies.items() if a <= offsets[idx] < b), None)
            if pending is None and owner is None:
                raise RegionError(
                    f"line {lineno}: '#pragma cgp shared' must follow '#pragma cgp kernel' "
                    f"or stand inside the body of a --function kernel"
                )
            if pending is None:
                fn_hints.append((offsets[idx], owner, _parse_shared(args, lineno)))
            else:
                shared.append(_parse_shared(args, lineno))
            edits[idx] = ""
        elif verb == "trace":
            trace_sizes.update(_parse_sizes(args, lineno))
            edits[idx] = ""
        else:
            raise RegionError(
                f"line {lineno}: unknown '#pragma cgp {verb}' (kernel, shared, trace)"
            )
    if pending is not None:
        raise RegionError(f"line {pending[0] + 1}: '#pragma cgp kernel' is not followed by a loop")
    split = _split_functions(source, offsets, functions, port, fn_hints, regions, ends)
    _check_names(regions)
    whole = {
        n: tuple(h for _, o, h in fn_hints if o == n) for n in functions if n not in split
    }
    text = _apply(lines, offsets, edits, ends)
    if port == "plain":
        for k, name in enumerate(functions):
            if name not in split:
                text = _plain_function(text, source, name, 1000 + k)
    return MarkedSource(
        text, tuple(regions), trace_sizes, tuple(split), {n: h for n, h in whole.items() if h}
    )


def _line_offsets(lines: list[str]) -> list[int]:
    """The character offset of every line's start, and one past the end."""
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    return offsets


def _check_names(regions: list[RegionSpec]) -> None:
    """One line when two kernels have the same name."""
    names = [r.name for r in regions]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise RegionError(f"kernel names used twice: {', '.join(sorted(dup))}")


def _split_functions(
    source: str,
    offsets: list[int],
    functions: tuple[str, ...],
    port: str,
    fn_hints: list[tuple[int, str, SharedHint]],
    regions: list[RegionSpec],
    ends: list[tuple[int, str]],
) -> list[str]:
    """The --function kernels of several loop nests, each nest a region of its own (appended
    to ``regions``, its markers to ``ends``), and their names. A function with a region of
    its own, or a nest it may leave other than at its end, stays one kernel."""
    split = []
    for name in functions:
        nests = function_nests(source, name)
        if len(nests) < 2 or any(in_spans(offsets[r.line - 1], nests) for r in regions):
            continue
        if any(re.search(r"\b(return|goto|longjmp|setjmp)\b", source[a:b]) for a, b in nests):
            continue  # a nest left other than at its end would never close its region
        split.append(name)
        prev = 0
        for j, (start, end) in enumerate(nests, 1):
            line = source.count("\n", 0, start) + 1
            # a shared hint belongs to the nest it stands before
            hints = tuple(h for o, n, h in fn_hints if n == name and prev <= o < start)
            prev = end
            region = RegionSpec(len(regions), f"{name}_k{j}", line,
                                source.count("\n", 0, end - 1) + 1, hints, function=name)
            regions.append(region)
            opening, closing = "", ""
            if port == "plain":
                opening, closing = plain_port_brackets(
                    indexed_arrays(source[start:end], source), region.index)
            # begin and end markers on the nest's own lines: no line moves
            ends.append((start, f"__cgp_region_begin({region.index}); {opening} "))
            ends.append((end, f"{closing} __cgp_region_end({region.index});"))
    return split


def check_pragmas(source: str, marked: MarkedSource) -> str | None:
    """The first pragma of ``marked`` that does not fit its ``source``, or None: a kernel
    inside another kernel, a shared array the kernel never indexes, a trace size for a name
    the source never mentions (checked before anything runs)."""
    regions, trace_sizes, fn_hints = marked.regions, marked.trace_sizes, marked.function_shared
    fn_bodies = {n: source[a:b] for n in fn_hints if (ab := function_body(source, n))
                 for a, b in [ab]}
    lines = source.split("\n")
    for r in regions:
        outer = next((o for o in regions if o.line < r.line <= o.end_line), None)
        if outer is not None:
            return (
                f"line {r.line}: kernel {r.name} lies inside kernel {outer.name} (lines "
                f"{outer.line}-{outer.end_line}); a kernel cannot launch another: mark one"
            )
    texts = [(r.name, "\n".join(lines[r.line - 1 : r.end_line]), r.shared, r.line)
             for r in regions]
    texts += [(n, fn_bodies[n], hints, None) for n, hints in fn_hints.items() if hints]
    for name, text, hints, line in texts:
        arrays = indexed_arrays(text, source)
        for h in hints:
            if h.array not in arrays:
                where = f"line {line}: " if line else ""
                return (
                    f"{where}'#pragma cgp shared {h.array}': kernel {name} indexes no array "
                    f"{h.array} (it indexes {', '.join(arrays) or 'none'})"
                )
    rest = "\n".join(x for x in lines if not _PRAGMA.match(x))
    for n in trace_sizes:
        if not re.search(rf"\b{re.escape(n)}\b", rest):
            return f"'#pragma cgp trace {n}=...': the source has no macro {n}"
    return None


def _plain_function(text: str, source: str, name: str, tag: int) -> str:
    """``text`` with the body of the function ``name`` (its definition, not a prototype or a
    call) wrapped in the plain port's opaque-pointer scope; lines do not move."""
    body = function_body(text, name)
    if body is None:
        return text
    start, stop = body  # after the opening brace, at the closing one
    arrays = indexed_arrays(text[start:stop], source)
    opening, closing = plain_port_brackets(arrays, tag)
    # only where no access moves: the braces alone at the ends of their lines (a body
    # written on the line of its brace is traced as written, the restrict port)
    line_rest = text[start : text.find("\n", start - 1) % (len(text) + 1)]
    line_head = text[text.rfind("\n", 0, stop) + 1 : stop]
    if not opening or line_rest.strip() or line_head.strip():
        return text
    return text[:start] + opening + text[start:stop] + closing + text[stop:]


def _close_region(source, offsets, idx, pending, shared, index) -> tuple[RegionSpec, int]:
    start = offsets[idx]
    if word_at(source, skip_space(source, start)) != "for":
        raise RegionError(
            f"line {pending[0] + 1}: '#pragma cgp kernel' must be followed by a for loop"
        )
    end = statement_end(source, start)
    end_line = source.count("\n", 0, end - 1) + 1
    spec = RegionSpec(index, pending[1], idx + 1, end_line, tuple(shared), grid=pending[2],
                      bounds=pending[3])
    return spec, end


def _apply(lines, offsets, edits: dict[int, str], ends: list[tuple[int, str]]) -> str:
    """Replace pragma lines and insert end markers, keeping every line where it was."""
    out = list(lines)
    for idx, text in edits.items():
        out[idx] = text
    for end, text in sorted(ends, reverse=True):
        line = next(i for i in range(len(lines)) if offsets[i + 1] > end)
        col = end - offsets[line]
        out[line] = out[line][:col] + text + out[line][col:]
    return "\n".join(out)


_FOR_HEAD = re.compile(
    r"\bfor\s*\(\s*(?:((?:unsigned|signed|short|long|int|char|size_t|u?int(?:8|16|32|64)_t)"
    r"(?:\s+(?:unsigned|signed|short|long|int|char))*)\s+)?([A-Za-z_]\w*)\s*=[^;]*;"
    r"\s*([A-Za-z_]\w*)\s*(<=?)\s*([A-Za-z_]\w*)\s*;"
)
_TYPE_MAX = {
    "char": 2**7 - 1, "signed char": 2**7 - 1, "unsigned char": 2**8 - 1, "int8_t": 2**7 - 1,
    "uint8_t": 2**8 - 1, "short": 2**15 - 1, "short int": 2**15 - 1, "int16_t": 2**15 - 1,
    "unsigned short": 2**16 - 1, "uint16_t": 2**16 - 1, "int": 2**31 - 1, "signed": 2**31 - 1,
    "signed int": 2**31 - 1, "int32_t": 2**31 - 1, "unsigned": 2**32 - 1,
    "unsigned int": 2**32 - 1, "uint32_t": 2**32 - 1,
}


def _declared_type(source: str, before: int, var: str) -> str | None:
    """The type of the last declaration of ``var`` before offset ``before`` (simple
    declarations: ``int i;``, ``int i, j;``), or None."""
    decl = re.compile(
        r"\b((?:unsigned|signed|short|long|int|char|u?int(?:8|16|32|64)_t)"
        r"(?:\s+(?:unsigned|signed|short|long|int|char))*)\s+(?:[A-Za-z_]\w*\s*(?:=[^,;]*)?,\s*)*"
        + re.escape(var) + r"\s*[;,=]"
    )
    found = None
    for m in decl.finditer(source, 0, before):
        found = m.group(1)
    return found


def counter_problem(source: str, sizes: dict[str, int]) -> str | None:
    """The first ``for (T i = ...; i < SIZE; ...)`` whose counter type ``T`` cannot hold the
    value ``sizes[SIZE]`` it counts to (a signed overflow, or a loop that never ends), as
    ``line N: ...``; None when every counter fits."""
    for m in _FOR_HEAD.finditer(source):
        typ, var, tested, op, bound = m.groups()
        if tested != var or bound not in sizes:
            continue
        typ = " ".join((typ or _declared_type(source, m.start(), var) or "").split())
        limit = _TYPE_MAX.get(typ)
        last = sizes[bound] + (1 if op == "<=" else 0)
        if limit is not None and last > limit:
            line = source.count("\n", 0, m.start()) + 1
            return (
                f"line {line}: the loop counter {var} ({typ}) cannot count to {bound}="
                f"{sizes[bound]}: {typ} holds at most {limit}; use a wider type or a smaller "
                f"size"
            )
    return None


_C_SIZES = {"char": 1, "short": 2, "int": 4, "float": 4, "long": 8, "double": 8,
            "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4,
            "uint32_t": 4, "int64_t": 8, "uint64_t": 8, "size_t": 8}


def element_bytes(source: str, array: str) -> int | None:
    """The element size of ``array`` as the source declares it (``double A[N][M]``,
    ``float *A``), or None when the declaration does not say (a typedef: the check after
    tracing, with the sizes the program accessed, judges that tile)."""
    m = re.search(
        r"\b(" + "|".join(_C_SIZES) + r")\b[\w\s]*?[\s*(]+" + re.escape(array) + r"\s*[\[\)=;,]",
        source,
    )
    return _C_SIZES[m.group(1)] if m else None


def tile_problem(source: str, marked: MarkedSource, limit_bytes: int, device: str) -> str | None:
    """The first ``#pragma cgp shared`` tile larger than ``limit_bytes`` of shared memory per
    block (``device``'s), or None: checked before anything runs."""
    hints = [(r.name, h) for r in marked.regions for h in r.shared]
    hints += [(n, h) for n, hs in marked.function_shared.items() for h in hs]
    for name, h in hints:
        nbytes = h.tile_rows * h.tile_cols * (element_bytes(source, h.array) or 0)
        if nbytes > limit_bytes:
            return (
                f"kernel {name}: '#pragma cgp shared {h.array} tile {h.tile_rows}x"
                f"{h.tile_cols}' needs {nbytes} bytes of shared memory per block; {device} "
                f"allows {limit_bytes}"
            )
    return None
