"""Tests of cgpredict.fpga (SPEC §5): device files, the design space on traced kernels (every
chosen point within the budget, II = max of its bounds), trace -> work size scaling."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from cgpredict import fpga
from cgpredict.fpga import (
    FPGADeviceError,
    estimate_trace,
    list_fpga_devices,
    load_fpga_device,
    traced_source,
)

POLYBENCH = Path(__file__).resolve().parents[1] / "polybench_c"


def test_every_shipped_device_loads():
    names = list_fpga_devices()
    assert {"zc702", "zcu102"} <= set(names)
    for n in names:
        d = load_fpga_device(n)
        assert d.clock_mhz > 0 and set(fpga.OP_CLASSES) <= set(d.op)
    z = load_fpga_device("zc702")
    assert (z.clock_mhz, z.dram_bandwidth_gbps, z.dsp, z.bram36, z.lut, z.ff) == \
        (100.0, 4.0, 220, 140, 53200, 106400)


def _write(tmp_path, text):
    src = (fpga.bundled_fpga_dir() / "zc702.toml").read_text()
    p = tmp_path / "x.toml"
    p.write_text(text(src))
    return p


def test_device_errors_are_one_line(tmp_path):
    cases = [
        (lambda s: s.replace("clock_mhz = 100.0", "clock_mhz = 100.0\nclok = 3"), "unknown key 'clok'"),
        (lambda s: s.replace("dsp = 220 ", "dsp = -1 "), "expected a positive value"),
        (lambda s: s.replace("lut = 53200\n", ""), "missing required key 'lut'"),
        (lambda s: s.replace("fadd = {", "fadd2 = {"), "unknown operator class 'fadd2'"),
        (lambda s: s.replace("schema_version = 1", "schema_version = 9"), "schema_version"),
        (lambda s: s + "\n[extra]\na = 1\n", "unknown table [extra]"),
    ]
    for edit, msg in cases:
        with pytest.raises(FPGADeviceError) as exc:
            load_fpga_device(_write(tmp_path, edit))
        assert msg in str(exc.value) and "\n" not in str(exc.value)
    with pytest.raises(FPGADeviceError, match="known: .*zc702"):
        load_fpga_device("nosuchfpga")


@pytest.fixture(scope="module")
def mm_reports(compiler):
    out = {}
    with traced_source(POLYBENCH / "mm.c", {"N": 64}, {"N": 16}) as t:
        for dev in ("zc702", "zcu102"):
            out[dev] = estimate_trace(t.trace, load_fpga_device(dev), t.sizes, t.trace_sizes,
                                      t.work_sizes)
        out["same"] = estimate_trace(t.trace, load_fpga_device("zc702"))
    return out


def test_chosen_point_never_exceeds_the_budget(mm_reports):
    for dev in ("zc702", "zcu102"):
        d = load_fpga_device(dev)
        k = mm_reports[dev].kernels[0]
        assert k.fits and k.resources.fits(d.budget())
        for lp in k.loops:
            assert lp.resources.fits(d.usable())


def test_mm_loop_model(mm_reports):
    k = mm_reports["zc702"].kernels[0]
    assert k.name == "mm" and len(k.loops) == 1
    lp = k.loops[0]
    assert lp.trip_count == pytest.approx(64) and lp.entries == pytest.approx(64 * 64)
    assert lp.ii == max(lp.rec_mii, lp.port_mii, lp.dsp_mii)
    # the k loop accumulates through a 4-cycle fadd: recMII = 4 * unroll
    assert lp.rec_mii == 4 * lp.point.unroll
    # 64 x 64 x 64 floats: 48 KB fit in BRAM; the work is on chip
    assert all(a.on_chip for a in k.arrays)
    groups = math.ceil(lp.entries / lp.point.jam)
    assert lp.compute_cycles == pytest.approx(
        groups * ((math.ceil(lp.trip_count / lp.point.unroll) - 1) * lp.ii + lp.depth))
    assert k.time_ms == pytest.approx(lp.time_ms + k.other_cycles / 1e5 + k.transfer_ms)


def test_scaling_from_trace_to_work_size(mm_reports):
    small = mm_reports["same"].kernels[0].loops[0]  # at the trace size N=16
    big = mm_reports["zc702"].kernels[0].loops[0]  # at N=64
    assert small.trip_count == pytest.approx(16) and small.entries == pytest.approx(256)
    assert big.entries / small.entries == pytest.approx(16)


def test_explore_keeps_only_fitting_points(mm_reports):
    k = mm_reports["zc702"].kernels[0]
    assert k.loops[0].points_explored > 10


def test_bigger_device_is_not_slower(mm_reports):
    assert mm_reports["zcu102"].total_ms <= mm_reports["zc702"].total_ms
