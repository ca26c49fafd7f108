"""validation/spmv_csr_xhit.py: the C-order sector LRU keeps what a hand count gives."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import spmv_csr_xhit as sim  # noqa: E402


def test_room_for_everything_keeps_7_of_8_and_all_of_x():
    """An L1 holding every sector: val/col miss a sector's first of 8 reads, x (256 sectors,
    warm) always hits."""
    r = sim.simulate(1 << 22, waves=3, warm=1, x_sectors=256, warps=4)
    assert abs(r["valcol"] - 7 / 8) < 1e-12
    assert r["x"] == 1.0


def test_x_keeps_what_the_live_sectors_leave():
    """At 7168 sectors the 4096 live val/col sectors stay (0.875) and x keeps about the
    3072 sectors left of its 131,072 (2.3 %), at most, less as new val/col rows enter."""
    r = sim.simulate(7168, waves=3, warm=1)
    assert abs(r["valcol"] - 0.875) < 1e-12
    assert 0.015 < r["x"] < 3072 / 131072 + 0.002
