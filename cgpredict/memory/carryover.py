"""The part of an array a launch of a host loop finds in the L2, left there by the launch
before it that touched the array (eq. (CO1), round 15, t1).

``residency`` counts whole arrays: an array is found when everything touched since its last
use fits the L2. A host loop whose launches sweep more than the L2 (GRAMSCHMIDT's gs_k3
sweeps columns k..N-1 of a 256 MB A) still leaves the last C bytes of its sweep there, and
the next launch that reads a part of those lines (gs_k1 reads column k) finds them. From the
trace: the distinct sectors each array's accesses touch in a region's recorded launch, grown
to a launch's work size like its accesses (the launch's own block counts times its loops'
growth, capped by the array), and the share of a launch's sectors of an array that the
previous toucher's recorded launch also touched (the overlap, from the trace's first two
host-loop iterations, which are recorded). Both launches sweep their lines in the same
order (the GPU's warps walk their loops side by side), so a line at the fraction u of the
previous launch's sweep F_p is still there when this launch, of footprint F_r, reaches it
when F_p (1 - u) + u F_r <= C', C' the L2's bytes less what the launches in between
touched (the lines the previous launch swept after it, and this launch's lines before it):
the share ``clamp((C' - min(F_p, F_r)) / |F_p - F_r|, 0, 1)`` (a small reader of a large
sweep C' / F_p; the same sweep again all or nothing).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..frontend.tracefile import Trace
from ..scaling import SizeModel
from .shared import array_name

__all__ = ["CarryFacts", "carried_share", "carry_facts", "survive_share"]

SECTOR = 32  # bytes the L2 allocates and the DRAM returns at a time
TAG_MARKERS = 0xF000  # an event's tag (top 16 bits) at or above it is no memory access
STEP = 32  # shares are kept in 1/STEP steps: launches that differ less share one model


def survive_share(f_prev: float, f_own: float, room: float) -> float:
    """Eq. (CO1): the share of the lines a previous launch swept (``f_prev`` bytes) that a
    launch sweeping ``f_own`` bytes in the same order still finds, with ``room`` bytes of
    L2 left after the launches in between: those at the fraction u of the sweep with
    f_prev (1 - u) + u f_own <= room."""
    if room <= 0 or f_prev <= 0:
        return 0.0
    if f_own == f_prev:
        return 1.0 if f_prev <= room else 0.0
    low, high = min(f_prev, f_own), max(f_prev, f_own)
    return min(max((room - low) / (high - low), 0.0), 1.0)


@dataclass(frozen=True)
class CarryFacts:
    """What eq. (CO1) reads of a trace: per region and array, the distinct bytes its
    recorded launch touches and the accesses it made (at the trace size); per (region,
    array), the share of its sectors the previous toucher's recorded launch also touched;
    and each block's growth from the trace to the work size (its loops' trip ratios)."""

    traced: dict[tuple[int, str], tuple[float, float]]
    overlap: dict[tuple[int, str], float]
    growth: dict[int, float]
    blocks: dict[tuple[int, str], tuple[int, ...]]


def _sectors(trace: Trace, row: int) -> dict[str, np.ndarray]:
    """The distinct 32-B sectors each array's accesses touch in recorded launch ``row``, in
    increasing order (uint64): each event's array by a lookup of its memory instruction (an
    event's tag), its sectors marked in a table over the array's span (``_sector_tables``:
    two passes over the events in numba, where a sort of them took 0.3-0.5 s a launch of
    GEMM or 3MM); an array whose few sectors span a wide range is listed and sorted."""
    ev = np.ascontiguousarray(trace.launch_events(row), dtype=np.uint64)
    names = sorted({array_name(m.base) for m in trace.header.mem} - {""})
    n = len(names)  # the array of a marker or of a load of no array
    which = np.full(1 << 16, n, np.int64)  # memory instruction id (an event's tag) -> array
    for m in trace.header.mem:
        if array_name(m.base) and m.id < TAG_MARKERS:
            which[m.id] = names.index(array_name(m.base))
    lo, count, base, table, listed, rest = _sector_tables(ev, which, n, SECTOR)
    out: dict[str, np.ndarray] = {}
    for i, a in enumerate(names):
        if not count[i]:
            continue
        if listed[i + 1] > listed[i]:
            out[a] = np.unique(rest[listed[i]:listed[i + 1]]).astype(np.uint64)
        else:
            out[a] = np.flatnonzero(table[base[i]:base[i + 1]]).astype(np.uint64)
            out[a] += np.uint64(lo[i])
    return out


@njit(cache=True, nogil=True)
def _sector_tables(ev, which, n, sector):  # pragma: no cover - numba
    """Per array 0..n-1 of the events ``ev`` (``which``: an event's tag -> its array, n for
    none): its lowest sector, its events' count, and its sectors marked in ``table`` from
    ``base[a]`` (a table over its span, where that is at most max(4 count, 2**20) wide), or
    listed in ``rest`` from ``listed[a]`` (a wider span)."""
    low48 = np.uint64((1 << 48) - 1)
    lo = np.full(n, np.int64(1) << 62, np.int64)
    hi = np.full(n, -1, np.int64)
    count = np.zeros(n, np.int64)
    for k in range(ev.shape[0]):
        a = which[ev[k] >> np.uint64(48)]
        if a < n:
            s = np.int64(ev[k] & low48) // sector
            lo[a] = min(lo[a], s)
            hi[a] = max(hi[a], s)
            count[a] += 1
    base = np.zeros(n + 1, np.int64)
    listed = np.zeros(n + 1, np.int64)
    for a in range(n):
        span = hi[a] - lo[a] + 1 if count[a] else 0
        wide = span > max(4 * count[a], 1 << 20)
        base[a + 1] = base[a] + (0 if wide else span)
        listed[a + 1] = listed[a] + (count[a] if wide else 0)
    table = np.zeros(base[n], np.bool_)
    rest = np.empty(listed[n], np.int64)
    fill = listed[:n].copy()
    for k in range(ev.shape[0]):
        a = which[ev[k] >> np.uint64(48)]
        if a < n:
            s = np.int64(ev[k] & low48) // sector
            if listed[a + 1] > listed[a]:
                rest[fill[a]] = s
                fill[a] += 1
            else:
                table[base[a] + s - lo[a]] = True
    return lo, count, base, table, listed, rest


def _growth(trace: Trace, sizes: SizeModel, tsz: dict, wsz: dict) -> dict[int, float]:
    """Each block's executions at the work size over the trace size's: the product of the
    trip ratios of the loops enclosing it (kernel.region's block factors, less the threads'
    division: every execution of the launch counts)."""
    def trip(model, at: dict) -> float:  # as kernel.launch_loops.trip (a layer above)
        try:
            return max(model(at), 0.0)
        except KeyError:
            return model.alpha

    out = {b.id: 1.0 for b in trace.header.blocks}
    for lp in trace.header.loops:
        model = sizes.trips.get(lp.id)
        if model is None:
            continue
        t_trace = trip(model, tsz)
        r = trip(model, wsz) / t_trace if t_trace > 0 else 1.0
        for b in lp.blocks:
            out[b] = out.get(b, 1.0) * r
    return out


def carry_facts(trace: Trace, sizes: SizeModel, tsz: dict, wsz: dict,
                touched: dict[int, frozenset[str]]) -> CarryFacts:
    """The CarryFacts of ``trace`` (``touched``: residency.region_arrays)."""
    regions = trace.launches["region"]
    rec = np.flatnonzero(trace.launches["recorded"] != 0)
    blocks: dict[tuple[int, str], tuple[int, ...]] = {}
    for m in trace.header.mem:
        if m.region >= 0 and array_name(m.base):
            key = (m.region, array_name(m.base))
            blocks[key] = tuple(sorted({*blocks.get(key, ()), m.block}))
    seen: dict[int, dict[str, np.ndarray]] = {}
    traced: dict[tuple[int, str], tuple[float, float]] = {}
    overlap: dict[tuple[int, str], float] = {}
    for row in rec:
        r = int(regions[row])
        mine = seen[int(row)] = _sectors(trace, int(row))
        for a, sec in mine.items():
            acc = float(sum(trace.bb_counts[row, b] for b in blocks.get((r, a), ())))
            traced.setdefault((r, a), (float(len(sec)) * SECTOR, acc))
            prev = next((p for p in range(int(row) - 1, -1, -1)
                         if a in touched.get(int(regions[p]), ())), None)  # fmt: skip
            if prev is not None and prev in seen and a in seen[prev] and len(sec):
                both = np.intersect1d(sec, seen[prev][a], assume_unique=True)
                overlap[(r, a)] = len(both) / len(sec)
    return CarryFacts(traced=traced, overlap=overlap, growth=_growth(trace, sizes, tsz, wsz),
                      blocks=blocks)


def footprint(trace: Trace, row: int, facts: CarryFacts,
              size: dict[str, float | None]) -> dict[str, float]:
    """The bytes launch ``row`` touches of each array at the work size: its region's traced
    distinct bytes, grown like the launch's accesses (its own block counts times their
    growth, over the recorded launch's), at most the array (``size``: bytes at work size)."""
    r = int(trace.launches["region"][row])
    out: dict[str, float] = {}
    for (reg, a), (traced, acc) in facts.traced.items():
        if reg != r or acc <= 0:
            continue
        work = sum(float(trace.bb_counts[row, b]) * facts.growth.get(b, 1.0)
                   for b in facts.blocks[(reg, a)])
        full = size.get(a)
        out[a] = traced * work / acc if full is None else min(traced * work / acc, full)
    return out


