"""Tests of cgpredict.memory.inflight and the chain latency it feeds (eqs. (C1), (C2) in
docs/models.md): an L1 hit on a line another warp of the SM fetched at the same step waits
for that fetch; an L2 hit on a sector another warp's miss is fetching at the same step
waits for its DRAM access.

Hand oracles: a GEMM-like block of W warps on one SM, every warp reading the same line of
``B[k][j]`` at step k (W - 1 in-flight hits a step) and its own row of ``A[i][k]`` (a new
32-byte sector every 8 steps, its own hits at the steps between: not in flight)."""

from __future__ import annotations

import numpy as np
import pytest
from fake_traces import make_wt, strided

from cgpredict.devices import load_device
from cgpredict.memory.inflight import (
    chain_dram_sectors,
    chain_dram_share,
    chain_load_latency,
    own_fetch_share,
)
from cgpredict.memory.lru import CacheConfig
from cgpredict.memory.transactions import InstrMemStats, L1Config, analyze_memory

FOUR = np.array([4, 4])  # access bytes per sid


L2 = CacheConfig(128, 64, 16)
L1 = CacheConfig(128, 64, 8)


def _gemm_like(warps: int, steps: int):
    """Warp w at step k: sid 0 reads B's row k (one 128-B line, lanes 4 B apart), sid 1
    its own A element (row w, word k: a broadcast)."""
    insts = []
    for w in range(warps):
        for k in range(steps):
            insts.append((w, 2 * k, 0, strided(1 << 20 | k * 4096, 4)))
            insts.append((w, 2 * k + 1, 1, [(2 << 20) + w * 65536 + 4 * k] * 32))
    return make_wt(insts)


def test_block_sharing_a_line_a_step_waits_for_its_fetch():
    """4 warps of one block on one SM, 10 steps: B misses once a step (4 sectors) and the
    other 3 warps are served in flight; A misses at k = 0 and 8 and is served by each warp's
    own earlier fetch at the other 8 steps (not in flight)."""
    wt = _gemm_like(4, 10)
    l1 = L1Config(L1, 32, sms=1, warps_per_block=4)
    by = analyze_memory(wt, FOUR, L2, 64, sector_bytes=32, l1=l1).by_sid()
    assert by[0].warp_insts == (40, 0, 0) and by[0].l1_served == (30, 0, 0)
    assert by[0].l1_inflight == (30, 0, 0)
    assert by[1].l1_served == (0, 0, 32) and by[1].l1_inflight == (0, 0, 0)


def test_warps_on_other_sms_fetch_their_own_lines():
    """One warp a block, blocks round robin over 4 SMs: every warp misses in its own L1
    (nothing served, nothing in flight there); in the L2 the first warp of a step misses B's
    4 sectors and the other 3 hit them in flight (eq. C2): 3 steps x 3 x 4 = 36. A's rows
    are each warp's own: no L2 hit in flight. On one SM the same trace has 3 L1 hits in
    flight a step and nothing reaches the L2 in flight."""
    wt = _gemm_like(4, 3)
    spread = L1Config(L1, 32, sms=4, warps_per_block=1)
    by = analyze_memory(wt, FOUR, L2, 64, sector_bytes=32, l1=spread).by_sid()
    assert by[0].l1_served == (0, 0, 0) and by[0].l1_inflight == (0, 0, 0)
    assert by[0].l2_trans == (48, 0, 0) and by[0].dram_trans == (12, 0, 0)
    assert by[0].l2_inflight == (36, 0, 0) and by[1].l2_inflight == (0, 0, 0)
    one = L1Config(L1, 32, sms=1, warps_per_block=1)
    by = analyze_memory(wt, FOUR, L2, 64, sector_bytes=32, l1=one).by_sid()
    assert by[0].l1_inflight == (9, 0, 0) and by[0].l2_inflight == (0, 0, 0)
    # no L1 for global loads (one SM, the TK1): the L2 hits of one SM's warps at the step
    # of its own miss are not counted in flight
    bare = analyze_memory(wt, FOUR, L2, 64, sector_bytes=32).by_sid()
    assert bare[0].l2_trans == (48, 0, 0) and bare[0].l2_inflight == (0, 0, 0)


def test_a_line_fetched_a_step_earlier_is_an_ordinary_hit():
    """Warp 1 reads at step 1 the line warp 0 fetched at step 0: a hit, not in flight."""
    wt = make_wt([(0, 0, 0, strided(0, 4)), (1, 0, 1, strided(8192, 4)),
                  (0, 1, 1, strided(4096, 4)), (1, 1, 0, strided(0, 4))])
    l1 = L1Config(L1, 32, sms=1, warps_per_block=2)
    by = analyze_memory(wt, FOUR, L2, 64, sector_bytes=32, l1=l1).by_sid()
    assert by[0].l1_served == (1, 0, 0) and by[0].l1_inflight == (0, 0, 0)


