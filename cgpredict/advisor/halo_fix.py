"""Stencil tiling with halos (issue #26): a 2-D kernel whose threads each read several
neighbours of one array once (Jacobi, 2DCONV, 3DCONV) has each block stage the box of that
array it reads, its points and the halo around them, in shared memory, loaded once and
coalesced, and read every neighbour from there. Re-predicted from the trace with the first
stencil loads turned into the tile's staging rounds and the others into shared reads at
their bank-conflict degree (halo.py), the tile's stores and one barrier added.

Legal only when the kernel does not write the array in the same launch (an in-place stencil
would read neighbours' stale values from its tile: not offered, a note says why). The
advice keeps the roofline in view: a stencil already at its DRAM bound loads every element
from DRAM once either way, so the tile can only save L1/L2 traffic (its evidence says so)."""

from __future__ import annotations

import dataclasses

from ..devices import load_device
from ..halo import HaloFigures, halo_text
from ..memory.shared import array_name
from ..prediction import Report, RunOptions
from ..prepared import Prepared
from .advice import Fix, explained, speedup_of
from .roofline import at_dram_bound, kernel_roofline

#: Executions per thread up to which a load counts as made once per thread.
ONCE = 1.5
#: Loads of one array a thread makes once, at the least, for the kernel to be a stencil.
STENCIL_READS = 3


def halo_candidates(prep: Prepared, base: Report) -> dict[str, list[str]]:
    """Per 2-D kernel without shared memory: the arrays it reads through STENCIL_READS or
    more loads, each made once per thread (the neighbours of the thread's point), and none
    in a loop of the thread."""
    out: dict[str, list[str]] = {}
    for k in base.kernels:
        if k.grid_dims != 2 or k.profile.shared.bytes_per_block:
            continue
        reads: dict[str, int] = {}
        looped = set()  # arrays also read in a loop of the thread: a tile, not a halo
        for m in k.mem:
            if m.kind == "load" and 0 < m.per_thread <= ONCE:
                reads[array_name(m.text)] = reads.get(array_name(m.text), 0) + 1
            elif m.kind == "load" and m.per_thread > ONCE:
                looped.add(array_name(m.text))
        arrs = [a for a, n in reads.items() if n >= STENCIL_READS and a not in looped]
        if arrs:
            out[k.name] = arrs
    return out


def in_place(base: Report, kernel: str, array: str) -> bool:
    """Whether the kernel stores into ``array`` by that name (an in-place stencil; a store
    through another name into the same array is found from its addresses: halo.py)."""
    return any(m.kind == "store" and array_name(m.text) == array
               for k in base.kernels if k.name == kernel for m in k.mem)


def _staged(rep: Report, kernel: str) -> HaloFigures | None:
    """The halo tile the re-predicted kernel's report gives (KernelReport.halo)."""
    return next((k.halo for k in rep.kernels if k.name == kernel), None)


def halo_code(array: str, bx: int, by: int, spans: tuple[int, int, int]) -> str:
    """The textbook halo tile in CUDA, for blocks of ``bx`` x ``by`` and a stencil spanning
    ``spans`` (planes, rows, columns) of ``array``."""
    planes, rows, cols = spans
    ry, rx, rz = (rows - 1) // 2, (cols - 1) // 2, (planes - 1) // 2
    th, tw = f"({by} + {rows - 1})", f"({bx} + {cols - 1})"
    deep = planes > 1
    size = f"{planes} * {th} * {tw}" if deep else f"{th} * {tw}"
    lines = [
        f"__shared__ float tile{f'[{planes}]' if deep else ''}[{by} + {rows - 1}]"
        f"[{bx} + {cols - 1}];  // the block's points and the halo",
        f"int y0 = blockIdx.y * {by} - {ry}, x0 = blockIdx.x * {bx} - {rx};  // tile corner",
        *([f"int z0 = z - {rz};  // z: the plane of the launch's points"] if deep else []),
        f"for (int t = threadIdx.y * {bx} + threadIdx.x; t < {size}; t += {bx * by}) {{",
        (f"  int p = t / ({th} * {tw}), r = t / {tw} % {th}, c = t % {tw};" if deep
         else f"  int r = t / {tw}, c = t % {tw};"),
        f"  tile{'[p]' if deep else ''}[r][c] = {array}{'[z0 + p]' if deep else ''}"
        f"[y0 + r][x0 + c];  // consecutive t, consecutive c: coalesced (guard the edges)",
        "}",
        "__syncthreads();",
        f"// then {array}{'[z + dz]' if deep else ''}[y + dy][x + dx] is read as "
        f"tile{f'[{rz} + dz]' if deep else ''}[threadIdx.y + {ry} + dy][threadIdx.x + {rx} + dx]",
    ]
    return "\n".join(lines)


def _fix(base: Report, rep: Report, kernel: str, array: str, device) -> Fix:
    """The halo fix of ``array`` in ``kernel``, with ``rep`` its re-prediction."""
    k = next(x for x in base.kernels if x.name == kernel)
    bx, by = (int(v) for v in k.block.split("x"))
    staged = _staged(rep, kernel)
    spans = staged.spans if staged else (1, 1, 1)
    ev = [halo_text(staged) if staged else f"{array} staged with its halo"]
    reads = [m.text for m in k.mem if m.kind == "load" and array_name(m.text) == array]
    ev.append(f"{kernel} reads {len(reads)} neighbours of {array} a thread "
              f"({', '.join(reads)}), each once; it does not write {array}")
    roof = kernel_roofline(k, device)
    if at_dram_bound(roof):
        ev.append(f"{kernel} runs at its DRAM bound already ({roof.dram_ms:.4g} ms for "
                  f"{roof.dram_mb:.4g} MB, roofline): every element of {array} comes from "
                  f"DRAM once with or without the tile, which saves L1/L2 traffic only")
    tile = f"({by} + {spans[1] - 1}) x ({bx} + {spans[2] - 1})"
    if spans[0] > 1:
        tile = f"{spans[0]} planes of {tile}"
    return explained(Fix(
        "halo-tile",
        f"stage {array} in a shared-memory tile with its halo in {kernel}",
        f"each {bx}x{by} block loads its {tile} tile of {array} (its points and the halo "
        f"the stencil reads around them) into __shared__ memory once, its threads loading "
        f"consecutive elements (coalesced), then __syncthreads() and every {array}[..] of "
        f"the stencil is read from the tile; the values computed do not change",
        tuple(ev), rep.total_ms, speedup_of(base.total_ms, rep.total_ms),
        code=halo_code(array, bx, by, spans),
    ), base, rep)


def halo_fixes(prep: Prepared, opts: RunOptions, base: Report, notes: list[str]) -> list[Fix]:
    """Each stencil array of each 2-D kernel staged with its halo, re-predicted."""
    from .fixes import _try_analyze  # the one re-analysis helper of the advisor

    device = load_device(opts.device)
    fixes = []
    for kernel, arrays in halo_candidates(prep, base).items():
        for array in arrays:
            if in_place(base, kernel, array):
                notes.append(f"a halo tile of {array} in {kernel} is not offered: {kernel} "
                             f"writes {array} in the same launch (an in-place stencil: a "
                             f"block's tile would hold values its neighbours overwrite)")
                continue
            rep = _try_analyze(prep, dataclasses.replace(opts, halo=((kernel, array),)),
                               f"a halo tile of {array} in {kernel}", notes)
            if rep is not None:
                fixes.append(_fix(base, rep, kernel, array, device))
    return fixes
