"""validation/row_walks.py: the H100 row walks' ncu counters (lease of 2026-11-27, second
session) and event times, per warp-iteration of an SM's 8 warps.

Oracles: a row walk's counts by hand (a warp instruction of 32 rows reads 32 lines; a 32-B
sector holds 8 floats, so the walk fills 32 sectors every 8th iteration, and the broadcast
x[j] one in 64: 4.02 a warp-iteration), and the restrict DCT-1D's raw counters divided by
hand: (295160 - 270366) / 32896 cycles a filled sector."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import row_walks as rw  # noqa: E402


def test_restrict_dct1d_by_hand():
    f = rw.walk_figures("restrict", "dct1d", "dct1d", 1024)
    assert f["wavefronts"] == pytest.approx(33.0, abs=0.01)  # 32 rows + the broadcast
    assert f["fills"] == pytest.approx(32 / 8 + 1 / 64, abs=0.01)
    assert f["per_fill"] == pytest.approx((295160 - 270366) / 32896, rel=1e-4)
    assert f["cycles"] == pytest.approx(295160 / 8192, rel=1e-4)


def test_every_walk_has_its_hand_counts():
    """The single walks 33 (restrict) or 34.68 (plain: a store's 1.68) wavefronts and 4.02
    fills; GESUMMV two walks, two reloads and two stores; each takes more cycles than its
    wavefronts."""
    for port, bench, kernel, iters in rw.WALKS[:-1]:
        f = rw.walk_figures(port, bench, kernel, iters)
        two = bench == "gesummv"
        assert f["fills"] == pytest.approx(8.07 if two else 4.02, abs=0.06), kernel
        assert f["cycles"] > f["wavefronts"], kernel
        if port == "restrict":
            assert f["wavefronts"] == pytest.approx(33.0, abs=0.01), kernel


def test_the_clock_ratios():
    """ncu's locked base clock (1.592 GHz) against the timed 1980 MHz: a time in SM cycles
    is 1.244 times as long under ncu. The row walks lie within 0.03 of it; ATAX's column
    walk, a DRAM round trip an iteration, near 1 (a latency in nanoseconds)."""
    for port, bench, kernel, iters in rw.WALKS[:-1]:
        assert rw.walk_figures(port, bench, kernel, iters)["ncu_over_event"] == pytest.approx(
            1.244, abs=0.03), kernel
    assert rw.walk_figures("plain", "atax", "atax_k2", 4096)["ncu_over_event"] < 1.1
