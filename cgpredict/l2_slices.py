"""Which L2 slice applies each atomic update: the per-slice atomic bound (issue 24, eq. (A2)).

The L2 of a recent NVIDIA GPU is split into slices (H100: 80, ``device__attribute_l2s_count``),
each with its own atomic unit; consecutive ``interleave`` bytes of an address range belong to
one slice and the next range to the next slice. The atomic updates a warp instruction sends to
one slice are applied there one request after another, lanes on the same address of one warp
instruction combined into one request. So a launch lasts at least as long as its busiest
slice takes for its requests: a 256-bin histogram (1 KB) lands on two slices of the H100's 80,
a 16 MB table on all of them. The interleave and the cost per request are fitted on the
footprint sweep of ``validation/ubench/atomics.cu`` (``validation/ubench/fit_atomics.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SliceMap", "SliceStats", "slice_of", "slice_stats"]


@dataclass(frozen=True)
class SliceMap:
    """How addresses map to L2 slices: ``interleave_bytes`` per slice in turn, ``slices``."""

    slices: int
    interleave_bytes: int


@dataclass(frozen=True)
class SliceStats:
    """Atomic requests of one access: per warp instruction and the busiest slice's shares."""

    requests_per_warp: float  # distinct addresses of one warp instruction (mean)
    busiest_share: float  # the busiest slice's share of all (instruction, address) requests
    locations_share: float  # the busiest slice's share of the distinct locations


def slice_of(addr: np.ndarray, smap: SliceMap) -> np.ndarray:
    """Slice of each address: its interleave granule counted from the lowest address (taken as
    an allocation's start, which cudaMalloc aligns to 256 B or more; the host's alignment of
    the traced array does not matter), modulo the slices."""
    a = np.asarray(addr, dtype=np.int64)
    return ((a - a.min()) // smap.interleave_bytes) % smap.slices


def slice_stats(addr: np.ndarray, inst: np.ndarray, smap: SliceMap) -> SliceStats:
    """Requests of the updates at ``addr`` issued by warp instructions ``inst`` (one entry per
    active lane): lanes of one instruction on one address are one request (eq. (A2))."""
    a = np.asarray(addr, dtype=np.int64)
    i = np.asarray(inst, dtype=np.int64)
    if not len(a):
        return SliceStats(requests_per_warp=0.0, busiest_share=0.0, locations_share=0.0)
    pairs = np.unique(np.stack([i, a]), axis=1)  # one column per request
    per_slice = np.bincount(slice_of(pairs[1], smap), minlength=smap.slices)
    locs = np.unique(a)  # the same lowest address as a's: the same granules
    per_slice_locs = np.bincount(slice_of(locs, smap), minlength=smap.slices)
    return SliceStats(
        requests_per_warp=pairs.shape[1] / len(np.unique(i)),
        busiest_share=float(per_slice.max() / pairs.shape[1]),
        locations_share=float(per_slice_locs.max() / len(locs)),
    )
