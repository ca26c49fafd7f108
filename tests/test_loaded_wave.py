"""Tests of cgpredict.models.loaded_wave: eq. (LW), a wave of one-pass warps lasts a loaded
warp life plus, at each handover, its blocks' tail (R1).

Oracles: a profile whose figures are computed on paper; a Monte Carlo of an SM's block slots
(each block holds its slots until the last of its W warps, each warp living the loaded life
plus a normal spread) whose mean length over K waves is K loaded lives plus K tails, of
which (LW) charges all but the last wave's tail (as (22) charges (R1)); and the DRAM bound,
the larger of the bytes and (LW) on a device with the field, one round trip a wave without;
eq. (LWk) by hand (the floor, a wave's issue, the lines past the first, a warp's missing
requests counted on paper) and against a Monte Carlo of a warp waiting for the latest of
its k round trips."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from cgpredict.devices import load_device
from cgpredict.models import launch_bounds, launch_geometry
from cgpredict.models.loaded_wave import loaded_wave_cycles
from cgpredict.models.retire import expected_max_normal, retire_cycles
from cgpredict.profile import KernelProfile, PatternCounts


def _one_pass(blocks: int, threads: int = 256, comp: int = 10) -> KernelProfile:
    """A one-pass warp: one coalesced load of 4 sectors, all from DRAM (d = 1), ``comp`` ops."""
    return KernelProfile("one_pass", threads_per_block=threads, blocks=blocks,
                         coal=PatternCounts(1, 4.0, 4.0), comp_insts=comp)


# eq. (LWk) by hand for _one_pass among 64 warps an SM: the floor 945, the wave's issue
# 64 warps x 11 instructions x 0.25 cycles = 176, no second line, one request (z(1) = 0)
LIFE = 945.0 + 64 * 11 * 0.25


def test_by_hand():
    dev = load_device("h100")
    p = _one_pass(4752)  # 4.5 waves of 1056 blocks of 8 warps: 5 whole waves, 4 handovers
    tail = expected_max_normal(8) * 0.47 * 685.1 * 1.0  # (R1), d = 4 x 32 B / 128 B = 1
    assert retire_cycles(p, dev) == pytest.approx(tail)
    assert loaded_wave_cycles(p, dev, 4.5, 1.0, 64) == pytest.approx(5 * LIFE + 4 * tail)
    assert loaded_wave_cycles(p, dev, 0.2, 1.0, 64) == pytest.approx(LIFE)  # one wave, no tail
    assert loaded_wave_cycles(p, dev, 4.5, 0.0, 64) == 0.0  # no load reaches DRAM
    off = dataclasses.replace(dev, dram_loaded_latency_cycles=0.0)
    assert loaded_wave_cycles(p, off, 4.5, 1.0, 64) == 0.0
    # a compute-heavy warp (201 instructions): the wave's issue, 3216 cycles, exceeds the
    # wait (945) and counts only up to it; the issue bound takes the rest
    from cgpredict.models.loaded_wave import loaded_life_cycles
    heavy = _one_pass(4752, comp=200)
    assert loaded_life_cycles(heavy, dev, 64) == pytest.approx(945.0 + 945.0)
    assert loaded_life_cycles(heavy, dev, 8) == pytest.approx(945.0 + 8 * 201 * 0.25)


@pytest.mark.parametrize("warps", [8, 32])
def test_monte_carlo_block_slots(warps):
    """K waves through one block slot: each block lasts the latest of its W warps' lives,
    L + sigma x N(0, 1); the mean slot time is K (L + z(W) sigma), (LW) that less one tail."""
    rng = np.random.default_rng(7)
    life, sigma, waves, slots = LIFE, 0.47 * 685.1, 20, 4000
    lives = life + sigma * rng.standard_normal((slots, waves, warps))
    simulated = lives.max(axis=2).sum(axis=1).mean()
    dev = load_device("h100")
    p = _one_pass(waves * 132 * (64 // warps), threads=32 * warps)
    lw = loaded_wave_cycles(p, dev, float(waves), 1.0, 64)
    tail = expected_max_normal(warps) * sigma
    assert retire_cycles(p, dev) == pytest.approx(tail)
    assert simulated == pytest.approx(waves * (life + tail), rel=2e-3)
    assert lw + tail == pytest.approx(simulated, rel=2e-3)


def test_dram_bound_is_the_larger_of_bytes_and_loaded_waves():
    dev = load_device("h100")
    p = _one_pass(4752)
    geo = launch_geometry(p, dev)
    b = launch_bounds(p, dev, geo)
    stream = b.dram_bytes / 3097e9 * 1980e6
    assert geo.n_warps == 64
    lw = loaded_wave_cycles(p, dev, geo.waves, 1.0, geo.n_warps)
    assert lw > stream  # 8448 warps of 128 B a wave: 700 cycles of bytes, 1121 of life
    assert b.dram_cycles == pytest.approx(lw) and b.dram_wave_cycles == pytest.approx(lw - stream)
    # many bytes a warp (64 sectors from DRAM): the bytes bind, nothing added
    heavy = dataclasses.replace(p, coal=PatternCounts(16, 4.0, 4.0))
    hb = launch_bounds(heavy, dev, launch_geometry(heavy, dev))
    assert hb.dram_wave_cycles == 0.0
    assert hb.dram_cycles == pytest.approx(hb.dram_bytes / 3097e9 * 1980e6)
    # without the field: the bytes plus one unloaded round trip a wave (5 waves)
    off = dataclasses.replace(dev, dram_loaded_latency_cycles=0.0)
    ob = launch_bounds(p, off, geo)
    assert ob.dram_wave_cycles == pytest.approx(5 * 685.1)
    assert math.isclose(ob.dram_cycles, stream + 5 * 685.1, rel_tol=1e-9)


def _stencil(blocks: int, written: float, launches: int = 1) -> KernelProfile:
    """A one-pass warp of 41 instructions that loads one DRAM line and writes back ``written``
    sectors, in a program of ``launches`` launches (its loaded life 945 + 64 x 41 / 4 = 1601
    among 64 warps an SM, above the light life)."""
    p = dataclasses.replace(_one_pass(blocks, comp=40), program_launches=launches)
    return dataclasses.replace(p, stores=dataclasses.replace(p.stores,
                                                             write_back_trans=written))


def test_light_life_when_the_stores_stay_in_the_l2():
    """Eq. (LWl) by hand: 2048^2 floats stored (16.8 MB, 4 sectors a warp of 131072 warps)
    fit one 25 MB partition: the light life; 4096^2 (67 MB) does not, nor a program of two
    launches, nor one without stores (the DRAM's load not measured there): the loaded life."""
    from cgpredict.models.loaded_wave import loaded_life_cycles, stores_stay_in_l2
    dev = load_device("h100")
    assert dev.persist_bytes == 26214400 and dev.dram_light_life_cycles == 1288.0
    small = _stencil(16384, 4.0)  # 16384 blocks x 8 warps x 4 sectors x 32 B = 16.8 MB
    assert 16384 * 8 * 4 * 32 == 16777216 <= dev.persist_bytes
    assert stores_stay_in_l2(small, dev)
    assert loaded_life_cycles(small, dev, 64) == 1288.0
    tail = retire_cycles(small, dev)
    assert loaded_wave_cycles(small, dev, 15.515, 1.0, 64) == pytest.approx(
        16 * 1288.0 + 15 * tail)
    big = _stencil(65536, 4.0)  # 4096^2: 67.1 MB written, past the partition
    assert not stores_stay_in_l2(big, dev)
    assert loaded_life_cycles(big, dev, 64) == pytest.approx(1601.0)
    edge = _stencil(25600, 4.0)  # exactly 26214400 B: still held
    assert stores_stay_in_l2(edge, dev) and not stores_stay_in_l2(_stencil(25601, 4.0), dev)
    assert not stores_stay_in_l2(_stencil(16384, 4.0, launches=2), dev)
    assert not stores_stay_in_l2(_stencil(16384, 0.0), dev)
    off = dataclasses.replace(dev, dram_light_life_cycles=0.0)
    assert loaded_life_cycles(small, off, 64) == pytest.approx(1601.0)
    never_longer = dataclasses.replace(dev, dram_light_life_cycles=2000.0)
    assert loaded_life_cycles(small, never_longer, 64) == pytest.approx(1601.0)


def _rows(insts: float, requests: float, hit: float = 0.0) -> KernelProfile:
    """A stencil warp: ``insts`` coalesced loads of 4 sectors, all from DRAM past the L1,
    each in ``requests`` lines (1: a 32-wide row; 2: a 16-wide block's two half rows)."""
    load = PatternCounts(insts=insts, l2_trans_per_warp=4.0, dram_trans_per_warp=4.0,
                         l1_hit_fraction=hit, l2_requests_per_warp=requests)
    return KernelProfile("rows", threads_per_block=256, blocks=65536, coal=load, comp_insts=10)


def test_request_spread_by_hand():
    """Eq. (LWk) on paper: FDTD-2D k1's two DRAM rows a warp (ey, hz) are 2 requests with
    32-wide rows and 4 with 16x16 blocks (each row two half lines): k = insts x (1 - hit) x
    DRAM sectors x requests / sectors."""
    from cgpredict.models.loaded_wave import (
        dram_requests_per_warp,
        expected_max_mixed,
        loaded_life_cycles,
        request_spread_cycles,
    )
    dev = load_device("h100")
    sigma = 0.47 * 685.1
    wide, half = _rows(2, 1.0), _rows(2, 2.0)
    assert dram_requests_per_warp(wide, dev) == pytest.approx(2 * 4 * 1 / 4)  # 2
    assert dram_requests_per_warp(half, dev) == pytest.approx(2 * 4 * 2 / 4)  # 4
    assert dram_requests_per_warp(_rows(4, 1.0, hit=0.5), dev) == pytest.approx(2.0)
    z2, z4 = 1 / math.sqrt(math.pi), 1.0293753730  # E[max] of 2 and 4 standard normals
    assert request_spread_cycles(wide, dev) == pytest.approx(z2 * sigma, rel=1e-6)
    assert request_spread_cycles(half, dev) == pytest.approx(z4 * sigma, rel=1e-6)
    assert loaded_life_cycles(half, dev, 64) - loaded_life_cycles(wide, dev, 64) == \
        pytest.approx((z4 - z2) * sigma, rel=1e-6)  # 150 cycles a wave more at 16x16
    # the whole life by hand: floor, the wave's issue (64 warps x 12 instructions x 0.25),
    # the second line (d = 2 x 4 x 32 B / 128 B = 2) and the spread of 2 requests
    assert loaded_life_cycles(wide, dev, 64) == pytest.approx(
        945.0 + 64 * 12 * 0.25 + 213.0 * (2 - 1) + z2 * sigma, rel=1e-9)
    assert loaded_life_cycles(wide, dev, 32) == pytest.approx(
        loaded_life_cycles(wide, dev, 64) - 32 * 12 * 0.25)  # half the warps, half the issue
    no_line = dataclasses.replace(dev, dram_line_life_cycles=0.0)
    assert loaded_life_cycles(wide, dev, 64) - loaded_life_cycles(wide, no_line, 64) == \
        pytest.approx(213.0)
    # a row walk (20 load instructions a thread, 20 lines): its lines overlap in its loop,
    # no line term; the floor, its issue and the spread of its 20 requests remain
    from cgpredict.models.loaded_wave import one_pass
    walk = _rows(20, 1.0)
    assert one_pass(wide) and one_pass(_rows(16, 1.0)) and not one_pass(walk)
    assert loaded_life_cycles(walk, dev, 64) == pytest.approx(
        945.0 + 64 * 30 * 0.25 + expected_max_mixed(20.0) * sigma, rel=1e-9)
    # a mean of 1.5 requests: half the warps wait on 1, half on 2
    assert expected_max_mixed(1.5) == pytest.approx(0.5 * z2)
    assert expected_max_mixed(1.0) == 0.0 and expected_max_mixed(0.3) == 0.0
    # untraced requests: a coalesced load's 4 sectors are one line, an uncoalesced one's 4
    untraced = KernelProfile("u", threads_per_block=256, blocks=8, comp_insts=1,
                             coal=PatternCounts(insts=1, l2_trans_per_warp=4.0,
                                                dram_trans_per_warp=4.0))
    assert dram_requests_per_warp(untraced, dev) == pytest.approx(1.0)
    scattered = dataclasses.replace(untraced, coal=PatternCounts(),
                                    uncoal=PatternCounts(insts=1, l2_trans_per_warp=4.0,
                                                         dram_trans_per_warp=4.0))
    assert dram_requests_per_warp(scattered, dev) == pytest.approx(4.0)
    assert request_spread_cycles(half, dataclasses.replace(dev, dram_latency_cv=0.0)) == 0.0


@pytest.mark.parametrize("k", [2.0, 3.0, 4.0, 1.5, 2.25])
def test_request_spread_monte_carlo(k):
    """A warp waits for the latest of its k round trips, each life + sigma x N(0, 1); with a
    fractional k the warps hold floor(k) or ceil(k) requests. The mean wait past the round
    trip is (LWk)'s z(k) x sigma."""
    from cgpredict.models.loaded_wave import expected_max_mixed
    rng = np.random.default_rng(11)
    sigma, warps = 0.47 * 685.1, 400000
    low = math.floor(k)
    n = np.where(rng.random(warps) < k - low, low + 1, low)
    draws = sigma * rng.standard_normal((warps, low + 1))
    draws[n == low, low] = -np.inf  # the warps with floor(k) requests
    simulated = draws.max(axis=1).mean()
    assert simulated == pytest.approx(expected_max_mixed(k) * sigma, rel=0.02)
