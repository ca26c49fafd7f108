"""Eqs. (Q1), (Q1r) and (Q1w) (cgpredict/dram_rounds.py) from first principles."""

from __future__ import annotations

import math
import random

import pytest

from cgpredict.compute import OpLatencies
from cgpredict.devices import load_device
from cgpredict.dram_rounds import (
    dram_queue,
    expected_max_normal,
    latest_return,
    loaded_lift,
    walker_share,
    walking_warps,
    with_walkers,
    z_between,
)


def test_z_of_two_is_one_over_root_pi():
    """E[max of 2 standard normals] = 1 / sqrt(pi) (closed form); z(1) = 0; z(8) by a
    brute-force Monte Carlo of 200,000 rounds of 8 normals (1.4236 tabulated)."""
    assert expected_max_normal(1) == 0.0
    assert expected_max_normal(2) == pytest.approx(1.0 / math.sqrt(math.pi), abs=1e-6)
    rng = random.Random(7)
    mc = sum(max(rng.gauss(0.0, 1.0) for _ in range(8)) for _ in range(200_000)) / 200_000
    assert expected_max_normal(8) == pytest.approx(mc, abs=0.01)
    assert expected_max_normal(8) == pytest.approx(1.4236, abs=1e-3)


def test_a_round_of_k_loads_waits_for_the_latest_return():
    """(Q1r) by hand, sigma = 100, lift = 50: K = 1 waits the lift alone (50); K = 2 the lift
    plus 100 / sqrt(pi) = 56.42 (106.42); K = 8 the lift plus 100 x 1.4236 (192.36); a
    share of one load (0.5) half the lift; K = 1.5 halfway between z(1) and z(2)."""
    assert latest_return(1.0, 50.0, 100.0) == pytest.approx(50.0)
    assert latest_return(2.0, 50.0, 100.0) == pytest.approx(50.0 + 100.0 / math.sqrt(math.pi))
    assert latest_return(8.0, 50.0, 100.0) == pytest.approx(192.36, abs=0.05)
    assert latest_return(0.5, 50.0, 100.0) == pytest.approx(25.0)
    assert latest_return(0.0, 50.0, 100.0) == 0.0
    assert z_between(1.5) == pytest.approx(0.5 / math.sqrt(math.pi), abs=1e-6)


def test_the_device_picks_the_form():
    """dram_queue: with dram_sigma (Q1r), else (Q1)'s 15.25 a sector (8 loads of 2 sectors:
    15.25 x 2 x 7 = 213.5), else nothing."""
    base = dict(fp32=4.0, integer=4.0, fp64=8.0, sfu=17.0)
    q1 = OpLatencies(**base, dram_gap=15.25)
    assert dram_queue(8.0, 16.0, q1) == pytest.approx(213.5)
    assert dram_queue(1.0, 4.0, q1) == 0.0
    q1r = OpLatencies(**base, dram_gap=15.25, dram_sigma=100.0, dram_lift=50.0)
    assert dram_queue(8.0, 16.0, q1r) == pytest.approx(latest_return(8.0, 50.0, 100.0))
    assert dram_queue(8.0, 16.0, OpLatencies(**base)) == 0.0


def test_the_walkers_share_is_a_controller_shared_by_chance():
    """(Q1w) by hand and by brute force: with C = 10 controllers, W = 2 walkers share this
    round's controller with chance 1/10; W = 4 with 1 - 0.9^3 = 0.271; a lone warp 0, no
    controllers 0. Brute force: W - 1 other rounds each on a controller drawn at random,
    the share of trials where one lands on controller 0 (this round's)."""
    assert walker_share(1.0, 10.0) == 0.0
    assert walker_share(64.0, 0.0) == 0.0
    assert walker_share(2.0, 10.0) == pytest.approx(0.1)
    assert walker_share(4.0, 10.0) == pytest.approx(0.271)
    rng = random.Random(11)
    for walkers in (3, 8, 20):
        hits = sum(any(rng.randrange(10) == 0 for _ in range(walkers - 1))
                   for _ in range(40_000))
        assert walker_share(float(walkers), 10.0) == pytest.approx(hits / 40_000, abs=0.01)


def test_the_walkers_lift_the_round_between_the_lone_and_the_loaded_trip():
    """(Q1w): lift 26.5 alone, 54.0 loaded, C = 10: W = 2 gives 26.5 + 27.5 x 0.1 = 29.25;
    a device without a loaded lift keeps 26.5 at any W (the same OpLatencies object);
    dram_queue of one load is that lift."""
    base = dict(fp32=4.0, integer=4.0, fp64=8.0, sfu=17.0, dram_sigma=71.1, dram_lift=26.5)
    lone = OpLatencies(**base, dram_lift_loaded=54.0, dram_channels=10.0)
    two = with_walkers(lone, 2.0)
    assert loaded_lift(lone) == pytest.approx(26.5)
    assert loaded_lift(two) == pytest.approx(29.25)
    assert dram_queue(1.0, 4.0, two) == pytest.approx(29.25)
    assert loaded_lift(with_walkers(lone, 1000.0)) == pytest.approx(54.0)
    plain = OpLatencies(**base)
    assert with_walkers(plain, 64.0) is plain


def test_walking_warps_count_the_gpu_not_an_sm():
    """W on the H100 (132 SMs): 8 blocks of 256 threads are 64 warps at once (colsum);
    a block of 256 whose one thread walks (busiest = 256, Gram-Schmidt's k1) 1; 10,000
    blocks of 256 the resident ones alone, 132 SMs x 8 blocks x 8 warps at 32 registers."""
    dev = load_device("h100")
    assert walking_warps(dev, 256, 32, 0, 8, 1.0) == pytest.approx(64.0)
    assert walking_warps(dev, 256, 32, 0, 1, 256.0) == pytest.approx(1.0)
    assert walking_warps(dev, 256, 32, 0, 10_000, 1.0) == pytest.approx(132 * 8 * 8)
