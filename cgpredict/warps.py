"""Warp formation (SPEC §2.2): pseudo-threads -> blocks -> pseudo-warps -> warp instructions.

One iteration of the mapped loops of a region is a pseudo-thread: for a 2-D grid the depth-1
loop is y and the depth-2 loop is x; for a 1-D grid the depth-1 loop is x. Threads are grouped
into blocks (x fastest) and 32 consecutive threads of a block form a warp. A warp memory
instruction is the r-th execution of one static memory instruction by the lanes of the warp
that execute it: when every lane runs the same instruction sequence this is the k-th memory
event of every thread; under divergence (branches, trip counts that differ between lanes) it
is a masked instruction of fewer lanes, as the GPU executes it. A warp's instructions are
numbered (k) in a program-like issue order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numba import njit

from .block import Block, MappingError
from .frontend.loop_bounds import header_span
from .frontend.tracefile import ADDRESS_MASK, TAG_EXIT, TAG_LOOP, TAG_MARKERS, Trace
from .hashing import appended, grown_ids, hash_slot, hash_table
from .remainder_first import remainder_shifts
from .warp_order import (
    EVENT_DTYPE,
    WARP_SIZE,
    OrderedEvents,
    event_records,
    order_events,
    thread_events,
)
from .warp_regroup import MovedEvents, regroup_lazily

__all__ = [
    "EVENT_DTYPE",
    "WARP_SIZE",
    "Dependence",
    "Origin",
    "WarpTrace",
    "form_warps",
    "form_warps_auto",
    "map_kernel",
    "mapped_loops",
    "perfectly_nested",
    "single_thread",
]


@dataclass(frozen=True)
class Dependence:
    """Locations one pseudo-thread writes and another reads or writes in the same launch."""

    addresses: int
    store_ids: tuple[int, ...]
    other_ids: tuple[int, ...]
    forwarded: bool = False  # carried in a register by the compiler: no addresses to show


@dataclass(frozen=True)
class Origin:
    """The warp trace another was derived from, so that the memory analysis reuses its
    per-instruction results: ``inst``: the index there of every warp instruction (None: the
    same instructions, in the same order); ``moved``: the static instructions whose
    addresses changed (a transposed array), whose results are computed anew."""

    trace: WarpTrace
    inst: np.ndarray | None = None
    moved: frozenset[int] = frozenset()


class EventColumn:
    """A WarpTrace column of per-event values (``addr``, ``lane``): an array, or, for warps
    regrouped for another block shape, the ``MovedEvents`` that copies them on the first
    read (warp_regroup); ``count`` says how many events without that copy."""

    def __init__(self, index: int) -> None:
        self.index = index  # its column in MovedEvents.columns()

    def __set_name__(self, owner, name: str) -> None:
        self.slot = f"_{name}_column"

    def __get__(self, obj, owner=None) -> np.ndarray:
        if obj is None:  # the class's: no default value (dataclasses asks)
            raise AttributeError(self.slot)
        value = obj.__dict__[self.slot]
        if isinstance(value, MovedEvents):
            value = value.columns()[self.index]
            obj.__dict__[self.slot] = value
        return value

    def __set__(self, obj, value) -> None:
        obj.__dict__[self.slot] = value

    def count(self, obj) -> int:
        """Events in ``obj``'s column, read or not."""
        return len(obj.__dict__[self.slot])


