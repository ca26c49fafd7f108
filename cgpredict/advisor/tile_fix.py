"""The padded shared-memory transposition (issue #26): an uncoalesced access of a 2-D array
that each thread of a 2-D kernel makes once goes through a 32x33 tile in shared memory, so
that the global access is coalesced (thread (tx, ty) handles the element of thread (ty, tx)).
Re-predicted from the trace with that access exchanged inside 32x32 tiles
(tile_exchange.py) on 32x32 blocks, and the tile's shared-memory store, load and barrier
added to every launch's profile (SPEC §2.6: shared accesses by bank-conflict degree); the
same tile without its padding column (32-way conflicts on the column read) is the evidence
for the padding."""

from __future__ import annotations

import dataclasses

from ..block import Block
from ..devices import GPUDevice, load_device
from ..memory.shared import array_layouts, array_name
from ..models import kernel_parts
from ..models import predict as model_predict
from ..prediction import Report, RunOptions
from ..prepared import Prepared
from ..profile import KernelProfile, SharedMemoryCounts
from ..tile_exchange import conflict_ways
from .advice import TILE, Fix, explained, speedup_of

#: Executions per thread up to which an access counts as made once per thread.
ONCE = 1.5


def tile_candidates(prep: Prepared, base: Report) -> dict[str, list[tuple[str, str, str]]]:
    """Per 2-D array: (kernel, access text, load or store) of each uncoalesced access a
    thread of a 2-D kernel without shared memory makes once, in an array whose traced rows
    and columns are whole tiles (a tile's corner then lies on the array's tile grid)."""
    layouts = array_layouts(prep.trace.header.ir_text)
    found: dict[str, list[tuple[str, str]]] = {}
    for k in base.kernels:
        if k.grid_dims != 2 or k.profile.shared.bytes_per_block:
            continue
        for m in k.mem:
            lay = layouts.get(array_name(m.text))
            if (m.pattern == "uncoalesced" and m.per_thread <= ONCE and lay is not None
                    and len(lay.dims) == 2 and not lay.dims[0] % TILE and not lay.dims[1] % TILE):
                found.setdefault(array_name(m.text), []).append((k.name, m.text, m.kind))
    return found


def with_tile(
    p: KernelProfile, per_thread: float, pad: int, elem: int, banks: int
) -> KernelProfile:
    """``p`` with a TILE x (TILE + pad) shared tile per block: per exchanged access a shared
    store along a row (conflict-free), a barrier, and a shared load down a column (stride
    TILE + pad words: conflict_ways)."""
    ways = float(conflict_ways((TILE + pad) * elem // 4, banks))
    by = {1.0: per_thread}
    by[ways] = by.get(ways, 0.0) + per_thread
    shared = SharedMemoryCounts(
        insts_by_conflict=tuple(sorted(by.items())),
        bytes_per_block=TILE * (TILE + pad) * elem,
    )
    return dataclasses.replace(p, shared=shared, sync_insts=p.sync_insts + per_thread)


def _tiled_report(rep: Report, arr: str, pad: int, elem: int, device: GPUDevice,
                  opts: RunOptions) -> Report:
    """``rep`` (the exchanged trace) with the tile's shared accesses in every kernel that
    exchanges ``arr``, each re-predicted from its launch profiles."""
    kernels = []
    for k in rep.kernels:
        n = sum(m.per_thread for m in k.mem if array_name(m.text) == arr)
        if not n:
            kernels.append(k)
            continue
        profiles = tuple((with_tile(p, n, pad, elem, device.smem_banks), w)
                         for p, w in (k.launch_profiles or ((k.profile, float(k.launches)),)))
        t = kernel_parts(profiles, device, opts.model, opts.sync)
        first = with_tile(k.profile, n, pad, elem, device.smem_banks)
        kernels.append(dataclasses.replace(
            k, profile=first, result=model_predict(first, device, opts.model),
            launch_profiles=profiles, kernel_ms=t.kernel_ms, launch_ms=t.launch_ms,
            total_ms=t.kernel_ms + t.launch_ms + k.once_ms))  # the program's one module load
    return dataclasses.replace(rep, kernels=tuple(kernels))


def _code(text: str, kind: str) -> str:
    """The textbook tiled transposition, for the load or store ``text`` (``B[r][c]``)."""
    from .legality import subscripts

    r, c = subscripts(text)[-2:]
    arr = array_name(text)
    moved = f"{arr}[({r}) - threadIdx.x + threadIdx.y][({c}) - threadIdx.y + threadIdx.x]"
    head = [f"__shared__ float tile[{TILE}][{TILE + 1}];  // +1 column: column reads hit "
            f"32 banks", f"// blocks of {TILE}x{TILE}; thread (tx, ty) moves the element of "
            f"thread (ty, tx)"]
    if kind == "store":
        return "\n".join(head + [
            f"// {text} = v; becomes",
            "tile[threadIdx.y][threadIdx.x] = v;  __syncthreads();",
            f"{moved} = tile[threadIdx.x][threadIdx.y];  // coalesced"])
    return "\n".join(head + [
        f"tile[threadIdx.y][threadIdx.x] = {moved};  // coalesced",
        "__syncthreads();",
        f"// then tile[threadIdx.x][threadIdx.y] is read in place of {text}"])


def tile_fixes(prep: Prepared, opts: RunOptions, base: Report, notes: list[str]) -> list[Fix]:
    """Each candidate array's accesses through a padded 32x33 tile, re-predicted."""
    from .fixes import _try_analyze  # the one re-analysis helper of the advisor

    device = load_device(opts.device)
    layouts = array_layouts(prep.trace.header.ir_text)
    fixes = []
    for arr, where in tile_candidates(prep, base).items():
        what = f"moving {arr} through a padded shared-memory tile"
        rep = _try_analyze(prep, dataclasses.replace(
            opts, tile_exchange=(arr,), block=Block(TILE, TILE)), what, notes)
        if rep is None:
            continue
        elem = layouts[arr].elem_bytes
        padded, plain = (_tiled_report(rep, arr, pad, elem, device, opts) for pad in (1, 0))
        ev = tuple(f"{t} in {kname}: uncoalesced {kind}, made once per thread"
                   for kname, t, kind in where)
        ev += (f"without the padding column ({TILE}x{TILE} tile): {plain.total_ms:.4g} ms, "
               f"{conflict_ways(TILE * elem // 4, device.smem_banks)}-way bank conflicts on "
               f"the column read",)
        fixes.append(explained(Fix(
            "shared-transpose",
            f"move {arr} through a padded {TILE}x{TILE + 1} shared-memory tile",
            f"launch {TILE}x{TILE} blocks; each block stages its {TILE}x{TILE} tile of "
            f"{arr} in __shared__ float tile[{TILE}][{TILE + 1}] and thread (tx, ty) makes the "
            f"global access of thread (ty, tx), so that it is coalesced (in "
            f"{', '.join(sorted({k for k, _, _ in where}))}; the values computed do not change)",
            ev,
            padded.total_ms,
            speedup_of(base.total_ms, padded.total_ms),
            code=_code(where[0][1], where[0][2]),
        ), base, padded))
    return fixes