def carried_share(trace: Trace, row: int, facts: CarryFacts, capacity: float,
                  touched: dict[int, frozenset[str]], loaded: frozenset[str],
                  size: dict[str, float | None], feet: dict[int, dict[str, float]]
                  ) -> tuple[tuple[str, float], ...]:
    """Eq. (CO1) for launch ``row``: (array, share of its sectors found in an L2 of
    ``capacity`` bytes) for each array it loads (``loaded``) that an earlier launch touched,
    in 1/STEP steps, zero shares left out. ``feet`` keeps each launch's footprint."""
    regions = trace.launches["region"]

    def feet_of(q: int) -> dict[str, float]:
        if q not in feet:
            feet[q] = footprint(trace, q, facts, size)
        return feet[q]

    own = sum(feet_of(row).values())
    out = []
    for a in sorted(loaded):
        prev = next((p for p in range(row - 1, -1, -1)
                     if a in touched.get(int(regions[p]), ())), None)  # fmt: skip
        o = facts.overlap.get((int(regions[row]), a))
        if prev is None or not o:
            continue
        between = 0.0
        for q in range(prev + 1, row):  # what the launches in between touched
            between += sum(feet_of(q).values())
            if between >= capacity:
                break
        share = o * survive_share(sum(feet_of(prev).values()), own, capacity - between)  # (CO1)
        share = round(share * STEP) / STEP
        if share > 0:
            out.append((a, share))
    return tuple(out)



def carry_capacity(device) -> float:
    """The L2 bytes a launch's sweep leaves for the next launch, eq. (CO1): the bytes the
    device file says persist between launches (``l2_persist_bytes``)."""
    return float(device.persist_bytes)
