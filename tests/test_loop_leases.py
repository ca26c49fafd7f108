"""validation/loop_leases.py: the host's period on two leases (loop_probe), wavefront's middle
diagonals under ncu, and eqs. (E1)-(E3) over each distinct launch (fourteenth round, t2).

Oracles: the committed probe and ncu files give the figures docs/models.md (E4s) cites; the
event-timed loop of four launches with each its own w worked through eqs. (E1)-(E3) by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import loop_leases as ll  # noqa: E402


def test_the_two_leases_hosts_differ_by_four_tenths_for_every_kernel():
    """loop_probe's pair floor D: heat 6.24 / 4.34, wavefront 6.53 / 4.64, empty 5.45 / 3.93
    us a launch on the leases of 2026-11-27 and 2026-11-28; 1.38-1.44 x apart."""
    got = {(p.lease[:10], p.kernel): round(p.pair, 2) for p in ll.probes()}
    assert got == {("2026-11-27", "heat"): 6.24, ("2026-11-27", "wavefront"): 6.53,
                   ("2026-11-27", "empty"): 5.45, ("2026-11-28", "heat"): 4.34,
                   ("2026-11-28", "wavefront"): 4.64, ("2026-11-28", "empty"): 3.93}
    for k in ("heat", "wavefront", "empty"):
        assert 1.38 <= got[("2026-11-27", k)] / got[("2026-11-28", k)] <= 1.44


def test_the_middle_diagonals_at_1024x1_take_the_gpu_longer_than_the_hosts_period():
    """ncu of launches 998-1000 and 2040-2042: 1024x1 5.28-5.70 us at about 1.58 GHz, the
    busiest SM 5188-5851 cycles (2.62-2.96 us at 1980 MHz); 128x1 2.98-3.23 us, 1487-1921."""
    ds = ll.diagonals()
    assert len(ds) == 12
    big = [d for d in ds if d.block == "1024x1"]
    assert {d.blocks for d in big if d.skip == 998} == {1}
    assert {d.blocks for d in big if d.skip == 2040} == {2}
    assert min(d.duration_us for d in big) == pytest.approx(5.28)
    assert max(d.duration_us for d in big) == pytest.approx(5.696)
    assert all(1560 < d.clock_mhz < 1590 for d in ds)
    assert min(d.active_us for d in big) == pytest.approx(5188 / 1980)
    small = [d for d in ds if d.block == "128x1"]
    assert max(d.duration_us for d in small) == pytest.approx(3.232)


def test_distinct_launches_go_through_e1_to_e3_in_issue_order():
    """Two distinct launches of 1 and 3 us of work, each standing for 2 launches: issue order
    w = 4.07, 6.07, 6.07, 4.07 (gap 3.07). By hand with d = d' = 4.35, P = 4.7: launch 0
    waits its call, 4.35, and ends at 8.42; launch 1's call lands at 4.7 + 4.35 = 9.05, 0.63
    after the GPU is free; launches 2 and 3 find their calls issued (13.75, 18.45) before the
    GPU is free (15.12, 21.19): 20.28 + 4.98 = 25.26 us, 6.315 a launch. The mean w, 5.07,
    above P: only the first call, (20.28 + 4.35) / 4 = 6.1575."""
    launches = [(2, 3.0, 2.0), (1, 1.0, 2.0)]
    assert ll.issue_works(launches, 3.07) == pytest.approx([4.07, 6.07, 6.07, 4.07])
    each, flat, above = ll.distinct_pair_us(launches)
    assert each == pytest.approx(6.315)
    assert flat == pytest.approx(6.1575)
    assert above == 2
