"""The CUDA the shared-memory tiling fix tells the user to write (issue #26), and the copy its
re-prediction models (``RunOptions.stage_copy``, ``memory.staging_code``): the same kernel.

When the tile is the block's shape (32x32 tiles, 32x32 blocks) it is the textbook kernel
(validation/cuda/textbook/gemm_textbook.cu, the H100's measured ``smem32``): thread (tx, ty) copies
element (ty, tx) of each tile a step, with no staging loop and no index division, bounds
checks only when an array's traced extents are not multiples of the tile. Any other block
copies the tile in a loop over its elements (``cgp::stage`` of validation/cuda/common.cuh).

The copy of an access is read from its subscripts: the strip-mined reduction variable ``k``
(the one identifier every staged access of the kernel has) in the column (``A[i][k]``: the
block's rows by the strip; ``A[j][k]``, its lanes a row apart: the block's x rows by the
strip) or in the row (``B[k][j]``: the strip by the block's x columns)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ..memory.shared import array_name
from .advice import TILE
from .legality import subscripts

_IDENT = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class TileAccess:
    """One staged read of a kernel: its text as written (``A[i][k]``) and whether a warp's
    lanes read it a row apart (uncoalesced: its rows follow the block's x)."""

    text: str
    rows_follow_x: bool = False


def reduction_variable(texts: Sequence[str]) -> str | None:
    """The identifier that every 2-D access in ``texts`` has in exactly one of its last two
    subscripts (``k`` of ``A[i][k]`` and ``B[k][j]``), or None when there is not one."""
    common = None
    for t in texts:
        subs = subscripts(t)[-2:]
        if len(subs) != 2:
            return None
        names = [set(_IDENT.findall(s)) for s in subs]
        mine = names[0] ^ names[1]
        common = mine if common is None else common & mine
    return sorted(common)[0] if common and len(common) == 1 else None


def _sub(expr: str, var: str, by: str) -> str:
    """``expr`` with the variable ``var`` replaced by ``by`` (``k`` -> ``kk + tx``)."""
    return by if expr == var else re.sub(rf"\b{var}\b", f"({by})", expr)


def copy_lines(acc: TileAccess, var: str, checked: bool) -> tuple[str, str, str]:
    """(the tile's declaration, thread (tx, ty)'s copy, what the loop body reads instead of
    the access) of one staged access of a block-shaped tile (module doc)."""
    r, c = subscripts(acc.text)[-2:]
    arr, strip = array_name(acc.text), var * 2
    tile = f"{arr}_{'t' if acc.rows_follow_x else 's'}"
    if var in set(_IDENT.findall(c)):
        row = f"{r} - tx + ty" if acc.rows_follow_x else r
        src = (f"{arr}[{row}][{_sub(c, var, f'{strip} + tx')}]", row, _sub(c, var, f"{strip} + tx"))
        read = f"{tile}[{'tx' if acc.rows_follow_x else 'ty'}][{var} - {strip}]"
    else:
        src = (f"{arr}[{_sub(r, var, f'{strip} + ty')}][{c}]", _sub(r, var, f"{strip} + ty"), c)
        read = f"{tile}[{var} - {strip}][tx]"
    load, gr, gc = src
    if checked:
        load = f"({gr} < {arr}_ROWS && {gc} < {arr}_COLS) ? {load} : 0.0f"
    return (f"__shared__ float {tile}[{TILE}][{TILE}];",
            f"  {tile}[ty][tx] = {load};", f"{acc.text} -> {read}")


def textbook_code(kernel: str, accesses: Sequence[TileAccess], checked: bool,
                  register: bool) -> str:
    """The textbook tiled kernel's CUDA for ``kernel``'s staged reads (32x32 blocks, one
    element of each tile a thread), with the accumulator in a register when ``register``;
    empty when the reads have no single strip-mined variable."""
    var = reduction_variable([a.text for a in accesses])
    if var is None:
        return ""
    parts = [copy_lines(a, var, checked) for a in accesses]
    strip = var * 2
    head = [f"// {kernel}: {TILE}x{TILE} blocks, each the {TILE}x{TILE} tile; tx = threadIdx.x, "
            f"ty = threadIdx.y"]
    head += list(dict.fromkeys(d for d, _, _ in parts))
    if register:
        head.append("float sum = 0.0f;  // the body's accumulator in a register, stored once "
                    "after the loop")
    reads = "; ".join(r for _, _, r in parts)
    lines = head + [f"for (int {strip} = 0; {strip} < K; {strip} += {TILE}) {{"
                    f"  // the {var} loop (K iterations) strip-mined",
                    *[c for _, c, _ in parts],
                    "  __syncthreads();",
                    f"  for (int {var} = {strip}; {var} < {strip} + {TILE}; {var}++)"
                    f"  // the loop body, reading {reads}",
                    "    ...;",
                    "  __syncthreads();", "}"]
    if checked:
        lines.append("// X_ROWS, X_COLS: the array's extents (they are not multiples of "
                     f"{TILE}: the elements outside are 0)")
    return "\n".join(lines)


def loop_code(arrays: Sequence[str]) -> str:
    """The tiling for a block that is not the tile's shape: each tile copied by the block in
    a loop over its elements (``cgp::stage``), bounds checked."""
    lines = [f"__shared__ float {a}_s[{TILE}][{TILE}];" for a in arrays]
    lines += [f"for (int e = threadIdx.y * blockDim.x + threadIdx.x; e < {TILE} * {TILE}; "
              f"e += blockDim.x * blockDim.y) {{  // each tile, every strip",
              f"  int r = e / {TILE}, c = e % {TILE};",
              "  X_s[r][c] = (row0 + r < X_ROWS && col0 + c < X_COLS) ? "
              "X[row0 + r][col0 + c] : 0.0f;", "}", "__syncthreads();",
              "// ... the strip's iterations read the tiles ...", "__syncthreads();"]
    return "\n".join(lines)


def shared_fix_code(prep, base, by_kernel: dict[str, list[str]], register: bool) -> str:
    """The snippet of the tiling fix of ``by_kernel`` (kernel -> its tiled arrays): the
    textbook kernel for each kernel launched with blocks of the tile's shape, else the
    staging loop (what ``RunOptions.stage_copy`` "thread" models for the same blocks)."""
    from ..memory.shared import array_layouts
    from ..memory.staging import whole_tiles

    layouts = array_layouts(prep.trace.header.ir_text)
    out = []
    for k in base.kernels:
        arrs = by_kernel.get(k.name)
        if not arrs:
            continue
        if k.block != f"{TILE}x{TILE}":
            out.append(f"// {k.name}: blocks of {k.block}, tiles of {TILE}x{TILE}\n"
                       + loop_code(arrs))
            continue
        reads = [TileAccess(text=m.text, rows_follow_x=m.pattern == "uncoalesced")
                 for m in k.mem if m.kind == "load" and array_name(m.text) in arrs]
        reads = list({a.text: a for a in reads}.values())
        checked = not all(whole_tiles(layouts.get(a), TILE, TILE) for a in arrs)
        out.append(textbook_code(k.name, reads, checked, register) or loop_code(arrs))
    return "\n".join(out)
