"""validation/retire_gap.py: a launch's warps a block, waves and slot peak from ncu's cells.

Oracles by hand: the H100 (132 SMs, 64 warps and 32 blocks an SM) runs a 1024-thread block
as 32 warps, two blocks an SM, so strided's 16384 blocks are 16384 / (2 x 132) = 62.06 waves;
a 128-thread block (4 warps) is held to 16 an SM by the 64 warps, 131072 blocks 62.06 waves;
a 32-thread block to 32 an SM by the block limit (not 64 by the warps)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import retire_gap  # noqa: E402

from cgpredict.devices import load_device  # noqa: E402


def test_shape_from_cells():
    h100 = load_device("h100")
    cells = {"Block Size": "(1024, 1, 1)", "Grid Size": "(16384, 1, 1)"}
    assert retire_gap.launch_shape({}, cells, h100) == pytest.approx((32, 16384 / 264, 100.0))
    cells = {"Block Size": "(128, 1, 1)", "Grid Size": "(131072, 1, 1)"}
    assert retire_gap.launch_shape({}, cells, h100)[:2] == pytest.approx((4, 131072 / 2112))
    cells = {"Block Size": "(32, 1, 1)", "Grid Size": "(524288, 1, 1)"}
    assert retire_gap.launch_shape({}, cells, h100)[:2] == pytest.approx((1, 524288 / 4224))


def test_shape_prefers_ncu_figures():
    h100 = load_device("h100")
    m = {"launch__block_size": 256.0, "launch__waves_per_multiprocessor": 15.52,
         "sm__maximum_warps_per_active_cycle_pct": 62.5}
    cells = {"Block Size": "(1024, 1, 1)", "Grid Size": "(1, 1, 1)"}
    assert retire_gap.launch_shape(m, cells, h100) == (8, 15.52, 62.5)
    assert retire_gap._dims("(64, 64, 4)") == 16384 and retire_gap._dims("n/a") == 0.0