@dataclass(frozen=True)
class WarpTrace:
    """The memory events of one launch in warp order, with the grid that produced them: per
    event its address and lane, per warp instruction its first event, warp, k and static
    instruction (``OrderedEvents``' columns: 9 bytes an event, where records of every field
    took 27 and were written by every block shape and read by every pass)."""

    grid_dims: int
    block: Block
    grid_x: int  # pseudo-threads along x (trace size)
    grid_y: int
    addr: np.ndarray = EventColumn(0)  # uint64 per event, in (warp, k, lane) order
    lane: np.ndarray = EventColumn(1)  # uint8 per event
    inst_start: np.ndarray  # int64: index in addr of each warp instruction's first event
    inst_warp: np.ndarray  # int64: the warp of every warp instruction
    inst_k: np.ndarray  # int64: its index within its warp (issue order)
    inst_sid: np.ndarray  # int64: its static instruction
    n_threads: int  # pseudo-threads that made at least one memory event
    n_warps: int
    divergent_insts: int
    unmapped_events: int
    dependence: Dependence | None
    origin: Origin | None = field(default=None, compare=False, repr=False)
    # what the memory analysis derives from these warps alone (patterns, transactions in
    # issue order: memory._memo), kept while they live; never copied by dataclasses.replace
    derived: dict = field(default_factory=dict, init=False, compare=False, repr=False)

    @property
    def n_insts(self) -> int:
        return len(self.inst_start)

    @property
    def n_events(self) -> int:
        return WarpTrace.__dict__["addr"].count(self)

    @property
    def ordered(self) -> OrderedEvents:
        return OrderedEvents(
            self.addr, self.lane, self.inst_start, self.inst_warp, self.inst_k, self.inst_sid,
            self.n_threads, self.n_warps, self.divergent_insts,
        )  # fmt: skip

    @property
    def events(self) -> np.ndarray:
        """The events as EVENT_DTYPE records (a copy, for inspection and tests)."""
        return event_records(self.ordered, self.grid_x, self.grid_y, self.block)

    @classmethod
    def from_records(
        cls, grid_dims: int, block: Block, grid_x: int, grid_y: int, events: np.ndarray,
        inst_start: np.ndarray, n_threads: int, n_warps: int, divergent_insts: int = 0,
        unmapped_events: int = 0, dependence: Dependence | None = None,
    ) -> WarpTrace:  # fmt: skip
        """A WarpTrace from EVENT_DTYPE records in (warp, k, lane) order (tests, tools)."""
        starts = np.asarray(inst_start, np.int64)
        first = events[starts]
        return cls(
            grid_dims, block, grid_x, grid_y, np.ascontiguousarray(events["addr"], np.uint64),
            np.ascontiguousarray(events["lane"], np.uint8), starts,
            first["warp"].astype(np.int64), first["k"].astype(np.int64),
            first["sid"].astype(np.int64), n_threads, n_warps, divergent_insts,
            unmapped_events, dependence,
        )  # fmt: skip

    @property
    def blocks(self) -> int:
        return _ceil(self.grid_x, self.block.x) * _ceil(self.grid_y, self.block.y)


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def mapped_loops(trace: Trace, region: int) -> tuple[list[int], list[int]]:
    """Ids of the depth-1 and depth-2 loops of a region."""
    loops = [lp for lp in trace.header.loops if lp.region == region]
    return ([lp.id for lp in loops if lp.depth == 1], [lp.id for lp in loops if lp.depth == 2])


def single_thread(trace: Trace, region: int) -> bool:
    """True for a kernel given by ``--function`` whose function has no loop left: it is
    predicted as one GPU thread running the whole call."""
    info = trace.header.region(region)
    return info.line == 0 and not mapped_loops(trace, region)[0]


def marked_loop_gone(trace: Trace, region: int) -> int | None:
    """The line of the loop that a pragma region would map in place of its marked ``for``
    when the compiler removed that one (a loop of one trip, ``for (i = 0; i < 1; i++)``),
    else None: an inner loop is then no grid of threads (eq. (MG0), docs/models.md)."""
    info = trace.header.region(region)
    span = header_span(trace.header.source_text, info.line) if info.line else None
    lines = [lp.line for lp in trace.header.loops if lp.region == region]
    # a line outside the region's text is an inlined function's: no evidence either way
    if span is None or not lines or min(lines) <= span[1] or max(lines) > info.end_line:
        return None
    return min(lines)


def carries(trace: Trace, region: int, depth: int) -> bool:
    """True when a loop of the region at ``depth`` carries a dependence through memory that
    the compiler forwarded in a register (so the trace shows no read of it)."""
    return any(lp.carried for lp in trace.header.loops if lp.region == region and lp.depth == depth)


def perfectly_nested(trace: Trace, region: int, launch: int, is_store: np.ndarray) -> bool:
    """True when a 2-D mapping is possible: one depth-1 and one depth-2 loop, and no store of
    a depth-1 iteration outside the depth-2 loop (loads there are loop invariants the compiler
    hoisted out of the x loop)."""
    d1, d2 = mapped_loops(trace, region)
    if len(d1) != 1 or len(d2) != 1:
        return False
    ev = np.ascontiguousarray(trace.launch_events(launch), dtype=np.uint64)
    in_d1, in_d2 = _loop_sets(d1, d2)
    return not _store_outside_depth2(ev, in_d1, in_d2, np.asarray(is_store, np.bool_))


