"""The advisor's layout changes applied to a kernel's pseudo-warps: arrays transposed, arrays
of structs as one array per field, accesses exchanged inside 32x32 tiles or inside a row's loops
(the addresses remapped; warps, cache and model then run again on them).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..frontend.tracefile import Trace
from ..memory.shared import array_layouts, array_name, transposed_addresses
from ..prediction import RunOptions
from ..soa import soa_addresses, struct_arrays
from ..tile_exchange import tile_exchanged_addresses
from ..warps import Origin, WarpTrace


def remapped(trace: Trace, region: int, wt: WarpTrace, opts: RunOptions) -> WarpTrace:
    """The pseudo-warps with the addresses of the layout changes of ``opts`` (the advisor's
    fixes): transposed arrays, structs as arrays, accesses exchanged inside 32x32 tiles (a
    padded shared-memory transposition) or inside a row's loops (a warp per row)."""
    if opts.transpose:
        wt = _transposed(trace, wt, opts.transpose)
    if opts.soa:
        wt = _as_soa(trace, wt, opts.soa)
    if opts.tile_exchange:
        wt = _tile_exchanged(trace, wt, opts.tile_exchange)
    if opts.row_exchange:
        inner = {b for lp in trace.header.loops if lp.region == region
                 and lp.depth > wt.grid_dims for b in lp.blocks}
        wt = _tile_exchanged(trace, wt, opts.row_exchange, inner)
    return wt


def _transposed(trace: Trace, wt: WarpTrace, arrays: tuple[str, ...]) -> WarpTrace:
    """The warp trace with the given 2-D arrays' addresses remapped to transposed layouts."""
    h = trace.header
    layouts = array_layouts(h.ir_text)
    moves = []
    for arr in arrays:
        lay, base = layouts.get(arr), h.globals.get(arr)
        if lay is None or base is None or len(lay.dims) < 2:
            continue
        moves.append(([m.id for m in h.mem if array_name(m.base) == arr], base, lay))
    moved = frozenset(s for sids, _, _ in moves for s in sids)
    return dataclasses.replace(
        wt, addr=transposed_addresses(wt, moves), origin=Origin(wt, None, moved)
    )


def _as_soa(trace: Trace, wt: WarpTrace, arrays: tuple[str, ...]) -> WarpTrace:
    """The warp trace with the given arrays of structs remapped to one array per field
    (soa.py)."""
    h = trace.header
    structs = struct_arrays(h.ir_text)
    moves = [([m.id for m in h.mem if array_name(m.base) == a], h.globals[a], structs[a])
             for a in arrays if a in structs and a in h.globals]
    moved = frozenset(s for sids, _, _ in moves for s in sids)
    access = np.array([m.bytes for m in h.mem] or [4], np.int64)
    return dataclasses.replace(
        wt, addr=soa_addresses(wt, moves, access), origin=Origin(wt, None, moved)
    )


def _tile_exchanged(
    trace: Trace, wt: WarpTrace, arrays: tuple[str, ...], blocks: set[int] | None = None
) -> WarpTrace:
    """The warp trace with the given 2-D arrays' accesses (those in ``blocks`` only, when
    given) exchanged inside 32x32 tiles (tile_exchange.py)."""
    h = trace.header
    layouts = array_layouts(h.ir_text)
    moves = [([m.id for m in h.mem if array_name(m.base) == a
               and (blocks is None or m.block in blocks)], h.globals[a],
              layouts[a].dims[-1], layouts[a].elem_bytes)
             for a in arrays if a in h.globals and a in layouts and len(layouts[a].dims) >= 2]
    moved = frozenset(s for sids, *_ in moves for s in sids)
    return dataclasses.replace(
        wt, addr=tile_exchanged_addresses(wt, moves, 32), origin=Origin(wt, None, moved)
    )
