"""Register blocking along rows (issue #26): a 2-D stencil whose threads each read several
neighbours of an array (Jacobi, 2DCONV, 3DCONV) has each thread compute R consecutive
outputs along y, loading each input row its R outputs share once and keeping it in
registers (blocks of the same outputs: 32x32 threads become 32x(32/R) threads of R outputs).
Re-predicted from the trace (register_block.py: the pseudo-threads regrouped R to a thread,
the repeated loads dropped, the stores kept, the warps, L2, counts and occupancy with the
registers the R live values need analysed anew), for R in ROWS; the fastest
is offered.

Legal only with ``__restrict__`` arrays (distinct): a plain pointer may alias the output, so
nvcc must reload every value after each store, and the fix says so (its prediction assumes
the restrict port's freedom). Not offered for an in-place stencil (the array written is also
read: by name here, by address in register_block.py). Each prediction is checked against its
physical bounds: its DRAM traffic cannot fall below the bytes the launch touches (compulsory:
register blocking loads every distinct element once, as before), nor its GPU time below that
traffic at the DRAM bound (roofline.py)."""

from __future__ import annotations

import dataclasses
import re

from ..devices import GPUDevice, load_device
from ..memory.shared import array_name
from ..prediction import KernelReport, Report, RunOptions
from ..prepared import Prepared
from ..register_block import RegisterBlockFigures, loads_text
from .advice import Fix, explained, speedup_of
from .halo_fix import ONCE, in_place
from .legality import subscripts
from .roofline import at_dram_bound, kernel_roofline

#: The outputs a thread computes along y, each tried (more rows: more reuse, fewer threads
#: and more registers a thread).
ROWS = (2, 4, 8)
#: A prediction may fall below a physical bound by this fraction (the trace-size growth of
#: the bytes touched is an estimate) before it counts as breaking it.
SLACK = 0.02


def regblock_candidates(base: Report) -> dict[str, list[str]]:
    """Per 2-D kernel without shared memory: the arrays it reads through two or more loads,
    each made at most once a thread and none in a loop of the thread (a stencil: whether a
    neighbour along y loads the same values is read from the trace, not the text)."""
    out: dict[str, list[str]] = {}
    for k in base.kernels:
        if k.grid_dims != 2 or k.profile.shared.bytes_per_block:
            continue
        reads: dict[str, int] = {}
        looped = {array_name(m.text) for m in k.mem if m.kind == "load" and m.per_thread > ONCE}
        for m in k.mem:
            if m.kind == "load" and 0 < m.per_thread <= ONCE:
                reads[array_name(m.text)] = reads.get(array_name(m.text), 0) + 1
        arrs = [a for a, n in reads.items() if n >= 2 and a not in looped]
        if arrs:
            out[k.name] = arrs
    return out


def loads_of(f: RegisterBlockFigures | None) -> tuple[float, float]:
    """(loads a thread after, loads an output before) of a register-blocked kernel."""
    return (f.loads_after, f.loads_before) if f else (0.0, 0.0)


def reused_arrays(base_k: KernelReport, k: KernelReport, rows: int) -> list[str]:
    """The arrays of the loads register blocking made fewer times a thread than the stores
    (``k`` the re-predicted kernel, ``base_k`` the baseline's; each relative to R times its
    count before: a short last row of threads lowers every count alike): the values kept in
    registers."""
    before = {m.id: m.per_thread for m in base_k.mem}

    def share(m) -> float:
        return m.per_thread / (rows * before[m.id]) if before.get(m.id) else 1.0

    stores = [share(m) for m in k.mem if m.kind == "store"] or [1.0]
    out: list[str] = []
    for m in k.mem:
        if (m.kind == "load" and share(m) < min(stores) * (1 - 1e-3)
                and array_name(m.text) not in out):
            out.append(array_name(m.text))
    return out


def _figures(rep: Report, kernel: str) -> RegisterBlockFigures | None:
    """The register blocking the re-predicted kernel's report gives (KernelReport.reg_block)."""
    return next((k.reg_block for k in rep.kernels if k.name == kernel), None)


def compulsory_mb(f: RegisterBlockFigures | None, k: KernelReport) -> float:
    """The DRAM traffic the kernel cannot avoid at the work size, in MB: the bytes its traced
    launch touches per output (``f``) times kernel ``k``'s outputs and launches (a thread of
    a stencil touches a fixed number of elements: the bytes grow as the grid)."""
    if f is None or not f.outputs:
        return 0.0
    outputs = k.grid_threads[0] * k.grid_threads[1] * k.launches
    return f.compulsory_bytes / f.outputs * outputs / 1e6


