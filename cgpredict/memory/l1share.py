"""The blocks that share an SM's L1 at the work size, for a 1-D or 2-D grid, eq. (L1p) (SPEC
§2.3; docs/models.md §2 "L1").

Blocks go to the SMs round robin in linear order (blockIdx.y * gridDim.x + blockIdx.x), so the
``k`` blocks an SM holds at once are ``sms`` apart: in a work-size grid ``gx`` blocks wide, a
partner m * sms blocks along is (m * sms) mod gx columns and (m * sms) // gx rows away (one
row further for the blocks that wrap past the grid's right edge; fewer in a short last wave). A 2-D
trace's grid is only a few blocks wide, so its blocks ``sms`` apart are not the work size's;
a 1-D trace is a few hundred blocks long, too short for k blocks ``sms`` apart (spmv_ell at
128x1: 512 traced blocks, 16 an SM, would sit 32 apart, whose banded gathers of x overlap,
where the work size's, 132 apart, do not).
Instead each traced block keeps an L1 of its own and its work-size partners take their part of
it: a partner that shares a fraction s of the block's lines adds 1 - s block's worth of other
lines. An LRU shared by streams that interleave at the same rate stretches each stream's reuse
distance (distinct lines in between) by the number of streams, so the block sees an L1 of
capacity / sharers, sharers = 1 + sum over partners of (1 - s), eq. (L1p). The fraction s is
measured on the trace, between traced blocks at the partner's offset (or, past the traced grid,
the farthest offset it has, when that is at least two blocks: as far from a halo as the
partner).
Exact for partners that share no lines (tests/test_l1share.py: a brute-force LRU of every SM
of a small grid); for shared lines an estimate at the scale of the whole footprint, which
misses the hits an SM gets on a shared line a partner fetched just before.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from ..hashing import dense_ids
from ..warps import WarpTrace

MAX_BLOCKS = 1 << 20  # blocks enumerated for the partners of a grid (partners)

__all__ = ["Partner", "block_lines", "l1_sharers", "partners", "shared_blocks", "shared_fraction",
           "sharers_given", "traced_offset"]


@dataclass(frozen=True)
class Partner:
    """A co-resident block at the work size: ``dx`` columns and ``dy`` rows of blocks away,
    for a ``weight`` (fraction of the grid's blocks) that have it there."""

    dx: int
    dy: int
    weight: float


def partners(gx: int, gy: int, sms: int, k: int) -> tuple[Partner, ...]:
    """The co-resident blocks of a block in a ``gx`` x ``gy`` grid of blocks, k an SM, dealt
    round robin over ``sms`` SMs: each wave of k * sms consecutive blocks puts blocks
    s, s + sms, ..., s + (k-1) sms of it on SM s (a short last wave: fewer). Offsets with the
    fraction of blocks that have a partner there (the first ``MAX_BLOCKS`` blocks stand for a
    larger grid: the pattern repeats)."""
    gx, gy = max(gx, 1), max(gy, 1)
    n = gx * gy
    if k <= 1 or n <= 1:
        return ()
    b = np.arange(min(n, MAX_BLOCKS), dtype=np.int64)
    j, bx = (b % (k * sms)) // sms, b % gx
    out: list[Partner] = []
    for m in range(1 - k, k):  # the partner m places along in the block's SM group
        if m == 0:
            continue
        q, r = divmod(m * sms, gx)  # rows and columns along, before wrapping
        has = (j + m >= 0) & (j + m < k) & (b + m * sms < n)
        stay = int(np.count_nonzero(has & (bx < gx - r)))
        for dx, dy, c in ((r, q, stay), (r - gx, q + 1, int(np.count_nonzero(has)) - stay)):
            if c:
                out.append(Partner(dx=dx, dy=dy, weight=c / len(b)))
    return tuple(sorted(out, key=lambda p: (p.dx, p.dy)))


def traced_offset(d: int, g: int) -> int | None:
    """The offset of traced blocks (a grid ``g`` blocks long) that stands for a work-size
    offset ``d``: ``d`` itself where the trace has it, else the farthest it has when that is
    at least two blocks (past any halo, as ``d`` is); None when it has none."""
    if abs(d) < g:
        return d
    if g - 1 >= 2:
        return int(np.sign(d)) * (g - 1)
    return None


LINE_BITS = 40  # a line number below 2^40 (addresses below 2^47), the block in the bits above


def block_lines(wt: WarpTrace, is_load_sid: np.ndarray, line_bytes: int) -> np.ndarray:
    """The distinct (traced block, line number) pairs the loads of ``wt`` touch, as an int64
    array of shape (n, 2), in order of first use (O(events): no sort)."""
    if not wt.n_events:
        return np.zeros((0, 2), np.int64)
    keys, m = _line_keys(wt.addr, wt.inst_start.astype(np.int64), wt.inst_warp.astype(np.int64),
                         wt.inst_sid.astype(np.int64), np.asarray(is_load_sid, np.bool_),
                         max(-(-wt.block.threads // 32), 1),
                         max(int(line_bytes), 1).bit_length() - 1)
    if not m:
        return np.zeros((0, 2), np.int64)
    _, pair = dense_ids(keys[:m])
    return np.stack([pair >> np.uint64(LINE_BITS),
                     pair & np.uint64((1 << LINE_BITS) - 1)], axis=1).astype(np.int64)


@njit(cache=True, nogil=True)
def _line_keys(addr, inst_start, inst_warp, inst_sid, is_load, wpb, shift):  # pragma: no cover
    """(block << LINE_BITS | line) of every load event, a run of one line within a warp
    instruction written once; and how many were written."""
    n_inst, n_ev = inst_start.shape[0], addr.shape[0]
    out = np.empty(n_ev, np.uint64)
    sh, bits = np.uint64(shift), np.uint64(LINE_BITS)
    m = 0
    for i in range(n_inst):
        if not is_load[inst_sid[i]]:
            continue
        hi = inst_start[i + 1] if i + 1 < n_inst else n_ev
        b = np.uint64(inst_warp[i] // wpb) << bits
        prev = np.uint64(0xFFFFFFFFFFFFFFFF)
        for e in range(inst_start[i], hi):
            line = addr[e] >> sh
            if line != prev:
                out[m] = b | line
                m += 1
                prev = line
    return out, m


def shared_fraction(pairs: np.ndarray, nbx: int, nby: int, ex: int, ey: int,
                    keys: np.ndarray | None = None) -> float:
    """Of the lines traced blocks load, the fraction that the traced block ``ex`` columns and
    ``ey`` rows away (where the ``nbx`` x ``nby`` traced grid has one) loads too. ``keys``:
    the pairs' sorted keys (_keys), when already known."""
    if not len(pairs):
        return 0.0
    bx, by = pairs[:, 0] % nbx, pairs[:, 0] // nbx
    px, py = bx + ex, by + ey
    has = (px >= 0) & (px < nbx) & (py >= 0) & (py < nby)
    if not has.any():
        return 0.0
    keys = _keys(pairs) if keys is None else keys
    probe = ((py[has] * nbx + px[has]) << LINE_BITS) | pairs[has, 1]
    at = np.minimum(np.searchsorted(keys, probe), len(keys) - 1)
    return float(np.count_nonzero(keys[at] == probe) / has.sum())


def _keys(pairs: np.ndarray) -> np.ndarray:
    """The (block, line) pairs as sorted int64 keys, block in the bits above the line."""
    return np.sort((pairs[:, 0] << LINE_BITS) | pairs[:, 1])


def l1_sharers(pairs: np.ndarray, nbx: int, nby: int, partners_: tuple[Partner, ...]) -> float:
    """Blocks' worth of lines in a traced block's L1 at the work size: itself and each
    partner's lines it does not share (module docstring), eq. (L1p)."""
    return sharers_given(partners_, shared_blocks(pairs, nbx, nby, partners_))


def sharers_given(partners_: tuple[Partner, ...], shared: float) -> float:
    """Eq. (L1p)'s sharers from the partners' ``shared`` blocks' worth (shared_blocks)."""
    return 1.0 + sum(p.weight for p in partners_) - shared


def shared_blocks(pairs: np.ndarray, nbx: int, nby: int, partners_: tuple[Partner, ...]) -> float:
    """Blocks' worth of a block's lines its partners also load: sum over partners of
    weight x s, s measured between traced blocks at the partner's offset (traced_offset;
    0 where the trace has none)."""
    keys = _keys(pairs)
    shared: dict[tuple[int, int], float] = {}
    total = 0.0
    for p in partners_:
        ex, ey = traced_offset(p.dx, nbx), traced_offset(p.dy, nby)
        if ex is None or ey is None:
            continue
        if (ex, ey) not in shared:
            shared[(ex, ey)] = shared_fraction(pairs, nbx, nby, ex, ey, keys)
        total += p.weight * shared[(ex, ey)]
    return total
