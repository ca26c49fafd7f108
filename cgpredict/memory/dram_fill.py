"""DRAM sectors a load miss fetches when the L2 fills more than the missed sector (eq. (F1)).

An L2 of 32-byte sectors need not fetch 32 bytes from DRAM on a miss: the H100's L2 fetches
the aligned 64-byte pair of sectors (``dram_fill_bytes``), whichever of the two was asked
for. Nsight Compute shows it on every row walk of the plain ports (ATAX, MVT, GESUMMV,
Deriche, DCT1D, trmv_t: DRAM bytes read = 2.00 x the L2's missed read sectors x 32 B, the
buddy sector then a hit) and on the random gather (1.62: most buddies are evicted before
their own access). A stream that uses both sectors of every pair moves the same bytes
either way; a random gather of 4-byte words moves twice the bytes it misses.

The count is the cache analysis run again on fill blocks of ``dram_fill_bytes`` instead of
sectors (tags and LRU stay per line, so the lines resident at each access are the same as
the sector analysis'; a block is valid once any of its sectors was fetched since its line
was allocated), with the same growth to the work size (``scale_hits``, ``scale_gathered``).
A load transaction whose block misses fetches ``dram_fill_bytes / sector`` sectors (F1):

    fetched_s = (fill / sector) x (load misses of static instruction s on fill blocks)   (F1)

and never fewer than the sectors it misses in the sector analysis (a store leaves a sector
the fill analysis counts as its whole block's).
"""

from __future__ import annotations

import numpy as np

from ..hashing import dense_ids
from .lru import CacheConfig, sector_hit_mask
from .reuse import CacheScale, work_size_hits

__all__ = ["fetched_sectors", "fill_misses", "fill_rides", "home_partition_hits"]


def fill_misses(
    sectors: np.ndarray,
    cache: CacheConfig,
    sector_bytes: int,
    fill_bytes: int,
    batch: np.ndarray,
    scale: CacheScale = CacheScale(),
    sids: np.ndarray | None = None,
    inst: np.ndarray | None = None,
) -> np.ndarray:
    """Per transaction (``sectors``: sector ids of the L2 stream, in issue order): True when
    its fill block of ``fill_bytes`` misses, at the work size (eq. (F1)): the sector
    analysis' own scaling (``work_size_hits``) on fill blocks. ``batch`` and ``sids`` per
    warp instruction, ``inst`` each transaction's (None: one instruction a transaction)."""
    inst = np.arange(len(sectors)) if inst is None else inst
    sids = np.zeros(len(batch), np.int64) if sids is None else sids
    blocks = np.asarray(sectors, np.uint64) // np.uint64(fill_bytes // sector_bytes)
    exact = sector_hit_mask(blocks * np.uint64(fill_bytes), cache, fill_bytes)
    return ~work_size_hits(blocks, exact, dense_ids(blocks), cache.line_bytes // fill_bytes,
                           cache, scale, batch, sids, inst)


def fetched_sectors(
    misses: np.ndarray,
    inst: np.ndarray,
    loads: np.ndarray,
    sid: np.ndarray,
    pattern: np.ndarray,
    n_sids: int,
    per_fill: int,
    dram: np.ndarray,
) -> np.ndarray:
    """Eq. (F1): per (static instruction, pattern) the DRAM sectors its loads' misses fetch:
    ``per_fill`` for each transaction whose fill block misses (``misses``, per transaction of
    the L2 stream; ``inst`` its warp instruction; ``loads``, ``sid``, ``pattern`` per warp
    instruction), at least ``dram`` (the sector analysis' misses, (n_sids, 3))."""
    out = np.zeros((n_sids, 3), np.int64)
    take = misses & loads[inst]
    np.add.at(out, (sid[inst][take], pattern[inst][take]), per_fill)
    return np.maximum(out, dram)


def fill_rides(
    sector_miss: np.ndarray,
    block_miss: np.ndarray,
    blocks: np.ndarray,
    inst: np.ndarray,
    loads: np.ndarray,
    sid: np.ndarray,
    pattern: np.ndarray,
    n_sids: int,
) -> np.ndarray:
    """Eq. (F2): per (static instruction, pattern) the load transactions that miss their
    sector yet find its fill block fetched by an earlier warp instruction (the buddy of a
    pair another request brought in): the L2 serves them as hits (Nsight Compute counts them
    so) and they send nothing to DRAM. ``sector_miss``, ``block_miss``, ``blocks`` (the
    fill block of each), ``inst`` per transaction of the L2 stream; ``loads``, ``sid``,
    ``pattern`` per warp instruction. A block fetched by a transaction of the same warp
    instruction is that request's own fetch, not a ride (a coalesced row's 4 sectors)."""
    out = np.zeros((n_sids, 3), np.int64)
    if not len(blocks):
        return out
    bid = dense_ids(blocks)[0]  # 0 .. n - 1: the (instruction, block) key cannot overflow
    group = dense_ids(inst.astype(np.uint64) * np.uint64(int(bid.max()) + 1)
                      + bid.astype(np.uint64))[0]
    fetched_here = np.zeros(int(group.max()) + 1, bool)
    fetched_here[group[block_miss]] = True  # the instruction fetched this block itself
    ride = sector_miss & ~block_miss & ~fetched_here[group] & loads[inst]
    np.add.at(out, (sid[inst][ride], pattern[inst][ride]), 1)
    return out


def home_partition_hits(
    fetched: np.ndarray,
    misses: np.ndarray,
    inst: np.ndarray,
    loads: np.ndarray,
    sid: np.ndarray,
    scale: CacheScale,
) -> np.ndarray:
    """Eq. (LP3): the gathers' fetched sectors (``fetched``, (n_sids, 3), eq. (F1)) less those
    the line's home partition serves. An L2 of P partitions (``scale.partitions``) homes
    each address in one of them; a miss in the requester's partition on a line homed in
    another ((P - 1) / P of random picks) asks the home partition, which holds the picks of
    its own SMs: for random picks independently of the requester's, with the same hit rate
    ``h`` (the gather's fill blocks that hit, ``misses`` per transaction of the L2 stream):

        fetched_s' = fetched_s x (1 - h_s x (P - 1) / P)                              (LP3)

    Only the gathers of ``scale.gathers`` (a line reused by the same SM is not in the far
    partition; a line every SM reads is in both and hits in the near one already)."""
    if scale.partitions <= 1 or not scale.gathers or not len(misses):
        return fetched
    n_sids = fetched.shape[0]
    take = loads[inst]
    s_of = sid[inst][take]
    tx = np.bincount(s_of, minlength=n_sids)
    miss = np.bincount(s_of, weights=misses[take], minlength=n_sids)
    out = fetched.astype(np.float64)
    far = (scale.partitions - 1) / scale.partitions
    for s, g in scale.gathers:
        if g > 1.0 and s < n_sids and tx[s]:
            out[s] *= 1.0 - (1.0 - miss[s] / tx[s]) * far
    return np.rint(out).astype(np.int64)