def test_chain_latency_of_in_flight_hits_is_the_fetch():
    """B of a 32x32 block: 32 warp instructions, 31 served in flight, the fetch's 4 sectors
    an L2 hit: every warp waits the L2 latency (eq. C1). Served by ordinary hits instead:
    31/32 at the L1 latency. A grid column of 4 blocks whose first misses in the L2: the
    other three wait its DRAM access when the array outgrows the L2 (eq. C2), else the
    traced miss share (1 in 4)."""
    dev = load_device("h100")
    s = InstrMemStats(0, (32, 0, 0), (4, 0, 0), (0, 0, 0), l1_served=(31, 0, 0),
                      l1_inflight=(31, 0, 0))
    assert chain_load_latency(s, dev) == pytest.approx(dev.l2_latency_cycles)
    # an ordinary L2 hit stays one, whatever the array's size
    assert chain_load_latency(s, dev, outgrows_l2=True) == pytest.approx(dev.l2_latency_cycles)
    own = InstrMemStats(0, (32, 0, 0), (4, 0, 0), (0, 0, 0), l1_served=(31, 0, 0))
    assert chain_load_latency(own, dev) == pytest.approx(
        (31 * dev.l1_latency_cycles + dev.l2_latency_cycles) / 32)
    # 4 blocks of a grid column: one misses in the L2, three hit the sector in flight
    col = InstrMemStats(0, (128, 0, 0), (16, 0, 0), (4, 0, 0), l1_served=(124, 0, 0),
                        l1_inflight=(124, 0, 0), l2_inflight=(12, 0, 0))
    assert chain_load_latency(col, dev) == pytest.approx(
        dev.l2_latency_cycles + 0.25 * dev.dram_latency_cycles)
    assert chain_load_latency(col, dev, outgrows_l2=True) == pytest.approx(
        dev.l2_latency_cycles + dev.dram_latency_cycles)
    assert np.isfinite(chain_load_latency(InstrMemStats(0, (0, 0, 0), (0, 0, 0), (0, 0, 0)), dev))


@pytest.mark.parametrize("seed", range(4))
def test_l2_in_flight_count_with_the_callers_ids_equals_its_own(seed):
    """inflight_l2_hits given the stream's dense ids (the memory analysis passes the ones it
    has) counts what it counts numbering the sectors itself: random streams of 3 SMs."""
    from cgpredict.hashing import dense_ids
    from cgpredict.memory.inflight import inflight_l2_hits

    rng = np.random.default_rng(seed)
    n_inst, n = 40, 300
    inst = np.sort(rng.integers(0, n_inst, n))
    units = rng.integers(0, 25, n).astype(np.uint64) * np.uint64(32)
    hits = rng.random(n) < 0.6
    args = (inst, hits, units, rng.random(n_inst) < 0.8, rng.integers(0, 5, n_inst),
            rng.integers(0, 3, n_inst), rng.integers(0, 4, n_inst), rng.integers(0, 3, n_inst), 4)
    own = inflight_l2_hits(*args)
    assert own.sum() > 0
    assert np.array_equal(inflight_l2_hits(*args, dense_ids(units)[0]), own)


def test_one_sm_has_no_l2_miss_of_another_sm_to_wait_for():
    """All warps on SM 0 (no L1 model: the TK1): the pass would count nothing, and the
    count is left out (zeros), as the pass gives."""
    from cgpredict.hashing import dense_ids
    from cgpredict.memory.inflight import _count_l2, inflight_l2_hits

    rng = np.random.default_rng(7)
    n_inst, n = 40, 300
    inst = np.sort(rng.integers(0, n_inst, n))
    units = rng.integers(0, 25, n).astype(np.uint64)
    hits = rng.random(n) < 0.6
    load, step = rng.random(n_inst) < 0.8, rng.integers(0, 5, n_inst)
    sm, pat = np.zeros(n_inst, np.int64), np.zeros(n_inst, np.int64)
    sid = rng.integers(0, 4, n_inst)
    out = np.zeros((4, 3), np.int64)
    _count_l2(inst, hits, dense_ids(units)[0], load, step, sm, sid, pat, out)
    assert not out.any()
    got = inflight_l2_hits(inst, hits, units, load, step, sm, sid, pat, 4)
    assert got.shape == (4, 3) and not got.any()


def test_the_dram_share_on_the_chain_is_the_latencys_dram_term():
    """Eq. (Q1)'s share of a load's warp instructions that wait on DRAM: colsum's column walk
    (every sector a miss, nothing from the L1) 1; the grid column above 1/4, or 1 when the
    array outgrows the L2 (its in-flight L2 hits wait the DRAM access, eq. C2); an L1-served
    or L2-hit load 0; chain_load_latency's DRAM term is the share times dram_latency."""
    dev = load_device("h100")
    walk = InstrMemStats(0, (64, 0, 0), (256, 0, 0), (256, 0, 0))
    assert chain_dram_share(walk) == pytest.approx(1.0)
    col = InstrMemStats(0, (128, 0, 0), (16, 0, 0), (4, 0, 0), l1_served=(124, 0, 0),
                        l1_inflight=(124, 0, 0), l2_inflight=(12, 0, 0))
    assert chain_dram_share(col) == pytest.approx(0.25)
    assert chain_dram_share(col, outgrows_l2=True) == pytest.approx(1.0)
    own = InstrMemStats(0, (32, 0, 0), (4, 0, 0), (0, 0, 0), l1_served=(31, 0, 0))
    assert chain_dram_share(own) == 0.0
    for s in (walk, col, own):
        term = chain_load_latency(s, dev) - chain_load_latency(
            InstrMemStats(0, s.warp_insts, s.l2_trans, (0, 0, 0), l1_served=s.l1_served,
                          l1_inflight=s.l1_inflight), dev)
        assert term == pytest.approx(chain_dram_share(s) * dev.dram_latency_cycles)


