"""validation/issue_rate_sim.py: one scheduler's issue rate on a loop body, and the blind
mandelbrot's warp-iterations (round 14, t5).

Oracles: a lone warp's trip counted by hand from the stall counts and the pipes' 2-cycle
holds; a pipe's own rate (one warp instruction every 2 cycles on a 16-lane pipe) when every
instruction needs it; one issue a cycle when warps are many and pipes alternate; the
warp-iterations of a small image summed by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import issue_rate_sim as irs  # noqa: E402


def test_a_lone_warp_runs_the_mandelbrot_trip_of_38_cycles():
    # by hand: FADD 0, FADD 2 (fmalite held), IADD3 3, FADD 5, FFMA 6, ISETP 7, FMUL 9,
    # FMUL 11 (fmaheavy held), FADD 15, FSETP 20, BRA 33, next trip 38: 11 in 38
    assert irs.issue_rate(1, cycles=38 * 2000) == pytest.approx(11 / 38, abs=2e-3)


def test_a_lone_warp_issues_at_its_stall_counts():
    body = (("alu", 3), ("lite", 2), ("heavy", 5))  # every stall at least its pipe's hold
    assert irs.issue_rate(1, cycles=100000, body=body) == pytest.approx(3 / 10, abs=1e-3)


def test_one_pipe_for_every_instruction_sets_half_a_cycle():
    body = (("lite", 1),) * 4  # a 16-lane pipe takes a warp instruction every 2 cycles
    assert irs.issue_rate(16, cycles=10000, body=body) == pytest.approx(0.5, abs=1e-3)


def test_many_warps_on_alternating_pipes_issue_one_a_cycle():
    body = (("lite", 1), ("heavy", 1))
    assert irs.issue_rate(8, cycles=10000, body=body) == pytest.approx(1.0, abs=1e-3)


def test_the_mandelbrot_loop_allows_one_a_cycle_at_eight_warps():
    rates = [irs.issue_rate(n, cycles=20000) for n in (1, 2, 4, 8, 16)]
    assert rates == sorted(rates)  # more warps never issue less
    assert rates[-2] > 0.995 and rates[-1] > 0.995


def test_warp_iterations_by_hand():
    it = np.zeros((2, 64), np.int64)
    it[0, 5], it[1, 40], it[1, 63] = 7, 3, 9
    # 32x1 blocks: a warp a row-half: maxima 7, 0, 0, 9
    assert irs.warp_iterations(it, 32, 1) == 16
    # 16x2 blocks: a warp is the block (16 columns of both rows): 7, 0, 3, 9
    assert irs.warp_iterations(it, 16, 2) == 19
