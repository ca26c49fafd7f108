"""Tests of cgpredict.models.loaded_wave: eq. (LW), a wave of one-pass warps lasts a loaded
warp life plus, at each handover, its blocks' tail (R1).

Oracles: a profile whose figures are computed on paper; a Monte Carlo of an SM's block slots
(each block holds its slots until the last of its W warps, each warp living the loaded life
plus a normal spread) whose mean length over K waves is K loaded lives plus K tails, of
which (LW) charges all but the last wave's tail (as (22) charges (R1)); and the DRAM bound,
the larger of the bytes and (LW) on a device with the field, one round trip a wave without."""

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


def _one_pass(blocks: int, threads: int = 256) -> KernelProfile:
    """A one-pass warp: one coalesced load of 4 sectors, all from DRAM (d = 1), 10 ops."""
    return KernelProfile("one_pass", threads_per_block=threads, blocks=blocks,
                         coal=PatternCounts(1, 4.0, 4.0), comp_insts=10)


def test_by_hand():
    dev = load_device("h100")
    p = _one_pass(4752)  # 4.5 waves of 1056 blocks of 8 warps: 5 whole waves, 4 handovers
    tail = expected_max_normal(8) * 0.47 * 685.1 * 1.0  # (R1), d = 4 x 32 B / 128 B = 1
    assert retire_cycles(p, dev) == pytest.approx(tail)
    assert loaded_wave_cycles(p, dev, 4.5, 1.0) == pytest.approx(5 * 1732.0 + 4 * tail)
    assert loaded_wave_cycles(p, dev, 0.2, 1.0) == pytest.approx(1732.0)  # one wave, no tail
    assert loaded_wave_cycles(p, dev, 4.5, 0.0) == 0.0  # no load reaches DRAM
    off = dataclasses.replace(dev, dram_loaded_latency_cycles=0.0)
    assert loaded_wave_cycles(p, off, 4.5, 1.0) == 0.0


@pytest.mark.parametrize("warps", [8, 32])
def test_monte_carlo_block_slots(warps):
    """K waves through one block slot: each block lasts the latest of its W warps' lives,
    L + sigma x N(0, 1); the mean slot time is K (L + z(W) sigma), (LW) that less one tail."""
    rng = np.random.default_rng(7)
    life, sigma, waves, slots = 1732.0, 0.47 * 685.1, 20, 4000
    lives = life + sigma * rng.standard_normal((slots, waves, warps))
    simulated = lives.max(axis=2).sum(axis=1).mean()
    dev = load_device("h100")
    p = _one_pass(waves * 132 * (64 // warps), threads=32 * warps)
    lw = loaded_wave_cycles(p, dev, float(waves), 1.0)
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
    lw = loaded_wave_cycles(p, dev, geo.waves, 1.0)
    assert lw > stream  # 8448 warps of 128 B a wave: 700 cycles of bytes, 1732 of life
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
    """A one-pass warp that loads one DRAM line and writes back ``written`` sectors, in a
    program of ``launches`` launches."""
    p = dataclasses.replace(_one_pass(blocks), program_launches=launches)
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
    assert loaded_life_cycles(small, dev) == 1288.0
    tail = retire_cycles(small, dev)
    assert loaded_wave_cycles(small, dev, 15.515, 1.0) == pytest.approx(16 * 1288.0 + 15 * tail)
    big = _stencil(65536, 4.0)  # 4096^2: 67.1 MB written, past the partition
    assert not stores_stay_in_l2(big, dev)
    assert loaded_life_cycles(big, dev) == 1732.0
    edge = _stencil(25600, 4.0)  # exactly 26214400 B: still held
    assert stores_stay_in_l2(edge, dev) and not stores_stay_in_l2(_stencil(25601, 4.0), dev)
    assert not stores_stay_in_l2(_stencil(16384, 4.0, launches=2), dev)
    assert not stores_stay_in_l2(_stencil(16384, 0.0), dev)
    off = dataclasses.replace(dev, dram_light_life_cycles=0.0)
    assert loaded_life_cycles(small, off) == 1732.0
    never_longer = dataclasses.replace(dev, dram_light_life_cycles=2000.0)
    assert loaded_life_cycles(small, never_longer) == 1732.0