def form_warps_auto(
    trace: Trace,
    region: int,
    launch: int,
    block2: Block,
    block1: Block,
    is_store: np.ndarray,
    cache: dict | None = None,
) -> WarpTrace:
    """SPEC §2.2's automatic grid: 2-D when the two outer loops are perfectly nested and carry
    no inter-thread dependence, else 1-D."""
    if perfectly_nested(trace, region, launch, is_store):
        wt = form_warps(trace, region, launch, 2, block2, is_store, cache)
        if wt.dependence is None:
            return wt
    return form_warps(trace, region, launch, 1, block1, is_store, cache)


@njit(cache=True, nogil=True)
def _loop_step(e, tag, in_d1, in_d2, cur1, cur2, open2):  # pragma: no cover - numba
    """(depth-1 index, depth-2 index, depth-2 iteration open) after loop marker ``e``: a
    depth-1 iteration closes any depth-2 one, a depth-2 iteration is open only inside a
    depth-1 one, a depth-2 loop's exit closes it."""
    loop = (e >> 32) & 0xFFFF
    if tag == TAG_LOOP:
        if loop < in_d1.shape[0] and in_d1[loop]:
            return np.int64(e & 0xFFFFFFFF), cur2, False
        if loop < in_d2.shape[0] and in_d2[loop]:
            return cur1, np.int64(e & 0xFFFFFFFF), cur1 >= 0
    elif loop < in_d2.shape[0] and in_d2[loop]:
        return cur1, cur2, False
    return cur1, cur2, open2


@njit(cache=True, nogil=True)
def _store_outside_depth2(ev, in_d1, in_d2, is_store):  # pragma: no cover - numba
    """True when a store event lies outside every open depth-2 iteration (the loop state of
    ``map_kernel``): one pass, no per-event arrays (the launch may hold millions)."""
    cur1, cur2 = np.int64(-1), np.int64(-1)
    open2 = False
    for t in range(ev.shape[0]):
        e = ev[t]
        tag = e >> 48
        if tag == TAG_LOOP or tag == TAG_EXIT:
            cur1, cur2, open2 = _loop_step(e, tag, in_d1, in_d2, cur1, cur2, open2)
        elif tag < TAG_MARKERS and not open2 and is_store[tag]:
            return True
    return False


@njit(cache=True, nogil=True)
def map_kernel(ev, in_d1, in_d2, mode):  # pragma: no cover - numba
    """``_map_events`` in one pass over the events, with the loop
    state of ``_loop_step``: (tx, ty, sid, addr) of each memory event a thread makes
    (mode 2: inside an open depth-2 iteration, x = its index, y = the depth-1 index; mode 1:
    inside a depth-1 iteration, x = its index; mode 0: every memory event, thread 0), the
    number of memory events, and the depth-1 and depth-2 extents."""
    n = ev.shape[0]
    n_mem = 0
    out_tx = np.empty(n, np.int32)  # at most one per event; the markers leave a slack
    out_ty = np.empty(n, np.int32)  # (a grid extent fits: the trace has fewer events)
    out_sid = np.empty(n, np.uint16)
    out_addr = np.empty(n, np.uint64)
    max1, max2 = -1, -1
    cur1, cur2 = -1, -1
    open2 = False
    m = 0
    for t in range(n):
        e = ev[t]
        tag = e >> 48
        if tag == TAG_LOOP or tag == TAG_EXIT:
            cur1, cur2, open2 = _loop_step(e, tag, in_d1, in_d2, cur1, cur2, open2)
            max1, max2 = max(max1, cur1), max(max2, cur2)
            continue
        if tag >= TAG_MARKERS:
            continue
        n_mem += 1
        if mode == 2:
            if not open2:
                continue
            x, y = cur2, cur1
        elif mode == 1:
            if cur1 < 0:
                continue
            x, y = cur1, np.int64(0)
        else:
            x, y = np.int64(0), np.int64(0)
        out_tx[m] = np.int32(x)
        out_ty[m] = np.int32(y)
        out_sid[m] = np.uint16(tag)
        out_addr[m] = e & np.uint64(ADDRESS_MASK)
        m += 1
    return out_tx[:m], out_ty[:m], out_sid[:m], out_addr[:m], n_mem, max1 + 1, max2 + 1


