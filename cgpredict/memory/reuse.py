"""L2 hits at the work size from the trace size's (SPEC §2.3): reuse distances, and the rule
that re-judges each hit by its distance grown from the trace to the work size.

The exact cache analysis (``lru.hit_mask``) runs on the transactions of the trace size. A
hit whose previous use lies in an earlier batch of threads stays a hit only if its LRU stack
distance (the distinct lines touched in between), grown by how much more a batch touches at
the work size (and, across a row of blocks, the grid), still fits the cache
(``scale_hits``). Distances are counted over the positions of each line's latest use: a
Fenwick tree (``_reuse_distances``), or bits on a renumbered clock where only some accesses
need the count (``_scaled_hits``, ``clock_bits``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..hashing import dense_ids
from .clock_bits import clock_bits, compacted, move, ones_before
from .lru import CacheConfig

__all__ = ["CacheScale", "scale_gathered", "scale_hits", "work_size_hits"]


@dataclass(frozen=True)
class CacheScale:
    """How reuse distances grow from the trace size to the work size (see analyze_memory).

    footprint: growth of what one batch of threads touches (the per-thread loops' trip counts);
    grid_x: growth of the grid's x extent; batches_per_row: batches that cover one row of
    blocks at the trace size (a reuse that far back crosses a whole block row); batch_warps:
    growth of the warps in one batch, above 1 when the trace has fewer pseudo-threads than
    a batch holds (reuse inside a batch then spans more warps at the work size).
    """

    footprint: float = 1.0
    grid_x: float = 1.0
    batches_per_row: int = 1
    batch_warps: float = 1.0
    # gathers whose array crosses the cache between the trace and the work size
    # (footprint.size_check): (static load, growth of its reuse distances)
    gathers: tuple[tuple[int, float], ...] = ()
    # L2 partitions that each cache what their own SMs read: a gather's hit must fit one
    # partition (eq. (LP1), scale_gathered); 1: one L2
    partitions: int = 1
    # per static instruction inside per-thread loops: (sid, ((loop id, trip ratio work /
    # trace), ...)); a reuse inside a batch between two loops' sweeps grows (eq. R1)
    loops: tuple[tuple[int, tuple[tuple[int, float], ...]], ...] = ()

    @property
    def identity(self) -> bool:
        return (self.footprint <= 1.0 and self.grid_x <= 1.0 and self.batch_warps <= 1.0
                and self.sweep_growth().max(initial=1.0) <= 1.0)

    def sweep_growth(self) -> np.ndarray:
        """Eq. (S1): G[s', s], the growth of a reuse inside a batch whose previous use was
        static instruction s' and whose reuse is s: the product of the trip ratios of the
        per-thread loops around one of them and not the other (the larger of the two
        sides). Between s' in one loop's sweep and s in another's lie the rest of the first
        sweep and the start of the second, a share of their trips that stays the same
        share at the work size; s and s' in the same loops (the same sweep, a neighbour's
        iteration) keep their distance. 1x1 when no loop grows."""
        if not self.loops:
            return np.ones((1, 1))
        n = max(s for s, _ in self.loops) + 1
        ids = sorted({lp for _, lps in self.loops for lp, _ in lps})
        logs = np.zeros((n, len(ids)))  # log trip ratio of each loop around each sid
        for s, lps in self.loops:
            for lp, r in lps:
                logs[s, ids.index(lp)] = np.log(max(r, 1.0))
        around = (logs > 0).astype(float)
        total = logs.sum(axis=1)
        only_a = total[:, None] - logs @ around.T  # loops around a and not b
        grow = np.maximum(only_a, only_a.T)
        return np.exp(np.where(grow > 1e-9, grow, 0.0))


@njit(cache=True, nogil=True)
def _reuse_distances(
    units: np.ndarray, lines: np.ndarray, n_units: int, n_lines: int
):  # pragma: no cover - numba
    """Per access: position of the previous access to the same unit (sector; -1: none) and the
    number of distinct other lines accessed in between, with a Fenwick tree over the positions
    of each line's latest access. LRU keeps whole lines: a sector is still cached iff its line
    was not evicted since the sector's last use, i.e. iff fewer other lines than the capacity
    were touched in between."""
    n = units.shape[0]
    tree = np.zeros(n + 1, np.int64)
    last_unit = np.full(n_units, -1, np.int64)
    last_line = np.full(n_lines, -1, np.int64)
    prev = np.full(n, -1, np.int64)
    dist = np.full(n, -1, np.int64)
    for t in range(n):
        p = last_unit[units[t]]
        q = last_line[lines[t]]
        if p >= 0:
            prev[t] = p
            dist[t] = _lines_between(tree, p, q, t)
        _touch(tree, q, t)
        last_unit[units[t]] = t
        last_line[lines[t]] = t
    return prev, dist


@njit(cache=True, nogil=True, inline="always")
def _lines_between(tree, p, q, t):  # pragma: no cover - numba
    """Distinct lines whose latest use lies strictly between positions p and t (a Fenwick
    prefix difference), less the accessed line itself when another unit of it was used
    since (q > p: its latest use)."""
    s = 0
    i = t  # prefix sum over positions [0, t-1]
    while i > 0:
        s += tree[i]
        i -= i & -i
    i = p + 1  # minus prefix over [0, p]
    while i > 0:
        s -= tree[i]
        i -= i & -i
    return s - 1 if q > p else s


@njit(cache=True, nogil=True, inline="always")
def _touch(tree, q, t):  # pragma: no cover - numba
    """Move a line's latest use from position q (-1: none) to position t."""
    n = tree.shape[0] - 1
    if q >= 0:
        i = q + 1
        while i <= n:
            tree[i] -= 1
            i += i & -i
    i = t + 1
    while i <= n:
        tree[i] += 1
        i += i & -i


def _stack_distances(ids: np.ndarray, n_ids: int):
    """Per access: previous access to the same line and the LRU stack distance (lines)."""
    return _reuse_distances(ids, ids, n_ids, n_ids)


def scale_hits(
    lines: np.ndarray,
    batch: np.ndarray,
    hits: np.ndarray,
    cache: CacheConfig,
    scale: CacheScale,
    units_per_line: int = 1,
    unit_ids: tuple[np.ndarray, np.ndarray] | None = None,
    sids: np.ndarray | None = None,
    inst: np.ndarray | None = None,
) -> np.ndarray:
    """Hits at the work size: a trace-size hit whose previous use lies in an earlier batch
    stays a hit only if its LRU stack distance, grown by the footprint (and, across a block
    row, the grid) ratio, still fits the cache. Reuse inside a batch keeps its exact result
    when the trace fills a batch (a batch's footprint per instruction round does not depend on
    the problem size); when it does not, that distance grows with the batch's warps. With
    sectors (`units_per_line` > 1), `lines` are sector ids and distances count whole lines.
    ``unit_ids``: ``dense_ids(lines)``, when the caller has it already. ``sids``: each
    access's static instruction; a reuse inside a batch between the sweeps of different
    per-thread loops (``scale.loops``) also grows by their trip ratios (eq. (S1)).
    ``inst``: when given, ``batch`` and ``sids`` are per warp instruction and access t is one
    of instruction ``inst[t]`` (the memory analysis' transactions: no per-access copies of
    them are made; the result is the same)."""
    if scale.identity or not len(lines):
        return hits
    ids, units = dense_ids(lines) if unit_ids is None else unit_ids
    shift = max(units_per_line, 1).bit_length() - 1  # units of a line: sectors
    line_of, whole = _line_of_unit(units, shift)
    g = scale.sweep_growth() if sids is not None else np.ones((1, 1))
    most = max(1.0, scale.footprint, scale.footprint * scale.grid_x, g.max()) * scale.batch_warps
    if (len(whole) - 1) * most < cache.sets * cache.ways:
        return hits  # no reuse spans more lines than the launch has: each fits, grown
    if sids is None or g.shape[0] == 1:
        sids = np.zeros(len(lines) if inst is None else len(batch), np.int64)
    else:  # a static instruction beyond G's rows sits in no per-thread loop: no growth
        sids = np.minimum(np.asarray(sids, np.int64), g.shape[0])
        g = np.pad(g, ((0, 1), (0, 1)), constant_values=1.0)
    return _scaled_hits(
        ids, line_of, len(units), len(whole), np.ascontiguousarray(batch, np.int64),
        np.ascontiguousarray(hits, np.bool_), scale.footprint, scale.footprint * scale.grid_x,
        scale.batch_warps, scale.batches_per_row, cache.sets * cache.ways,
        np.ascontiguousarray(sids, np.int64), np.ascontiguousarray(g, np.float64),
        np.zeros(0, np.int64) if inst is None else np.ascontiguousarray(inst, np.int64),
    )  # fmt: skip


def scale_gathered(
    lines: np.ndarray,
    hits: np.ndarray,
    sids: np.ndarray,
    cache: CacheConfig,
    scale: CacheScale,
    units_per_line: int = 1,
    unit_ids: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """Hits at the work size of the gathers of ``scale.gathers`` (``sids``: each access's
    static instruction): a hit stays one only if its LRU stack distance (lines), grown by
    its gather's growth, still fits one L2 partition, whichever batch it reuses from
    (footprint.py: a gather picks lines at random from an array that grows by that much):

        hit  <=>  distance x growth < sets x ways / partitions                        (LP1)

    An L2 of P partitions (A100, H100: two of 25 MB) caches in each what its own SMs read.
    A random pick finds a line only in its own partition, which sees 1/P of the traffic and
    holds 1/P of the lines: the pick's reuse distance counted in that partition is the
    global one's share, (d / P) against (C / P), when the last pick of the line came from
    the same side, and otherwise runs back to that side's own last pick, ~P times further.
    Under random picks the two give the one rule d < C / P in global lines (Che's
    approximation of each partition's LRU: the same hit rate as an L2 of C / P seeing the
    whole stream). A reuse by the same SM (a row walk, a stencil) stays in one partition at
    d / P against C / P, the rule of one L2 of C: only the gathers take (LP1)."""
    if not scale.gathers or not len(lines):
        return hits
    grow = np.ones(int(max(sids.max(), max(s for s, _ in scale.gathers))) + 1)
    for s, g in scale.gathers:
        grow[s] = g
    ids, units = dense_ids(lines) if unit_ids is None else unit_ids
    shift = max(units_per_line, 1).bit_length() - 1
    line_of, whole = _line_of_unit(units, shift)
    _, dist = _reuse_distances(ids, line_of[ids] if len(line_of) else ids, len(units),
                               len(whole))
    g = grow[sids]
    return hits & ((g <= 1.0) | (dist * g < cache.sets * cache.ways / max(scale.partitions, 1)))


def work_size_hits(
    units: np.ndarray,
    exact: np.ndarray,
    unit_ids: tuple[np.ndarray, np.ndarray],
    units_per_line: int,
    cache: CacheConfig,
    scale: CacheScale,
    batch: np.ndarray,
    sid: np.ndarray,
    inst: np.ndarray,
) -> np.ndarray:
    """The trace's ``exact`` hits of the stream ``units`` (``inst``: each access's warp
    instruction, ``sid`` and ``batch`` per warp instruction) grown to the work size: the
    loops' reuse (``scale_hits``), then the gathers' (``scale_gathered``)."""
    hits = scale_hits(units, batch, exact, cache, scale, units_per_line, unit_ids,
                      sid if scale.loops else None, inst)
    return scale_gathered(units, hits, sid[inst] if scale.gathers else sid[:0], cache, scale,
                          units_per_line, unit_ids)


def _line_of_unit(units: np.ndarray, shift: int) -> tuple[np.ndarray, np.ndarray]:
    """(line id of each unit id, line values): ``dense_ids(lines, shift)`` found from the
    distinct units of ``dense_ids(lines)`` (``units``: in order of first use, so their lines
    come in that order too) rather than from every access again; an empty map when units
    are lines (``shift`` 0)."""
    if not shift:
        return np.zeros(0, np.int64), units
    return dense_ids(units, shift)


@njit(cache=True, nogil=True)
def _scaled_hits(  # pragma: no cover - numba
    units, line_of, n_units, n_lines, batch, hits, grow_near, grow_far, batch_warps, row,
    capacity, sids, sweep, inst,
):
    """scale_hits in one pass: _reuse_distances' count of the lines whose latest use lies
    between a reuse and its previous use, taken only for trace-size hits (a miss stays a
    miss). A reuse from ``row`` or more batches back grows by ``grow_far`` (footprint and
    grid), an earlier batch by ``grow_near`` (footprint), both times ``batch_warps``; reuse
    inside a batch by ``batch_warps`` times ``sweep[sid of the previous use, sid]`` (eq.
    (S1): the loop sweeps between them). ``capacity`` counts lines: LRU evicts whole
    lines, whatever their sectors; ``line_of``: the line id of each unit id (empty: units
    are lines); ``inst`` (empty: none): access t's row of ``batch`` and ``sids``, which are
    then per warp instruction.

    The latest uses are bits on a clock (``clock_bits``) that ``compacted`` renumbers when
    it runs out: it holds a few positions per distinct line, not one per access, so it stays
    in the CPU's cache."""
    n = units.shape[0]
    out = np.empty(n, np.bool_)
    size = min(n, 4 * n_lines + 64)
    bits, groups = clock_bits(size)
    last_time = np.full(n_units, -1, np.int64)  # a unit's last access (index into the stream)
    last_sid = np.zeros(n_units, np.int64)  # ... and its static instruction
    last_batch = np.zeros(n_units, np.int64)  # ... and its batch
    last_unit = np.full(n_units, -1, np.int64)  # ... and its position on the clock
    last_line = np.full(n_lines, -1, np.int64)  # a line's latest use on the clock
    clock = 0
    coarse = line_of.shape[0] > 0
    indexed = inst.shape[0] > 0
    for t in range(n):
        if clock == size:
            clock = compacted(bits, groups, last_line, last_unit)
        u = units[t]
        ln = line_of[u] if coarse else u
        p, q = last_unit[u], last_line[ln]
        row_t = inst[t] if indexed else t
        b, st = batch[row_t], sids[row_t]
        keep = hits[t]
        grow = batch_warps
        if keep and last_time[u] >= 0:
            pt = last_time[u]
            if b != last_batch[u]:
                grow = (grow_far if b - last_batch[u] >= row else grow_near) * batch_warps
            else:
                grow = batch_warps * sweep[last_sid[u], st]  # (S1)
            # at most t - pt - 1 lines were touched in between: no count needed below that
            keep = (t - pt - 1) * grow < capacity
            if not keep:
                # the lines whose latest use lies strictly between p and now, less the
                # accessed line itself when another unit of it was used since (q > p)
                between = ones_before(bits, groups, clock) - ones_before(bits, groups, p + 1)
                keep = (between - 1 if q > p else between) * grow < capacity
        out[t] = keep
        move(bits, groups, q, clock)
        last_time[u] = t
        last_sid[u] = st
        last_batch[u] = b
        last_unit[u] = clock
        last_line[ln] = clock
        clock += 1
    return out
