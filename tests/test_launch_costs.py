"""validation/launch_costs.py: the H100's launch costs from two timers of the same kernels.

Oracle: synthetic host - events differences made from known costs (a round trip less the
queued start per launch, a module load once) are recovered exactly; the bundled files give
what h100.toml carries."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import launch_costs  # noqa: E402


def test_known_costs_are_recovered():
    sync, gap, first = 8.0, 3.0, 70.0
    rows = [("k", "b", "s", n, n * (sync - gap) + first) for n in (1, 1, 2, 1, 300, 300)]
    got_sync, got_first = launch_costs.launch_costs(rows, gap)
    assert got_sync == pytest.approx(sync) and got_first == pytest.approx(first)


def test_the_device_file_carries_what_the_measurements_give():
    dev = tomllib.loads((ROOT / "cgpredict/devices/h100.toml").read_text())["timing"]
    assert dev["launch_gap_us"] == 3.07  # measured: launch_state.cu's queued empty kernel
    sync, first = launch_costs.launch_costs(launch_costs.pairs(), dev["launch_gap_us"])
    assert dev["launch_sync_us"] == pytest.approx(sync, abs=0.01)
    assert dev["first_launch_us"] == pytest.approx(first, abs=0.1)
