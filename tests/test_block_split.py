"""validation/block_split.py: a row's miss split into the kernel's part and the event pair's.

Oracles by hand: the committed strided 128x1 row (blind blocks set, predicted 94.1 us =
86.7 of kernel + 7.42 of launch costs; ncu 90.08 us, DRAM at 86.7 %), (BD)'s dispatch time
of 524288 blocks (x 1.24 cycles / 1980 MHz = 328.3 us), a parsed ncu grid and a line fit."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import block_split  # noqa: E402
import event_vs_ncu  # noqa: E402


def test_grid_blocks():
    assert event_vs_ncu.grid_blocks("(131072, 1, 1)") == 131072
    assert event_vs_ncu.grid_blocks("(64, 64, 4)") == 16384
    assert event_vs_ncu.grid_blocks("n/a") == 0.0


def test_dispatch_time():
    # (BD): 524288 blocks x 1.24 cycles at 1980 MHz
    assert block_split.dispatch_us(524288) == pytest.approx(524288 * 1.24 / 1980.0)


def test_ncu_reading():
    base = dict(ncu_us=90.08, ghz=1.61, bound=True, blocks=131072.0)
    assert block_split.ncu_at_events(base) == (90.08, "")              # DRAM busy: as is
    disp = dict(base, ncu_us=318.5, bound=False, blocks=524288.0)      # 328.3 us of (BD)
    assert block_split.ncu_at_events(disp) == (318.5, "d")
    sm = dict(base, ncu_us=116.93, ghz=1.59, bound=False)              # conv1d 128x1
    t, mark = block_split.ncu_at_events(sm)
    assert mark == "*" and t == pytest.approx(116.93 * 1.59 / 1.98)
    assert block_split.ncu_at_events(dict(base, ghz=0.0))[1] == "?"


def test_strided_128x1_split():
    rows = block_split.split(75.0, {"128x1"}, {"strided"})
    row = next(r for r in rows if r["set"] == "blind/now-blocks")
    # the committed table's prediction, 104.33 us, holds (E5)'s 6.18 us of write-back and
    # (E6)'s late call, 4.06 us (the reset copies 64 MiB pageable, then memsets): the kernel's
    # own time is the prediction less (E1)-(E3)'s 7.42, that write-back and the late call
    assert row["writeback_us"] == pytest.approx(6.18, abs=0.01)
    assert row["late_us"] == pytest.approx(4.06)
    assert row["model_k"] == pytest.approx(104.33 - 7.42 - 6.18 - 4.06, abs=0.05)
    assert row["ncu"] == pytest.approx(90.08) and row["scaled"] == ""
    assert row["inside"] == pytest.approx(86.68 - 90.08, abs=0.05)
    assert row["outside"] == pytest.approx((104.33 - 115.5) - (86.68 - 90.08), abs=0.1)
    assert row["blocks"] == 131072


def test_slope():
    b, a = block_split.slope([0.0, 1.0, 2.0], [1.0, 3.0, 5.0])
    assert (b, a) == pytest.approx((2.0, 1.0))
    assert block_split.slope([4.0, 4.0], [1.0, 3.0]) == (0.0, 2.0)


def test_particles_launches_split():
    # particles at 1024x1 on the worst lease (h100-worst-2026-11-27/more): two launches a run.
    # The first (step_soa) follows the reset's 100 MB pageable upload: the model charges it
    # launch_gap_us + launch_call_us + upload_launch_us = 3.07 + 4.35 + 14.97 = 22.39 us; the
    # second (step_aos) is queued behind it: launch_gap_us alone. Event medians 86.08 and
    # 67.776 us, ncu 54.592 and 69.952 us (DRAM at 74.1 and 76.8 %: as is at --busy 70).
    rows = block_split.launch_split(70.0, {"1024x1"}, {"particles"})
    soa = next(r for r in rows if r["name"] == "step_soa" and r["where"].endswith("/more"))
    aos = next(r for r in rows if r["name"] == "step_aos" and r["where"].endswith("/more"))
    assert (soa["index"], aos["index"]) == (0, 1)
    assert soa["costs"] == pytest.approx(3.07 + 4.35 + 14.97)
    assert aos["costs"] == pytest.approx(3.07)
    assert soa["scaled"] == "" and soa["ncu"] == pytest.approx(54.592, abs=1e-3)
    assert soa["outside"] == pytest.approx(86.08 - 54.592, abs=1e-3)
    assert soa["unexplained"] == pytest.approx(86.08 - 54.592 - 22.39, abs=1e-3)
    assert aos["outside"] == pytest.approx(67.776 - 69.952, abs=1e-3)
    # a run of one launch is block_split.split's, not this table's
    assert not block_split.launch_split(70.0, {"1024x1"}, {"strided"})
