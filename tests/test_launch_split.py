"""validation/launch_split.py: host loops of short launches split into the GPU's time and the
gaps between launches (thirteenth round, t7).

Oracles: the split of a made-up row by hand; the model's event-timed pair of a loop of equal
short launches derived by hand from eqs. (E1)-(E3) (the first launch waits the call d, every
later one is set by the host's period P: total = w + d + (n - 1) x P); the committed worst-rows
lease gives the figures docs/validation.md cites."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from cgpredict.devices import load_device

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import launch_split as ls  # noqa: E402
from loop_launches import LoopRow  # noqa: E402


@pytest.fixture(scope="module")
def committed() -> list:
    """Every heat1d and wavefront row of the committed leases, read once."""
    return ls.splits(None)


def _row(pair_us: float, source: str = "x/blind.json") -> LoopRow:
    return LoopRow(source=source, program="heat1d", block="256x1", kernel="heat",
                   launches=200, pair_us=pair_us, median_us=pair_us, min_us=4.0,
                   rep_lo_us=pair_us, rep_hi_us=pair_us, ncu_us=3.2)


def test_the_gap_is_the_pair_less_the_gpu_time():
    s = ls.Split(row=_row(6.0), gpu_us=3.2, model=None)
    assert s.gap_us == pytest.approx(2.8)
    assert s.short_us is None
    assert ls.Split(row=_row(6.0), gpu_us=None, model=None).gap_us is None


def test_the_model_pair_of_a_loop_of_short_launches_is_the_host_period():
    """200 launches of 1 us of work: w = 1 + launch_gap_us; d + w > P, so after the first
    launch (which waits the call d) every pair is the period P: total = w + d + 199 P."""
    dev = load_device("h100")
    n, work_us = 200, 1.0
    w = work_us + dev.launch_gap_us
    d, period = dev.launch_call_us, dev.loop_launch_us
    assert w < period < d + w  # the regime of the hand derivation
    run = {"kernels": [{"name": "heat", "kernel_ms": n * work_us * 1e-3, "launches": n}]}
    m = ls.model_terms(run, "heat", dev)
    assert m.kernel_us == pytest.approx(work_us)
    assert m.w_us == pytest.approx(w)
    assert m.pair_us == pytest.approx((w + d + (n - 1) * period) / n)
    assert ls.model_terms({"kernels": []}, "heat", dev) is None


def test_the_worst_rows_lease_splits_heat1d_into_gpu_time_and_host_gaps(committed):
    """heat1d at 32x1 / 128x1 / 1024x1 (h100-worst2-2026-11-27): ncu 4.02 / 3.20 / 3.12 us a
    launch, pairs 5.36 / 6.02 / 6.50, so gaps 1.34 / 2.82 / 3.38: the GPU's time falls with
    the block while the pair rises, run after run, as the host's pace drifts."""
    rows = {(s.row.program, s.row.block): s for s in committed
            if s.row.source.startswith("h100-worst2")}
    got = [rows[("heat1d", b)] for b in ("32x1", "128x1", "1024x1")]
    assert [round(s.gpu_us, 2) for s in got] == [4.02, 3.20, 3.12]
    assert [round(s.row.pair_us, 2) for s in got] == [5.36, 6.02, 6.50]
    assert [round(s.gap_us, 2) for s in got] == [1.34, 2.82, 3.38]
    wf = [rows[("wavefront", b)].row.pair_us for b in ("32x1", "128x1", "1024x1")]
    assert [round(x, 2) for x in wf] == [4.32, 5.73, 5.99]


def test_the_same_wavefront_code_times_a_third_apart_in_one_lease(committed):
    """wavefront 256x1, plain and restrict ports of the blind lease: 4.54 and 6.07 us a
    launch, the model's pair the same for both (the GPU's work differs by nothing it sees)."""
    pairs = {s.row.source: s.row.pair_us for s in committed
             if s.row.program == "wavefront" and s.row.block == "256x1"}
    assert round(pairs["h100-blind-2026-11-27/plain.json"], 2) == 4.54
    assert round(pairs["h100-blind-2026-11-27/restrict.json"], 2) == 6.07


def test_the_hosts_period_is_its_issue_clock_over_the_launches():
    """Three repetitions issued in 1.2, 1.0 and 1.1 ms, 200 launches of one kernel and 200 of
    another: the median 1.1 ms over 400 launches, 2.75 us a launch; a run without the clock
    (every lease before this round) gives nothing."""
    data = {"results": [
        {"kernel": "p", "config": "256x1",
         "result": {"all_host_issue_ms": [1.2, 1.0, 1.1],
                    "launches": [{"count": 200}, {"count": 200}]}},
        {"kernel": "q", "config": "32x1", "result": {"launches": [{"count": 5}]}},
        {"kernel": "r", "config": "32x1", "result": None}]}
    assert ls.host_periods(data) == {("p", "256x1"): pytest.approx(2.75)}


def test_the_lease_of_2026_11_28_carries_its_hosts_pace(committed):
    """gpu_loops.sh on the lease of 2026-11-28: heat1d 256x1 pairs 4.07 us a launch (0.815
    ms / 200) while the host's clock around the launches reads 5.64 (median repetition);
    wavefront 256x1 4.69 / 5.50 and 1024x1 5.72 / 6.52: the host's issue time exceeds the
    pairs by 0.8 us a launch in both, the time between a launch's second event and the next
    one's first that no pair counts (loop_probe's wavefront: 0.79-0.89)."""
    rows = {(s.row.program, s.row.block): s for s in committed
            if s.row.source == "h100-lease-2026-11-28/loops/blind.json"}
    got = {k: (round(s.row.pair_us, 2), round(s.host_us, 2)) for k, s in rows.items()
           if k in {("heat1d", "256x1"), ("wavefront", "256x1"), ("wavefront", "1024x1")}}
    assert got == {("heat1d", "256x1"): (4.07, 5.64), ("wavefront", "256x1"): (4.69, 5.50),
                   ("wavefront", "1024x1"): (5.72, 6.52)}
