"""validation/l1_request_counters.py: the H100 L1's cost a warp request read off the ports' own
ncu counters (eq. (B2r); lease of 2026-11-27, second session, extended counters).

Oracles: the fit by hand on two made-up rows (one wavefront a request and 16, exact); the
committed counters of restrict GEMM 32x8 read by hand; the device file's value against the
counters' fit; every L1-bound row within 4 % of (B2r) with the device's values."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cgpredict.devices import load_device

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import l1_request_counters as lr  # noqa: E402


def _row(wavefronts: float, requests: float, active: float) -> lr.L1Row:
    return lr.L1Row("hand", requests, wavefronts, active, 0.0, 100.0)


def test_the_fit_by_hand():
    """Two rows made with a = 1, b = 0.25: 1000 requests of 1 wavefront (1250 cycles) and 100
    of 16 (1625): the free fit gives both back, the held fit b."""
    rows = [_row(1000.0, 1000.0, 1250.0), _row(1600.0, 100.0, 1625.0)]
    a, b = lr.fit_free(rows)
    assert a == pytest.approx(1.0) and b == pytest.approx(0.25)
    assert lr.fit_request(rows) == pytest.approx(0.25)


def test_restrict_gemm_32x8_counters_by_hand():
    """The CSV's per-SM values: 509,641.70 requests, 510,438.88 wavefronts, 612,318.73 active
    cycles: 1.0016 wavefronts and 1.2015 cycles a request."""
    r = lr.load_row("restrict", "gemm", "32x8")
    assert r.requests == pytest.approx(509641.70)
    assert r.wavefronts == pytest.approx(510438.88)
    assert r.active == pytest.approx(612318.73)
    assert r.active / r.requests == pytest.approx(1.2015, abs=1e-4)


def test_device_value_is_the_counters_fit_and_every_row_within_4_percent():
    """h100.toml's l1_request_cycles is the held fit (0.229); the free fit's wavefront cost is
    the published one line a cycle within 1 %; each of the 12 rows within 4 % of (B2r)."""
    rows = [lr.load_row("restrict", k, b) for k, b in lr.ROWS]
    dev = load_device("h100")
    assert dev.l1_request_cycles == pytest.approx(lr.fit_request(rows), abs=5e-4)
    a, _ = lr.fit_free(rows)
    assert a == pytest.approx(dev.l1_line_cycles, rel=0.01)
    for r in rows:
        model = dev.l1_line_cycles * r.wavefronts + dev.l1_request_cycles * r.requests
        assert model == pytest.approx(r.active, rel=0.04), r.name
