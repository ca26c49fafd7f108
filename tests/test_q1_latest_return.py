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
