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
from lease_drift import DEFAULT  # noqa: E402


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


def _launch_lease(folder: Path, block: str, event_ms: float, ncu_ns: list[str]) -> None:
    """A lease entry of one launch ``k`` at ``block`` and its ncu CSV (kernel ``k_kernel``)."""
    (folder / "ncu").mkdir(exist_ok=True)
    head = '"ID","Kernel Name","gpu__time_duration.sum","lts__t_requests_srcunit_tex_op_read.sum"'
    body = "".join(f'"{i}","k_kernel(float *)","{t}","1,000,000"\n' for i, t in enumerate(ncu_ns))
    (folder / "ncu" / f"k-{block}.csv").write_text("==PROF== x\n" + head + '\n"","","ns",""\n'
                                                   + body)
    launch = {"name": "k", "count": 1, "median_ms": event_ms}
    entry = {"kernel": "k", "config": block, "counters": {"csv": f"ncu/k-{block}.csv"},
             "result": {"total_ms": event_ms, "launches": [launch]}}
    (folder / f"{block}.json").write_text(json.dumps({"results": [entry]}))


def test_launch_rows_pair_events_with_ncu(tmp_path):
    """Event median beside ncu's median duration (us), each as a ratio to the 32x8 row; a
    port's ``k`` matches ncu's ``k_kernel``."""
    _launch_lease(tmp_path, "32x8", 0.050, ["40,000", "44,000", "42,000"])
    _launch_lease(tmp_path, "16x16", 0.060, ["46,200"])
    rows = {r["block"]: r for r in lease_drift.launch_rows(tmp_path, ("k",))}
    assert rows["32x8"]["event_us"] == pytest.approx(50.0)
    assert rows["32x8"]["ncu_us"] == pytest.approx(42.0)  # median of 40, 44, 42
    assert rows["16x16"]["event_ratio"] == pytest.approx(1.2)
    assert rows["16x16"]["ncu_ratio"] == pytest.approx(1.1)
    assert rows["16x16"]["counters"]["lts__t_requests_srcunit_tex_op_read.sum"] == 1e6


def test_committed_lease_2026_11_28_shapes():
    """The one-lease shapes (docs/validation.md, "The 2-D stencils at four shapes in one
    lease"): FDTD-2D k2 at 16x16 holds 18.9 us between its event pair and ncu's duration,
    three times what every other launch of the lease holds (1.7-6.2 us)."""
    folder = lease_drift.MEASURED / "h100-lease-2026-11-28" / "shapes"
    rows = {(r["launch"], r["block"]): r for r in lease_drift.launch_rows(folder, DEFAULT)}
    assert len(rows) == 20  # 2DCONV, FDTD-2D k1-k3, Jacobi-2D at four shapes
    gap = {k: r["event_us"] - r["ncu_us"] for k, r in rows.items()}
    assert gap[("fdtd_k2", "16x16")] == pytest.approx(18.9, abs=0.1)
    others = [g for key, g in gap.items()
              if key[0].startswith("fdtd") and key != ("fdtd_k2", "16x16")]
    assert max(others) < 6.5 and min(others) > 1.5
    assert rows[("conv2d", "16x16")]["event_ratio"] == pytest.approx(1.112, abs=0.001)
    assert rows[("conv2d", "16x16")]["ncu_ratio"] == pytest.approx(1.046, abs=0.001)
