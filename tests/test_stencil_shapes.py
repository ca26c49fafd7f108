"""validation/stencil_shapes.py: the wave decomposition of the 2-D stencils' ncu counters.

Oracle: a hand-computed launch (one wave of 264 blocks of 1024 threads on 132 SMs, 1 us at
1.98 GHz, 75 % warps active, two 128-B DRAM lines read a warp) and a two-launch CSV whose
medians are known; the bundled counters give the figures docs/validation.md quotes."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import stencil_shapes  # noqa: E402

WARPS = 264 * 1024 / 32


def _medians(**over: float) -> dict[str, float]:
    base = {"gpu__time_duration.sum": 1000.0, "dram__bytes_read.sum": WARPS * 256,
            "dram__bytes_write.sum": 0.0, "lts__t_sectors.sum": 1.0,
            "lts__t_sector_hit_rate.pct": 50.0, "l1tex__t_sector_hit_rate.pct": 50.0,
            "sm__warps_active.avg.pct_of_peak_sustained_active": 75.0,
            "launch__grid_size": 264.0, "launch__block_size": 1024.0,
            "launch__occupancy_limit_warps": 2.0, "launch__occupancy_limit_registers": 2.0,
            "launch__occupancy_limit_blocks": 32.0}
    return base | over


def test_hand_computed_wave():
    d = stencil_shapes.decompose(_medians())
    assert d["waves"] == pytest.approx(1.0)
    assert d["T_wave"] == pytest.approx(1980.0)  # 1 us x 1.98 GHz
    assert d["m"] == pytest.approx(1485.0) and d["gap"] == pytest.approx(495.0)
    stream = WARPS * 256 / 3097e9 * 1.98e9  # 1382.7 cycles
    assert d["resid"] == pytest.approx(1980.0 - stream)
    assert d["bound"] == pytest.approx((stream + 685.1) / 1980.0)
    assert d["d"] == pytest.approx(2.0)
    assert d["R1"] == pytest.approx(2.0697 * 0.47 * 685.1 * math.sqrt(2.0), rel=1e-4)


def test_csv_medians(tmp_path):
    metrics = stencil_shapes.METRICS
    head = ["ID", "Kernel Name", *metrics]
    rows = [head, ["", "", *["x"] * len(metrics)]]
    for i, t in enumerate((900.0, 1000.0, 2000.0)):
        vals = _medians(**{"gpu__time_duration.sum": t})
        rows.append([str(i), "k(int)", *[f'"{vals[m]:,.1f}"' for m in metrics]])
    text = "==PROF== noise\n" + "\n".join(",".join(f'"{c}"' if not c.startswith('"') else c
                                                   for c in r) for r in rows)
    path = tmp_path / "k-32x32.csv"
    path.write_text(text)
    got = stencil_shapes.read_rows(path)
    assert list(got) == ["k"]
    assert got["k"]["gpu__time_duration.sum"] == pytest.approx(1000.0)


def test_bundled_counters_gap_follows_block_shape():
    """Every fdtd2d/jacobi2d/2dconv pair: the 32x32 wave idles longer than the 32x8 one,
    its warps live about as long (within 11 %; longer at 32x32 in 7 of the 8 pairs), and
    it reads the same DRAM bytes (0.1 %)."""
    session = stencil_shapes.SESSION
    pairs = [("measured-ncu", "fdtd2d"), ("measured-ncu", "2dconv"),
             ("measured-user-ncu", "jacobi2d"), ("sizes/fdtd2d-2048-ncu", "fdtd2d")]
    for folder, name in pairs:
        big = stencil_shapes.read_rows(session / folder / f"{name}-32x32.csv")
        small = stencil_shapes.read_rows(session / folder / f"{name}-32x8.csv")
        for kernel in big:
            b = stencil_shapes.decompose(big[kernel])
            s = stencil_shapes.decompose(small[kernel])
            assert b["gap"] > s["gap"] and b["T_wave"] > s["T_wave"]
            assert b["m"] == pytest.approx(s["m"], rel=0.11)
            assert b["read_MB"] == pytest.approx(s["read_MB"], rel=0.001)


def test_newer_ncu_cells():
    """Newer ncu writes a launch__ figure with its instances ('65,536 (0: 65,536)'): the
    leading number is the figure, a plain cell reads as before."""
    assert stencil_shapes._number("65,536 (0: 65,536)") == 65536.0
    assert stencil_shapes._number("1,024 (0: 1,024)") == 1024.0
    assert stencil_shapes._number("299,456") == 299456.0


def test_bilinear_gap_is_a_whole_wait():
    """The blind bilinear on the lease of 2026-11-28 (docs/validation.md, round 14, t6): the
    32x32 wave idles 650 cycles past its warps' mean life and the 32x8 one 474, as the d = 1
    stencils do, twice (R1) at its d = 0.25 (32 DRAM bytes read a warp); the 32x32 warps also
    live 16 % longer, where the stencils' lives differ by under 11 %."""
    folder = ROOT / "validation" / "measured" / "h100-lease-2026-11-28" / "blind" / "plain-ncu"
    big, small = (stencil_shapes.decompose(
        stencil_shapes.read_rows(folder / f"bilinear-{shape}.csv")["bilinear"])
        for shape in ("32x32", "32x8"))
    assert big["d"] == pytest.approx(0.25, rel=0.01)
    assert small["d"] == pytest.approx(0.25, rel=0.01)
    assert big["gap"] == pytest.approx(650, rel=0.01)
    assert small["gap"] == pytest.approx(474, rel=0.01)
    assert big["gap"] > 1.9 * big["R1"] and small["gap"] > 2.0 * small["R1"]
    one_wait = 2.0697 * 0.47 * 685.1  # (R1) at d = 1, W = 32
    assert big["gap"] == pytest.approx(one_wait, rel=0.03)
    assert big["m"] / small["m"] == pytest.approx(1.157, rel=0.01)
    assert big["read_MB"] == pytest.approx(small["read_MB"], rel=0.001)
