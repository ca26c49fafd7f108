"""Uneven warps on an SM's sub-partitions: the warp-level makespan (eqs. (B6)-(B7)).

Eq. (B3) (block_schedule.py) lets an SM's resident blocks share the whole SM's issue rate.
The SM is four sub-partitions (schedulers), each issuing one warp instruction a cycle to the
warps that sit on it, and a warp stays on its scheduler for life: warp w of the block in slot
k of an SM sits on scheduler (k x W + w) mod schedulers (W warps a block). A block holds its
slot until its *last* warp ends, so when a block's warps differ (the blind mandelbrot: one
warp of a 16x16 block over the set's boundary runs 256 iterations, its neighbours a few) the
scheduler holding the slow warps sets when slots free, while the other schedulers run out of
warps; and a scheduler left with few live warps issues below one a cycle, each warp at most
at its own critical path's rate (``cap``: a warp's instructions over its chain's cycles)::

    scheduler p: its live warps share one issue a cycle equally, each at most cap      (B6)
    a block leaves when its last warp ends; the next block in index order takes its slot
    M_w(c) = the time the last warp ends,  c_{b,w} the warp instructions of warp w of block b
    warp_share = M_w(c) / M_w(mean c, .., mean c)                                        (B7)

With every block resident from the start (one wave) and cap = 1 each scheduler never idles
while it has warps, so M_w is the largest scheduler's summed warp work: the busiest
sub-partition, not the mean one, sets the time. With the warps of a block alike and W a
multiple of the schedulers, each scheduler holds the same share of every block and (B6) is
(B3) on the block sums (tests/test_smsp_schedule.py checks both). block_schedule's (B3)
and (B4) are this module's (B6) and (B7) on blocks of one warp on one scheduler: one event
loop serves both schedulers. Slots freed at one instant take the next blocks in turn over
the SMs, as the first blocks were dealt (B6t); (B7)'s equal warps are counted in closed
form, wave by wave on the busiest SM's ceil(blocks / sms) blocks (B7e). A coarse trace's
warps come from warp_spread.py, eq. (B8). The event loop finds its next scheduler at the
root of a tournament tree (np.argmin's choice in log2 steps: 65,536 blocks of 32 warps on
132 SMs in 0.2-0.3 s where scanning every scheduler took 1.4-2.9 s; docs/models.md, (B8)'s cost).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .block import Block

__all__ = ["even_makespan", "warp_makespan", "warp_residency", "warp_share", "warp_work"]


def warp_makespan(work: np.ndarray, sms: int, slots: int, schedulers: int,
                  cap: float = 1.0) -> float:
    """Eq. (B6): the time the last warp ends when the blocks of ``work`` (blocks x warps,
    in block index order; a warp's instructions) run on ``sms`` SMs of ``slots`` blocks and
    ``schedulers`` sub-partitions each, a warp issuing at most ``cap`` a cycle (1: no
    limit but its scheduler's)."""
    return warp_residency(work, sms, slots, schedulers, cap)[0]


def warp_residency(work: np.ndarray, sms: int, slots: int, schedulers: int,
                   cap: float = 1.0) -> tuple[float, float]:
    """Eq. (B6)'s makespan of ``work`` (as warp_makespan) and the live warps a scheduler
    holds, averaged over the time it holds any (Nsight Compute's
    ``smsp__warps_active.avg.per_cycle_active``, the check of (B8) on the counters)."""
    w = np.ascontiguousarray(np.atleast_2d(np.asarray(work, np.float64)))
    if not w.size:
        return 0.0, 0.0
    nsp, nsm = max(int(schedulers), 1), max(int(sms), 1)
    live = np.zeros((2, nsm * nsp))
    got = float(_makespan(w, nsm, max(int(slots), 1), nsp, min(max(float(cap), 1e-9), 1.0),
                          live))
    return got, float(live[0].sum() / live[1].sum()) if live[1].sum() > 0 else 0.0


@njit(cache=True, nogil=True)
def _rate(n, cap):  # pragma: no cover - numba
    """Each of n live warps' issue rate on one scheduler: an equal share, at most cap."""
    return min(cap, 1.0 / n) if n > 0 else 0.0


@njit(cache=True, nogil=True)
def _held(live, p, n, dt):  # pragma: no cover - numba
    """Scheduler p held n live warps for dt: live[0, p] sums n x dt, live[1, p] the time
    it held any (its active time)."""
    live[0, p] += n * dt
    live[1, p] += dt if n > 0 else 0.0


@njit(cache=True, nogil=True)
def _makespan(w, sms, slots, nsp, cap, live):  # pragma: no cover - numba
    """warp_makespan's event loop: per scheduler the virtual finishing times of its live
    warps (the work each live warp has received grows at _rate), the next event the
    scheduler whose earliest warp ends first; a block's last warp frees its slot, and the
    slots freed at one instant take the next blocks in turn over the SMs (B6t)."""
    nb, wpb = w.shape
    per = (slots * wpb + nsp - 1) // nsp + 1
    total = sms * nsp
    size = 1
    while size < total:
        size *= 2
    due = np.full(size, np.inf)  # padded to the tournament tree's leaves
    tree = np.zeros(2 * size, np.int64)
    tree[size:] = np.arange(size)
    for i in range(size - 1, 0, -1):
        tree[i] = tree[2 * i]
    vfin = np.full((total, per), np.inf)
    owner = np.full((total, per), -1)
    first = np.zeros(total, np.int64)  # np.argmin(vfin[p]), kept as warps come and go
    vt, at = np.zeros(total), np.zeros(total)
    n = np.zeros(total, np.int64)
    left, home = np.zeros(nb, np.int64), np.zeros(nb, np.int64)
    nxt, last = 0, 0.0
    for k in range(slots):  # the first sms x slots blocks round-robin (eq. (B3))
        for s in range(sms):
            if nxt < nb:
                _place(w, nxt, s, k, 0.0, nsp, vfin, owner, first, vt, at, n, due, tree,
                       cap, live)
                left[nxt], home[nxt] = wpb, s * slots + k
                nxt += 1
    freed, nf, tf = np.zeros(sms * slots, np.int64), 0, 0.0
    while True:
        p = tree[1]  # np.argmin(due): the lowest index on a tie
        t = due[p]
        if nf > 0 and (t == np.inf or t > tf + 1e-9 * max(tf, 1.0)):
            # the slots freed at one instant take the next blocks in turn over the SMs (B6t)
            order = _in_turn(freed[:nf], sms, slots)
            for i in range(nf):
                h = freed[order[i]]
                if nxt < nb:
                    _place(w, nxt, h // slots, h % slots, tf, nsp, vfin, owner, first, vt,
                           at, n, due, tree, cap, live)
                    left[nxt], home[nxt] = wpb, h
                    nxt += 1
            nf = 0
            continue
        if t == np.inf:
            return last
        vt[p] += (t - at[p]) * _rate(n[p], cap)
        _held(live, p, n[p], t - at[p])
        at[p] = t
        j = first[p]
        b = owner[p, j]
        vfin[p, j], owner[p, j] = np.inf, -1
        n[p] -= 1
        last = max(last, t)
        first[p] = np.argmin(vfin[p])
        _due(due, tree, p, at[p] + (vfin[p, first[p]] - vt[p]) / _rate(n[p], cap) if n[p] > 0
             else np.inf)
        left[b] -= 1
        if left[b] == 0 and nxt < nb:  # its slot takes the next block
            if nf == 0:
                tf = t
            freed[nf] = home[b]
            nf += 1


@njit(cache=True, nogil=True)
def _due(due, tree, p, v):  # pragma: no cover - numba
    """Scheduler p's next event at v, and the tournament tree over ``due`` updated on the
    path above leaf p: each node holds the index of its leaves' earliest event, the left
    (lower) one on a tie, so the root is np.argmin(due) in log2(schedulers) steps where the
    argmin scanned all of them at every event (B6t's order of ties kept)."""
    due[p] = v
    i = (p + len(due)) >> 1
    while i >= 1:
        a, b = tree[2 * i], tree[2 * i + 1]
        tree[i] = a if due[a] <= due[b] else b
        i >>= 1


@njit(cache=True, nogil=True)
def _in_turn(freed, sms, slots):  # pragma: no cover - numba
    """The order in which the slots ``freed`` (s x slots + k) at one instant take the next
    blocks: the first freed slot of each SM in SM order, then each SM's second, and so on
    (slots of an SM by k), as the first blocks were dealt (B6t)."""
    by_sm = np.argsort(freed)  # SM, then slot
    rank = np.zeros(len(freed), np.int64)
    for i in range(1, len(by_sm)):
        same = freed[by_sm[i]] // slots == freed[by_sm[i - 1]] // slots
        rank[by_sm[i]] = rank[by_sm[i - 1]] + 1 if same else 0
    return np.argsort(rank * sms + freed // slots)


@njit(cache=True, nogil=True)
def _place(w, b, s, k, t, nsp, vfin, owner, first, vt, at, n, due, tree, cap,
           live):  # pragma: no cover - numba
    """Block b's warps into slot k of SM s at time t: warp i on scheduler (k W + i) mod
    nsp of the SM, each scheduler brought to time t first, and each scheduler's next event
    found once its warps are placed (bringing it to t again, or finding its event after
    each warp, changes nothing: a step of 0, an event overwritten before it is read)."""
    wpb = w.shape[1]
    for i in range(min(wpb, nsp)):
        p = s * nsp + (k * wpb + i) % nsp
        vt[p] += (t - at[p]) * _rate(n[p], cap)
        _held(live, p, n[p], t - at[p])
        at[p] = t
    for i in range(wpb):
        p = s * nsp + (k * wpb + i) % nsp
        j = 0
        while owner[p, j] >= 0:  # the first free place (np.argmax(owner[p] < 0), unallocated)
            j += 1
        x = vt[p] + w[b, i]
        vfin[p, j], owner[p, j] = x, b
        f = vfin[p, first[p]]
        if n[p] == 0 or x < f or (x == f and j < first[p]):  # np.argmin's first minimum
            first[p] = j
        n[p] += 1
    for i in range(min(wpb, nsp)):
        p = s * nsp + (k * wpb + i) % nsp
        _due(due, tree, p, at[p] + (vfin[p, first[p]] - vt[p]) / _rate(n[p], cap))


def warp_share(work: np.ndarray, sms: int, slots: int, schedulers: int,
               cap: float = 1.0) -> float:
    """Eq. (B7): (B6)'s makespan of ``work``'s warps over that of as many equal warps of
    their mean dealt to the SMs in turn, eq. (B7e) (1 for equal warps, an empty launch or
    no work)."""
    w = np.atleast_2d(np.asarray(work, np.float64))
    if w.size <= 1 or w.sum() <= 0 or np.allclose(w, w.flat[0]):
        return 1.0
    even = even_makespan(w.shape[0], w.shape[1], w.mean(), sms, slots, schedulers, cap)
    return max(warp_makespan(w, sms, slots, schedulers, cap) / even, 1.0) if even > 0 else 1.0


def even_makespan(blocks: int, warps: int, work: float, sms: int, slots: int,
                  schedulers: int, cap: float = 1.0) -> float:
    """Eq. (B7e): (B6)'s makespan of ``blocks`` equal blocks of ``warps`` warps of ``work``
    each, the block scheduler dealing them to the SMs in turn (the busiest SM holds
    ceil(blocks / sms)), in waves of ``slots`` blocks: a wave lasts as long as its fullest
    scheduler, k warps sharing it, each at most ``cap``: max(k, 1 / cap) x work. (B6)'s
    event loop on equal warps would hand every block freed at one instant to the first SM
    (a tie), a last wave on half the SMs that no launch shows (16,384 blocks of 8 slots:
    16 waves, 1.031, against 125 / 124.12 = 1.007 blocks)."""
    nsp, b = max(int(schedulers), 1), max(int(slots), 1)
    per_sm = -(-max(int(blocks), 0) // max(int(sms), 1))
    lone = 1.0 / min(max(float(cap), 1e-9), 1.0)

    def wave(n: int) -> float:
        """A wave of n blocks: slot k's warp w on scheduler (k W + w) mod nsp."""
        return max(int(np.bincount(np.arange(n * warps) % nsp, minlength=nsp).max()), lone)

    full, rest = divmod(per_sm, b)
    return (full * wave(b) + (wave(rest) if rest else 0.0)) * work


def warp_work(weights: np.ndarray, grid: tuple[int, int], work: tuple[int, int],
              block: Block, warp_size: int) -> np.ndarray:
    """Each work warp's weight (blocks x warps, block index order x fastest, a block's
    threads x fastest in warps of ``warp_size``): the largest of the ``weights`` (index
    y * gx + x of the traced ``grid``) at the traced threads that stand for its lanes (each
    work thread stands at the traced thread of its relative position, eq. (B5)); a lane
    outside the work grid weighs 0."""
    gx, gy = max(grid[0], 1), max(grid[1], 1)
    wx, wy = max(int(work[0]), 1), max(int(work[1]), 1)
    u = np.asarray(weights, np.float64).reshape(gy, gx)
    nbx, nby = -(-wx // block.x), -(-wy // block.y)
    tx = np.arange(nbx * block.x)
    ty = np.arange(nby * block.y)
    cx = np.minimum(((tx + 0.5) / wx * gx).astype(np.int64), gx - 1)
    cy = np.minimum(((ty + 0.5) / wy * gy).astype(np.int64), gy - 1)
    field = u[cy[:, None], cx[None, :]] * ((ty < wy)[:, None] & (tx < wx)[None, :])
    per_block = field.reshape(nby, block.y, nbx, block.x).transpose(0, 2, 1, 3)
    lanes = per_block.reshape(nby * nbx, block.y * block.x)
    pad = -lanes.shape[1] % warp_size
    if pad:
        lanes = np.pad(lanes, ((0, 0), (0, pad)))
    return lanes.reshape(lanes.shape[0], -1, warp_size).max(axis=2)
