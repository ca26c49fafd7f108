"""Tests of cgpredict.memory.dram_fill: the DRAM sectors an L2 miss fetches, eq. (F1), and
the sector misses that ride an earlier request's fill, eq. (F2).

Oracles: hand-counted streams (a row walk, isolated sectors, a coalesced warp, trmv_t's
diagonal load), a brute-force LRU of 128-B lines whose 64-B halves are filled whole, a
brute force of the rides over random streams, the bound's DRAM bytes of a profile chosen by
hand, and the device file check of the field."""

from __future__ import annotations

import dataclasses
from collections import OrderedDict

import numpy as np
import pytest

from cgpredict import devices
from cgpredict.devices import DeviceError, load_device
from cgpredict.memory.dram_fill import fetched_sectors, fill_misses, fill_rides
from cgpredict.memory.lru import CacheConfig
from cgpredict.models import launch_bounds, launch_geometry
from cgpredict.profile import KernelProfile, PatternCounts

CACHE = CacheConfig(128, 4, 2)  # 4 sets x 2 ways of 128-B lines, 32-B sectors


def _misses(sectors, cache=CACHE, fill=64):
    s = np.asarray(sectors, np.uint64)
    return fill_misses(s, cache, 32, fill, np.zeros(len(s), np.int64)).tolist()


def test_row_walk_fetches_each_pair_once():
    # one lane walking a line sector by sector: the first sector of each 64-B half misses
    # and brings its buddy; 4 sectors, 2 fills of 2: the 4 sectors a 32-B fill reads too
    assert _misses([0, 1, 2, 3]) == [True, False, True, False]


def test_isolated_sectors_fetch_twice_their_bytes():
    # sector 0 of lines 0..7 (8 lines fit 4 sets x 2 ways), then sector 1 of each: all hits
    first = [4 * ln for ln in range(8)]
    got = _misses(first + [s + 1 for s in first])
    assert got == [True] * 8 + [False] * 8


def test_a_fill_of_a_sector_is_the_sector_analysis():
    # fill bytes = sector bytes: a miss is a sector miss (nothing brought beside it)
    assert _misses([0, 1, 0, 2], fill=32) == [True, True, False, True]


def _reference(sectors, cache, fill_sectors, per_line):
    """Brute force: per set an LRU list of lines, each with its set of valid fill blocks."""
    sets = [OrderedDict() for _ in range(cache.sets)]
    out = []
    for s in sectors:
        line, block = s // per_line, s // fill_sectors
        lru = sets[line % cache.sets]
        if line in lru:
            lru.move_to_end(line)
            out.append(block not in lru[line])
            lru[line].add(block)
            continue
        if len(lru) == cache.ways:
            lru.popitem(last=False)
        lru[line] = {block}
        out.append(True)
    return out


