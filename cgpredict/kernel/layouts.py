"""The advisor's layout changes applied to a kernel's pseudo-warps: arrays transposed, arrays
of structs as one array per field, accesses exchanged inside 32x32 tiles or inside a row's loops
(the addresses remapped; warps, cache and model then run again on them).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..devices import GPUDevice
from ..frontend.tracefile import Trace
from ..halo import HaloError, HaloSpec, halo_setup
from ..memory.shared import array_layouts, array_name
from ..memory.transpose import transposed_addresses
from ..prediction import PredictionError, RunOptions
from ..register_block import RegisterBlock, RegisterBlockError, register_blocked
from ..row_warps import row_warp_trace
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


def halo_staged(trace: Trace, region: int, wt: WarpTrace, opts: RunOptions,
          device: GPUDevice) -> tuple[WarpTrace, HaloSpec | None]:
    """The pseudo-warps with the array of ``opts.halo`` staged in a tile with its halo (the
    advisor's halo tiling, halo.py), and the tile; one line when it cannot be."""
    name = trace.header.region(region).name
    arrays = [a for k, a in opts.halo if k == name]
    if not arrays:
        return wt, None
    try:
        return halo_setup(trace, region, wt, arrays[0], device.smem_banks,
                          device.smem_bank_bytes)
    except HaloError as exc:
        raise PredictionError(f"kernel {name}: {arrays[0]} not staged with its halo: {exc}") \
            from None


def row_warped(trace: Trace, region: int, wt: WarpTrace, opts: RunOptions
                ) -> tuple[WarpTrace, dict[int, float], float]:
    """The pseudo-warps a warp per row when ``opts.row_warp`` names the kernel (row_warps.py),
    how each basic block's executions per thread change (a block with a memory access as its
    accesses' warp instructions do, else a loop block as the row loop's accesses, any other
    block of the thread once per row, as before), and the threads launched per row."""
    h = trace.header
    name = h.region(region).name
    lanes = [n for k, n in opts.row_warp if k == name]
    if not lanes:
        return wt, {}, 1.0
    if wt.grid_dims != 1:
        raise PredictionError(f"kernel {name}: a warp per row needs a 1-D kernel")
    if lanes[0] not in (1, 2, 4, 8, 16, 32):
        raise PredictionError(f"kernel {name}: {lanes[0]} lanes per row: not a power of two "
                              f"up to 32")
    inner = {b for lp in h.loops if lp.region == region and lp.depth > 1 for b in lp.blocks}
    loop_sids = {m.id for m in h.mem if m.region == region and m.block in inner}
    if not loop_sids:
        raise PredictionError(f"kernel {name}: a warp per row needs a loop in each thread")
    out, by_sid = row_warp_trace(wt, loop_sids, lanes[0])
    looped = [v for s, v in by_sid.items() if s in loop_sids] or [1.0]
    scales = {}
    for b in h.blocks:
        if b.region == region:
            mine = [by_sid[m.id] for m in h.mem if m.block == b.id and m.id in by_sid]
            scales[b.id] = (mine[0] if mine else
                            sum(looped) / len(looped) if b.id in inner else 1.0)
    return out, scales, float(lanes[0])


def reg_blocked(trace: Trace, region: int, wt: WarpTrace, opts: RunOptions,
                device: GPUDevice) -> tuple[WarpTrace, RegisterBlock | None, RunOptions]:
    """The pseudo-warps register-blocked R rows a thread when ``opts.reg_block`` names the
    kernel (register_block.py), what that changes, and the options with the registers it
    adds; one line when it cannot be."""
    h = trace.header
    name = h.region(region).name
    rows = [r for k, r in opts.reg_block if k == name]
    if not rows:
        return wt, None, opts
    try:
        out, rb = register_blocked(wt, rows[0], np.array([m.kind == "store" for m in h.mem]),
                                   np.array([m.bytes for m in h.mem]))
    except RegisterBlockError as exc:
        raise PredictionError(f"kernel {name}: not register-blocked: {exc}") from None
    regs = opts.registers_per_thread + rb.extra_registers
    if regs > device.max_registers_per_thread:
        raise PredictionError(
            f"kernel {name}: {rows[0]} rows a thread need {regs} registers, more than "
            f"{device.max_registers_per_thread} on {device.name}")
    return out, rb, dataclasses.replace(opts, registers_per_thread=regs)
