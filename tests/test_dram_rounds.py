"""Eqs. (Q1) and (Q1r) (cgpredict/dram_rounds.py) from first principles."""

from __future__ import annotations

import math
import random

import pytest

from cgpredict.compute import OpLatencies
from cgpredict.dram_rounds import dram_queue, expected_max_normal, latest_return, z_between


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
