"""Tests of the two-partition L2 for gathers, eqs. (LP1)-(LP3) (reuse.scale_gathered,
l1scale.scale_l1_gathered, dram_fill.home_partition_hits, device field l2_partitions).

Oracles: brute-force LRU partitions (each caching what its own side picks, the requester's
side drawn at random) against the one-L2 analysis of the same stream; a hand-counted L1
stream; hand-counted fetched sectors; the device files."""

from __future__ import annotations

import random

import numpy as np
import pytest
from conftest import BruteLru

from cgpredict import devices
from cgpredict.devices import DeviceError, load_device
from cgpredict.memory.dram_fill import home_partition_hits
from cgpredict.memory.l1scale import scale_l1_gathered
from cgpredict.memory.lru import CacheConfig, hit_mask
from cgpredict.memory.reuse import CacheScale, scale_gathered


def _partitioned_hit_rate(picks: list[int], sides: list[int], capacity: int, parts: int
                          ) -> float:
    """Brute force: ``parts`` LRUs of capacity / parts lines, each fed its own side's picks."""
    caches = [BruteLru(capacity // parts) for _ in range(parts)]
    hits = sum(caches[s % parts].touch(ln) for ln, s in zip(picks, sides))
    return hits / len(picks)


def test_random_picks_hit_in_two_partitions_as_in_one_of_half_the_capacity():
    # (LP1): a random gather over L x g lines, traced over L lines and grown g times, hits in
    # two LRU partitions of C / 2 (each SM's side its own) at the rate of one LRU of C / 2,
    # half the rate of one L2 of C; scale_gathered with partitions = 2 gives that rate
    rng = random.Random(5)
    small, grow, cap, n = 64, 8, 64, 60_000
    traced = [rng.randrange(small) for _ in range(n)]
    work = [rng.randrange(small * grow) for _ in range(n)]
    sides = [rng.randrange(2) for _ in range(n)]
    two = _partitioned_hit_rate(work, sides, cap, 2)
    one = _partitioned_hit_rate(work, sides, cap, 1)
    assert two == pytest.approx(cap / 2 / (small * grow), abs=0.01)  # 32 / 512
    assert one == pytest.approx(2 * two, abs=0.015)
    cache = CacheConfig(line_bytes=64, sets=1, ways=cap)
    lines = np.array(traced, np.uint64)
    exact = hit_mask(lines, cache)
    sids = np.zeros(n, np.int64)
    gathers = ((0, float(grow)),)
    p2 = scale_gathered(lines, exact, sids, cache, CacheScale(gathers=gathers, partitions=2))
    p1 = scale_gathered(lines, exact, sids, cache, CacheScale(gathers=gathers))
    assert p2[n // 10:].mean() == pytest.approx(two, abs=0.01)
    assert p1[n // 10:].mean() == pytest.approx(one, abs=0.015)


def test_a_side_that_rereads_its_own_lines_keeps_the_whole_capacity():
    # why only gathers take (LP1): two sides, each sweeping its own 40 lines again and again,
    # interleaved; one LRU of 80 lines holds both sweeps, and so do two partitions of 40
    sweep = [(s, s * 1000 + k) for k in range(40) for s in (0, 1)] * 20
    sides, picks = [s for s, _ in sweep], [ln for _, ln in sweep]
    two = _partitioned_hit_rate(picks, sides, 80, 2)
    assert two == _partitioned_hit_rate(picks, sides, 80, 1) == pytest.approx(19 / 20)


def test_home_partition_serves_a_far_miss_at_the_pick_hit_rate():
    # (LP3): a line homed in the other partition ((P - 1) / P of random picks) is found there
    # with the requester's own hit rate h; a brute force of two partitions of 128-B lines
    # with 64-B halves (the home partition serves without allocating; 3 streamed lines
    # for every 32 picks, as the blind gather) fetches (1 - h)(1 - h / 2) a pick
    rng = random.Random(1)
    lines, cap, n = 2048, 800, 200_000
    parts = [BruteLru(cap), BruteLru(cap)]
    near, dram, picks, fresh = 0, 0, 0, 1 << 30
    for t in range(n):
        side = rng.randrange(2)
        if t % 35 >= 32:
            fresh += 1
            parts[side].touch(fresh)
            continue
        ln, half = rng.randrange(lines), rng.randrange(2)
        picks += 1
        if parts[side].touch(ln, half):
            near += 1
        elif not (ln % 2 != side and parts[ln % 2].has(ln, half)):
            dram += 1
    h = near / picks
    assert 0.15 < h < 0.3
    assert dram / picks == pytest.approx((1 - h) * (1 - h / 2), abs=0.01)
    # the same through home_partition_hits: 100 transactions of instruction 0, 20 of them
    # hit (h = 0.2): its fetched sectors drop by h / 2; instruction 1 is not a gather
    misses = np.array([True] * 80 + [False] * 20 + [True] * 10)
    inst = np.arange(110)
    loads = np.ones(110, bool)
    sid = np.array([0] * 100 + [1] * 10)
    fetched = np.array([[0, 160, 0], [0, 20, 0]], np.int64)
    scale = CacheScale(gathers=((0, 8.0),), partitions=2)
    got = home_partition_hits(fetched, misses, inst, loads, sid, scale)
    assert got.tolist() == [[0, 144, 0], [0, 20, 0]]  # 160 x (1 - 0.2 / 2)
    assert (home_partition_hits(fetched, misses, inst, loads, sid, CacheScale(
        gathers=((0, 8.0),))) == fetched).all()  # one L2: nothing to ask


def test_l1_gather_hit_is_kept_only_while_its_grown_distance_fits():
    # (LP2), one SM: lines 0..3 then line 0 again (3 distinct lines between) and line 1 at
    # distance 3: a gather grown 2x needs 6 < capacity; with 8 lines both keep their hits,
    # with 4 neither does; another load's hit stays whatever the capacity
    keys = np.array([0, 4, 8, 12, 0, 4], np.uint64)  # sectors, 4 a line (line_shift 2)
    sm = np.zeros(6, np.int64)
    loads = np.ones(6, bool)
    hits = np.array([False] * 4 + [True] * 2)
    sid = np.zeros(6, np.int64)
    gathers = ((0, 2.0),)
    assert scale_l1_gathered(keys, 2, sm, sid, loads, hits, 8, gathers).tolist() == \
        hits.tolist()
    assert not scale_l1_gathered(keys, 2, sm, sid, loads, hits, 4, gathers).any()
    assert (scale_l1_gathered(keys, 2, sm, sid + 1, loads, hits, 4, gathers) == hits).all()


def test_device_partitions(tmp_path):
    assert load_device("h100").l2_partitions == 2
    assert load_device("tk1").l2_partitions == 1  # the default: one L2
    src = (devices.bundled_dir() / "h100.toml").read_text()
    for bad_value in ("0", "3"):  # none, or not dividing the 50 MB
        bad = tmp_path / f"bad{bad_value}.toml"
        bad.write_text(src.replace("l2_partitions = 2", f"l2_partitions = {bad_value}"))
        with pytest.raises(DeviceError, match="l2_partitions"):
            load_device(str(bad))
