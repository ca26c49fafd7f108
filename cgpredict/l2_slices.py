"""Which L2 slice applies each atomic update: the per-slice atomic bound (issue 24, eq. (A2)).

The L2 of a recent NVIDIA GPU is split into slices (H100: 80, ``device__attribute_l2s_count``),
each with its own atomic unit; consecutive ``interleave`` bytes of an address range belong to
one slice and the next range to the next slice, except that an XOR of one address bit (the
``xor_bytes`` stride) into the slice number's lowest bit sends the two halves of each granule
to the two slices of a pair: on the H100, 512 B granules and bit 8, so an aligned 512 B lies on
two slices (the sweep's 128 bins take half the time of its 64) and an aligned 1 KB on the same
two. The atomic updates a warp instruction sends to one slice are applied there one request
after another, lanes on the same address of one warp instruction combined into one request.
So a launch lasts at least as long as its busiest slice takes for its requests: a 256-bin
histogram (1 KB) lands on two slices of the H100's 80, a 16 MB table on all of them. The
interleave, the XOR bit and the cost per request are fitted on the footprint sweep of
``validation/ubench/atomics.cu`` (``validation/ubench/fit_atomics.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SliceMap", "SliceStats", "slice_of", "slice_stats"]


@dataclass(frozen=True)
class SliceMap:
    """How addresses map to L2 slices: ``interleave_bytes`` per slice in turn, ``slices``;
    ``xor_bytes`` (0: none): the address bit of that stride flips the slice number's lowest bit."""

    slices: int
    interleave_bytes: int
    xor_bytes: int = 0


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
    rel = a - a.min()
    granule = rel // smap.interleave_bytes
    if smap.xor_bytes:
        granule = granule ^ ((rel // smap.xor_bytes) & 1)
    return granule % smap.slices


def slice_stats(addr: np.ndarray, inst: np.ndarray, smap: SliceMap) -> SliceStats:
    """Requests of the updates at ``addr`` issued by warp instructions ``inst`` (one entry per
    active lane): lanes of one instruction on one address are one request (eq. (A2))."""
    a = np.asarray(addr, dtype=np.int64)
    i = np.asarray(inst, dtype=np.int64)
    if not len(a):
        return SliceStats(requests_per_warp=0.0, busiest_share=0.0, locations_share=0.0)
    req = _request_addresses(a, i)
    per_slice = np.bincount(slice_of(req, smap), minlength=smap.slices)
    locs = np.unique(a)  # the same lowest address as a's: the same granules
    per_slice_locs = np.bincount(slice_of(locs, smap), minlength=smap.slices)
    return SliceStats(
        requests_per_warp=len(req) / len(np.unique(i)),
        busiest_share=float(per_slice.max() / len(req)),
        locations_share=float(per_slice_locs.max() / len(locs)),
    )


def _request_addresses(a: np.ndarray, i: np.ndarray) -> np.ndarray:
    """The address of each request: one per distinct (instruction, address) pair (sorted by
    instruction, then address; a lexsort, far faster than a 2-D unique on millions of lanes)."""
    order = np.lexsort((a, i))
    a, i = a[order], i[order]
    first = np.concatenate([[True], (a[1:] != a[:-1]) | (i[1:] != i[:-1])])
    return a[first]
