"""validation/l1_stages.py: the H100's L1 load path as a tag stage and a data stage (eq. (L1s)),
against every mode of validation/ubench/l1_lines.cu (lease of 2026-11-27, probes-1 and -2).

Oracles: the stage sums by hand (a 128-B line of 32-bit words is 2 cycles of a 64 B/cycle data
stage, a broadcast one tag, a 32-row walk 32 tags); one warp's closed loop is its own trip
plus its latency; the ubench's measured figures at 64 warps an SM."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import l1_stages as ls  # noqa: E402


@pytest.mark.parametrize("mode, cycles", [("line", 2.0), ("broadcast", 1.0),
                                          ("gemm", 8.25 / 8), ("two", 2.0), ("rows", 32.0)])
def test_the_stage_sums_by_hand(mode, cycles):
    """line: 8 x 128 B / 64 = 16 data cycles over 8 tags; gemm: (4 x 4 + 4 x 128) / 64 = 8.25
    over 8 tags; two: 16 tags and 16 data cycles; rows: 256 tags over 16 data cycles."""
    assert ls.stage_cycles(ls.MODES[mode]) == pytest.approx(cycles)


def test_both_calls_agree():
    """Loads within 0.011 cycles a request (0.03 for rows' 32), stores on 4 SMs within 1 %."""
    one, two = (ls.measured([p]) for p in ls.PROBES)
    for mode, points in one.items():
        for (sms, warps), value in points.items():
            if mode.startswith("store"):
                if sms == 4:
                    assert two[mode][(sms, warps)] == pytest.approx(value, rel=0.01)
            else:
                assert two[mode][(sms, warps)] == pytest.approx(value, abs=0.011 + value / 1e3)


@pytest.mark.parametrize("mode", ["line", "broadcast", "gemm", "two", "rows"])
def test_the_stages_give_every_load_mode_at_64_warps_within_3_percent(mode):
    measured = ls.measured()[mode][(0, 64)]
    assert ls.stage_cycles(ls.MODES[mode]) == pytest.approx(measured, rel=0.03)


def test_the_stages_never_exceed_the_measurement_at_fewer_warps():
    """A throughput bound: every mode at 8..32 warps is at least the stages' cost."""
    for mode, points in ls.measured().items():
        if mode in ls.MODES:
            for (_, warps), value in points.items():
                assert ls.stage_cycles(ls.MODES[mode]) <= value * 1.016, (mode, warps)


def test_one_warps_closed_loop_is_its_trip_plus_its_latency():
    """W = 1: a trip of 8 loads at 2 cycles (16) then 100 cycles away: 116 / 8 a load."""
    assert ls.closed_loop_cycles(2.0, 1, 100.0) == pytest.approx(116.0 / 8)
    assert ls.closed_loop_cycles(2.0, 4096, 100.0) == pytest.approx(2.0, rel=1e-3)


def test_implied_latency_inverts_the_closed_loop():
    z = ls.implied_latency(1.0, 8, ls.closed_loop_cycles(1.0, 8, 75.0))
    assert z == pytest.approx(75.0, abs=1e-6)


def test_one_latency_does_not_give_the_8_warp_points():
    """Refuted: a common latency Z for every mode. At 8 warps the line mode needs about 169
    cycles, the broadcast about 62, both above the pointer chase's 38.9."""
    m = ls.measured()
    line = ls.implied_latency(2.0, 8, m["line"][(0, 8)])
    bcast = ls.implied_latency(1.0, 8, m["broadcast"][(0, 8)])
    assert line == pytest.approx(169, abs=3) and bcast == pytest.approx(62, abs=3)
    assert min(line, bcast) > ls.L1_LATENCY


def test_the_store_stages_and_their_misfit_on_the_load_store_pair():
    """(L1w) from store_line and store_rows on 4 SMs: 0.955 a request + 2.090 a line; a rows
    load (32 tags) and a rows store then add to 99.9 cycles or overlap to 67.9, and the pair
    measures 112.0: neither."""
    st = ls.store_stages(ls.measured())
    assert st.per_request + st.per_line == pytest.approx(3.045, abs=0.002)
    assert st.per_request + 32 * st.per_line == pytest.approx(67.85, abs=0.01)
    assert st.per_line == pytest.approx(2.090, abs=0.001)
    assert st.pair_sum == pytest.approx(99.85, abs=0.02)
    assert st.pair_measured == pytest.approx(112.0, abs=0.01)
