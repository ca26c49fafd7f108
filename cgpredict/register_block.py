"""Register blocking along the slowest thread axis (the advisor's fix for a 2-D stencil,
issue #26): each thread computes R consecutive outputs along y (rows), so the grid has
ceil(gy / R) rows of threads (a guard covers the last, short one), and an input the thread
loads for more than one of its R outputs is loaded once and kept in a register.

In the trace: pseudo-thread (x, y) becomes output y mod R of thread (x, y div R), its events
after those of the outputs before it (the unrolled body, output after output); a load of an
address an earlier output of the same thread loaded is dropped (register reuse; repeats
within one output are left as the baseline has them), every store is kept; then the warps
are formed anew (``warp_order.order_events``) in blocks of the same outputs (``block_of``:
32x32 threads become 32x(32/R) threads of R outputs each). Keeping a value
across a store is only valid when no store can alias the load, so the kernel must declare
its arrays ``__restrict__`` (distinct): a launch that stores where a reused load reads (an
in-place stencil) is refused.

The launch model (kernel/launch.py, ``LaunchContext.reg_block``) then counts every basic
block R times a thread (the instructions of R outputs: the address arithmetic the outputs
could share is not taken off), each static load as many times as its warp instructions
left (``RegisterBlock.scale``), the grid ceil(rows / R) threads high, and a thread's
critical path as one output's (its R outputs are independent once the loads may be hoisted
past the stores: ``__restrict__``).

Registers (first principles): nvcc hoists the loads of an unrolled straight-line body to
overlap them, so every distinct value a thread loads is live at once, and each output's sum
too; the plain kernel held its own loads and one sum per output. The extra 4-byte registers
a thread needs are (distinct loads a thread after - loads a thread before + (R - 1) x stores
a thread before) x the words of an element; the occupancy calculator (SPEC §2.5) then limits
the resident warps by them."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from .block import Block
from .warp_order import blocks_across, order_events, thread_of_lane
from .warps import WarpTrace

__all__ = ["NOTE", "RegisterBlock", "RegisterBlockError", "RegisterBlockFigures", "grid_rows",
           "loads_text", "reg_block_figures", "reg_block_note", "register_blocked"]

class RegisterBlockError(ValueError):
    """Why a kernel cannot be register-blocked (the advisor says so in a note)."""


@dataclass(frozen=True)
class RegisterBlock:
    """A register-blocked launch: outputs a thread, per static load the share of its warp
    instructions per thread left (after / R x before), and the registers it adds."""

    rows: int  # R: outputs a thread computes along y
    scale: tuple[tuple[int, float], ...]  # (sid, warp insts a thread after / (R x before))
    loads_before: float  # load events a (traced) thread before
    loads_after: float  # load events a thread after: distinct values kept in registers
    extra_registers: int  # 4-byte registers a thread adds (module docstring)
    compulsory_bytes: int = 0  # bytes the traced launch must move at least (compulsory_bytes)
    outputs: int = 0  # traced pseudo-threads before (the outputs those bytes serve)


def _thread_order(wt: WarpTrace, rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per event (in the new program order, returned as a permutation of wt's events): the new
    thread (y div R) x gx + x, and the output y mod R it belongs to."""
    counts = np.diff(np.append(wt.inst_start, wt.n_events))
    nbx, wpb = blocks_across(wt.grid_x, wt.block)
    key = _new_keys(np.repeat(wt.inst_warp, counts), wt.lane, max(wt.grid_x, 1), wt.grid_y,
                    wt.block.x, wt.block.y, nbx, wpb, rows)
    # events are in (warp, k, lane) order: stable on (new thread, output), each old thread's
    # events keep their program order
    order = np.argsort(key, kind="stable")
    key = key[order]
    return order, key // rows, key % rows


