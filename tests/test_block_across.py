"""validation/block_across.py: one kernel's rows at every 1-D block, with the leases' spread.

Oracles by hand: the committed strided 32x1 row (blind blocks set) is dispatch-bound, so its
prediction is eq. (BD)'s 524288 blocks x 1.24 cycles / 1980 MHz = 328.34 us plus the launch
costs (E1)-(E3), 7.42 us, and (E6)'s late call, 4.06 us; Nsight Compute's duration is 318.528
us (1.20 cycles a block): the model's kernel is 9.8 us long there, which the row's event pair
hides. A lease folder's run time is the median of its repetitions' sums."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import block_across  # noqa: E402


def test_block_key():
    assert block_across.block_key("128x1") == (128, "128x1")
    assert block_across.block_key("32x8") == (256, "32x8")
    assert block_across.block_key("odd") == (0, "odd")
    shapes = ["1024x1", "32x1", "256x1", "128x1"]
    assert sorted(shapes, key=block_across.block_key) == ["32x1", "128x1", "256x1", "1024x1"]


def test_run_us():
    assert block_across.run_us({"all_total_ms": [0.1, 0.3, 0.2]}) == pytest.approx(200.0)
    assert block_across.run_us({}) is None


def _entry(kernel: str, config: str, times: list[float]) -> dict:
    return {"kernel": kernel, "config": config, "work_sizes": {"N": 16},
            "result": {"all_total_ms": times}}


def test_lease_times(tmp_path: Path):
    lease = tmp_path / "lease-a"
    lease.mkdir()
    (lease / "blind.json").write_text(json.dumps(
        {"port": "plain", "results": [_entry("k", "128x1", [0.110, 0.100, 0.120]),
                                      _entry("k", "256x1", [])]}))
    (lease / "restrict.json").write_text(json.dumps(
        {"port": "restrict", "results": [_entry("k", "128x1", [0.5])]}))
    (lease / "broken.json").write_text("{")
    (tmp_path / "set.json").write_text(json.dumps(   # a set's copy at the root: left out
        {"port": "plain", "results": [_entry("k", "128x1", [0.9])]}))
    got = block_across.lease_times(tmp_path)
    key = ("k", "128x1", json.dumps({"N": 16}, sort_keys=True))
    assert list(got) == [key]
    assert got[key] == [("lease-a", pytest.approx(110.0))]


def test_strided_across():
    rows = block_across.across(75.0, {"strided"})
    by = {(r["set"], r["block"]): r for r in rows}
    r32 = by[("blind/now-blocks", "32x1")]
    dispatch = 524288 * 1.24 / 1980.0                       # (BD), 328.34 us
    assert r32["model_k"] == pytest.approx(dispatch, abs=0.05)
    assert r32["pred_us"] == pytest.approx(dispatch + 7.42 + 4.06, abs=0.05)
    assert r32["ncu"] == pytest.approx(318.528) and r32["scaled"] == "d"
    assert r32["inside"] == pytest.approx(dispatch - 318.528, abs=0.05)   # +9.8 us
    # three leases timed the port at 32x1: the row's error over them
    assert r32["leases"] == 3
    assert r32["err_lo"] == pytest.approx(100 * (r32["pred_us"] - r32["lease_hi"])
                                          / r32["lease_hi"])
    assert r32["lease_lo"] <= r32["meas_us"] <= r32["lease_hi"]
    # 128x1: the kernel is short of ncu's (the DRAM bound, 86.7 us, against 90.08)
    r128 = by[("blind/now-blocks", "128x1")]
    assert r128["inside"] == pytest.approx(86.68 - 90.08, abs=0.05)
    blocks = [r["block"] for r in rows if r["set"] == "blind/now-blocks"]
    assert blocks == ["32x1", "128x1", "1024x1"]
