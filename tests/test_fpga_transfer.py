"""Tile transfers through the AXI ports and the DDR (cgpredict/fpga/transfer.py, eqs. T2a-T2c):
burst efficiency and turnaround derived by hand from the published UG585 figures."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from cgpredict.fpga import load_fpga_device
from cgpredict.fpga.affine import AffineAccess, AffineNest
from cgpredict.fpga.device import FPGADeviceError
from cgpredict.fpga.estimate import estimate_trace, traced_source
from cgpredict.fpga.tiling import _buffers, _geometry, _shapes
from cgpredict.fpga.transfer import (
    Flow,
    burst_efficiency,
    ddr_ns,
    dram_costs,
    port_cycles,
    row_miss_ns,
    transfer_cycles,
)

ZC702 = load_fpga_device("zc702")
T_REF = 128 / 4.2  # ns: one 16-beat 64-bit burst at the UG585 System #1 DDR peak (4.2 GB/s)


def test_row_miss_costs_by_hand():
    # UG585 Table 22-5: reads 97% sequential / 92% random, writes 90 / 87, mixed 87 / 79
    assert row_miss_ns(ZC702, "read") == pytest.approx(T_REF * (1 / 0.92 - 1 / 0.97))  # 1.71
    assert row_miss_ns(ZC702, "write") == pytest.approx(T_REF * (1 / 0.87 - 1 / 0.90))  # 1.17
    assert row_miss_ns(ZC702, "mixed") == pytest.approx(T_REF * (1 / 0.79 - 1 / 0.87))  # 3.55
    assert 1.70 < row_miss_ns(ZC702, "read") < 1.71


@pytest.mark.parametrize(
    "run, way, eff, miss",
    [
        (32, "read", 0.97, T_REF * (1 / 0.92 - 1 / 0.97)),
        (128, "read", 0.97, T_REF * (1 / 0.92 - 1 / 0.97)),
        (8192, "read", 0.97, T_REF * (1 / 0.92 - 1 / 0.97)),
        (32, "mixed", 0.87, T_REF * (1 / 0.79 - 1 / 0.87)),
        (512, "mixed", 0.87, T_REF * (1 / 0.79 - 1 / 0.87)),
        (64, "write", 0.90, T_REF * (1 / 0.87 - 1 / 0.90)),
    ],
)
def test_burst_efficiency_by_hand(run, way, eff, miss):
    # a run of `run` bytes takes run / 4 GB/s at the ZC702's peak; at the controller's
    # efficiency plus one row miss: share = t / (t / e + t_miss)
    t = run / 4.0
    assert burst_efficiency(run, ZC702, way) == pytest.approx(t / (t / eff + miss))


def test_burst_efficiency_figures():
    # 32-byte bursts: 8 ns / (8 / 0.97 + 1.71) = 80% read-only, 8 / (8 / 0.87 + 3.55) = 63%
    # read and written back; long runs approach the sequential 97% / 87%
    assert round(burst_efficiency(32, ZC702, "read"), 3) == 0.804
    assert round(burst_efficiency(32, ZC702, "mixed"), 3) == 0.628
    assert 0.968 < burst_efficiency(1 << 20, ZC702, "read") < 0.97
    effs = [burst_efficiency(b, ZC702, "read") for b in (32, 64, 128, 512, 4096)]
    assert effs == sorted(effs)  # longer bursts are never worse


@pytest.mark.parametrize(
    "flow, eff",
    [
        (Flow(read_bytes=128e6, read_runs=1), 0.97),  # reads, sequential
        (Flow(read_bytes=128e6, read_runs=1e6), 0.92),  # reads, a row per 128-byte burst
        (Flow(write_bytes=128e6, write_runs=1), 0.90),
        (Flow(write_bytes=128e6, write_runs=1e6), 0.87),
        (Flow(read_bytes=64e6, write_bytes=64e6, read_runs=1, write_runs=1), 0.87),
        (Flow(read_bytes=64e6, write_bytes=64e6, read_runs=5e5, write_runs=5e5), 0.79),
    ],
)
def test_the_six_ug585_rows_are_reproduced_at_the_reference_system(flow, eff):
    # the model on UG585's System #1 (DDR peak 4.2 GB/s, 128-byte bursts, overlapped traffic)
    ref = dataclasses.replace(ZC702, dram_bandwidth_gbps=4.2)
    ideal = flow.bytes / 4.2  # ns at the peak
    assert ideal / ddr_ns(flow, dram_costs(ref), True) == pytest.approx(eff, abs=2e-5)


def test_read_write_back_shares_the_ddr_read_only_does_not():
    # a 2048 x 8 column strip of floats (2048 runs of 32 bytes) filled 256 times
    n = 256 * 2048 * 32
    runs = 256 * 2048
    ro = Flow(read_bytes=n, read_runs=runs)
    rw = Flow(read_bytes=n, write_bytes=n, read_runs=runs, write_runs=runs)
    # read-only: ports n / 32 cycles; DDR n / 4 GB/s at 80.4% -> 32.1 B/cycle: the ports bind
    assert port_cycles(ro, ZC702, True) == n / 32
    ro_ddr = (n / 4 / 0.97 + runs * row_miss_ns(ZC702, "read")) / 10  # 10 ns per cycle
    assert transfer_cycles(ro, ZC702, True) == (pytest.approx(n / 32), "AXI ports")
    assert ro_ddr < n / 32
    # read and written back, overlapped: the read and write channels of the ports run at
    # once (n / 32 cycles), the DDR carries both: 2n at 62.8% of 40 B/cycle
    assert port_cycles(rw, ZC702, True) == n / 32
    rw_ddr = (2 * n / 4 / 0.87 + 2 * runs * row_miss_ns(ZC702, "mixed")) / 10
    cyc, limit = transfer_cycles(rw, ZC702, True)
    assert limit == "DDR" and cyc == pytest.approx(rw_ddr)
    assert 2 * n / cyc == pytest.approx(40 * 0.6278, rel=1e-3)
    # phased (single buffer): no turnaround, reads then writes, ports carry 2n one way
    cyc1, _ = transfer_cycles(rw, ZC702, False)
    phased = (n / 4 / 0.97 + n / 4 / 0.90
              + runs * (row_miss_ns(ZC702, "read") + row_miss_ns(ZC702, "write"))) / 10
    assert cyc1 == pytest.approx(max(2 * n / 32, phased))


def _gemver_k1_nest() -> AffineNest:
    # A[i][j] += u1[i] * v1[j] + u2[i] * v2[j], traced at N = 128 (rows of 512 bytes)
    a = (512, 4)
    return AffineNest(
        (0, 1),
        (
            AffineAccess(0, "A", "load", 4, 0, a),
            AffineAccess(1, "A", "store", 4, 0, a),
            AffineAccess(2, "u1", "load", 4, 100000, (4, 0)),
            AffineAccess(3, "v1", "load", 4, 200000, (0, 4)),
        ),
    )


def test_gemver_column_strips_by_hand():
    # 2048 x 8 strips of A at N = 2048: 256 strips, each 2048 rows of 32 bytes, read and
    # written back. Before: 32 MB at the ports' 32 B/cycle = 10.49 ms. Now: DDR-bound.
    tiles, counts, trace = (2048, 8), (1, 256), (128.0, 128.0)
    bufs = {b.array: b for b in _buffers(_gemver_k1_nest(), tiles, counts, ZC702, {}, True,
                                         trace)}
    a = bufs["A"]
    assert a.row_bytes == 32 and a.run_bytes == 32 and a.fills == 256
    assert a.traffic_bytes == 2 * 2048 * 2048 * 4
    assert a.ddr_efficiency == pytest.approx(burst_efficiency(32, ZC702, "mixed"))
    g = next(_geometry(sh, tiles, counts, 32) for sh in _shapes(_gemver_k1_nest(), trace)
             if sh.name == "A")
    cyc, limit = transfer_cycles(g.flow(g.fills), ZC702, True)
    assert limit == "DDR"
    # 32 MB at 25.1 B/cycle = 13.4 ms, 1.27x the 4-port rate
    assert cyc / 1e5 == pytest.approx(2 * 2048 * 2048 * 4 / (40 * 0.6278) / 1e5, rel=1e-3)
    assert cyc / (2 * 2048 * 2048 * 4 / 32) == pytest.approx(32 / (40 * 0.6278), rel=1e-3)


def test_row_strips_are_one_sequential_run_per_fill():
    # 8 x 2048 row strips: every tile row spans the array row, so a fill is one 64 KB run
    tiles, counts, trace = (8, 2048), (256, 1), (128.0, 128.0)
    a = {b.array: b for b in _buffers(_gemver_k1_nest(), tiles, counts, ZC702, {}, True,
                                      trace)}["A"]
    assert a.row_bytes == 8192 and a.run_bytes == 8 * 8192
    assert a.ddr_efficiency == pytest.approx(burst_efficiency(8 * 8192, ZC702, "mixed"))
    assert a.ddr_efficiency > 0.868
    # a tile narrower than the array (j tiled) does not merge rows; without the trace trips
    # (unknown array extent) nothing merges
    b = {x.array: x for x in _buffers(_gemver_k1_nest(), (8, 1024), (256, 2), ZC702, {}, True,
                                      trace)}["A"]
    assert b.run_bytes == 4096
    c = {x.array: x for x in _buffers(_gemver_k1_nest(), tiles, counts, ZC702, {}, True)}["A"]
    assert c.run_bytes == 8192


POLYBENCH = Path(__file__).resolve().parents[1] / "polybench_c"


def test_gemver_exploration_prefers_long_bursts(compiler):
    with traced_source(POLYBENCH / "gemver.c", {"N": 2048}, {"N": 128}) as t:
        rep = estimate_trace(t.trace, ZC702, t.sizes, t.trace_sizes, t.work_sizes)
    k1 = next(k for k in rep.kernels if k.name == "gemver_k1")
    assert k1.design == "tiled", k1.tiling_note
    tt = k1.tiled
    a = next(b for b in tt.buffers if b.array == "A")
    # not the 2048 x 8 strips of 32-byte bursts: rows of at least 512 bytes, >= 85% of the
    # DDR peak read and written back at once
    assert a.row_bytes >= 512 and a.ddr_efficiency >= 0.85
    # A's 32 MB cannot move faster than 87% of the 4 GB/s DDR (reads and writes overlapped)
    assert tt.transfer_cycles >= 2 * 2048 * 2048 * 4 / (40 * 0.87)
    assert tt.bytes_per_cycle == pytest.approx(tt.transfer_bytes / tt.transfer_cycles)
    # and it is faster than the strips it replaced would be now (13.4 ms of transfers)
    assert k1.time_ms < 2 * 2048 * 2048 * 4 / (40 * 0.6278) / 1e5
    assert math.isfinite(k1.time_ms)


def test_dram_table_errors_are_one_line(tmp_path):
    from cgpredict.fpga import bundled_fpga_dir

    src = (bundled_fpga_dir() / "zc702.toml").read_text()
    cases = [
        (src.replace("efficiency_read = 0.97", "efficiency_read = 1.5"), "expected 0 < value <= 1"),
        (src.replace("efficiency_read_random = 0.92", "efficiency_read_random = 0.99"),
         "efficiency_read_random (0.99) exceeds efficiency_read (0.97)"),
        (src.replace("reference_gbps = 4.2", ""), "missing required key 'reference_gbps'"),
        (src.replace("[dram]", "[dramm]"), "unknown table [dramm]"),
    ]
    for text, msg in cases:
        p = tmp_path / "x.toml"
        p.write_text(text)
        with pytest.raises(FPGADeviceError) as exc:
            load_fpga_device(p)
        assert msg in str(exc.value) and "\n" not in str(exc.value)
