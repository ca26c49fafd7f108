"""Eq. (GQ): a grown gather's L2 requests (cgpredict/memory/gather_requests.py), against the
distinct lines of random picks counted by brute force and by hand."""

from __future__ import annotations

import numpy as np
import pytest

from cgpredict.memory.gather_requests import gather_growth, grown_requests


def _distinct(n: int, lines: int) -> float:
    """Expected distinct lines among n uniform picks of ``lines`` lines (by hand)."""
    return lines * (1.0 - (1.0 - 1.0 / lines) ** n)


def _brute(n: int, lines: int, trials: int, rng: np.random.Generator) -> float:
    """Mean distinct lines among n uniform picks, counted over ``trials`` warps."""
    picks = rng.integers(0, lines, size=(trials, n))
    picks.sort(axis=1)
    return float(np.mean(1 + np.count_nonzero(np.diff(picks, axis=1), axis=1)))


def test_hand_count_of_spmv_csr_x() -> None:
    """32 lanes picking 4-B words of spmv_csr's x: 512 lines traced, 32,768 at the work size;
    32 less the distinct lines, 0.950 and 0.0151 (about C(32, 2) / L)."""
    assert 32 - _distinct(32, 512) == pytest.approx(0.9501, abs=1e-3)
    assert 32 - _distinct(32, 32768) == pytest.approx(0.01512, abs=1e-4)


@pytest.mark.parametrize("lines,g", [(512, 64.0), (256, 16.0), (2048, 4.0)])
def test_grown_requests_match_random_picks(lines: int, g: float) -> None:
    """(GQ) from the traced warps' counts gives the work size's distinct lines that a brute
    force of random picks over g times the lines counts (every pick past the L1: m = 32)."""
    rng = np.random.default_rng(7)
    traced = _brute(32, lines, 40000, rng)
    work = _brute(32, int(lines * g), 40000, rng)
    req = np.array([[0.0, traced * 1000, 0.0]])
    sect = np.array([[0.0, 32.0 * 1000, 0.0]])
    got = grown_requests(req, sect, ((0, g),))[0, 1] / 1000
    assert got == pytest.approx(work, abs=0.02)
    assert got == pytest.approx(_distinct(32, int(lines * g)), abs=0.02)


def test_only_grown_gathers_move() -> None:
    """Loads without growth, and growth 1, keep their requests; a row of coalesced loads
    (requests below sectors by design: 4 sectors a line) is left alone when not a gather."""
    req = np.array([[4.0, 0.0, 0.0], [0.0, 30.0, 0.0]])
    sect = np.array([[16.0, 0.0, 0.0], [0.0, 32.0, 0.0]])
    assert np.array_equal(grown_requests(req, sect, ()), req)
    assert np.array_equal(grown_requests(req, sect, ((1, 1.0),)), req)
    out = grown_requests(req, sect, ((1, 2.0),))
    assert out[0].tolist() == [4.0, 0.0, 0.0]
    assert out[1, 1] == pytest.approx(31.0)


def test_gather_growth_takes_the_largest() -> None:
    """The L2's and the L1's tables of gathers merge, each load at its largest growth."""
    assert gather_growth(((3, 64.0),), ((3, 8.0), (1, 2.0))) == ((1, 2.0), (3, 64.0))
    assert gather_growth((), ()) == ()
