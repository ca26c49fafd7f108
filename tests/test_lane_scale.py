"""Tests of cgpredict.lane_scale (eq. (D4): the window's factor carried below the trace's lane
spacing): the two fields where the rule is exact by hand (a trip count linear in the lane,
independent trips), H from the structure function, and the spacing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cgpredict.frontend.tracefile import TRIP_DTYPE
from cgpredict.frontend.tracefile_format import NO_INDEX
from cgpredict.lane_scale import hurst_exponents, lane_spacing, scale_factors
from cgpredict.lane_trips import LaneSpan, lane_records, warp_trip_factors


def records_1d(trips) -> np.ndarray:
    """TRIP_DTYPE records of loop 1, one entry a lane of a 1-D grid, lane x running trips[x]."""
    return np.array([(0, 1, int(n), x, NO_INDEX) for x, n in enumerate(trips)], TRIP_DTYPE)


def brute_factor(trips: np.ndarray, w: int) -> float:
    """(D1) by loops on groups of w neighbouring lanes (edge group shorter)."""
    warp = sum(len(trips[i:i + w]) * trips[i:i + w].max() for i in range(0, len(trips), w))
    return warp / trips.sum()


def test_linear_trips_are_exact():
    """A triangular loop, lane x of N runs N - x trips: traced at N = 256 for a work size of
    N = 1024 (s = 4), the 32-lane windows' factor scaled by 4^-1 (H = 1: S(2) = 2 S(1)) is
    the work size's own factor by brute force, to the edge groups' rounding."""
    traced, work = np.arange(256, 0, -1), np.arange(1024, 0, -1)
    rec = lane_records(records_1d(traced), 1)
    assert hurst_exponents(rec) == {1: (pytest.approx(1.0), 1.0)}  # no y axis: SMOOTH
    window = warp_trip_factors(records_1d(traced), 1, LaneSpan(32, 1), (256, 1))
    assert window[1] == pytest.approx(brute_factor(traced, 32))
    got = scale_factors(window, hurst_exponents(rec), LaneSpan(32, 1), (4.0, 1.0))
    # by hand: the excess of a window is 31 of the traced (or work) trips over the mean
    # N / 2 + 1/2: (31 / 2) / 128.5 traced, (31 / 2) / 512.5 at the work size
    assert window[1] - 1 == pytest.approx(15.5 / 128.5)
    assert got[1] - 1 == pytest.approx(15.5 / 128.5 / 4)
    assert got[1] == pytest.approx(brute_factor(work, 32), rel=2e-3)


def test_independent_trips_keep_the_window():
    """Lanes alternating 1, 3 trips (no correlation at any distance beyond the pair: S(1) =
    2, S(2) = 0 clipped to H = 0): the spacing does not shrink the excess."""
    t = records_1d([1, 3] * 64)
    h = hurst_exponents(lane_records(t, 1))
    assert h == {1: (0.0, 1.0)}
    window = warp_trip_factors(t, 1, LaneSpan(32, 1), (128, 1))
    assert window == {1: pytest.approx(1.5)}  # every window runs 3 for a mean of 2
    assert scale_factors(window, h, LaneSpan(32, 1), (16.0, 1.0)) == window


def test_hurst_from_the_structure_function_by_hand():
    """Lane x runs x^2 trips on 5 lanes: |differences| one apart 1, 3, 5, 7 (mean 4), two
    apart 4, 8, 12 (mean 8): H_x = log2(8 / 4) = 1. A 2-D grid reads y on its own, each row
    adding its offset to every lane: offsets 0, 4, 6, 2 differ by 4, 2, 4 one row apart (mean
    10/3) and 6, 2 two apart (mean 4): H_y = log2(1.2); offsets 0, 10, 10: 10 and 0, then 10:
    H_y = log2(10 / 5) = 1; offsets 0, 10, 0: 10, then 0: H_y = 0. Lanes all alike: none."""
    xs = [x * x for x in range(5)]
    assert hurst_exponents(lane_records(records_1d(xs), 1)) == {1: (pytest.approx(1.0), 1.0)}

    def grid(rows):
        return lane_records(np.array([(0, 2, n + r, y, x) for y, r in enumerate(rows)
                                      for x, n in enumerate(xs)], TRIP_DTYPE), 2)
    assert hurst_exponents(grid([0, 4, 6, 2])) == {
        2: (pytest.approx(1.0), pytest.approx(math.log2(1.2)))}
    assert hurst_exponents(grid([0, 10, 10])) == {2: (pytest.approx(1.0), pytest.approx(1.0))}
    assert hurst_exponents(grid([0, 10, 0])) == {2: (pytest.approx(1.0), 0.0)}
    assert hurst_exponents(lane_records(records_1d([5] * 8), 1)) == {}  # no difference


def test_scale_weights_each_axis_by_its_lane_steps():
    """A 16x2 window over spacings (16, 4), H = (0.5, 0.25): the excess shrinks by
    exp(-(15 x 0.5 ln 16 + 1 x 0.25 ln 4) / 16)."""
    got = scale_factors({3: 1.4}, {3: (0.5, 0.25)}, LaneSpan(16, 2), (16.0, 4.0))
    shrink = (15 * 0.5 * math.log(16) + 0.25 * math.log(4)) / 16
    assert got[3] == pytest.approx(1 + 0.4 * math.exp(-shrink))
    assert scale_factors({3: 1.4}, {}, LaneSpan(1, 1), (16.0, 16.0)) == {3: 1.4}
    assert scale_factors({3: 1.4}, {}, LaneSpan(4, 1), (2.0, 1.0))[3] == pytest.approx(1.2)


def test_lane_spacing():
    assert lane_spacing((128, 128), (2048, 2048)) == (16.0, 16.0)
    assert lane_spacing((64, 1), (64, 1)) == (1.0, 1.0)
    assert lane_spacing((256, 1), (100, 1)) == (1.0, 1.0)  # traced above the work size
    assert lane_spacing((0, 0), (64, 1)) == (1.0, 1.0)
