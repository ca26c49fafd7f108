"""validation/lease_drift.py: one kernel's times by lease and block, and ncu's kernel time.

Oracles: two lease files written here (one row each, known dates and times) and a two-launch
CSV whose median is known; then the committed leases, whose 2DCONV and 3DCONV figures
docs/validation.md quotes (the 16x16 rows of 2026-11-27 beside that day's 32x8 ones)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import lease_drift  # noqa: E402


def _lease(path: Path, date: str, block: str, ms: float) -> None:
    row = {"kernel": "k", "config": block, "result": {"total_ms": ms, "sizes": {"N": 8}}}
    path.write_text(json.dumps({"date": date, "port": "plain", "results": [row]}))


def test_rows_by_lease_and_block(tmp_path):
    _lease(tmp_path / "a.json", "2026-11-26T12:02:33+00:00", "32x8", 1.0)
    _lease(tmp_path / "b.json", "2026-11-27T09:47:00+00:00", "16x16", 1.5)
    (tmp_path / "c.json").write_text(json.dumps({"results": []}))  # undated: skipped
    (tmp_path / "d.json").write_text("not json")
    table = lease_drift.lease_times(tmp_path, ("k",))
    assert dict(table[("k", "plain", "N=8")]) == {"2026-11-26T12:02": {"32x8": 1.0},
                                                  "2026-11-27T09:47": {"16x16": 1.5}}


def test_ncu_median_by_block(tmp_path):
    folder = tmp_path / "x-ncu"
    folder.mkdir()
    head = '"ID","Kernel Name","gpu__time_duration.sum"'
    (folder / "k-16x16.csv").write_text(
        "==PROF== noise\n" + head + '\n"","","ns"\n"0","k","3,000"\n"1","k","5,000"\n')
    (folder / "k-notes.csv").write_text(head + '\n"","","ns"\n"0","k","1"\n')
    out = lease_drift.ncu_by_block(tmp_path, "k")
    assert out == {"16x16": [("x-ncu", pytest.approx(4.0))]}


def test_committed_2dconv_and_3dconv_drift_by_day():
    """The 16x16 rows sit with their day's 32x8 rows, not with the reference lease's."""
    table = lease_drift.lease_times(lease_drift.MEASURED, ("2dconv", "3dconv"))
    conv2 = table[("2dconv", "plain", "NI=4096 NJ=4096")]
    assert conv2["2026-11-26T12:02"]["32x8"] == pytest.approx(0.0784)
    assert conv2["2026-11-27T06:32"]["32x8"] == pytest.approx(0.095136)
    assert conv2["2026-11-27T09:47"]["16x16"] == pytest.approx(0.094368)
    conv3 = table[("3dconv", "plain", "NI=256 NJ=256 NK=256")]
    assert conv3["2026-11-27T06:32"]["32x8"] == pytest.approx(1.60739)
    ncu = lease_drift.ncu_by_block(lease_drift.MEASURED, "3dconv")
    medians = {b: min(us for _, us in rows) for b, rows in ncu.items()}
    assert set(medians) >= {"16x16", "64x4", "32x8", "32x32"}
    assert max(medians.values()) / min(medians.values()) < 1.05  # the GPU's time: one figure
