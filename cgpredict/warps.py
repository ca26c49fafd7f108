"""Warp formation (SPEC §2.2): pseudo-threads -> blocks -> pseudo-warps -> warp instructions.

One iteration of the mapped loops of a region is a pseudo-thread: for a 2-D grid the depth-1
loop is y and the depth-2 loop is x; for a 1-D grid the depth-1 loop is x. Threads are grouped
into blocks (x fastest), 32 consecutive threads of a block form a warp, and the k-th memory
event of every thread of a warp forms the warp's k-th memory instruction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .tracefile import ADDRESS_MASK, TAG_EXIT, TAG_LOOP, TAG_MARKERS, Trace

WARP_SIZE = 32

#: One memory event in warp order.
EVENT_DTYPE = np.dtype(
    [
        ("warp", "<u4"),
        ("k", "<u4"),
        ("lane", "<u1"),
        ("sid", "<u2"),
        ("thread", "<u8"),
        ("addr", "<u8"),
    ]
)


class MappingError(ValueError):
    """The region cannot be mapped to the requested grid."""


@dataclass(frozen=True)
class Block:
    """A CUDA block shape, x fastest."""

    x: int
    y: int = 1

    @property
    def threads(self) -> int:
        return self.x * self.y

    @classmethod
    def parse(cls, text: str) -> "Block":
        parts = text.lower().split("x")
        try:
            dims = [int(p) for p in parts]
        except ValueError:
            raise MappingError(f"block shape {text!r}: want XxY, e.g. 32x8") from None
        if len(dims) not in (1, 2) or min(dims) < 1:
            raise MappingError(f"block shape {text!r}: want positive XxY, e.g. 32x8")
        return cls(dims[0], dims[1] if len(dims) == 2 else 1)

    def __str__(self) -> str:
        return f"{self.x}x{self.y}"


@dataclass(frozen=True)
class Dependence:
    """Locations one pseudo-thread writes and another reads or writes in the same launch."""

    addresses: int
    store_ids: tuple[int, ...]
    other_ids: tuple[int, ...]
    forwarded: bool = False  # carried in a register by the compiler: no addresses to show


@dataclass(frozen=True)
class WarpTrace:
    """The memory events of one launch in warp order, with the grid that produced them."""

    grid_dims: int
    block: Block
    grid_x: int  # pseudo-threads along x (trace size)
    grid_y: int
    events: np.ndarray  # EVENT_DTYPE, sorted by (warp, k, lane)
    inst_start: np.ndarray  # index in events of each warp instruction's first event
    n_threads: int  # pseudo-threads that made at least one memory event
    n_warps: int
    divergent_insts: int
    unmapped_events: int
    dependence: Dependence | None

    @property
    def n_insts(self) -> int:
        return len(self.inst_start)

    @property
    def blocks(self) -> int:
        return _ceil(self.grid_x, self.block.x) * _ceil(self.grid_y, self.block.y)


def _ceil(a: int, b: int) -> int:
    return -(-a // b)


def mapped_loops(trace: Trace, region: int) -> tuple[list[int], list[int]]:
    """Ids of the depth-1 and depth-2 loops of a region."""
    loops = [lp for lp in trace.header.loops if lp.region == region]
    return ([lp.id for lp in loops if lp.depth == 1], [lp.id for lp in loops if lp.depth == 2])


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
    ev = np.asarray(trace.launch_events(launch))
    _, _, valid2 = _indices(ev, d1, d2)
    tag = ev >> 48
    outside = (tag < TAG_MARKERS) & ~valid2
    return not (outside.any() and is_store[tag[outside].astype(np.int64)].any())


def form_warps_auto(
    trace: Trace, region: int, launch: int, block2: Block, block1: Block, is_store: np.ndarray
) -> WarpTrace:
    """SPEC §2.2's automatic grid: 2-D when the two outer loops are perfectly nested and carry
    no inter-thread dependence, else 1-D."""
    if perfectly_nested(trace, region, launch, is_store):
        wt = form_warps(trace, region, launch, 2, block2, is_store)
        if wt.dependence is None:
            return wt
    return form_warps(trace, region, launch, 1, block1, is_store)


@njit(cache=True)
def _indices_kernel(ev, in_d1, in_d2):  # pragma: no cover - numba
    n = ev.shape[0]
    i1 = np.full(n, -1, np.int64)
    i2 = np.full(n, -1, np.int64)
    valid2 = np.zeros(n, np.bool_)
    cur1, cur2 = -1, -1
    open2 = False
    for t in range(n):
        e = ev[t]
        tag = e >> 48
        if tag == TAG_LOOP or tag == TAG_EXIT:
            loop = (e >> 32) & 0xFFFF
            if tag == TAG_LOOP:
                if loop < in_d1.shape[0] and in_d1[loop]:
                    cur1 = np.int64(e & 0xFFFFFFFF)
                    open2 = False
                elif loop < in_d2.shape[0] and in_d2[loop]:
                    cur2 = np.int64(e & 0xFFFFFFFF)
                    open2 = cur1 >= 0
            elif loop < in_d2.shape[0] and in_d2[loop]:
                open2 = False
        i1[t] = cur1
        i2[t] = cur2
        valid2[t] = open2
    return i1, i2, valid2


def _indices(ev: np.ndarray, d1: list[int], d2: list[int]):
    """For every event: iteration index of the current depth-1 and depth-2 loop, and whether
    a depth-2 iteration is open inside the current depth-1 iteration."""
    size = max(d1 + d2 + [0]) + 1
    in_d1, in_d2 = np.zeros(size, np.bool_), np.zeros(size, np.bool_)
    in_d1[d1] = True
    in_d2[d2] = True
    return _indices_kernel(np.ascontiguousarray(ev, dtype=np.uint64), in_d1, in_d2)


def form_warps(
    trace: Trace, region: int, launch: int, grid_dims: int, block: Block, mem_kinds: np.ndarray
) -> WarpTrace:
    """Pseudo-warps of one recorded launch (see the module docstring).

    mem_kinds: bool per static memory instruction, True for stores (dependence detection).
    """
    ev = np.asarray(trace.launch_events(launch))
    d1, d2 = mapped_loops(trace, region)
    if not d1:
        raise MappingError("no loop left to map to threads: the compiler removed or replaced "
                           "the loop nest (a constant result, a memset/memcpy, or a single "
                           "iteration); see `cgpredict trace-info`")
    if len(d1) > 1:
        raise MappingError(f"{len(d1)} top-level loops in one kernel: mark each loop nest with "
                           f"its own '#pragma cgp kernel' (one GPU launch each)")
    if grid_dims == 2 and not d2:
        raise MappingError("a 2-D grid needs two nested loops; use --grid 1")
    i1, i2, valid2 = _indices(ev, d1, d2)
    tag = ev >> 48
    mem = tag < TAG_MARKERS
    if grid_dims == 2:
        ok = mem & valid2
        tx, ty = i2[ok], i1[ok]
        gx, gy = _extent(ev, d2), _extent(ev, d1)
    else:
        ok = mem & (i1 >= 0)
        tx, ty = i1[ok], np.zeros(int(ok.sum()), np.int64)
        gx, gy = _extent(ev, d1), 1
    unmapped = int(mem.sum() - ok.sum())
    sid = (tag[ok]).astype(np.uint16)
    addr = ev[ok] & ADDRESS_MASK
    events, inst_start, n_threads, n_warps, divergent = _order(tx, ty, sid, addr, gx, block)
    dep = _dependence(events, mem_kinds)
    if dep is None and any(carries(trace, region, d) for d in range(1, grid_dims + 1)):
        dep = Dependence(0, (), (), forwarded=True)
    return WarpTrace(
        grid_dims, block, gx, gy, events, inst_start, n_threads, n_warps, divergent, unmapped, dep
    )


def _extent(ev: np.ndarray, loops: list[int]) -> int:
    """Iterations of the given loops in one launch: the largest iteration index + 1."""
    mark = ((ev >> 48) == TAG_LOOP) & np.isin((ev >> 32) & 0xFFFF, loops)
    idx = ev[mark] & 0xFFFFFFFF
    return int(idx.max()) + 1 if len(idx) else 0


@njit(cache=True)
def _order_kernel(tx, ty, gx, bx, by, nbx, wpb, n_threads):  # pragma: no cover - numba
    """Counting sort of events into (warp, k, lane) order, O(n).

    k is the rank of an event among its thread's events (program order). Lanes of a warp
    appear in increasing order in program order (x is the inner mapped loop), so a stable
    scatter by (warp, k) leaves each warp instruction's events in lane order."""
    n = tx.shape[0]
    warp = np.empty(n, np.int64)
    lane = np.empty(n, np.int64)
    k = np.empty(n, np.int64)
    thread = np.empty(n, np.int64)
    seen = np.zeros(n_threads, np.int64)
    n_warps_max = 0
    for t in range(n):
        x, y = tx[t], ty[t]
        th = y * gx + x
        tib = (y % by) * bx + (x % bx)
        w = ((y // by) * nbx + x // bx) * wpb + tib // 32
        thread[t] = th
        warp[t] = w
        lane[t] = tib % 32
        k[t] = seen[th]
        seen[th] += 1
        if w + 1 > n_warps_max:
            n_warps_max = w + 1
    kmax = np.zeros(n_warps_max, np.int64)
    for t in range(n):
        if k[t] + 1 > kmax[warp[t]]:
            kmax[warp[t]] = k[t] + 1
    base = np.zeros(n_warps_max + 1, np.int64)
    for w in range(n_warps_max):
        base[w + 1] = base[w] + kmax[w]
    count = np.zeros(base[n_warps_max] + 1, np.int64)
    for t in range(n):
        count[base[warp[t]] + k[t] + 1] += 1
    for s in range(1, count.shape[0]):
        count[s] += count[s - 1]
    perm = np.empty(n, np.int64)
    fill = count[:-1].copy()
    for t in range(n):
        slot = base[warp[t]] + k[t]
        perm[fill[slot]] = t
        fill[slot] += 1
    starts = np.empty(count.shape[0] - 1, np.int64)
    m = 0
    for s in range(count.shape[0] - 1):
        if count[s + 1] > count[s]:
            starts[m] = count[s]
            m += 1
    return perm, warp, lane, k, thread, starts[:m]


def _order(tx, ty, sid, addr, gx: int, block: Block):
    """Sort events into warp instructions; count divergent ones."""
    n = len(tx)
    if not n:
        return np.zeros(0, EVENT_DTYPE), np.zeros(0, np.int64), 0, 0, 0
    nbx = _ceil(max(gx, 1), block.x)
    wpb = _ceil(block.threads, WARP_SIZE)
    n_threads = int((ty.max() + 1) * max(gx, 1))
    perm, warp, lane, k, thread, inst_start = _order_kernel(
        tx.astype(np.int64), ty.astype(np.int64), max(gx, 1), block.x, block.y, nbx, wpb, n_threads
    )
    out = np.empty(n, EVENT_DTYPE)
    for name, col in (
        ("warp", warp),
        ("k", k),
        ("lane", lane),
        ("sid", sid),
        ("thread", thread),
        ("addr", addr),
    ):
        out[name] = col[perm]
    sids = out["sid"]
    inst_of_event = np.repeat(np.arange(len(inst_start)), np.diff(np.r_[inst_start, n]))
    divergent = int(np.unique(inst_of_event[sids != sids[inst_start][inst_of_event]]).size)
    n_threads_used = int(np.count_nonzero(np.bincount(thread)))
    w = out["warp"][inst_start]
    n_warps = int(np.count_nonzero(np.r_[True, w[1:] != w[:-1]]))
    return out, inst_start, n_threads_used, n_warps, divergent


def _dependence(events: np.ndarray, is_store: np.ndarray) -> Dependence | None:
    """Addresses written by one pseudo-thread and touched by another (SPEC §2.2)."""
    if not len(events):
        return None
    store = is_store[events["sid"]]
    if not store.any():
        return None
    written = np.unique(events["addr"][store])
    pos = np.minimum(np.searchsorted(written, events["addr"]), len(written) - 1)
    touched = written[pos] == events["addr"]
    sub = events[touched]
    pairs = np.unique(np.stack([sub["addr"], sub["thread"]]), axis=1)
    addrs, n_threads = np.unique(pairs[0], return_counts=True)
    shared = addrs[n_threads > 1]
    if not len(shared):
        return None
    hit = np.isin(sub["addr"], shared)
    sids = sub["sid"][hit]
    stores = tuple(sorted({int(s) for s in np.unique(sids) if is_store[s]}))
    others = tuple(sorted({int(s) for s in np.unique(sids) if not is_store[s]}))
    return Dependence(int(len(shared)), stores, others)
