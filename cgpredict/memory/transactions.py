"""Memory analysis (SPEC §2.3): classify warp memory instructions, count L2 transactions, and
find DRAM transactions with the temporal-conflict-set cache analysis.

Pattern of a warp instruction: the largest address distance between adjacent active lanes;
0 -> constant, at most the access size -> coalesced, else uncoalesced. L2 transactions of a
warp instruction: the distinct L2 lines its lanes touch (this gives the SPEC's Kepler figures
2 / 32 / 1 for aligned 4-byte accesses over 64-byte lines, and derives them for any line size).
The cache sees the transactions in the order the GPU would issue them (a batch's warps in step).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..hashing import dense_ids
from ..warps import WarpTrace
from .derived import memo, moved_mask
from .dram_fill import fetched_sectors, fill_misses, fill_rides, home_partition_hits
from .edge_warps import edge_requests
from .gather_requests import gather_growth, grown_requests
from .gather_wait import refetch_misses
from .inflight import inflight_l2_hits, inflight_served
from .issue import issued
from .l1cross import cross_fill_misses
from .l1scale import LoopGrowth, executions, scale_l1_gathered, scale_l1_hits, unit_runs
from .line_counts import line_counts
from .load_passes import pass_groups, widest_owners
from .lru import CacheConfig, hit_mask, sector_hit_mask
from .reuse import CacheScale, work_size_hits
from .store_merge import merged_stores
from .wavefronts import missed_sectors, with_load_wavefronts

COAL, UNCOAL, CONST = 0, 1, 2
PATTERN_NAMES = ("coalesced", "uncoalesced", "constant")


@dataclass(frozen=True)
class InstrMemStats:
    """Per static memory instruction: warp instructions, L2 and DRAM transactions per pattern."""

    sid: int
    warp_insts: tuple[int, int, int]  # (coal, uncoal, const) warp instructions
    l2_trans: tuple[int, int, int]
    dram_trans: tuple[int, int, int]
    l1_served: tuple[int, int, int] = (0, 0, 0)  # warp instructions the L1 serves entirely
    # store transactions that first dirty their sector in the launch: the DRAM write-backs
    written: tuple[int, int, int] = (0, 0, 0)
    # load misses to a sector the launch touches for the first time (compulsory): what an
    # L2 still holding the data from an earlier launch serves instead (warm_start)
    cold: tuple[int, int, int] = (0, 0, 0)
    # transactions (sectors) the warp instructions issue, served by the L1 or not: the lines
    # an L1-served instruction reads (without an L1 the same as l2_trans)
    issued: tuple[int, int, int] = (0, 0, 0)
    # store transactions to a sector the L2 holds no loaded copy of (no load of the launch
    # brought it in, or it was evicted since): partly written, each needs a read to merge
    fresh: tuple[int, int, int] = (0, 0, 0)
    # the mean share of a warp's lanes active in its warp instructions (masked off by
    # branches or by trip counts that differ between threads; 1: every lane)
    fill: tuple[float, float, float] = (1.0, 1.0, 1.0)
    # the distinct L1 lines (cache lines) its warp instructions touch: what the SM's L1
    # looks up (a warp of 24-byte structs: 24 sectors in 6 lines; a row walk: 32 in 32)
    l1_lines: tuple[int, int, int] = (0, 0, 0)
    # of l1_served, the warp instructions served on a line another warp of the SM missed at
    # the same step: they wait for its fetch (memory/inflight.py, eq. (C1))
    l1_inflight: tuple[int, int, int] = (0, 0, 0)
    # L2 hits on a sector whose miss another warp issued at the same step (eq. (C2))
    l2_inflight: tuple[int, int, int] = (0, 0, 0)
    # DRAM sectors its loads' misses fetch, a fill block each (dram_fill.py, eq. (F1))
    fetched: tuple[int, int, int] = (0, 0, 0)
    # L2 requests: each warp instruction's distinct lines among its sectors the L1 does
    # not serve (the L2 looks up a line's sectors of one instruction at once, eq. (B2q);
    # the slices' miss path takes a slot for each that misses, eq. (LM))
    l2_requests: tuple[int, int, int] = (0, 0, 0)
    # of dram_trans, the sector misses whose fill block an earlier warp instruction fetched:
    # L2 hits on the GPU, nothing sent to DRAM (dram_fill.py, eq. (F2))
    fill_rides: tuple[int, int, int] = (0, 0, 0)

    @property
    def pattern(self) -> str:
        """The dominant pattern of this instruction."""
        w = self.warp_insts  # the first of the largest, as np.argmax (3 ints: no array)
        return PATTERN_NAMES[w.index(max(w))]

    @property
    def total_warp_insts(self) -> int:
        return sum(self.warp_insts)

    @property
    def l2_hit_rate(self) -> float:
        l2 = sum(self.l2_trans)
        return 1.0 - sum(self.dram_trans) / l2 if l2 else 0.0


@dataclass(frozen=True)
class MemoryAnalysis:
    """Memory behaviour of one launch."""

    instrs: tuple[InstrMemStats, ...]
    l2_accesses: int
    l2_hits: int

    @property
    def l2_hit_rate(self) -> float:
        return self.l2_hits / self.l2_accesses if self.l2_accesses else 0.0

    def by_sid(self) -> dict[int, InstrMemStats]:
        return {s.sid: s for s in self.instrs}


def classify(
    wt: WarpTrace, access_bytes: np.ndarray, todo: np.ndarray | None = None
) -> np.ndarray:
    """Pattern (COAL/UNCOAL/CONST) of every warp instruction (SPEC §2.3): the largest address
    stride between adjacent threads. Adjacent means neighbours along x in one block row (with
    blocks narrower than a warp, lanes 15 and 16 of a 16x16 block are not neighbours), and a
    stride is per lane (a masked instruction whose active lanes are 3 apart and 12 bytes apart
    strides 4 bytes). An instruction with no two lanes in one row (blocks 1 wide) compares its
    consecutive lanes. One pass over the events (numba), no temporaries of their size.
    ``todo``: only the instructions it marks (the others' entries are left 0)."""
    if not wt.n_events:
        return np.zeros(0, np.int8)
    return _classify_kernel(
        wt.addr,
        wt.lane,
        wt.inst_warp,
        wt.inst_sid,
        wt.inst_start.astype(np.int64),
        np.asarray(access_bytes, np.int64),
        max(-(-wt.block.threads // 32), 1),
        max(wt.block.x, 1),
        np.zeros(0, np.bool_) if todo is None else todo,
    )


def _patterns(wt: WarpTrace, ab: np.ndarray) -> np.ndarray:
    """``classify``, from the patterns of the trace ``wt`` was derived from (``Origin``):
    a regrouped instruction keeps its pattern (whole-warp-row blocks: classify does not
    look at the shape), one of a transposed array is classified anew."""
    o = wt.origin
    if o is None:
        return classify(wt, ab)
    old = memo(o.trace, ("classify", ab.tobytes()), lambda: _patterns(o.trace, ab))
    pattern = old if o.inst is None else old[o.inst]
    todo = moved_mask(wt, o.moved)
    if todo is not None:
        pattern = np.where(todo, classify(wt, ab, todo), pattern)
    return pattern


@njit(cache=True, nogil=True)
def _classify_kernel(  # pragma: no cover - numba
    addr, lane, inst_warp, inst_sid, inst_start, access_bytes, wpb, bx, todo
):
    """One pass over the events of each warp instruction (see classify); the warp and the
    static instruction are the instruction's own (``WarpTrace.inst_warp``, ``inst_sid``).
    Blocks a multiple of 32 wide keep every warp in one block row: no row to find; else
    each lane's row comes from a table of the block's threads, not a division."""
    n = addr.shape[0]
    n_inst = inst_start.shape[0]
    out = np.empty(n_inst, np.int8)
    whole_rows = bx % 32 == 0
    row_of = np.empty(wpb * 32, np.int64)  # block row of each thread of the block
    for tib in range(row_of.shape[0]):
        row_of[tib] = tib // bx
    for i in range(n_inst):
        if todo.shape[0] and not todo[i]:
            out[i] = 0
            continue
        lo = inst_start[i]
        hi = inst_start[i + 1] if i + 1 < n_inst else n
        stride = np.int64(0)  # largest per-lane stride between neighbours in one block row
        across = np.int64(0)  # largest distance between consecutive lanes, rows ignored
        has_row = False
        if whole_rows:
            has_row = hi - lo > 1
            for t in range(lo + 1, hi):
                d = abs(np.int64(addr[t]) - np.int64(addr[t - 1]))
                gap = np.int64(lane[t]) - np.int64(lane[t - 1])
                stride = max(stride, d if gap == 1 else d // max(gap, 1))
        else:
            first = (inst_warp[i] % wpb) * 32  # thread-in-block of the warp's lane 0
            prev_row = row_of[first + np.int64(lane[lo])]
            for t in range(lo + 1, hi):
                d = abs(np.int64(addr[t]) - np.int64(addr[t - 1]))
                across = max(across, d)
                row = row_of[first + np.int64(lane[t])]
                if row == prev_row:
                    has_row = True
                    gap = np.int64(lane[t]) - np.int64(lane[t - 1])
                    stride = max(stride, d if gap == 1 else d // max(gap, 1))
                prev_row = row
        s = stride if has_row else across
        if s == 0:
            out[i] = CONST
        elif s <= access_bytes[inst_sid[i]]:
            out[i] = COAL
        else:
            out[i] = UNCOAL
    return out


@dataclass(frozen=True)
class L1Config:
    """An L1 that caches global loads (Volta and later): per SM, loads only, write-through.

    Blocks go to SMs round robin (block b on SM b mod sms); each SM's loads pass its own L1
    in issue order, and only the misses (and every store) reach the L2."""

    cache: CacheConfig
    sector_bytes: int
    sms: int
    warps_per_block: int
    # per static load: growth of its same-warp reuse to the work size (l1scale.LoopGrowth)
    growth: tuple[LoopGrowth, ...] = ()
    banks: int = 32  # the SRAM's banks and their width: a load's wavefronts, eq. (B2w)
    bank_bytes: int = 4
    # gathers' L1 reuse grown to the work size (static load, its array's growth), eq. (LP2)
    gathers: tuple[tuple[int, float], ...] = ()
    tag_lines: int = 0  # 128-B lines the tag stage looks up a cycle (0: no limit), eq. (B2t)
    line_bytes: int = 128
    fill_sectors: int = 0  # missed sectors the data stage writes a pass (0: none), eq. (B2f)
    coherent: tuple[bool, ...] = ()  # per static instruction: fills pass the LSU (B2f); (): all
    # streamed loads re-read across a grown gather's wait: (static load, pass depth), eq. (GW)
    gather_waits: tuple[tuple[int, int], ...] = ()


def l1_hits(
    wt: WarpTrace,
    inst_ordered: np.ndarray,
    ordered_units: np.ndarray,
    unit: int,
    is_load_inst: np.ndarray,
    l1: L1Config,
) -> np.ndarray:
    """Per transaction (in issue order): True when the SM's L1 serves it."""
    sm = ((wt.inst_warp // max(l1.warps_per_block, 1)) % max(l1.sms, 1))[inst_ordered]
    loads = is_load_inst[inst_ordered]
    byte_addr = ordered_units * np.uint64(unit)
    # one pass, each SM's L1 its own cache; a line of one sector is a plain LRU line
    sector = min(l1.sector_bytes, l1.cache.line_bytes)
    exact = sector_hit_mask(byte_addr, l1.cache, sector, sm, max(l1.sms, 1), loads)
    if not l1.growth and not l1.gathers:
        return exact
    shift = sector.bit_length() - 1
    keys = byte_addr >> np.uint64(shift)
    line_shift = (l1.cache.line_bytes // sector).bit_length() - 1
    capacity = l1.cache.sets * l1.cache.ways
    warp, sid = wt.inst_warp[inst_ordered], wt.inst_sid[inst_ordered]
    n_sids = int(wt.inst_sid.max()) + 1 if wt.n_insts else 1
    ordinal = executions(wt.inst_warp.astype(np.int64), wt.inst_sid.astype(np.int64),
                         int(wt.inst_warp.max()) + 1 if wt.n_insts else 1, n_sids)[inst_ordered]
    if l1.growth:
        exact = scale_l1_hits(keys, line_shift, sm, warp, sid, ordinal, loads,
                              exact, capacity, l1.growth)
        exact = cross_fill_misses(keys, sm, sid, warp, loads, exact, l1.growth)  # (L1x)
    exact = scale_l1_gathered(keys, line_shift, sm, sid, loads, exact, capacity, l1.gathers)
    runs = unit_runs(keys, warp, sid, loads, n_sids) if l1.gather_waits else np.ones(0)
    return refetch_misses(sid, ordinal, loads, exact, l1.gather_waits, runs)  # (GW)


def analyze_memory(
    wt: WarpTrace,
    access_bytes: np.ndarray,
    cache: CacheConfig,
    warps_per_batch: int,
    scale: CacheScale = CacheScale(),
    sector_bytes: int | None = None,
    l1: L1Config | None = None,
    is_store: np.ndarray | None = None,
    array_of: np.ndarray | None = None,
    fill_bytes: int = 0,
) -> MemoryAnalysis:
    """Patterns, L2 and DRAM transactions per static instruction for one launch.

    The cache sees the transactions in GPU issue order (SPEC §2.3), analysed exactly (temporal
    conflict sets); ``scale`` corrects the reuse across batches to the work size (scale_hits).
    With ``sector_bytes`` smaller than the line (modern GPUs: 32-byte sectors of 128-byte
    lines), a transaction is one sector: tags and LRU stay per line, a sector hits only if it
    was fetched since its line was allocated. ``array_of`` (a dense id of each static
    instruction's array): with an L1, the stores that merge in its write path
    (store_merge.py, eq. (SM1)) do not reach the L2. ``fill_bytes``: what an L2 miss fetches
    from DRAM when more than a sector (dram_fill.py, eq. (F1)). The result is kept with
    ``wt`` under all its arguments (``memo``): the advisor's fixes that leave a launch's
    global accesses as they were take it as it is.
    """
    ab = np.asarray(access_bytes)
    key = ("memory", ab.dtype.str, ab.tobytes(), cache, warps_per_batch, scale, sector_bytes,
           l1, None if is_store is None else (is_store.dtype.str, is_store.tobytes()),
           None if array_of is None else np.asarray(array_of, np.int64).tobytes(), fill_bytes)
    return memo(wt, key, lambda: _analysis(wt, ab, cache, warps_per_batch, scale,
                                           sector_bytes, l1, is_store, array_of, fill_bytes))


def _analysis(wt: WarpTrace, ab: np.ndarray, cache: CacheConfig, warps_per_batch: int,
              scale: CacheScale, sector_bytes: int | None, l1: L1Config | None,
              is_store: np.ndarray | None,
              array_of: np.ndarray | None = None, fill_bytes: int = 0) -> MemoryAnalysis:
    """analyze_memory, computed."""
    pattern = memo(wt, ("classify", ab.tobytes()), lambda: _patterns(wt, ab))
    sectored = sector_bytes is not None and sector_bytes < cache.line_bytes
    unit = sector_bytes if sectored else cache.line_bytes
    # every transaction, in issue order
    lines, inst = memo(
        wt, ("issued", unit, warps_per_batch),
        lambda: issued(wt, unit, warps_per_batch),
    )  # fmt: skip
    sid = wt.inst_sid
    n = wt.n_insts
    n_sids = int(sid.max()) + 1 if n else 0
    l1_hit = np.zeros(len(lines), bool)
    inflight = np.zeros((n_sids, 3), np.int64)
    is_load_inst = ~(is_store[sid] if is_store is not None else np.zeros(n, bool))
    step = _steps(wt, warps_per_batch)
    sm = np.zeros(n, np.int64)
    if l1 is not None:
        l1_hit = l1_hits(wt, inst, lines, unit, is_load_inst, l1)
        sm = ((wt.inst_warp // max(l1.warps_per_block, 1)) % max(l1.sms, 1)).astype(np.int64)
        inflight = inflight_served(inst, l1_hit, lines, is_load_inst, step, sm,
                                   sid.astype(np.int64), pattern.astype(np.int64), n_sids)
        if array_of is not None and is_store is not None:  # (SM1): merged, not sent on
            l1_hit = l1_hit | merged_stores(inst, lines, wt.inst_warp, sid, is_store, array_of)
    # the transactions that reach the L2: index (None: all, no copy), line (sector) and warp
    # instruction; the batch of each warp instruction's warp, read through its index
    batch = wt.inst_warp.astype(np.int64) // max(warps_per_batch, 1)
    if l1 is None:
        to_l2, ordered, l2_inst = None, lines, inst
    else:
        to_l2, ordered, l2_inst = _l2_stream(l1_hit, lines, inst)
    hits = np.zeros(len(lines), bool)
    if sectored:
        exact = sector_hit_mask(ordered * np.uint64(unit), cache, unit)
    else:
        exact = hit_mask(ordered, cache)
    unit_ids = dense_ids(ordered)  # for the scaling and the first touches
    at = slice(None) if to_l2 is None else to_l2
    hits[at] = work_size_hits(ordered, exact, unit_ids, cache.line_bytes // unit, cache, scale,
                              batch, sid, l2_inst)
    stores = np.zeros(n, np.bool_) if is_store is None else np.asarray(is_store[sid], np.bool_)
    *counts, l2_total, hits_total = _tally(
        inst, l1_hit, hits, unit_ids[0], stores, sid, pattern, n_sids
    )
    per_line = cache.line_bytes // unit
    # a unit that is a line: each warp instruction's transactions are its distinct lines
    # already (issue.py), so the lines it touches (eq. (B2)) are the ones it issued
    l1_units = counts[6] if per_line == 1 else \
        line_counts(lines, inst, per_line, sid, pattern, n_sids)
    if l1 is not None:  # a load's pass through the L1's data stage: its wavefronts (B2w)
        l1_units = with_load_wavefronts(
            l1_units, wt.addr, wt.inst_start, sid, pattern, ab, is_store, l1.banks,
            l1.bank_bytes, l1.tag_lines, l1.line_bytes, missed_sectors(  # its fills (B2f)
                inst, ~l1_hit, sid, l1.coherent, unit // l1.sector_bytes), l1.fill_sectors)
    counts = (*counts, _fill(wt, pattern, counts[0], n_sids), l1_units)
    l2_inflight = inflight_l2_hits(inst[at], hits[at], ordered, is_load_inst, step, sm,
                                   sid.astype(np.int64), pattern.astype(np.int64), n_sids,
                                   unit_ids[0])
    fetched, rides = counts[2], np.zeros_like(counts[2])
    if sectored and fill_bytes > unit:  # (F1), then the home partitions' hits (LP3)
        fmiss = fill_misses(ordered, cache, unit, fill_bytes, batch, scale, sid, l2_inst)
        fetched = home_partition_hits(fetched_sectors(
            fmiss, l2_inst, is_load_inst, sid, pattern, n_sids, fill_bytes // unit, counts[2]),
            fmiss, l2_inst, is_load_inst, sid, scale)
        rides = fill_rides(~hits[at], fmiss, ordered // np.uint64(fill_bytes // unit),
                           l2_inst, is_load_inst, sid, pattern, n_sids)  # (F2)
    charged = l2_inst if to_l2 is None else widest_owners(  # a pass's widest load, (PW)
        lines, inst, pass_groups(wt.inst_warp, sid, is_load_inst))[to_l2]
    requests = edge_requests(wt, scale.grid_x, ordered, charged, per_line, pattern,  # (EW)
                             n_sids)  # (B2q), (LM)
    grown = gather_growth(scale.gathers, l1.gathers if l1 is not None else ())
    if grown:  # a grown gather's lanes share fewer lines at the work size, eq. (GQ)
        requests = np.rint(grown_requests(requests, counts[1], grown)).astype(np.int64)
    return MemoryAnalysis(_instr_stats((*counts, inflight, l2_inflight, fetched, requests,
                                        rides),
                                       n_sids, l1 is not None), int(l2_total), int(hits_total))


def _steps(wt: WarpTrace, warps_per_batch: int) -> np.ndarray:
    """Per warp instruction its step (memory/inflight.py): the same number for the warps
    of one batch at one program position k."""
    kk = int(wt.inst_k.max()) + 1 if wt.n_insts else 1
    batch = wt.inst_warp.astype(np.int64) // max(warps_per_batch, 1)
    return batch * kk + wt.inst_k.astype(np.int64)


def _fill(wt: WarpTrace, pattern: np.ndarray, warp_insts: np.ndarray,
          n_sids: int) -> np.ndarray:
    """Per (static instruction, pattern): the mean share of a warp's lanes (32, or the
    block's threads when fewer) its warp instructions have active; 1 where none issued."""
    lanes = np.zeros((n_sids, 3), np.float64)
    if wt.n_insts:
        active = np.diff(np.r_[wt.inst_start, wt.n_events]).astype(np.float64)
        np.add.at(lanes, (wt.inst_sid, pattern), active)
    full = warp_insts * float(min(32, max(wt.block.threads, 1)))
    return np.where(full > 0, lanes / np.maximum(full, 1.0), 1.0)


def _instr_stats(counts: tuple, n_sids: int, has_l1: bool) -> tuple[InstrMemStats, ...]:
    """One InstrMemStats per static instruction that issued: the tallies' rows as ints."""
    warp_insts, l2, dram, served, written, cold_n, issued_n, fresh, fill, l1_lines, \
        inflight, l2_inflight, fetched, requests, rides = counts

    def row(a: np.ndarray, s: int) -> tuple[int, ...]:
        return tuple(int(x) for x in a[s])

    return tuple(
        InstrMemStats(
            s, row(warp_insts, s), row(l2, s), row(dram, s),
            row(served, s) if has_l1 else (0, 0, 0),
            row(written, s), row(cold_n, s), row(issued_n, s), row(fresh, s),
            tuple(float(x) for x in fill[s]), row(l1_lines, s), row(inflight, s),
            row(l2_inflight, s), row(fetched, s), row(requests, s), row(rides, s),
        )  # fmt: skip
        for s in range(n_sids)
        if warp_insts[s].any()
    )


def _l2_stream(l1_hit: np.ndarray, lines: np.ndarray, inst: np.ndarray):
    """(index, line, warp instruction) of every transaction the L1 does not serve
    (transactions in issue order)."""
    idx = np.flatnonzero(~np.asarray(l1_hit, np.bool_))
    return idx, lines[idx], inst[idx]


@njit(cache=True, nogil=True)
def _tally(inst, l1_hit, hits, ids, stores, sid, pattern, n_sids):  # pragma: no cover
    """Per (static instruction, pattern), in one pass over the transactions (issue order):
    warp instructions, L2 transactions (those the L1 does not serve), DRAM transactions (L2
    misses), instructions the L1 serves entirely, first writes of a sector (a write-back L2
    sends each dirty sector to DRAM once, however often it is stored: an accumulator stored
    every iteration is written back once), compulsory load misses (a load's first touch of
    its sector), every transaction issued (L1 hit or not) and fresh stores (a store whose
    sector no earlier load brought in and the L2 still holds: a miss, or a hit only on bytes
    other stores left there; a partial write of such a sector costs the L2 a read to merge
    it, models/bounds.py, where one into a loaded copy, a struct updated in place, merges
    without one); and the launch's L2 transactions and L2 hits.

    ``ids``: the dense ids of the sectors of the L2 stream (the transactions the L1 does
    not serve, in order; every store is one: an L1 caches loads only); ``stores``: per warp
    instruction, True for a store."""
    n_inst = sid.shape[0]
    all_i = np.zeros(n_inst, np.int64)
    l2_i = np.zeros(n_inst, np.int64)
    miss_i = np.zeros(n_inst, np.int64)
    first_i = np.zeros(n_inst, np.int64)
    cold_i = np.zeros(n_inst, np.int64)
    fresh_i = np.zeros(n_inst, np.int64)
    n_ids = ids.max() + 1 if ids.shape[0] else 0
    stored = np.zeros(n_ids, np.bool_)  # a store wrote the sector
    loaded = np.zeros(n_ids, np.bool_)  # a load brought it in
    top = np.int64(-1)  # ids number sectors in order of first touch: a new one is above all
    l2_total, hit_total, j = 0, 0, 0
    for t in range(inst.shape[0]):
        i = inst[t]
        all_i[i] += 1
        if l1_hit[t]:
            continue
        l2_i[i] += 1
        l2_total += 1
        if hits[t]:
            hit_total += 1
        else:
            miss_i[i] += 1
        d = ids[j]
        j += 1
        if stores[i]:
            if not stored[d]:
                first_i[i] += 1
                stored[d] = True
            if not (hits[t] and loaded[d]):
                fresh_i[i] += 1
        else:
            if d > top:
                cold_i[i] += 1
            loaded[d] = True
        top = max(top, d)
    warp_insts = np.zeros((n_sids, 3), np.int64)
    cold_n = np.zeros((n_sids, 3), np.int64)
    l2 = np.zeros((n_sids, 3), np.int64)
    dram = np.zeros((n_sids, 3), np.int64)
    served = np.zeros((n_sids, 3), np.int64)
    written = np.zeros((n_sids, 3), np.int64)
    issued = np.zeros((n_sids, 3), np.int64)
    fresh = np.zeros((n_sids, 3), np.int64)
    for i in range(n_inst):
        s, p = sid[i], pattern[i]
        warp_insts[s, p] += 1
        l2[s, p] += l2_i[i]
        dram[s, p] += miss_i[i]
        written[s, p] += first_i[i]
        cold_n[s, p] += cold_i[i]
        issued[s, p] += all_i[i]
        fresh[s, p] += fresh_i[i]
        if l2_i[i] == 0 and not stores[i]:  # every transaction hit in L1 (a load)
            served[s, p] += 1
    return warp_insts, l2, dram, served, written, cold_n, issued, fresh, l2_total, hit_total

