"""The tiled FPGA design (cgpredict/fpga/tiling.py, affine.py, hls.py): hand-derived buffer
sizes, fills, traffic, BRAM counts and cycle counts."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from cgpredict.fpga import load_fpga_device
from cgpredict.fpga.affine import AffineAccess, AffineNest, affine_nest
from cgpredict.fpga.estimate import estimate_trace, traced_source
from cgpredict.fpga.hls import loop_variable
from cgpredict.fpga.tiling import _buffers

ZC702 = load_fpga_device("zc702")


def _mm_nest() -> AffineNest:
    # C[i][j] = sum_k A[i][k] * B[k][j], 64 x 64 floats: rows of 256 bytes
    return AffineNest(
        (0, 1, 2),
        (
            AffineAccess(0, "C", "store", 4, 0, (256, 4, 0)),
            AffineAccess(1, "A", "load", 4, 100000, (256, 0, 4)),
            AffineAccess(2, "B", "load", 4, 200000, (0, 4, 256)),
        ),
    )


def test_mm_buffers_fills_and_traffic_by_hand():
    tiles, counts = (16, 16, 32), (4, 4, 2)
    bufs = {b.array: b for b in _buffers(_mm_nest(), tiles, counts, ZC702, {}, False)}
    a, b, c = bufs["A"], bufs["B"], bufs["C"]
    # A tile: 16 rows (i) x 32 columns (k) = 2 KB; refilled per (ii, jj, kk): 4*4*2 = 32 fills
    assert a.dims == (16, 32) and a.bytes == 2048 and a.fills == 32
    assert a.row_bytes == 128 and a.traffic_bytes == 32 * 2048
    # B tile: 32 rows (k) x 16 columns (j); 64-byte bursts
    assert b.dims == (32, 16) and b.bytes == 2048 and b.fills == 32 and b.row_bytes == 64
    # C tile: 16 x 16, kept across kk: one fill per (ii, jj), written back only
    assert c.dims == (16, 16) and c.fills == 16 and c.traffic_bytes == 16 * 1024
    assert not c.read and c.written
    # one 2 KB buffer: one BRAM36 (4 KB); a 1 KB one as well
    assert a.bram36 == 1 and c.bram36 == 1 and a.lut == 0


def test_partitioned_and_double_buffers_by_hand():
    tiles, counts = (16, 16, 32), (4, 4, 2)
    bufs = {b.array: b for b in _buffers(_mm_nest(), tiles, counts, ZC702, {"A": 8}, True)}
    a = bufs["A"]
    # 8 banks of 256 bytes: LUT RAM (<= 512 B), 256 * 8 / 64 = 32 LUT per bank, x2 ping-pong
    assert a.partition == 8 and a.partition_dim == 2  # the k dimension
    assert a.bram36 == 0 and a.lut == 2 * 8 * 32 and a.double


def test_short_rows_round_up_to_the_dram_burst():
    # B tile with 4-element rows (16 bytes): every row moves a 32-byte DDR burst
    tiles, counts = (4, 4, 8), (16, 16, 8)
    b = {x.array: x for x in _buffers(_mm_nest(), tiles, counts, ZC702, {}, False)}["B"]
    assert b.row_bytes == 16 and b.traffic_bytes == b.fills * 8 * 32


def test_stencil_halo():
    # B[i][j] = A[i-1][j] + A[i+1][j] + A[i][j-1] + A[i][j+1]  (rows of 64 floats)
    accs = tuple(
        AffineAccess(k, "A", "load", 4, 10000 + off * 4, (256, 4))
        for k, off in enumerate((-64, 64, -1, 1))
    )
    nest = AffineNest((0, 1), accs)
    (a,) = _buffers(nest, (8, 16), (8, 4), ZC702, {}, False)
    # spread of 2*64 + 0 elements: two extra rows... and the column offsets +-1 are inside
    # the same spread (64 + 1 - (-64 - 1) = 130 elements = 2 rows + 2 columns)
    assert a.dims == (8 + 2, 16 + 2)


def test_affine_nest_from_markers():
    # two marked loops (ids 5, 6) and an unmarked innermost one; one access
    # addr = 1000 + 400 * i + 40 * j + 4 * k, i < 2, j < 2, k < 3
    ev = []
    mark = lambda lid, idx: (0xFFFF << 48) | (lid << 32) | idx
    for i in range(2):
        ev.append(mark(5, i))
        for j in range(2):
            ev.append(mark(6, j))
            for k in range(3):
                ev.append((3 << 48) | (1000 + 400 * i + 40 * j + 4 * k))
    ev = np.array(ev, dtype=np.uint64)

    class M:
        id, base, kind, bytes, line = 3, "A", "load", 4, 7

    nest = affine_nest(ev, (5, 6, 9), (True, True, False), [M()], {3: 2})
    assert nest.problem == ""
    (a,) = nest.accesses
    assert a.coef == (400, 40, 4) and a.base == 1000


def test_non_affine_access_is_named():
    ev = []
    mark = lambda lid, idx: (0xFFFF << 48) | (lid << 32) | idx
    for i in range(6):
        ev.append(mark(5, i))
        ev.append((3 << 48) | (1000 + 4 * (i * i)))
    ev = np.array(ev, dtype=np.uint64)

    class M:
        id, base, kind, bytes, line = 3, "A", "load", 4, 12

    nest = affine_nest(ev, (5,), (True,), [M()], {3: 0})
    assert "line 12" in nest.problem and "not an affine" in nest.problem


def test_loop_variable():
    assert loop_variable("  for (int i = 0; i < N; i++)", "x") == "i"
    assert loop_variable("for (jj=0; jj<N; jj+=4) {", "x") == "jj"
    assert loop_variable("while (1)", "l0") == "l0"


POLYBENCH = Path(__file__).resolve().parents[1] / "polybench_c"


@pytest.fixture(scope="module")
def mvt_report(compiler):
    with traced_source(POLYBENCH / "mvt.c", {"N": 2048}, {"N": 256}) as t:
        return estimate_trace(t.trace, ZC702, t.sizes, t.trace_sizes, t.work_sizes)


def test_mvt_tiled_design_by_hand(mvt_report):
    for k in mvt_report.kernels:
        assert k.design == "tiled", k.tiling_note
        t = k.tiled
        assert t.trips == (2048, 2048)
        # x[i] += A[i][j] * y[j]: the recurrence is one 4-cycle fadd (adder tree for U > 1)
        assert t.rec_mii == 4 and t.ii == max(t.rec_mii, t.port_mii, t.dsp_mii)
        a = next(b for b in t.buffers if b.array == "A")
        # A is read exactly once whatever the tiles (2048^2 floats; bursts >= 32 bytes)
        assert a.fills * a.bytes == 2048 * 2048 * 4 == a.traffic_bytes
        # eq. T4 (perfect nest? x[i] is loaded/stored around the j loop: not perfect)
        ti, tj = t.tiles
        n_tiles = math.ceil(2048 / ti) * math.ceil(2048 / tj)
        it = math.ceil(tj / t.unroll)
        assert t.compute_cycles == n_tiles * ti * ((it - 1) * t.ii + t.depth)
        # eq. T2 / T5: A and y are read in long bursts (DDR read-only at 0.97 x 40 B/cycle
        # is faster than the ports), x written back: the ports' read channels, 32 B/cycle
        way = lambda b: b.traffic_bytes / (int(b.read) + int(b.written))
        reads = sum(way(b) for b in t.buffers if b.read)
        writes = sum(way(b) for b in t.buffers if b.written)
        assert t.transfer_limit == "AXI ports" and t.double_buffer
        assert t.transfer_cycles == pytest.approx(max(reads, writes) / 32)
        first = max(sum(way(b) / b.fills for b in t.buffers if b.read),
                    sum(way(b) / b.fills for b in t.buffers if b.written)) / 32
        cyc = (
            max(t.compute_cycles, t.transfer_cycles) + first
            if t.double_buffer
            else t.compute_cycles + t.transfer_cycles
        )
        assert t.time_ms == pytest.approx(cyc / 1e5)
        assert t.resources.fits(ZC702.usable())
        assert t.points_evaluated > 0 and 1 <= t.points_pareto <= t.points_evaluated
        assert any("#pragma HLS pipeline II=" in p for p in t.pragmas)
        assert any("tile loop" in s for s in t.structure)
    # both kernels move the 16 MB matrix once at 3.2 GB/s: at least 5.24 ms each
    assert mvt_report.total_ms >= 2 * 2048 * 2048 * 4 / 3.2e9 * 1e3


_INDIRECT = """
#include <stdio.h>
#ifndef N
#define N 256
#endif
#pragma cgp trace N=64
static float A[N][N]; static int idx[N]; static float s[N];
int main(void) {
  for (int i = 0; i < N; i++) { idx[i] = (i * 7) % N; for (int j = 0; j < N; j++) A[i][j] = i + j; }
#pragma cgp kernel ind grid=1
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      s[i] += A[idx[i]][j];
  printf("%f\\n", s[3]);
  return 0;
}
"""

_RECURSIVE = """
#include <stdio.h>
#ifndef N
#define N 256
#endif
#pragma cgp trace N=64
static float A[N];
__attribute__((noinline)) static float f(int n) { return n <= 0 ? 0.0f : A[n % N] + f(n - 1); }
int main(void) {
  for (int i = 0; i < N; i++) A[i] = i;
  float s = 0;
#pragma cgp kernel r grid=1
  for (int i = 0; i < N; i++)
    s += f(i % 8);
  printf("%f\\n", s);
  return 0;
}
"""


def test_non_affine_kernel_is_streamed_with_the_reason(compiler, tmp_path):
    from click.testing import CliRunner

    from cgpredict.cli import main

    src = tmp_path / "indirect.c"
    src.write_text(_INDIRECT)
    r = CliRunner().invoke(main, ["fpga", str(src)])
    assert r.exit_code == 0, r.output
    assert "not tiled: the access at line 13 (A) is not an affine function" in r.output


def test_recursive_kernel_is_one_line_exit_2(compiler, tmp_path):
    from click.testing import CliRunner

    from cgpredict.cli import main

    src = tmp_path / "rec.c"
    src.write_text(_RECURSIVE)
    r = CliRunner().invoke(main, ["fpga", str(src)])
    assert r.exit_code == 2
    lines = [x for x in r.output.splitlines() if x.strip()]
    assert len(lines) == 1 and "f() is recursive" in lines[0] and "line 8" in lines[0]
    assert "Traceback" not in r.output


def test_compare_states_ratio_bounds_and_flip(compiler):
    from cgpredict.compare import compare_source

    c = compare_source(POLYBENCH / "mvt.c", work={"N": 2048}, trace_sizes={"N": 256})
    fpga = {k.name: k for k in c.fpga.kernels}
    for r in c.kernels:
        lo, hi = sorted((r.gpu_ms, r.fpga_ms))
        assert r.ratio == pytest.approx(hi / lo)
        assert f"faster by {r.ratio:.1f}x" in r.reasons[0]
        # the FPGA side names what bounds its estimate (here the fadd recurrence or the
        # transfers: the two are within a few per cent of each other at this size)
        assert fpga[r.name].bound in ("recurrence", "transfers")
        assert f"FPGA, {fpga[r.name].bound}-bound" in r.reasons[0]
        assert r.reasons[1].startswith("what would flip it: ")
    assert any(x.startswith("bounds of the heaviest kernel") for x in c.reasons)
    assert any(x.startswith("what would flip it: ") for x in c.reasons)


# ---- operator instances, the DSP cap on parallel multiply-adds (issue #13) ----------------


def test_operator_instances_by_hand():
    from cgpredict.fpga.explore import instances

    # 32 unrolled copies of one fmul and one fadd at II 4: the copies start in the same
    # cycle, so none shares: 32 + 32 instances
    assert instances({"fmul": {32: 1}, "fadd": {32: 1}}, 4) == {"fmul": 32, "fadd": 32}
    # two distinct fmuls per iteration (alpha * A * B), 32 copies each, II 4: the two take
    # turns on one core per copy: 32 * ceil(2 / 4) = 32
    assert instances({"fmul": {32: 2}}, 4) == {"fmul": 32}
    # eight distinct fmuls, not unrolled, II 4: ceil(8 / 4) = 2; II 1: 8
    assert instances({"fmul": {1: 8}}, 4) == {"fmul": 2}
    assert instances({"fmul": {1: 8}}, 1) == {"fmul": 8}
    # a loop-invariant load (1 copy) next to an unrolled one (16 copies), II 2
    assert instances({"load": {1: 1, 16: 1}}, 2) == {"load": 1 + 16}


def test_dsp_mii_cannot_share_copies():
    from cgpredict.fpga.explore import _dsp_mii

    # 64 lanes of fmul (3 DSP48E1) + fadd (2): 320 DSPs at any II; over the 176 usable, so
    # the point is rejected (the returned II, 1, still needs 320)
    uses = {"fmul": {64: 1}, "fadd": {64: 1}}
    assert _dsp_mii(uses, ZC702, 176) == 1
    # eight distinct fmuls (24 DSPs at II 1) under a budget of 6: ceil(8 / II) * 3 <= 6 -> 4
    assert _dsp_mii({"fmul": {1: 8}}, ZC702, 6) == 4


@pytest.fixture(scope="module")
def mm_reports(compiler):
    out = {}
    for name, work, trace in (
        ("mm.c", {"N": 1024}, {"N": 64}),
        ("gemm.c", {"NI": 1024, "NJ": 1024, "NK": 1024}, {"NI": 64, "NJ": 64, "NK": 64}),
    ):
        with traced_source(POLYBENCH / name, work, trace) as t:
            out[name] = estimate_trace(t.trace, ZC702, t.sizes, t.trace_sizes, t.work_sizes)
    return out


def test_mm_unroll_is_capped_by_the_dsps(mm_reports):
    (k,) = mm_reports["mm.c"].kernels
    assert k.design == "tiled", k.tiling_note
    t = k.tiled
    fmul, fadd = ZC702.op["fmul"].dsp, ZC702.op["fadd"].dsp
    assert (fmul, fadd) == (3, 2)  # Vivado HLS fmul max_dsp, fadd full_dsp on 7-series
    lane = fmul + fadd  # one multiply-add lane: 5 DSP48E1
    usable = ZC702.usable().dsp  # 0.8 x 220 = 176
    # the largest power-of-two unroll whose lanes fit: 32 x 5 = 160 <= 176 < 64 x 5
    assert t.unroll * lane <= usable < 2 * t.unroll * lane and t.unroll == 32
    assert t.resources.dsp == t.unroll * lane
    # the fadd recurrence sets II (the adder tree sums the 32 products, one add carried)
    assert t.ii == t.rec_mii == ZC702.op["fadd"].latency_cycles == 4
    # at most U / II = 8 multiply-adds per cycle; the estimate stays below that peak
    macs = 1024**3
    assert t.compute_cycles >= macs / (t.unroll / t.ii)


def test_mm_cycles_ports_and_depth_by_hand(mm_reports):
    t = mm_reports["mm.c"].kernels[0].tiled
    ti, tj, tk = t.tiles
    n_tiles = math.ceil(1024 / ti) * math.ceil(1024 / tj) * math.ceil(1024 / tk)
    # C[i][j] = 0 before the k loop: not a perfect nest, so every (i, j) of a tile enters
    # the pipelined k loop once and pays its fill/drain (depth)
    it = math.ceil(tk / t.unroll)
    assert t.compute_cycles == n_tiles * ti * tj * ((it - 1) * t.ii + t.depth)
    # depth: load (2) + fmul (3) + log2(32) adder levels (4 each) + the carried add (4)
    lat = ZC702.op
    floor = (lat["load"].latency_cycles + lat["fmul"].latency_cycles
             + 5 * lat["fadd"].latency_cycles + lat["fadd"].latency_cycles)
    assert floor <= t.depth <= floor + 4
    # BRAM ports: a buffer the k loop walks is read by all 32 copies; cyclic banks of 2
    # ports must serve them within the II: ceil(ceil(U / P) / 2) <= II
    for b in t.buffers:
        if b.partition > 1:
            assert math.ceil(math.ceil(t.unroll / b.partition) / ZC702.bram_ports) <= t.ii
    a = next(b for b in t.buffers if b.array == "A")
    assert a.partition >= t.unroll // (ZC702.bram_ports * t.ii)
    # the interface lines: every fill split over the 4 HP ports the estimate adds up, the
    # burst length = one row's 64-bit beats (at most 256 per m_axi request)
    for b in t.buffers:
        line = next(p for p in t.pragmas if f"port={b.array}_k " in p)
        beats = min(max(b.row_bytes // 8, 1), 256)
        assert "bundle=gmem_k" in line and "k = 0..3" in line
        assert (f"max_read_burst_length={beats}" in line) == b.read
        assert (f"max_write_burst_length={beats}" in line) == b.written


def test_mm_and_gemm_get_the_same_design(mm_reports):
    a = mm_reports["mm.c"].kernels[0].tiled
    b = mm_reports["gemm.c"].kernels[0].tiled
    assert (a.tiles, a.unroll, a.ii, a.double_buffer) == (b.tiles, b.unroll, b.ii, b.double_buffer)
    # GEMM's alpha * A * B is a second fmul per iteration: it shares the lane's core over
    # the II (two distinct operations, 4 cycles), so the DSP count is the same
    assert a.resources.dsp == b.resources.dsp


def test_published_zc702_measurements_within_25_percent(mm_reports, mvt_report):
    # ZC702, 100 MHz, Vivado HLS accelerators (Zhong et al., DATE 2017; TECS 2017 Table 7):
    # MM 1024 1450 ms, MVT 2048 (both kernels) 10.41 ms
    assert mm_reports["mm.c"].total_ms == pytest.approx(1450.0, rel=0.25)
    assert mvt_report.total_ms == pytest.approx(10.41, rel=0.25)


def test_pareto_front_of_time_share_and_transfer_by_hand():
    from cgpredict.fpga.tiling import _pareto

    def pt(ms, share, transfer):
        return (ms, share, (None,) * 9 + (transfer,))

    pts = [
        pt(10.0, 0.5, 100),  # fastest
        pt(10.0, 0.6, 50),  # as fast, larger, less traffic: kept
        pt(10.05, 0.4, 200),  # slower, smaller: kept
        pt(11.0, 0.7, 300),  # worse than the first in all three: pruned
        pt(12.0, 0.3, 1000),  # slowest, smallest: kept
        pt(10.0, 0.5, 100),  # a duplicate of the first: pruned
        pt(10.05, 0.6, 60),  # beaten by the second in all three: pruned
    ]
    front = _pareto(pts)
    assert [(p[0], p[1], p[2][9]) for p in front] == [
        (10.0, 0.5, 100),
        (10.0, 0.6, 50),
        (10.05, 0.4, 200),
        (12.0, 0.3, 1000),
    ]


def test_mm_traffic_by_hand_and_least_traffic_among_ties(mm_reports):
    t = mm_reports["mm.c"].kernels[0].tiled
    ti, tj, tk = t.tiles
    assert tk == 1024  # one k tile: A and B tiles change with every (ii, jj) tile
    tiles = (1024 // ti) * (1024 // tj)
    a = tiles * ti * 1024 * 4  # A tile: Ti rows of 4 KB
    b = tiles * 1024 * max(tj * 4, 32)  # B tile: 1024 rows of Tj floats (>= one DDR burst)
    c = tiles * ti * max(tj * 4, 32)  # C tile written back once
    assert t.transfer_bytes == a + b + c
    # among the designs as fast as the DSP-capped compute, the least DRAM traffic is kept:
    # square-ish tiles whose transfers overlap well inside the compute, not the 1 x 8 tiles
    # that move 4.6 GB in 32-byte bursts at the same compute time
    assert t.transfer_bytes < 0.5e9 and t.transfer_cycles < 0.2 * t.compute_cycles
    assert min(x.row_bytes for x in t.buffers if x.array == "B") >= 128


def test_buffers_that_fit_at_no_tile_size_stream_with_the_reason(compiler, tmp_path):
    from click.testing import CliRunner

    from cgpredict.cli import main
    from cgpredict.fpga import bundled_fpga_dir

    # a ZC702 with 6 BRAM36: the four AXI adapters' FIFOs (2 each) alone exceed 0.8 x 6
    src = (bundled_fpga_dir() / "zc702.toml").read_text()
    dev = tmp_path / "tiny.toml"
    dev.write_text(src.replace("bram36 = 140 ", "bram36 = 6 "))
    args = ["fpga", str(POLYBENCH / "mvt.c"), "-D", "N=256", "--fpga", str(dev)]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert r.output.count("not tiled: no tile size fits the tiny budget") == 2
    assert "design: tiled" not in r.output