def test_a_loads_dram_sectors_on_the_chain_by_hand():
    """(Q1)'s sectors, the DRAM sectors a waiting warp instruction fetches itself: a
    coalesced row walk 4 an instruction; one lane 1; a column broadcast of 128 warp
    instructions of which 124 ride the 4 misses' fetches (C1) fetches 4 sectors for 128
    waiting instructions (1/32 each), and with the L2 hits on a sector in flight (C2) of an
    array that outgrows the L2 its 16 sectors, 4 from DRAM, wait for 4 DRAM fetches;
    nothing from DRAM: share 0."""
    walk = InstrMemStats(0, (32, 0, 0), (128, 0, 0), (128, 0, 0))
    assert chain_dram_sectors(walk) == (pytest.approx(1.0), pytest.approx(4.0))
    lane = InstrMemStats(0, (0, 0, 512), (0, 0, 512), (0, 0, 512))
    assert chain_dram_sectors(lane) == (pytest.approx(1.0), pytest.approx(1.0))
    col = InstrMemStats(0, (128, 0, 0), (4, 0, 0), (4, 0, 0), l1_served=(124, 0, 0),
                        l1_inflight=(124, 0, 0))
    assert chain_dram_sectors(col) == (pytest.approx(1.0), pytest.approx(1 / 32))
    shared = InstrMemStats(0, (128, 0, 0), (16, 0, 0), (4, 0, 0), l1_served=(124, 0, 0),
                           l1_inflight=(124, 0, 0), l2_inflight=(12, 0, 0))
    assert chain_dram_sectors(shared, outgrows_l2=True) == (pytest.approx(1.0),
                                                            pytest.approx(4 / 128))
    own = InstrMemStats(0, (32, 0, 0), (0, 0, 0), (0, 0, 0), l1_served=(32, 0, 0))
    assert chain_dram_sectors(own) == (0.0, 1.0)


def test_sectors_that_ride_an_earlier_fill_fetch_nothing_on_the_chain():
    """(Q1) with (F2): trmv_t's diagonal load misses 4 one-sector rows an instruction in the
    L1, 2 of them buddies of pairs an earlier instruction fetched (L2 hits on the GPU: ncu's
    50 % L2 sector hit rate, 2.00 DRAM bytes a missed sector); it still waits on DRAM (share
    1, the latency's term unchanged) but fetches 2 sectors itself, not 4."""
    diag = InstrMemStats(0, (0, 32, 0), (0, 128, 0), (0, 128, 0), fill_rides=(0, 64, 0))
    assert chain_dram_sectors(diag) == (pytest.approx(1.0), pytest.approx(2.0))
    assert chain_dram_share(diag) == chain_dram_share(
        InstrMemStats(0, (0, 32, 0), (0, 128, 0), (0, 128, 0)))


def test_a_round_counts_only_its_own_fetches():
    """(Q1o): the column broadcast above (128 warp instructions, 124 riding the 4 misses'
    fetches in the L1, (C1)) counts 4 / 128 = 1/32 of a load in a (Q1r) round, where the
    chain's share counts the riders as DRAM waits (1); with the (C2) hits of an array that
    outgrows the L2, still its own 4 / 128 of the 16 L2 sectors' 4 misses: (1 - 124/128) x
    4/16 = 1/128. trmv_t's diagonal, 2 of whose 4 sectors ride a pair's fill ((F2)), keeps
    its share 1: the rides are part of its own fetch. A load with nothing from DRAM: 0."""
    col = InstrMemStats(0, (128, 0, 0), (4, 0, 0), (4, 0, 0), l1_served=(124, 0, 0),
                        l1_inflight=(124, 0, 0))
    assert own_fetch_share(col) == pytest.approx(1 / 32)
    assert chain_dram_sectors(col, own_only=True)[0] == pytest.approx(1 / 32)
    shared = InstrMemStats(0, (128, 0, 0), (16, 0, 0), (4, 0, 0), l1_served=(124, 0, 0),
                           l1_inflight=(124, 0, 0), l2_inflight=(12, 0, 0))
    assert own_fetch_share(shared) == pytest.approx(1 / 128)
    diag = InstrMemStats(0, (0, 32, 0), (0, 128, 0), (0, 128, 0), fill_rides=(0, 64, 0))
    assert own_fetch_share(diag) == pytest.approx(1.0)
    assert own_fetch_share(InstrMemStats(0, (32, 0, 0), (4, 0, 0), (0, 0, 0))) == 0.0
