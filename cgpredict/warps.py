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

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numba import njit

from .tracefile import ADDRESS_MASK, TAG_EXIT, TAG_LOOP, TAG_MARKERS, Trace

WARP_SIZE = 32

#: One memory event in warp order.
EVENT_DTYPE = np.dtype(
    [
        ("warp", "<u4"),
        ("k", "<u4"),  # index of the event's warp instruction within its warp (issue order)
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

    @cached_property
    def inst_warp(self) -> np.ndarray:
        """The warp of every warp instruction (int64), computed once for every stage."""
        return self.events["warp"][self.inst_start].astype(np.int64)

    @cached_property
    def inst_k(self) -> np.ndarray:
        """The index of every warp instruction within its warp (int64)."""
        return self.events["k"][self.inst_start].astype(np.int64)

    @cached_property
    def inst_sid(self) -> np.ndarray:
        """The static instruction of every warp instruction (int64)."""
        return self.events["sid"][self.inst_start].astype(np.int64)

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
    _, _, valid2, _, _ = _indices(ev, d1, d2)
    tag = ev >> 48
    outside = (tag < TAG_MARKERS) & ~valid2
    return not (outside.any() and is_store[tag[outside].astype(np.int64)].any())


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
def _indices_kernel(ev, in_d1, in_d2):  # pragma: no cover - numba
    n = ev.shape[0]
    i1 = np.full(n, -1, np.int64)
    i2 = np.full(n, -1, np.int64)
    valid2 = np.zeros(n, np.bool_)
    cur1, cur2 = -1, -1
    max1, max2 = -1, -1
    open2 = False
    for t in range(n):
        e = ev[t]
        tag = e >> 48
        if tag == TAG_LOOP or tag == TAG_EXIT:
            cur1, cur2, open2 = _loop_step(e, tag, in_d1, in_d2, cur1, cur2, open2)
            max1, max2 = max(max1, cur1), max(max2, cur2)
        i1[t] = cur1
        i2[t] = cur2
        valid2[t] = open2
    return i1, i2, valid2, max1 + 1, max2 + 1


@njit(cache=True, nogil=True)
def _map_kernel(ev, in_d1, in_d2, mode):  # pragma: no cover - numba
    """``_map_events`` in one pass over the events, with the loop
    state of ``_indices_kernel``: (tx, ty, sid, addr) of each memory event a thread makes
    (mode 2: inside an open depth-2 iteration, x = its index, y = the depth-1 index; mode 1:
    inside a depth-1 iteration, x = its index; mode 0: every memory event, thread 0), the
    number of memory events, and the depth-1 and depth-2 extents."""
    n = ev.shape[0]
    n_mem = 0
    out_tx = np.empty(n, np.int64)  # at most one per event; the markers leave a slack
    out_ty = np.empty(n, np.int64)
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
        out_tx[m] = x
        out_ty[m] = y
        out_sid[m] = np.uint16(tag)
        out_addr[m] = e & np.uint64(ADDRESS_MASK)
        m += 1
    return out_tx[:m], out_ty[:m], out_sid[:m], out_addr[:m], n_mem, max1 + 1, max2 + 1


def _indices(ev: np.ndarray, d1: list[int], d2: list[int]):
    """For every event: iteration index of the current depth-1 and depth-2 loop, and whether
    a depth-2 iteration is open inside the current depth-1 iteration; and the extents of the
    depth-1 and depth-2 loops (largest iteration index + 1, 0 when none ran)."""
    size = max(d1 + d2 + [0]) + 1
    in_d1, in_d2 = np.zeros(size, np.bool_), np.zeros(size, np.bool_)
    in_d1[d1] = True
    in_d2[d2] = True
    return _indices_kernel(np.ascontiguousarray(ev, dtype=np.uint64), in_d1, in_d2)


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
    cache: keeps the inter-thread dependence of (region, launch, grid_dims), which does not
    depend on the block shape, for the next block analysed (a block-shape sweep).
    """
    mkey = ("mapped", region, launch, grid_dims)
    if cache is not None and mkey in cache:
        mapped = cache[mkey]
    else:
        mapped = _map_events(trace, region, launch, grid_dims)
        if cache is not None:
            cache[mkey] = mapped
    tx, ty, sid, addr, gx, gy, unmapped, grid_dims = mapped
    events, inst_start, n_threads, n_warps, divergent = _order(tx, ty, sid, addr, gx, gy, block)
    key = ("dependence", region, launch, grid_dims)
    if cache is not None and key in cache:
        dep = cache[key]
    else:
        dep = _dependence(events, mem_kinds)
        if dep is None and any(carries(trace, region, d) for d in range(1, grid_dims + 1)):
            dep = Dependence(0, (), (), forwarded=True)
        if cache is not None:
            cache[key] = dep
    return WarpTrace(
        grid_dims, block, gx, gy, events, inst_start, n_threads, n_warps, divergent, unmapped, dep
    )


def _map_events(trace: Trace, region: int, launch: int, grid_dims: int):
    """(tx, ty, sid, addr, gx, gy, unmapped, grid_dims): each memory event's thread
    coordinates, static id and address, the grid's extent and its dimensions (1 for a function
    without a loop); independent of the block shape."""
    ev = np.asarray(trace.launch_events(launch))
    d1, d2 = mapped_loops(trace, region)
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
    size = max(d1 + d2 + [0]) + 1
    in_d1, in_d2 = np.zeros(size, np.bool_), np.zeros(size, np.bool_)
    in_d1[d1] = True
    in_d2[d2] = True
    tx, ty, sid, addr, n_mem, ext1, ext2 = _map_kernel(
        np.ascontiguousarray(ev, dtype=np.uint64), in_d1, in_d2, mode
    )
    gx, gy = {0: (1, 1), 1: (ext1, 1), 2: (ext2, ext1)}[mode]
    unmapped = int(n_mem - len(tx))
    return tx, ty, sid, addr, gx, gy, unmapped, grid_dims


@njit(cache=True, nogil=True)
def _thread_events(tx, ty, gx, bx, by, nbx, wpb, n_threads):  # pragma: no cover - numba
    """Thread, warp, lane and k (rank among the thread's events, program order) of every
    event, and the number of threads that made at least one event."""
    n = tx.shape[0]
    thread = np.empty(n, np.int64)
    warp = np.empty(n, np.int64)
    lane = np.empty(n, np.int64)
    k = np.empty(n, np.int64)
    seen = np.zeros(n_threads, np.int64)
    used = 0
    lx, ly = np.int64(-1), np.int64(-1)
    th, w, ln = np.int64(0), np.int64(0), np.int64(0)
    for t in range(n):
        x, y = tx[t], ty[t]
        if x != lx or y != ly:  # a thread's events are mostly contiguous: divide once
            lx, ly = x, y
            th = y * gx + x
            tib = (y % by) * bx + (x % bx)
            w = ((y // by) * nbx + x // bx) * wpb + tib // 32
            ln = tib % 32
        thread[t] = th
        warp[t] = w
        lane[t] = ln
        c = seen[th]
        k[t] = c
        if c == 0:
            used += 1
        seen[th] = c + 1
    return thread, warp, lane, k, used


@njit(cache=True, nogil=True)
def _sort_warp_k(warp, k):  # pragma: no cover - numba
    """Counting sort of events into (warp, k, lane) order, O(n), and the first event of every
    (warp, k) group. Lanes of a warp appear in increasing order in program order (x is the
    inner mapped loop), so a stable scatter by (warp, k) leaves each group in lane order."""
    n = warp.shape[0]
    n_warps = 0
    for t in range(n):
        if warp[t] + 1 > n_warps:
            n_warps = warp[t] + 1
    kmax = np.zeros(n_warps, np.int64)
    for t in range(n):
        if k[t] + 1 > kmax[warp[t]]:
            kmax[warp[t]] = k[t] + 1
    base = np.zeros(n_warps + 1, np.int64)
    for w in range(n_warps):
        base[w + 1] = base[w] + kmax[w]
    count = np.zeros(base[n_warps] + 1, np.int64)
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
    return perm, starts[:m]


@njit(cache=True, nogil=True)
def _sid_ranks(thread, sid, n_threads, n_sids):  # pragma: no cover - numba
    """r of every event: its rank among its thread's events of the same static instruction.
    O(n) when every thread's events are contiguous in program order (each pseudo-thread is
    one iteration of the mapped loops); returns ok=False when a thread reappears later."""
    n = thread.shape[0]
    r = np.empty(n, np.int64)
    cnt = np.zeros(n_sids, np.int64)
    used = np.empty(n_sids, np.int64)
    done = np.zeros(n_threads, np.bool_)
    nu = 0
    cur = -1
    for t in range(n):
        th = thread[t]
        if th != cur:
            if done[th]:
                return r, False
            done[th] = True
            for i in range(nu):
                cnt[used[i]] = 0
            nu = 0
            cur = th
        s = sid[t]
        if cnt[s] == 0:
            used[nu] = s
            nu += 1
        r[t] = cnt[s]
        cnt[s] += 1
    return r, True


def _sid_ranks_sorted(thread: np.ndarray, sid: np.ndarray) -> np.ndarray:
    """_sid_ranks for any event order: a stable sort by (thread, sid), O(n log n)."""
    key = (thread.astype(np.uint64) << np.uint64(16)) | sid.astype(np.uint64)
    order = np.argsort(key, kind="stable")
    ks = key[order]
    idx = np.arange(len(key), dtype=np.int64)
    first = np.maximum.accumulate(np.where(np.r_[True, ks[1:] != ks[:-1]], idx, 0))
    r = np.empty(len(key), np.int64)
    r[order] = idx - first
    return r


@njit(cache=True, nogil=True)
def _masked_order(perm, warp, lane, k, sid, r, n_sids):  # pragma: no cover - numba
    """Warp instructions of divergent warps: the events of one warp with the same (sid, r),
    i.e. the r-th execution of static instruction sid by the lanes that execute it (a masked
    instruction). A warp's instructions are issued in the order of the program position
    (k) at which their last lane reaches them, the point where a SIMT warp has reconverged
    and issues it; ties go by sid, then r.

    perm: events grouped by warp. Returns the events in (warp, instruction, lane) order, the
    instruction's index within its warp for every event (indexed like ``warp``), and the first
    event of every instruction."""
    n = perm.shape[0]
    out = np.empty(n, np.int64)
    slot = np.empty(n, np.int64)
    starts = np.empty(n, np.int64)
    rcount = np.zeros(n_sids, np.int64)
    offset = np.zeros(n_sids, np.int64)
    sids = np.empty(n_sids, np.int64)
    gsize = np.empty(n, np.int64)
    glast = np.empty(n, np.int64)
    gfill = np.empty(n, np.int64)
    gord = np.empty(n, np.int64)
    m = 0
    lo = 0
    while lo < n:
        w = warp[perm[lo]]
        hi = lo + 1
        while hi < n and warp[perm[hi]] == w:
            hi += 1
        ns = 0
        for q in range(lo, hi):
            t = perm[q]
            s = sid[t]
            if rcount[s] == 0:
                sids[ns] = s
                ns += 1
            if r[t] >= rcount[s]:
                rcount[s] = r[t] + 1
        sids[:ns].sort()
        n_groups = 0  # every (sid, r < rcount[sid]) is executed by some lane
        for i in range(ns):
            offset[sids[i]] = n_groups
            n_groups += rcount[sids[i]]
        for g in range(n_groups):
            gsize[g] = 0
            glast[g] = -1
        for q in range(lo, hi):
            t = perm[q]
            g = offset[sid[t]] + r[t]
            gsize[g] += 1
            if k[t] > glast[g]:
                glast[g] = k[t]
        key = np.empty(n_groups, np.int64)
        for g in range(n_groups):
            key[g] = glast[g] * n_groups + g
        order = np.argsort(key)
        pos = lo
        for j in range(n_groups):
            g = order[j]
            gfill[g] = pos
            gord[g] = j
            starts[m + j] = pos
            pos += gsize[g]
        for q in range(lo, hi):
            t = perm[q]
            g = offset[sid[t]] + r[t]
            out[gfill[g]] = t
            gfill[g] += 1
            slot[t] = gord[g]
        for j in range(n_groups):  # lane order inside each instruction (insertion sort)
            a = starts[m + j]
            b = starts[m + j + 1] if j + 1 < n_groups else hi
            for p in range(a + 1, b):
                t = out[p]
                q = p - 1
                while q >= a and lane[out[q]] > lane[t]:
                    out[q + 1] = out[q]
                    q -= 1
                out[q + 1] = t
        m += n_groups
        for i in range(ns):
            rcount[sids[i]] = 0
        lo = hi
    return out, slot, starts[:m]


@njit(cache=True, nogil=True)
def _gather(  # pragma: no cover - numba
    perm, warp, k, lane, sid, thread, addr, o_warp, o_k, o_lane, o_sid, o_thread, o_addr
):
    """The EVENT_DTYPE columns in ``perm`` order, in one pass."""
    for i in range(perm.shape[0]):
        t = perm[i]
        o_warp[i] = warp[t]
        o_k[i] = k[t]
        o_lane[i] = lane[t]
        o_sid[i] = sid[t]
        o_thread[i] = thread[t]
        o_addr[i] = addr[t]


def _order(tx, ty, sid, addr, gx: int, gy: int, block: Block):
    """Sort events into warp instructions (module docstring); count divergent ones.

    A warp instruction is the r-th execution of a static instruction by the lanes of a warp
    that execute it. When every lane of a warp runs the same sequence of static instructions
    (possibly cut short), that is the warp's k-th event group, found by an O(n) counting
    sort; otherwise (branches, trip counts that differ between lanes) the events are
    regrouped by (warp, sid, r)."""
    n = len(tx)
    if not n:
        return np.zeros(0, EVENT_DTYPE), np.zeros(0, np.int64), 0, 0, 0
    gx = max(gx, 1)
    gy = max(gy, int(ty.max()) + 1)
    nbx = _ceil(gx, block.x)
    wpb = _ceil(block.threads, WARP_SIZE)
    n_threads = gy * gx
    tx, ty = tx.astype(np.int64, copy=False), ty.astype(np.int64, copy=False)
    out = np.empty(n, EVENT_DTYPE)
    cols = (out["warp"], out["k"], out["lane"], out["sid"], out["thread"], out["addr"])
    inst_start, n_threads_used, ok = _warp_sort(
        tx, ty, sid, addr, gx, block.x, block.y, nbx, wpb, n_threads, *cols
    )
    if not ok:  # lanes that run different instructions: the general path
        thread, warp, lane, k, n_threads_used = _thread_events(
            tx, ty, gx, block.x, block.y, nbx, wpb, n_threads
        )
        perm, inst_start = _sort_warp_k(warp, k)
        n_sids = int(sid.max()) + 1
        r, ok = _sid_ranks(thread, sid, n_threads, n_sids)
        if not ok:
            r = _sid_ranks_sorted(thread, sid)
        perm, k, inst_start = _masked_order(perm, warp, lane, k, sid, r, n_sids)
        _gather(perm, warp, k, lane, sid, thread, addr, *cols)
    inst_warp = out["warp"][inst_start]
    divergent = _count_divergent(inst_warp, inst_start, n, gx, gy, block.x, block.y, nbx, wpb)
    n_warps = int(np.count_nonzero(np.r_[True, inst_warp[1:] != inst_warp[:-1]]))
    return out, inst_start, int(n_threads_used), n_warps, int(divergent)


@njit(cache=True, nogil=True)
def _lane_coords(x, y, gx, bx, by, nbx, wpb):  # pragma: no cover - numba
    """(thread, warp, lane) of pseudo-thread (x, y)."""
    tib = (y % by) * bx + (x % bx)
    return y * gx + x, ((y // by) * nbx + x // bx) * wpb + tib // 32, tib % 32


@njit(cache=True, nogil=True)
def _warp_sort(  # pragma: no cover - numba
    tx, ty, sid, addr, gx, bx, by, nbx, wpb, n_threads,
    o_warp, o_k, o_lane, o_sid, o_thread, o_addr,
):  # fmt: skip
    """The events in (warp, k, lane) order written straight into the EVENT_DTYPE columns,
    with the first event of every warp instruction: a counting sort by (warp, k), k being an
    event's rank among its thread's events. Three passes over the events, each recomputing
    (thread, warp, lane, k) (divisions only when the thread changes), so no per-event
    temporaries. Lanes appear in increasing order in program order (x is the inner mapped
    loop), so the stable scatter leaves each group in lane order. Returns (None, 0) when a
    (warp, k) group holds events of two static instructions (divergent lanes), for
    ``_masked_order`` (ok False)."""
    n = tx.shape[0]
    seen = np.zeros(n_threads, np.int64)
    n_warps = nbx * ((n_threads // gx + by - 1) // by) * wpb  # every warp of the grid
    kmax = np.zeros(n_warps, np.int64)
    used = 0
    lx, ly = np.int64(-1), np.int64(-1)
    th, w, ln = np.int64(0), np.int64(0), np.int64(0)
    for t in range(n):
        if tx[t] != lx or ty[t] != ly:
            lx, ly = tx[t], ty[t]
            th, w, ln = _lane_coords(lx, ly, gx, bx, by, nbx, wpb)
        c = seen[th]
        if c == 0:
            used += 1
        seen[th] = c + 1
        kmax[w] = max(kmax[w], c + 1)
    base = np.zeros(n_warps + 1, np.int64)
    for q in range(n_warps):
        base[q + 1] = base[q] + kmax[q]
    fill = np.zeros(base[n_warps] + 1, np.int64)  # events per (warp, k) slot, then offsets
    group_sid = np.full(base[n_warps], -1, np.int64)
    seen[:] = 0
    lx, ly = np.int64(-1), np.int64(-1)
    for t in range(n):
        if tx[t] != lx or ty[t] != ly:
            lx, ly = tx[t], ty[t]
            th, w, ln = _lane_coords(lx, ly, gx, bx, by, nbx, wpb)
        slot = base[w] + seen[th]
        seen[th] += 1
        fill[slot + 1] += 1
        if group_sid[slot] < 0:
            group_sid[slot] = sid[t]
        elif group_sid[slot] != sid[t]:
            return np.empty(0, np.int64), 0, False
    n_inst = 0
    for q in range(1, fill.shape[0]):
        if fill[q] > 0:
            n_inst += 1
        fill[q] += fill[q - 1]
    starts = np.empty(n_inst, np.int64)
    m = 0
    for q in range(fill.shape[0] - 1):
        if fill[q + 1] > fill[q]:
            starts[m] = fill[q]
            m += 1
    seen[:] = 0
    lx, ly = np.int64(-1), np.int64(-1)
    for t in range(n):
        if tx[t] != lx or ty[t] != ly:
            lx, ly = tx[t], ty[t]
            th, w, ln = _lane_coords(lx, ly, gx, bx, by, nbx, wpb)
        c = seen[th]
        seen[th] = c + 1
        slot = base[w] + c
        pos = fill[slot]
        fill[slot] = pos + 1
        o_warp[pos] = w
        o_k[pos] = c
        o_lane[pos] = ln
        o_sid[pos] = sid[t]
        o_thread[pos] = th
        o_addr[pos] = addr[t]
    return starts, used, True


@njit(cache=True, nogil=True)
def _count_divergent(inst_warp, starts, n, gx, gy, bx, by, nbx, wpb):  # pragma: no cover
    """Warp instructions whose active lanes are fewer than the warp's lanes inside the grid:
    lanes masked off by control flow (a partial warp at the grid edge is not divergent)."""
    count = 0
    last = -1
    full = 0
    for i in range(starts.shape[0]):
        w = inst_warp[i]
        if w != last:
            last = w
            b, wi = w // wpb, w % wpb
            x0, y0 = (b % nbx) * bx, (b // nbx) * by
            full = 0
            for tib in range(wi * 32, min(wi * 32 + 32, bx * by)):
                if x0 + tib % bx < gx and y0 + tib // bx < gy:
                    full += 1
        hi = starts[i + 1] if i + 1 < starts.shape[0] else n
        if hi - starts[i] < full:
            count += 1
    return count


def _dependence(events: np.ndarray, is_store: np.ndarray) -> Dependence | None:
    """Addresses written by one pseudo-thread and touched by another (SPEC §2.2)."""
    if not len(events):
        return None
    store = np.asarray(is_store, np.bool_)
    n_shared, touched = _shared_addresses(events["addr"], events["thread"], events["sid"], store)
    if not n_shared:
        return None
    sids = np.flatnonzero(touched)
    stores = tuple(int(s) for s in sids if store[s])
    others = tuple(int(s) for s in sids if not store[s])
    return Dependence(int(n_shared), stores, others)


@njit(cache=True, nogil=True)
def _shared_addresses(addr, thread, sid, is_store):  # pragma: no cover - numba
    """(count, touched): the written addresses that two or more threads touch, and per static
    instruction whether it touches one. Three passes over the events with a hash table of
    the written addresses (open addressing): no sort of the trace."""
    n = addr.shape[0]
    n_written = 0
    for t in range(n):
        if is_store[sid[t]]:
            n_written += 1
    touched = np.zeros(is_store.shape[0], np.bool_)
    if n_written == 0:
        return 0, touched
    bits = 1
    while (1 << bits) < 2 * n_written:
        bits += 1
    mask = np.uint64((1 << bits) - 1)
    down = np.uint64(64 - bits)
    keys = np.empty(1 << bits, np.uint64)
    first = np.full(1 << bits, -1, np.int64)  # thread that first touched the slot's address
    shared = np.zeros(1 << bits, np.bool_)
    for t in range(n):  # the written addresses
        if is_store[sid[t]]:
            v = np.uint64(addr[t])
            h = (v * np.uint64(0x9E3779B97F4A7C15)) >> down
            while first[h] >= 0 and keys[h] != v:
                h = (h + np.uint64(1)) & mask
            if first[h] < 0:
                keys[h] = v
                first[h] = np.int64(thread[t])
    count = 0
    for phase in range(2):  # which of them span two threads; then who touches those
        for t in range(n):
            v = np.uint64(addr[t])
            h = (v * np.uint64(0x9E3779B97F4A7C15)) >> down
            while first[h] >= 0 and keys[h] != v:
                h = (h + np.uint64(1)) & mask
            if first[h] < 0:
                continue
            if phase == 0:
                if not shared[h] and np.int64(thread[t]) != first[h]:
                    shared[h] = True
                    count += 1
            elif shared[h]:
                touched[sid[t]] = True
    return count, touched
