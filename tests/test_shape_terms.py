"""validation/shape_terms.py: the 2-D stencils' model terms beside their ncu counters.

Oracles: a profile whose missed requests are counted on paper (a warp's DRAM row as one
128-B line or as two half lines), a report kernel built by hand, and the committed counters
of 2DCONV at 16x16 and 32x8, whose figures docs/validation.md quotes (13.3 M wavefronts over
132 SMs, 1.791 M read requests, a warp life of 1918 cycles)."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from cgpredict.profile import KernelProfile, PatternCounts

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import shape_terms  # noqa: E402


def _rows(requests: float, hit: float = 0.0, insts: float = 2.0) -> KernelProfile:
    """``insts`` coalesced loads of 4 sectors from DRAM, each in ``requests`` lines."""
    load = PatternCounts(insts=insts, l2_trans_per_warp=4.0, dram_trans_per_warp=4.0,
                         l1_hit_fraction=hit, l2_requests_per_warp=requests)
    return KernelProfile("rows", threads_per_block=256, blocks=8, coal=load, comp_insts=10)


def test_missed_requests_by_hand():
    """Two DRAM rows a warp: 2 requests as whole lines, 4 as a 16-wide block's half lines;
    half the instructions served by the L1 halve them; untraced, a coalesced load's 4
    sectors are one line and an uncoalesced one's four."""
    assert shape_terms.missed_requests(_rows(1.0)) == pytest.approx(2 * 4 * 1 / 4)
    assert shape_terms.missed_requests(_rows(2.0)) == pytest.approx(2 * 4 * 2 / 4)
    assert shape_terms.missed_requests(_rows(1.0, hit=0.5, insts=4.0)) == pytest.approx(2.0)
    untraced = PatternCounts(insts=1, l2_trans_per_warp=4.0, dram_trans_per_warp=4.0)
    p = KernelProfile("u", threads_per_block=32, blocks=1, coal=untraced, comp_insts=1)
    assert shape_terms.missed_requests(p) == pytest.approx(1.0)
    scattered = KernelProfile("s", threads_per_block=32, blocks=1, uncoal=untraced,
                              comp_insts=1)
    assert shape_terms.missed_requests(scattered) == pytest.approx(4.0)


def test_model_terms_of_a_report_kernel():
    bounds = SimpleNamespace(l1_cycles=101907.0, l2_cycles=80623.0, dram_cycles=137592.0,
                             dram_wave_cycles=51615.0, l2_requests=1748847.0)
    kernel = SimpleNamespace(result=SimpleNamespace(bounds=bounds, binding="dram"),
                             profile=_rows(2.0))
    t = shape_terms.model_terms(kernel)
    assert t["l1"] == 101907.0 and t["dram"] == 137592.0 and t["wave"] == 51615.0
    assert t["binding"] == "dram" and t["requests"] == 1748847.0 and t["k"] == 4.0


def test_committed_counters_of_2dconv():
    """16x16 against 32x8 in one lease: twice the L1 data-stage wavefronts and 1.38x the L2
    read requests for the same DRAM bytes, and a warp life 122 cycles longer."""
    wide = shape_terms.ncu_terms(shape_terms.LEASE / "corpus-ncu/2dconv-32x8.csv", "conv2d")
    half = shape_terms.ncu_terms(shape_terms.LEASE / "corpus-ncu/2dconv-16x16.csv", "conv2d")
    _, read, _, dram = shape_terms.NCU[:4]
    assert half["wavefronts_per_sm"] == pytest.approx(13.3e6 / 132, rel=0.01)
    assert wide["wavefronts_per_sm"] == pytest.approx(7.663e6 / 132, rel=0.01)
    assert half[read] == pytest.approx(1.791e6, rel=1e-3)
    assert wide[read] == pytest.approx(1.295e6, rel=1e-3)
    assert half[dram] == pytest.approx(wide[dram], rel=1e-3)
    assert half["m"] == pytest.approx(1918, abs=1) and wide["m"] == pytest.approx(1796, abs=1)
    assert half["gap"] == pytest.approx(471, abs=1) and wide["gap"] == pytest.approx(489, abs=1)
