"""Wide shared loads served in phases of lanes (eq. (20w) of docs/models.md).

A warp's shared load whose lanes each read ``lane_bytes`` (an LDS.128: 16 B) is served in
phases of ``phase_bytes / lane_bytes`` consecutive lanes (the device file's
``smem_phase_bytes``; the H100: 256 B, half-warps for an LDS.128). Bank conflicts count
within a phase only: two lanes of different phases that read the same word take a pass each
(no broadcast across phases), and a load's passes (wavefronts) are the sum of its phases'::

    wavefronts = sum over phases p of X(lanes of p)                                    (20w)

X the conflict degree of eq. (20) over the lanes of one phase. A warp whose two halves read
the same 16 tile rows at a 32-word stride (syrk_tiled's ``A[j][k]`` with 16x16 blocks) then
takes 16 + 16 passes, not the 16 of one phase; a broadcast LDS.128 takes 1 + 1 = 2.
This module only groups a load's lanes by phase; ``memory/shared.py`` counts the degrees.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WARP = 32


def phase_lanes(lane_bytes: int, phase_bytes: int, warp: int = WARP) -> int:
    """Consecutive lanes one phase of a shared load serves (eq. (20w)): ``phase_bytes /
    lane_bytes``, at most a warp; a whole warp when the device states no phase
    (``phase_bytes`` 0) or the lanes' data fit one phase."""
    if phase_bytes <= 0 or lane_bytes <= 0:
        return warp
    return max(1, min(warp, phase_bytes // lane_bytes))


@dataclass(frozen=True)
class PhaseGroups:
    """The events of some warp accesses regrouped by (access, phase): ``order`` permutes the
    events so that each group is contiguous, group g spanning ``starts[g]:ends[g]`` of the
    permuted events and belonging to access ``access[g]``."""

    order: np.ndarray
    starts: np.ndarray
    ends: np.ndarray
    access: np.ndarray


def phase_groups(lanes: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                 lanes_per_phase: int) -> PhaseGroups:
    """Group the events ``starts[i]:ends[i]`` of every warp access ``i`` (their lanes in
    ``lanes``) by the phase ``lane // lanes_per_phase`` each lane falls in; empty phases (a
    masked half-warp) make no group."""
    n = len(starts)
    sizes = np.asarray(ends, np.int64) - np.asarray(starts, np.int64)
    phases = -(-WARP // max(lanes_per_phase, 1))
    access = np.repeat(np.arange(n, dtype=np.int64), sizes)
    first = np.cumsum(sizes) - sizes  # each access's first event among the gathered ones
    ev = np.arange(int(sizes.sum()), dtype=np.int64) + np.repeat(
        np.asarray(starts, np.int64) - first, sizes)
    key = access * phases + np.asarray(lanes, np.int64)[ev] // max(lanes_per_phase, 1)
    order = ev[np.argsort(key, kind="stable")]
    counts = np.bincount(key, minlength=n * phases)
    used = np.flatnonzero(counts)
    group_ends = np.cumsum(counts[used])
    return PhaseGroups(order=order, starts=group_ends - counts[used], ends=group_ends,
                       access=used // phases)


def summed_by_access(degrees: np.ndarray, groups: PhaseGroups, n_access: int) -> np.ndarray:
    """Eq. (20w): each access's passes, the sum of its phases' conflict degrees."""
    out = np.zeros(n_access, np.int64)
    np.add.at(out, groups.access, np.asarray(degrees, np.int64))
    return out
