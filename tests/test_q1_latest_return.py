"""validation/q1_latest_return.py: eq. (Q1r)'s figures from the committed micro-benchmark."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import q1_latest_return as w  # noqa: E402


def test_the_three_figures_come_from_dram_inflight():
    """The committed dram_inflight.json: K = 1 row trips 757.7 / 744.8 / 755.5 (median
    755.5); the L2-resident run's slope 12.2 a load; sigma the median of the row modes' fits
    (colsum 96.9, 8320 B 117.0, 64 SMs 103.0); lift 755.5 - 12.2 - 685.1 = 58.2."""
    t = w.trips()
    assert t["colsum"][1] == 757.7 and t["64warps"][8] == pytest.approx(969.4)
    sigma, lift, issue = w.derive(t)
    assert issue == pytest.approx(12.2, abs=0.05)
    assert sigma == pytest.approx(103.0, abs=0.1)
    assert lift == pytest.approx(755.5 - issue - 685.1)


def test_a_bad_figure_is_one_line():
    """A non-number after --sigma stops with one line, not a traceback."""
    with pytest.raises(SystemExit, match="take a number"):
        w.main(["--sigma", "x"])


def test_derive_spread_recovers_a_round_built_by_hand():
    """A trip table built from eq. (Q1r) by hand, 685.1 + issue + lift + issue x (K - 1) +
    sigma x z(K) with issue 20, sigma 80, lift 30 (z(2) = 1/sqrt(pi) = 0.5642), gives the
    three figures back exactly: the two-term least squares is exact on its own form."""
    from cgpredict.dram_rounds import expected_max_normal as z

    assert z(2) == pytest.approx(0.5642, abs=1e-4)
    trip = {k: 685.1 + 20 + 30 + 20 * (k - 1) + 80 * z(k) for k in (1, 2, 4, 8, 16)}
    sigma, lift, issue = w.derive_spread(trip)
    assert (sigma, lift, issue) == pytest.approx((80.0, 30.0, 20.0))
    rms = w.form_rms(trip)
    assert rms["z, issue free"] == pytest.approx(0.0, abs=1e-9) and rms["gap"] > 5


def test_the_spread_figures_come_from_the_lease():
    """The lease's dram_spread.txt: one warp, 32 lanes, 733.5 / 804.5 / 867.6 / 986.4 /
    1188.2 cycles at K = 1, 2, 4, 8, 16; fitted issue 21.9, sigma 71.1, lift 733.5 - 21.9 -
    685.1 = 26.5; every K within 10 cycles of the form."""
    runs = w.spread_trips()
    assert runs[(32, 1)] == {1: 733.5, 2: 804.5, 4: 867.6, 8: 986.4, 16: 1188.2}
    assert len(runs) == 12 and runs[(1, 132)][16] == 1173.4
    sigma, lift, issue = w.derive_spread(runs[(32, 1)])
    assert issue == pytest.approx(21.9, abs=0.05) and sigma == pytest.approx(71.1, abs=0.05)
    assert lift == pytest.approx(733.5 - issue - 685.1)
    assert w.form_rms(runs[(32, 1)])["z, issue free"] < 10


def test_an_unknown_spread_run_is_one_line():
    """--spread names a (lanes, W) the lease ran, else one line, not a traceback."""
    with pytest.raises(SystemExit, match="no dram_spread run"):
        w.main(["--spread", "3,3"])