def within_bounds(base_k: KernelReport, k: KernelReport,
                  device: GPUDevice) -> tuple[bool, str]:
    """Whether re-predicted kernel ``k`` keeps its physical bounds: DRAM traffic at least the
    compulsory bytes (``k.reg_block``'s, grown to ``base_k``'s grid), GPU time at least those
    bytes at the DRAM bound; and a line saying so."""
    roof = kernel_roofline(k, device)
    need = compulsory_mb(k.reg_block, base_k)
    per_mb = roof.dram_ms / roof.dram_mb if roof.dram_mb else 0.0
    floor_ms = need * per_mb
    ok = roof.dram_mb >= need * (1 - SLACK) and roof.predicted_ms >= floor_ms * (1 - SLACK)
    below = roof.dram_mb < need or roof.predicted_ms < floor_ms
    return ok, (f"DRAM traffic {roof.dram_mb:.4g} MB against {need:.4g} MB compulsory (the "
                f"bytes the launches touch), GPU time {roof.predicted_ms:.4g} ms against "
                f"{floor_ms:.4g} ms for them at the DRAM bound"
                + (f" (below them, within the {SLACK:.0%} the estimate may miss by: a gain "
                   f"that small is not significant)" if below else ""))


def _offset(sub: str) -> int:
    """``i - 1`` -> 1, ``j+2`` -> 2, ``k`` -> 0: a subscript's constant offset, unsigned."""
    m = re.search(r"[+-]\s*(\d+)\s*$", sub)
    return int(m.group(1)) if m else 0


def reach(texts: list[str]) -> tuple[int, int]:
    """(rows, columns) radius of a stencil from its reads' subscripts (``A[i-1][j+1]``):
    the largest constant offset in the second-last and last subscripts."""
    subs = [subscripts(t) for t in texts]
    rows = max((_offset(s[-2]) for s in subs if len(s) >= 2), default=0)
    cols = max((_offset(s[-1]) for s in subs if s), default=0)
    return rows, cols


def regblock_code(array: str, out: str, rows: int, bx: int, by: int,
                  radius: tuple[int, int], ctype: str = "float") -> str:
    """The register-blocked stencil in CUDA: ``rows`` outputs a thread along y, blocks of
    ``bx`` x ``by / rows`` threads, each input row of ``array`` (of ``ctype``) loaded once
    into registers."""
    ry, rx = radius
    ty = by // rows if by % rows == 0 else by
    return "\n".join([
        f"__global__ void k(const {ctype} *__restrict__ {array}, {ctype} *__restrict__ {out}, "
        f"int ny)  // distinct arrays: nvcc may keep loaded values across the stores",
        f"// blocks of {bx}x{ty} threads, {rows} rows of outputs each",
        f"int x = blockIdx.x * {bx} + threadIdx.x;",
        f"int y0 = (blockIdx.y * {ty} + threadIdx.y) * {rows};",
        f"{ctype} acc[{rows}] = {{0}};  // the {rows} outputs, in registers",
        "#pragma unroll",
        f"for (int q = -{ry}; q < {rows} + {ry}; q++) {{  // each input row once",
        f"  {ctype} v[{2 * rx + 1}];  // {array}[y0 + q][x - {rx} .. x + {rx}], in registers",
        "  #pragma unroll",
        f"  for (int r = 0; r < {rows}; r++)  // every output whose stencil holds row q",
        f"    if (q - r >= -{ry} && q - r <= {ry}) acc[r] += /* weights of row q - r */ v[..];",
        "}",
        "#pragma unroll",
        f"for (int r = 0; r < {rows}; r++)",
        f"  if (y0 + r < ny) {out}[y0 + r][x] = acc[r];  // the guard covers a short last row",
    ])


def _ctype(prep: Prepared, k: KernelReport, array: str) -> str:
    """The C type of ``array``'s elements as kernel ``k`` loads them (8 bytes: double)."""
    sid = next((m.id for m in k.mem if m.kind == "load" and array_name(m.text) == array), None)
    return "double" if sid is not None and prep.trace.header.mem[sid].bytes == 8 else "float"


def _evidence(base: Report, kernel: str, arrays: list[str], tried: dict[int, Report],
              device: GPUDevice) -> list[str]:
    """One line per R tried (time, loads and registers), and the kernel's reads."""
    k = next(x for x in base.kernels if x.name == kernel)
    reads = [m.text for m in k.mem if m.kind == "load" and array_name(m.text) in arrays]
    ev = [f"{kernel} reads {len(reads)} neighbours of {', '.join(arrays)} a thread "
          f"({', '.join(reads)}); it does not write {', '.join(arrays)}"]
    for rows, rep in tried.items():
        f = _figures(rep, kernel)
        what = loads_text(f) if f else ""
        ev.append(f"R = {rows}: {rep.total_ms:.4g} ms ({what})")
    roof = kernel_roofline(k, device)
    if at_dram_bound(roof):
        ev.append(f"{kernel} runs at its DRAM bound already ({roof.dram_ms:.4g} ms for "
                  f"{roof.dram_mb:.4g} MB, roofline): register reuse saves L1/L2 traffic and "
                  f"instructions, not DRAM bytes")
    return ev