def _loop_sets(d1: list[int], d2: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """Per loop id, whether it is one of the depth-1 loops ``d1`` / depth-2 loops ``d2``."""
    size = max(d1 + d2 + [0]) + 1
    in_d1, in_d2 = np.zeros(size, np.bool_), np.zeros(size, np.bool_)
    in_d1[d1] = True
    in_d2[d2] = True
    return in_d1, in_d2


def form_warps(
    trace: Trace,
    region: int,
    launch: int,
    grid_dims: int,
    block: Block,
    mem_kinds: np.ndarray,
    cache: dict | None = None,
) -> WarpTrace:
    """Pseudo-warps of one recorded launch (see the module docstring).

    mem_kinds: bool per static memory instruction, True for stores (dependence detection).
    cache: keeps what of (region, launch, grid_dims) does not depend on the block shape (the
    mapped events, where each thread's events lie, the inter-thread dependence), and the
    warps of the first shape formed, for the next block analysed (a block-shape sweep).
    """
    tx, ty, sid, addr, gx, gy, unmapped, grid_dims = _kept(
        cache, ("mapped", region, launch, grid_dims),
        lambda: _map_events(trace, region, launch, grid_dims),
    )  # fmt: skip
    at = (region, launch, grid_dims)
    threads = _kept(cache, ("threads", *at), lambda: thread_events(tx, ty, gx, gy))
    dep = _kept(cache, ("dependence", *at), lambda: _launch_dependence(
        trace, region, grid_dims, addr, tx, ty, gx, sid, mem_kinds))  # fmt: skip
    # a block as wide as whole warps regroups the warps of the first shape formed (a sweep)
    first = cache.get(("ordered", *at)) if cache is not None else None
    got = regroup_lazily(first.ordered, gx, gy, first.block, block) if first is not None else None
    o, origin = (got[0], Origin(first, got[1])) if got is not None else (None, None)
    if o is None:
        shifts = _kept(cache, ("remainder", *at), lambda: _remainder_shifts(
            trace, region, launch, grid_dims))  # fmt: skip
        o = order_events(tx, ty, sid, addr, gx, gy, block, threads, shifts)
    wt = WarpTrace(
        grid_dims, block, gx, gy, o.addr, o.lane, o.inst_start, o.inst_warp, o.inst_k,
        o.inst_sid, o.n_threads, o.n_warps, o.divergent, unmapped, dep, origin,
    )  # fmt: skip
    if cache is not None and first is None:
        cache[("ordered", *at)] = wt
    return wt


def _kept(cache: dict | None, key: tuple, compute):
    """``compute()``, kept in ``cache`` under ``key`` for the next block shape."""
    if cache is None:
        return compute()
    if key not in cache:
        cache[key] = compute()
    return cache[key]


def _remainder_shifts(trace: Trace, region: int, launch: int, grid_dims: int):
    """The rank shifts of eq. (W5) (``remainder_first``) of a 1-D launch's mapped events, or
    None (a 2-D grid, or no lane moves)."""
    if grid_dims != 1:
        return None
    d1, d2 = mapped_loops(trace, region)
    if not d1:
        return None
    return remainder_shifts(trace, region, launch, grid_dims, _loop_sets(d1, d2)[0])


def _launch_dependence(trace, region, grid_dims, addr, tx, ty, gx, sid, mem_kinds):
    """The launch's inter-thread dependence (``_dependence``), or one the compiler forwarded
    in a register when a mapped loop carries one (no addresses to show)."""
    dep = _dependence(addr, tx, ty, gx, sid, mem_kinds)
    if dep is None and any(carries(trace, region, d) for d in range(1, grid_dims + 1)):
        dep = Dependence(0, (), (), forwarded=True)
    return dep


def _map_events(trace: Trace, region: int, launch: int, grid_dims: int):
    """(tx, ty, sid, addr, gx, gy, unmapped, grid_dims): each memory event's thread
    coordinates, static id and address, the grid's extent and its dimensions (1 for a function
    without a loop); independent of the block shape."""
    ev = np.asarray(trace.launch_events(launch))
    d1, d2 = mapped_loops(trace, region)
    gone = marked_loop_gone(trace, region)  # eq. (MG0)
    if gone is not None:
        raise MappingError(
            f"the compiler removed the loop marked at line {trace.header.region(region).line} "
            f"(it runs at most once): the loop at line {gone} would be mapped to threads in "
            f"its place, a serial loop is no grid; mark a loop whose iterations are threads"
        )
    if not d1 and single_thread(trace, region):
        grid_dims, d2 = 1, []
    elif not d1:
        raise MappingError(
            "no loop left to map to threads: the compiler removed or replaced "
            "the loop nest (a constant result, a memset/memcpy, results the program "
            "never uses, or a size that gives it zero or one iteration); see "
            "`cgpredict trace-info`"
        )
    if len(d1) > 1:
        raise MappingError(
            f"{len(d1)} top-level loops in one kernel: mark each loop nest with "
            f"its own '#pragma cgp kernel' (one GPU launch each)"
        )
    if grid_dims == 2 and not d2:
        raise MappingError("a 2-D grid needs two nested loops; use --grid 1")
    mode = grid_dims if d1 else 0  # 0: a whole function without a loop, one thread runs it
    in_d1, in_d2 = _loop_sets(d1, d2)
    tx, ty, sid, addr, n_mem, ext1, ext2 = map_kernel(
        np.ascontiguousarray(ev, dtype=np.uint64), in_d1, in_d2, mode
    )
    gx, gy = {0: (1, 1), 1: (ext1, 1), 2: (ext2, ext1)}[mode]
    unmapped = int(n_mem - len(tx))
    return tx, ty, sid, addr, gx, gy, unmapped, grid_dims


def _dependence(addr, tx, ty, gx: int, sid, is_store: np.ndarray) -> Dependence | None:
    """Addresses written by one pseudo-thread (ty * gx + tx) and touched by another (SPEC
    §2.2), from the mapped events in program order (the answer does not depend on it)."""
    if not len(addr):
        return None
    store = np.asarray(is_store, np.bool_)
    n_shared, touched = _shared_addresses(addr, tx, ty, max(gx, 1), sid, store)
    if not n_shared:
        return None
    sids = np.flatnonzero(touched)
    stores = tuple(int(s) for s in sids if store[s])
    others = tuple(int(s) for s in sids if not store[s])
    return Dependence(int(n_shared), stores, others)


@njit(cache=True, nogil=True)
def _shared_addresses(addr, tx, ty, gx, sid, is_store):  # pragma: no cover - numba
    """(count, touched): the written addresses that two or more threads touch, and per static
    instruction whether it touches one. A hash table of the distinct written addresses
    (``grown_ids``: it stays in the CPU's caches) with the thread that first wrote each, then
    one pass over the events (and one more only when an address is shared): no sort."""
    touched = np.zeros(is_store.shape[0], np.bool_)
    keys, used, ids, down, first = _written_addresses(addr, tx, ty, gx, sid, is_store)
    m = first.shape[0]
    if m == 0:
        return 0, touched
    shared = np.zeros(m, np.bool_)
    count = 0
    for t in range(addr.shape[0]):  # which of them a thread other than the first touches
        h = hash_slot(keys, used, np.uint64(addr[t]), down)
        if used[h]:
            j = ids[h]
            if not shared[j] and np.int64(ty[t]) * gx + np.int64(tx[t]) != first[j]:
                shared[j] = True
                count += 1
    if count == 0:
        return 0, touched
    for t in range(addr.shape[0]):  # who touches those
        if not touched[sid[t]]:
            h = hash_slot(keys, used, np.uint64(addr[t]), down)
            if used[h] and shared[ids[h]]:
                touched[sid[t]] = True
    return count, touched


@njit(cache=True, nogil=True)
def _written_addresses(addr, tx, ty, gx, sid, is_store):  # pragma: no cover - numba
    """(keys, used, ids, shift, first): a hash table of the addresses the events store to,
    each with an id 0, 1, ... in order of first store, and per id the thread (ty * gx + tx)
    of that first store."""
    keys, used, down = hash_table(1 << 11)
    ids = np.empty(keys.shape[0], np.int64)
    first = np.empty(1 << 11, np.int64)
    m = 0
    for t in range(addr.shape[0]):
        if not is_store[sid[t]]:
            continue
        v = np.uint64(addr[t])
        h = hash_slot(keys, used, v, down)
        if used[h]:
            continue
        keys[h], used[h], ids[h] = v, True, m
        first = appended(first, m, np.int64(ty[t]) * gx + np.int64(tx[t]))
        m += 1
        if 2 * m > keys.shape[0]:
            keys, used, ids, down = grown_ids(keys, used, ids)
    return keys, used, ids, down, first[:m]