@njit(cache=True, nogil=True)
def _new_keys(warp, lane, gx, gy, bx, by, nbx, wpb, rows):  # pragma: no cover - numba
    """Per event: new thread x R + output, from its pseudo-thread (thread_of_lane)."""
    out = np.empty(warp.shape[0], np.int64)
    for e in range(warp.shape[0]):
        t = thread_of_lane(warp[e], np.int64(lane[e]), gx, gy, bx, by, nbx, wpb)
        x, y = t % gx, t // gx
        out[e] = ((y // rows) * gx + x) * rows + y % rows
    return out


def _reused(new: np.ndarray, sub: np.ndarray, addr: np.ndarray,
            load: np.ndarray) -> np.ndarray:
    """True per event (grouped by new thread, its outputs in order) that loads an address
    an earlier output of its thread loaded."""
    return _reused_scan(new, sub, addr, load)


@njit(cache=True, nogil=True)
def _reused_scan(new, sub, addr, load):  # pragma: no cover - numba
    """``_reused``: each thread's loads compared with its earlier outputs' loads (a thread
    makes a few dozen: a scan is cheaper than a sort of the whole launch)."""
    n = new.shape[0]
    out = np.zeros(n, np.bool_)
    start = 0
    while start < n:
        end = start
        while end < n and new[end] == new[start]:
            end += 1
        for e in range(start, end):
            if not load[e] or sub[e] == sub[start]:
                continue
            for f in range(start, e):
                if sub[f] == sub[e]:
                    break  # the events of this output: not an earlier one
                if load[f] and addr[f] == addr[e]:
                    out[e] = True
                    break
        start = end
    return out


def _check_no_alias(addr: np.ndarray, sid: np.ndarray, load: np.ndarray,
                    store: np.ndarray) -> None:
    """RegisterBlockError when an address of a reused load (``load``: per event, its static
    load reuses a value) lies within the span of a store of the launch (the array written is
    also read: an in-place stencil, by name or through a pointer)."""
    if not load.any():
        return
    st = np.flatnonzero(store)
    for s in np.unique(sid[st]):
        a = addr[st][sid[st] == s]
        lo, hi = int(a.min()), int(a.max())
        if ((addr[load] >= lo) & (addr[load] <= hi)).any():
            raise RegisterBlockError(
                "the launch stores into the array it reads (an in-place stencil): a value "
                "kept in a register could be stale after the store")


def register_blocked(wt: WarpTrace, rows: int, is_store: np.ndarray,
                     elem_bytes: np.ndarray) -> tuple[WarpTrace, RegisterBlock]:
    """``wt`` with each thread computing ``rows`` consecutive outputs along y and reusing
    its loads (module docstring), its warps formed anew (SPEC §2.2), and what that changes;
    RegisterBlockError when the launch cannot be."""
    if wt.grid_dims != 2:
        raise RegisterBlockError("register blocking along rows needs a 2-D kernel")
    if rows < 2:
        raise RegisterBlockError(f"{rows} outputs a thread: nothing to block")
    if wt.grid_y < rows:
        raise RegisterBlockError(f"{wt.grid_y} rows of threads, fewer than {rows}")
    counts = np.diff(np.append(wt.inst_start, wt.n_events))
    sid0 = np.repeat(wt.inst_sid, counts)
    store = np.asarray(is_store, np.bool_)[sid0]
    order, new, sub = _thread_order(wt, rows)
    addr, sid = wt.addr[order], sid0[order]
    reused = _reused(new, sub, addr, ~store[order])
    reusing = np.bincount(sid[reused], minlength=len(is_store)) > 0  # per static load
    _check_no_alias(wt.addr, sid0, reusing[sid0], store)
    keep = ~reused
    gx = max(wt.grid_x, 1)
    gy = -(-wt.grid_y // rows)
    block = block_of(wt.block, rows)
    o = order_events((new[keep] % gx).astype(np.int32), (new[keep] // gx).astype(np.int32),
                     sid[keep], addr[keep], gx, gy, block)
    out = dataclasses.replace(
        wt, block=block, grid_y=gy, addr=o.addr, lane=o.lane, inst_start=o.inst_start,
        inst_warp=o.inst_warp, inst_k=o.inst_k, inst_sid=o.inst_sid, n_threads=o.n_threads,
        n_warps=o.n_warps, divergent_insts=o.divergent, dependence=None, origin=None)
    rb = _summary(wt, out, rows, sid0, sid[keep], store, np.asarray(elem_bytes))
    return out, dataclasses.replace(
        rb, compulsory_bytes=compulsory_bytes(wt, sid0, np.asarray(elem_bytes)),
        outputs=wt.n_threads)


def compulsory_bytes(wt: WarpTrace, sid: np.ndarray, elem_bytes: np.ndarray) -> int:
    """A lower bound of the bytes a launch moves from or to DRAM: per array (static
    instructions whose address spans overlap), the distinct elements of its busiest static
    instruction times their bytes (any one instruction's elements are part of the array's
    footprint; counted in elements, not sectors, so that it stays a lower bound at any
    size: a stencil reads one element of each input and writes one a point). ``sid``: every
    event's static instruction. Kept with the warps (``WarpTrace.derived``): every R asks."""
    if "compulsory_bytes" in wt.derived:
        return wt.derived["compulsory_bytes"]
    if not wt.n_events:
        return 0
    n = int(wt.inst_sid.max()) + 1
    lo = np.full(n, np.iinfo(np.int64).max, np.int64)
    hi = np.full(n, -1, np.int64)
    addr = wt.addr.astype(np.int64)
    np.minimum.at(lo, wt.inst_sid, np.minimum.reduceat(addr, wt.inst_start))
    np.maximum.at(hi, wt.inst_sid, np.maximum.reduceat(addr, wt.inst_start))
    events = np.bincount(sid, minlength=n)
    sids = np.flatnonzero(events)
    total, reach, best = 0, -1, -1
    for s in sids[np.argsort(lo[sids], kind="stable")]:  # a group ends where a gap begins
        if lo[s] > reach and best >= 0:
            total += _footprint(addr[sid == best], int(elem_bytes[best]))
            best = -1
        reach = max(reach, int(hi[s]))
        best = s if best < 0 or events[s] > events[best] else best
    total += _footprint(addr[sid == best], int(elem_bytes[best]))
    wt.derived["compulsory_bytes"] = total
    return total


def _footprint(addr: np.ndarray, elem: int) -> int:
    """Distinct elements of ``elem`` bytes among ``addr``, times ``elem`` (a bitmap over
    their span when it is small, else a sort; addresses in one element count once)."""
    lo = int(addr.min())
    span = (int(addr.max()) - lo) // elem + 1
    if span > 16 * len(addr):
        return len(np.unique((addr - lo) // elem)) * elem
    mark = np.zeros(span, np.bool_)
    mark[(addr - lo) // elem] = True
    return int(np.count_nonzero(mark)) * elem


def _summary(wt: WarpTrace, out: WarpTrace, rows: int, sid_before: np.ndarray,
             sid_after: np.ndarray, store: np.ndarray, elem_bytes: np.ndarray) -> RegisterBlock:
    """The RegisterBlock of ``wt`` blocked into ``out`` (``sid_*``: every event's static
    instruction; ``store``: per event of ``wt``)."""
    n = int(max(sid_before.max(initial=0), out.inst_sid.max(initial=0))) + 1
    w0 = np.bincount(wt.inst_sid, minlength=n) / max(wt.n_warps, 1)
    w1 = np.bincount(out.inst_sid, minlength=n) / max(out.n_warps, 1)
    scale = tuple((int(s), float(w1[s] / (rows * w0[s]))) for s in np.flatnonzero(w0))
    loads0 = float((~store).sum()) / max(wt.n_threads, 1)
    stores0 = float(store.sum()) / max(wt.n_threads, 1)
    is_st = np.zeros(n, np.bool_)
    is_st[sid_before[store]] = True
    loads1 = float((~is_st[sid_after]).sum()) / max(out.n_threads, 1)
    loaded = sid_before[~store]
    words = math.ceil(float(elem_bytes[loaded].mean()) / 4) if len(loaded) else 1
    extra = words * (loads1 - loads0 + (rows - 1) * stores0)
    return RegisterBlock(rows=rows, scale=scale, loads_before=loads0, loads_after=loads1,
                         extra_registers=max(int(math.ceil(extra - 1e-9)), 0))


def block_of(block: Block, rows: int) -> Block:
    """The block of a register-blocked launch: the same outputs a block (``block.y / R``
    rows of threads, R outputs each) when R divides its rows, so that a block covers the same
    tile of the grid and its registers fit as before; else the same block."""
    return Block(block.x, block.y // rows) if block.y % rows == 0 else block


def grid_rows(rows_before: float, rows: int) -> float:
    """Threads along y once each computes ``rows`` outputs (a guard covers the tail)."""
    return float(math.ceil(rows_before / rows - 1e-9))


#: How a register-blocked kernel's report says so: "<kernel>: <NOTE> R rows a thread: ...".
NOTE = "register-blocked"


@dataclass(frozen=True)
class RegisterBlockFigures:
    """What a register-blocked kernel's report carries (``KernelReport.reg_block``): its
    loads and registers a thread, and the compulsory DRAM bytes of its traced launch, which
    the advisor checks its prediction against (advisor/regblock_fix.py)."""

    rows: int  # R: outputs a thread computes along y
    loads_after: float  # load events a thread after: distinct values kept in registers
    loads_before: float  # load events a traced thread before (one output)
    extra_registers: int  # 4-byte registers a thread adds
    registers: int  # registers a thread, the added ones included
    compulsory_bytes: int  # bytes the traced launch touches (its compulsory DRAM traffic)
    outputs: int  # traced outputs those bytes serve (threads before)


def reg_block_figures(rb: RegisterBlock, registers: int) -> RegisterBlockFigures:
    """The report's figures of register blocking ``rb`` with ``registers`` a thread."""
    return RegisterBlockFigures(
        rows=rb.rows, loads_after=rb.loads_after, loads_before=rb.loads_before,
        extra_registers=rb.extra_registers, registers=registers,
        compulsory_bytes=rb.compulsory_bytes, outputs=rb.outputs)


def loads_text(f: RegisterBlockFigures) -> str:
    """"R rows a thread: its loads and registers", the part of the note the advice quotes."""
    return (f"{f.rows} rows a thread: {f.loads_after:.4g} loads a thread (was "
            f"{f.loads_before:.4g} per output, {f.rows * f.loads_before:.4g} for {f.rows}), "
            f"+{f.extra_registers} registers ({f.registers} a thread)")


def reg_block_note(kernel: str, f: RegisterBlockFigures) -> str:
    """The line a register-blocked kernel's report carries: its loads and registers."""
    return (f"{kernel}: {NOTE} {loads_text(f)}; the traced launch touches "
            f"{f.compulsory_bytes} B for {f.outputs} outputs (its compulsory DRAM traffic, "
            f"the same before and after)")