@pytest.mark.parametrize("seed, fill", [(0, 64), (1, 64), (2, 128), (3, 64)])
def test_random_stream_against_brute_force(seed, fill):
    rng = np.random.default_rng(seed)
    sectors = rng.integers(0, 4 * 2 * 3 * 4, 4000)  # three times the cache's lines
    got = _misses(sectors, fill=fill)
    assert got == _reference(sectors.tolist(), CACHE, fill // 32, 4)


def test_fetched_sectors_counts_loads_only_and_never_below_the_misses():
    misses = np.array([True, True, False, True])
    inst = np.array([0, 0, 1, 2])  # transactions of warp instructions 0, 0, 1, 2
    loads = np.array([True, True, False])  # instruction 2 is a store
    sid = np.array([0, 1, 2])
    pattern = np.array([1, 0, 0])
    dram = np.zeros((3, 3), np.int64)
    dram[1, 0] = 5  # the sector analysis missed more than the fills bring: kept
    dram[2, 0] = 1  # a store's miss stays what it was
    got = fetched_sectors(misses, inst, loads, sid, pattern, 3, 2, dram)
    assert got[0, 1] == 4 and got[1, 0] == 5 and got[2, 0] == 1
    assert got.sum() == 10


def _rides(sectors, inst, loads=None, cache=CACHE):
    """fill_rides of one static instruction (sid 0, uncoalesced) over ``sectors`` issued by
    warp instructions ``inst``, the sector misses from a 32-B analysis of the same cache."""
    s = np.asarray(sectors, np.uint64)
    inst = np.asarray(inst, np.int64)
    n = int(inst.max()) + 1
    batch = np.zeros(n, np.int64)
    smiss = np.asarray(fill_misses(s, cache, 32, 32, batch, inst=inst))
    bmiss = np.asarray(fill_misses(s, cache, 32, 64, batch, inst=inst))
    loads = np.ones(n, bool) if loads is None else np.asarray(loads)
    got = fill_rides(smiss, bmiss, s // np.uint64(2), inst, loads, np.zeros(n, np.int64),
                     np.ones(n, np.int64), 1)
    return int(got[0, 1])


def test_a_diagonal_walks_buddies_ride_the_earlier_fill():
    # trmv_t's load by hand: instruction 0 misses sector 0 of lines 0..3 (4 rows, 4 fills
    # of 64 B); instruction 1 reads sector 1 of lines 0 and 1 (their buddies: 2 rides, L2
    # hits that send nothing to DRAM) and sector 2 of lines 2 and 3 (new pairs: 2 misses)
    assert _rides([0, 4, 8, 12, 1, 5, 10, 14], [0, 0, 0, 0, 1, 1, 1, 1]) == 2


def test_a_coalesced_rows_own_buddies_are_its_fetch():
    # one warp instruction reading a whole line: 4 sector misses, 2 fills; the 2nd and 4th
    # sectors find their block fetched by the same request: not rides (colsum, atax_k2)
    assert _rides([0, 1, 2, 3], [0, 0, 0, 0]) == 0
    # the same sectors over two instructions: the 2nd's buddies ride the 1st's fills
    assert _rides([0, 2, 1, 3], [0, 0, 1, 1]) == 2
    # a store rides nothing (not a load's wait)
    assert _rides([0, 2, 1, 3], [0, 0, 1, 1], loads=[True, False]) == 0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rides_against_brute_force(seed):
    # a cache that holds everything: a ride is a sector never read before whose 64-B block
    # an earlier warp instruction read (brute force over the stream)
    big = CacheConfig(128, 64, 16)
    rng = np.random.default_rng(seed)
    sectors = rng.integers(0, 600, 900)
    inst = np.sort(rng.integers(0, 200, 900))
    seen_sectors, seen_blocks, want = set(), {}, 0
    for s, i in zip(sectors.tolist(), inst.tolist()):
        b = s // 2
        if s not in seen_sectors and b in seen_blocks and seen_blocks[b] < i:
            want += 1
        seen_sectors.add(s)
        seen_blocks.setdefault(b, i)
    assert _rides(sectors, inst, cache=big) == want


def test_bound_reads_the_fetched_sectors():
    # 1 uncoalesced load a thread missing 16 sectors a warp, each fill 2 sectors: 32 read
    dev = load_device("h100")
    p = KernelProfile("gather", threads_per_block=256, blocks=1056,
                      uncoal=PatternCounts(1, 32.0, 16.0, dram_fetch_per_warp=32.0))
    b = launch_bounds(p, dev, launch_geometry(p, dev))
    assert b.dram_bytes == pytest.approx(1056 * 8 * 32 * 32)
    plain = dataclasses.replace(p, uncoal=PatternCounts(1, 32.0, 16.0))
    assert launch_bounds(plain, dev, launch_geometry(plain, dev)).dram_bytes == \
        pytest.approx(b.dram_bytes / 2)


def test_device_field_is_checked(tmp_path):
    assert load_device("h100").dram_fill_bytes == 64
    assert load_device("tk1").dram_fill_bytes == 0  # the sector alone
    src = (devices.bundled_dir() / "h100.toml").read_text()
    for bad_value in ("48", "16", "256"):  # not a power of two, below a sector, above a line
        bad = tmp_path / f"bad{bad_value}.toml"
        bad.write_text(src.replace("dram_fill_bytes = 64", f"dram_fill_bytes = {bad_value}"))
        with pytest.raises(DeviceError, match="dram_fill_bytes"):
            load_device(str(bad))
