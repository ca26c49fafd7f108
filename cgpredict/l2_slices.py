"""Which L2 slice applies each atomic update: the per-slice atomic bound (issue 24, eq. (A2)).

The L2 of a recent NVIDIA GPU is split into slices, each with its own atomic unit. On the H100
(measured by contention, ``validation/ubench/slice_map.cu``: two addresses hammered by atomics
take twice as long on one slice as on two) each 1 KB granule of an allocation lies on a pair of
slices, its 256 B pieces alternating between the two (pieces 0, 2 on one, 1, 3 on the other),
and the next granule on the next pair: an aligned 1 KB lies on two slices, 1 KB starting 512 B
into a granule on four. A slice applies a warp instruction's updates one 32 B sector at a time:
the lanes of one 128 B line go as one request, lanes on the same address in further passes
(one per extra lane on it), and each pass costs a sector's read-modify-write for each sector it
updates (``atomic_slice_cycles``, measured as the one-address cost: one sector a pass). So a
launch lasts at least as long as its busiest slice takes for its sector passes: a 256-bin
histogram (1 KB) of random data 16 of 32 lanes a warp instruction on its busier slice, a 16 MB
table on all 80. The H100's ubench data (footprint sweeps of two hashes, placements, one-
address and one-line patterns: ``validation/ubench/fit_atomics.py``) agree within 10 % where
the atomic unit binds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SliceMap", "SliceStats", "sector_passes", "slice_of", "slice_stats"]

SECTOR_BYTES = 32  # an atomic pass updates whole sectors (the L2's unit)


@dataclass(frozen=True)
class SliceMap:
    """How addresses map to L2 slices: ``interleave_bytes`` granules to the ``slices`` in turn;
    with ``alternate_bytes`` (0: none) each granule to a pair of slices in turn instead, its
    pieces of that size alternating between the two."""

    slices: int
    interleave_bytes: int
    alternate_bytes: int = 0


@dataclass(frozen=True)
class SliceStats:
    """Atomic requests of one access: per warp instruction and the busiest slice's shares."""

    requests_per_warp: float  # sector passes of one warp instruction (mean), eq. (A2)
    busiest_share: float  # the busiest slice's share of all sector passes
    locations_share: float  # the busiest slice's share of the distinct locations


def slice_of(addr: np.ndarray, smap: SliceMap, base: int | None = None) -> np.ndarray:
    """Slice of each address: its granule counted from ``base``, by default the lowest address
    (taken as an allocation's start, which cudaMalloc aligns to 256 B or more, 2 MB for large
    arrays; the host's alignment of the traced array does not matter), modulo the slices."""
    a = np.asarray(addr, dtype=np.int64)
    rel = a - (a.min() if base is None else base)
    granule = rel // smap.interleave_bytes
    if smap.alternate_bytes:
        granule = 2 * granule + (rel // smap.alternate_bytes) % 2
    return granule % smap.slices


def sector_passes(a: np.ndarray, i: np.ndarray) -> np.ndarray:
    """The sector address of each sector pass of the updates at ``a`` by warp instructions
    ``i`` (one entry per lane): a lane's pass is its rank among the lanes of its instruction on
    its address, and one pass of one instruction updates each of its sectors once (eq. (A2))."""
    order = np.lexsort((a, i))
    a, i = a[order], i[order]
    n = len(a)
    new_run = np.concatenate([[True], (a[1:] != a[:-1]) | (i[1:] != i[:-1])])
    starts = np.flatnonzero(new_run)
    rank = np.arange(n) - np.repeat(starts, np.diff(np.append(starts, n)))
    sector = a // SECTOR_BYTES
    order = np.lexsort((sector, rank, i))
    sector, rank, i = sector[order], rank[order], i[order]
    first = np.concatenate([[True], (sector[1:] != sector[:-1]) | (rank[1:] != rank[:-1])
                            | (i[1:] != i[:-1])])
    return sector[first] * SECTOR_BYTES


def slice_stats(addr: np.ndarray, inst: np.ndarray, smap: SliceMap,
                base: int | None = None) -> SliceStats:
    """Sector passes of the updates at ``addr`` issued by warp instructions ``inst`` (one entry
    per active lane) and the busiest slice's shares (eq. (A2)); ``base``: the allocation's
    start (default: the lowest address)."""
    a = np.asarray(addr, dtype=np.int64)
    i = np.asarray(inst, dtype=np.int64)
    if not len(a):
        return SliceStats(requests_per_warp=0.0, busiest_share=0.0, locations_share=0.0)
    passes = sector_passes(a, i)
    lo = int(a.min()) // SECTOR_BYTES * SECTOR_BYTES if base is None else base
    per_slice = np.bincount(slice_of(passes, smap, lo), minlength=smap.slices)
    locs = np.unique(a)
    per_slice_locs = np.bincount(slice_of(locs, smap, lo), minlength=smap.slices)
    return SliceStats(
        requests_per_warp=len(passes) / len(np.unique(i)),
        busiest_share=float(per_slice.max() / len(passes)),
        locations_share=float(per_slice_locs.max() / len(locs)),
    )
