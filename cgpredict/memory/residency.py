"""Data a launch finds in the L2, left there by earlier launches of the program.

Each launch's cache analysis starts from an empty L2 (``transactions.analyze_memory``), but a GPU
keeps its L2 between launches: when a kernel writes a 16 MB matrix and the next kernel reads
it, the reads hit. Which arrays survive is decided at the work size, from the arrays' sizes
(``scaling.SizeModel.array_bytes``) and the order of the launches in the trace: an array a
launch touches is still in the L2 when the arrays touched since the last launch that touched
it, that launch's included, fit in ``GPUDevice.persist_bytes`` (LRU keeps the most recently
used data; whole arrays, as a streaming kernel touches them). Its first-touch loads then hit
(``warm_start``). The timed part of a program is its kernels: data the host copied in
is not counted as resident.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..frontend.tracefile import Trace
from ..scaling import SizeModel
from .shared import array_name
from .transactions import InstrMemStats, MemoryAnalysis

__all__ = ["Resident", "region_arrays", "resident_arrays", "warm_share", "warm_start"]


@dataclass(frozen=True)
class Resident:
    """An array a launch finds in the L2, and the bytes touched since it was last used."""

    array: str
    bytes: float
    since_bytes: float


def region_arrays(trace: Trace, kind: str | None = None) -> dict[int, frozenset[str]]:
    """The global arrays each region's own memory instructions touch (``kind``: only its
    "load" or "store" instructions)."""
    out: dict[int, set[str]] = {}
    for m in trace.header.mem:
        if m.region >= 0 and kind in (None, m.kind):
            out.setdefault(m.region, set()).add(array_name(m.base))
    return {r: frozenset(a - {""}) for r, a in out.items()}


def resident_arrays(
    trace: Trace,
    row: int,
    sizes: SizeModel,
    work: dict[str, int],
    capacity: float,
    touched: dict[int, frozenset[str]] | None = None,
    loaded: dict[int, frozenset[str]] | None = None,
    bytes_of: dict[str, float | None] | None = None,
) -> tuple[Resident, ...]:
    """The arrays launch ``row`` loads that are still in an L2 of ``capacity`` bytes from
    an earlier launch (see the module docstring). An array whose size at the work size is
    unknown (not a global, or not affine in the size macros) never counts as resident, and
    neither does anything a launch of unknown footprint touched since. ``touched`` and
    ``loaded`` (region_arrays of all instructions and of the loads) are computed when not
    given: a caller asking for many launches passes them once, and a dict ``bytes_of`` that
    keeps the arrays' sizes at the work size between its calls."""
    if capacity <= 0:
        return ()
    bytes_of = {} if bytes_of is None else bytes_of

    def size(a: str) -> float | None:
        if a not in bytes_of:
            bytes_of[a] = sizes.array_bytes(a, work)
        return bytes_of[a]

    touched = region_arrays(trace) if touched is None else touched
    regions = trace.launches["region"]
    loaded = region_arrays(trace, "load") if loaded is None else loaded
    mine = loaded.get(int(regions[row]), frozenset())
    out = []
    for arr in sorted(mine):
        own = size(arr)
        if own is None:
            continue
        since: set[str] = set()
        last = next((r for r in range(row - 1, -1, -1) if arr in touched.get(int(regions[r]), ())),
                    None)  # fmt: skip
        if last is None:
            continue
        for r in range(last, row):
            since |= touched.get(int(regions[r]), frozenset())
        total = 0.0
        for a in since:
            b = size(a)
            if b is None:
                total = float("inf")
                break
            total += b
        if total <= capacity:
            out.append(Resident(arr, own, total))
    return tuple(out)


def _fewer(counts: tuple, s: InstrMemStats, cold: tuple | None = None) -> tuple:
    """``counts`` (a load's fills, (F1), or its rides, (F2)) less the share of its DRAM
    misses that its cold misses (or ``cold``, a part of them) were: what they are once an
    earlier launch left the data."""
    cold = s.cold if cold is None else cold
    return tuple(x * (d - c) // d if d else x for x, d, c in zip(counts, s.dram_trans, cold))


def warm_start(mem: MemoryAnalysis, warm: frozenset[int]) -> MemoryAnalysis:
    """The launch with the data of static instructions ``warm`` already in the L2 (left there
    by an earlier launch): their compulsory load misses become L2 hits (warm_share at 1)."""
    return warm_share(mem, dict.fromkeys(warm, 1.0))


def warm_share(mem: MemoryAnalysis, shares: dict[int, float]) -> MemoryAnalysis:
    """The launch with the share ``shares[sid]`` of static instruction sid's compulsory
    load misses found in the L2 (left there by an earlier launch, eq. (CO1)): that part of
    them becomes L2 hits (all of them at a share of 1)."""
    if not shares:
        return mem
    instrs = []
    hits = mem.l2_hits
    for s in mem.instrs:
        f = shares.get(s.sid, 0.0)
        if f > 0 and any(s.cold):
            part = tuple(int(round(c * min(f, 1.0))) for c in s.cold)
            hits += sum(part)
            s = dataclasses.replace(
                s, dram_trans=tuple(d - c for d, c in zip(s.dram_trans, part)),
                cold=tuple(c - p for c, p in zip(s.cold, part)),
                fetched=_fewer(s.fetched, s, part), fill_rides=_fewer(s.fill_rides, s, part),
            )  # fmt: skip
        instrs.append(s)
    return MemoryAnalysis(tuple(instrs), mem.l2_accesses, hits)