def _fix(base: Report, kernel: str, arrays: list[str], tried: dict[int, Report],
         rows: int, device: GPUDevice, ctype: str = "float") -> Fix:
    """The register-blocking fix of ``kernel`` at ``rows`` outputs a thread (``ctype``: the
    C type of its elements)."""
    k = next(x for x in base.kernels if x.name == kernel)
    bx, by = (int(v) for v in k.block.split("x"))
    rep = tried[rows]
    arrays = reused_arrays(k, next(x for x in rep.kernels if x.name == kernel), rows) or arrays
    texts = [m.text for m in k.mem if m.kind == "load" and array_name(m.text) in arrays]
    out = next((array_name(m.text) for m in k.mem if m.kind == "store"), "out")
    tail = ("R divides them" if k.grid_threads[1] % rows == 0
            else "a guard skips the outputs past the last row")
    shape = f"{bx}x{by // rows}" if by % rows == 0 else f"{bx}x{by}"
    _, bounds = within_bounds(k, next(x for x in rep.kernels if x.name == kernel), device)
    return explained(Fix(
        kind="register-blocking",
        title=f"compute {rows} rows a thread in {kernel}, reusing {', '.join(arrays)} in "
              f"registers",
        instruction=f"let each thread of {kernel} compute {rows} consecutive outputs along y "
        f"(blocks of {shape} threads cover the same {bx}x{by} outputs; "
        f"{k.grid_threads[1]} rows: {tail}), "
        f"loading each input row its outputs share once and keeping the values in registers; "
        f"declare the array parameters __restrict__ (distinct arrays: "
        f"const {ctype} *__restrict__ {arrays[0]}, {ctype} *__restrict__ {out}): through plain "
        f"pointers nvcc must reload every value after each store, and this prediction "
        f"assumes it need not; the values computed do not change",
        evidence=(*_evidence(base, kernel, arrays, tried, device), f"R = {rows}: {bounds}"),
        predicted_ms=rep.total_ms, speedup=speedup_of(base.total_ms, rep.total_ms),
        code=regblock_code(arrays[0], out, rows, bx, by, reach(texts), ctype),
    ), base, rep)


def regblock_fixes(prep: Prepared, opts: RunOptions, base: Report,
                   notes: list[str]) -> list[Fix]:
    """Each 2-D stencil kernel register-blocked at the best of ROWS, re-predicted."""
    from .fixes import _try_analyze  # the one re-analysis helper of the advisor

    device = load_device(opts.device)
    fixes = []
    for kernel, arrays in regblock_candidates(base).items():
        written = [a for a in arrays if in_place(base, kernel, a)]
        if written:
            notes.append(f"register blocking of {kernel} is not offered: it writes "
                         f"{', '.join(written)}, which it also reads (an in-place stencil: a "
                         f"value kept in a register could be stale after a store)")
            continue
        base_k = next(x for x in base.kernels if x.name == kernel)
        tried: dict[int, Report] = {}
        for rows in ROWS:
            own: list[str] = []
            rep = _try_analyze(prep, dataclasses.replace(opts, reg_block=((kernel, rows),)),
                               f"register blocking of {kernel} by {rows} rows", own)
            if rep is None and any("in-place" in n for n in own):  # by address: any R
                notes.append(f"register blocking of {kernel} is not offered: "
                             + own[0].split("not register-blocked: ", 1)[-1].removesuffix(")"))
                break
            notes += own
            if rep is None:
                continue
            k = next(x for x in rep.kernels if x.name == kernel)
            after, before = loads_of(k.reg_block)
            if after >= rows * before:  # no output of a thread loads what another one did
                notes.append(f"register blocking of {kernel} is not offered: neighbouring "
                             f"threads along y load no common value ({after:.4g} loads a "
                             f"thread of {rows} rows, {before:.4g} an output)")
                break
            ok, bounds = within_bounds(base_k, k, device)
            if ok:
                tried[rows] = rep
            else:
                notes.append(f"register blocking of {kernel} by {rows} rows: not offered, its "
                             f"prediction breaks a physical bound ({bounds})")
        if tried:
            best = min(tried, key=lambda r: (tried[r].total_ms, r))
            fixes.append(_fix(base, kernel, arrays, tried, best, device,
                              _ctype(prep, base_k, arrays[0])))
    return fixes
