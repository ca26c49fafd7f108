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
    explore,
    list_fpga_devices,
    load_fpga_device,
    loops,
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
    assert (z.clock_mhz, z.dram_bandwidth_gbps, z.dsp, z.bram36, z.lut, z.ff) == (
        100.0,
        4.0,
        220,
        140,
        53200,
        106400,
    )


def _write(tmp_path, text):
    src = (fpga.bundled_fpga_dir() / "zc702.toml").read_text()
    p = tmp_path / "x.toml"
    p.write_text(text(src))
    return p


def test_device_errors_are_one_line(tmp_path):
    cases = [
        (
            lambda s: s.replace("clock_mhz = 100.0", "clock_mhz = 100.0\nclok = 3"),
            "unknown key 'clok'",
        ),
        (lambda s: s.replace("dsp = 220 ", "dsp = -1 "), "expected a positive value"),
        (lambda s: s.replace("lut = 53200\n", ""), "missing required key 'lut'"),
        (lambda s: s.replace("fadd = {", "fadd2 = {"), "unknown operator class 'fadd2'"),
        (lambda s: s.replace("schema_version = 1", "schema_version = 9"), "schema_version"),
        (lambda s: s + "\n[extra]\na = 1\n", "unknown table [extra]"),
        (lambda s: s.replace("dsp = 220 ", "dsp = 9223372036854775807 "), "implausibly large"),
        (lambda s: s.replace("clock_mhz = 100.0", "clock_mhz = 1e300"), "implausibly large"),
    ]
    for edit, msg in cases:
        with pytest.raises(FPGADeviceError) as exc:
            load_fpga_device(_write(tmp_path, edit))
        assert msg in str(exc.value) and "\n" not in str(exc.value)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe\x93 = 1\n")
    with pytest.raises(FPGADeviceError, match=r"binary.toml: not valid TOML \(not UTF-8\)"):
        load_fpga_device(binary)
    with pytest.raises(FPGADeviceError, match="known: .*zc702"):
        load_fpga_device("nosuchfpga")


@pytest.fixture(scope="module")
def mm_reports(compiler):
    out = {}
    with traced_source(POLYBENCH / "mm.c", {"N": 64}, {"N": 16}) as t:
        for dev in ("zc702", "zcu102"):
            out[dev] = estimate_trace(
                t.trace, load_fpga_device(dev), t.sizes, t.trace_sizes, t.work_sizes
            )
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
        groups * ((math.ceil(lp.trip_count / lp.point.unroll) - 1) * lp.ii + lp.depth)
    )
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


def _estimate(tmp_path, name, code, work, trace, dev="zc702"):
    src = tmp_path / f"{name}.c"
    src.write_text(code)
    with traced_source(src, work, trace) as t:
        return estimate_trace(t.trace, load_fpga_device(dev), t.sizes, t.trace_sizes, t.work_sizes)


def _kernel_src(decl, init, body, n):
    return f"""#include <stdio.h>
#ifndef N
#define N {n}
#endif
{decl}
int main(void){{
  {init}
#pragma cgp kernel k grid=1
  {body}
  printf("%f\\n", (double)out[1]);
  return 0;
}}
"""


def test_pointer_chasing_recurrence_is_not_unrolled(compiler, tmp_path):
    src = _kernel_src(
        "static int nxt[N]; static int out[N];",
        "for (int i=0;i<N;i++) nxt[i]=(i*7+3)%N - i; int j = 0;",
        "for (int i=0;i<N;i++) { j = j + nxt[j]; out[i] = j; }",
        1024,
    )
    lp = _estimate(tmp_path, "chase", src, {"N": 1024}, {"N": 128}).kernels[0].loops[0]
    # every iteration waits for the load (2 cycles on zc702) addressed by the previous j:
    # recMII 2 per iteration whatever U, so at least 1024 * 2 cycles
    assert lp.rec_mii == 2 * lp.point.unroll
    assert lp.ii * math.ceil(1024 / lp.point.unroll) >= 2 * 1024
    assert lp.compute_cycles >= 2 * 1024 - 2


def test_scalar_carried_by_the_enclosing_loop_forbids_jam(compiler, tmp_path):
    src = _kernel_src(
        "static float A[N][N]; static float out[2];",
        "for (int i=0;i<N;i++) for (int j=0;j<N;j++) A[i][j]=(i+j)*0.001f; float s = 0.0f;",
        "for (int i=0;i<N;i++) for (int j=0;j<N;j++) s += A[i][j]; out[1]=s;",
        128,
    )
    lp = _estimate(tmp_path, "sum2d", src, {"N": 128}, {"N": 32}).kernels[0].loops[0]
    # one chain of 128 * 128 fadds (4 cycles each on zc702): no jam, recMII 4 per copy
    assert lp.point.jam == 1 and lp.rec_mii == 4 * lp.point.unroll
    assert lp.compute_cycles >= 128 * 128 * 4 - 4


def test_parent_store_read_by_later_inner_loop_forbids_jam(compiler, tmp_path):
    # trisolv: x[i] is written after the inner loop and read by the inner loop of i + 1
    src = _kernel_src(
        "static float L[N][N], x[N], b[N]; static float out[2];",
        "for (int i=0;i<N;i++){ b[i]=i; for (int j=0;j<N;j++) L[i][j]=(i==j)?2.0f:0.001f*(i+j);}",
        "for (int i=0;i<N;i++) { float s = b[i]; for (int j=0;j<i;j++) "
        "s -= L[i][j]*x[j]; x[i] = s / L[i][i]; } out[1]=x[N-1];",
        128,
    )
    k = _estimate(tmp_path, "trisolv", src, {"N": 128}, {"N": 32}).kernels[0]
    lp = k.loops[0]
    assert lp.point.jam == 1 and lp.rec_mii == 4 * lp.point.unroll


def test_dependence_longer_than_the_unroll_window(compiler, tmp_path):
    src = _kernel_src(
        "static float a[N], b[N]; static float out[2];",
        "for (int i=0;i<N;i++){a[i]=i*0.5f; b[i]=1.0f;}",
        "for (int i=32;i<N;i++) a[i] = a[i-32]*0.5f + b[i]; out[1]=a[N-1];",
        4096,
    )
    lp = _estimate(tmp_path, "rec32", src, {"N": 4096}, {"N": 256}).kernels[0].loops[0]
    # load (2) -> fmul (3) -> fadd (4) -> store (1) back to the load 32 iterations later:
    # recMII(U) = ceil(10 U / 32); unrolled iterations take >= 10 / 32 cycles per iteration
    assert lp.rec_mii == math.ceil(10 * lp.point.unroll / 32)
    assert lp.compute_cycles >= (4096 - 32) * 10 / 32


def test_call_to_a_function_with_a_loop_is_flagged(compiler, tmp_path):
    from cgpredict.gpu_vs_fpga import compare_source, compare_to_text

    src = tmp_path / "callloop.c"
    src.write_text("""#include <stdio.h>
#ifndef N
#define N 256
#endif
static float A[N][N], x[N], y[N];
__attribute__((noinline)) float rowdot(const float *r, const float *v)
{ float s = 0; for (int j = 0; j < N; j++) s += r[j] * v[j]; return s; }
int main(void){
  for (int i=0;i<N;i++){ x[i]=i*0.1f; for (int j=0;j<N;j++) A[i][j]=(i+j)*0.001f; }
#pragma cgp kernel callloop grid=1
  for (int i=0;i<N;i++) y[i] = rowdot(A[i], x);
  printf("%f\\n", (double)y[3]);
  return 0;
}
""")
    c = compare_source(src, work={"N": 256}, trace_sizes={"N": 64})
    k = c.fpga.kernels[0]
    assert any("rowdot()" in w and "contains a loop" in w for w in k.warnings)
    assert any(r.startswith("caution, the FPGA estimate is unreliable") for r in c.reasons)
    assert "rowdot()" in compare_to_text(c)


def test_partition_bram_is_part_of_the_exploration(compiler, tmp_path):
    src = _kernel_src(
        "static int a[N], b[N], c[N], d[N], e[N]; static float out[2];",
        "for (int i=0;i<N;i++){a[i]=i;b[i]=2*i;d[i]=i+3;e[i]=i^5;}",
        "for (int i=0;i<N;i++) c[i] = a[i]+b[i]+d[i]+e[i]; out[1]=c[5];",
        16384,
    )
    dev = load_fpga_device("zc702")
    k = _estimate(tmp_path, "iadd5", src, {"N": 16384}, {"N": 256}).kernels[0]
    # five 64 KB arrays = 5 x 16 BRAM36 = 80 <= 0.75 x 112 usable: all on chip. Partitioned
    # by 32 each bank (2 KB) takes a BRAM36: 5 x 32 = 160 > 112, so P <= 16 (5 x 16 = 80)
    assert dev.usable().bram36 == 112
    assert all(a.on_chip for a in k.arrays)
    assert all(a.partition <= 16 for a in k.arrays)
    assert k.fits and k.resources.bram36 == 80 and k.resources.fits(dev.usable())


def test_banks_hit_by_a_strided_access():
    from cgpredict.instrument import loopbody

    op = loopbody.Op(0, "%x", "load", "i32", mem_id=0, array="a")
    body = loopbody.LoopBody((op,), frozenset())

    def loop(inner, outer=None):
        return loops.AnalyzedLoop(
            None, body, (), {0: (inner, outer)}, False, 1, 4096.0, 1.0, False, {0: 4096.0}
        )

    # a[4 * i] (16 B apart): 64 copies over 32 cyclic banks hit banks 0, 4, ..., 28 only:
    # 8 banks, 8 accesses each
    assert explore._per_bank(loop(16), op, 4, 64, 1, 32) == 8
    # a[i]: 64 copies over 32 banks, 2 each; a[2 * i] over 64 banks: 32 banks, 2 each
    assert explore._per_bank(loop(4), op, 4, 64, 1, 32) == 2
    assert explore._per_bank(loop(8), op, 4, 64, 1, 64) == 2
    # invariant in the inner loop: one access whatever U
    assert explore._per_bank(loop(0), op, 4, 64, 1, 32) == 1


def test_trip_counts_are_snapped_to_integers_only_within_fit_noise():
    assert loops.snap_integer(64.0000001) == 64.0
    assert loops.snap_integer(65536.00000000038) == 65536.0
    assert loops.snap_integer(255.5) == 255.5 and loops.snap_integer(63.9) == 63.9


def test_heap_array_size_uses_the_element_size(compiler, tmp_path):
    src = tmp_path / "heap.c"
    src.write_text("""#include <stdio.h>
#include <stdlib.h>
#ifndef N
#define N 1024
#endif
int main(void){
  double *y = malloc(sizeof(double) * N);
  for (int i=0;i<N;i++) y[i]=i;
#pragma cgp kernel heap grid=1
  for (int i=0;i<N;i++) y[i] = 2.0 * y[i];
  printf("%f\\n", y[3]);
  free(y);
  return 0;
}
""")
    with traced_source(src, {"N": 1024}, {"N": 128}) as t:
        rep = estimate_trace(
            t.trace, load_fpga_device("zc702"), t.sizes, t.trace_sizes, t.work_sizes
        )
    # no global: 128 distinct doubles touched at N=128, scaled by 1024/128 -> 1024 x 8 B
    (arr,) = rep.kernels[0].arrays
    assert arr.bytes == 1024 * 8


def test_array_sizes_follow_the_source_declaration():
    """Both macros traced at 64, only NI grows: A[NI][NJ] is 1024 x 64 floats at the work
    size (matching IR dimensions by value would scale both); a[4*N] scales with N; a fixed
    dimension that happens to equal a trace value stays fixed."""
    from cgpredict.fpga.arrays import array_bytes

    ir = "\n".join([
        "@A = internal global [64 x [64 x float]] zeroinitializer, align 16",
        "@a = internal global [256 x float] zeroinitializer, align 16",
        "@w = internal global [64 x double] zeroinitializer, align 16",
    ])
    src = "static float A[NI][NJ];\nstatic float a[4 * N];\nstatic double w[64];\n"
    tsz = {"NI": 64, "NJ": 64, "N": 64}
    wsz = {"NI": 1024, "NJ": 64, "N": 1000}
    got = array_bytes(ir, tsz, wsz, src)
    assert got == {"A": 1024 * 64 * 4, "a": 4 * 1000 * 4, "w": 64 * 8}
    # without the source, the old value matching (kept as the fallback) scales by value
    assert array_bytes(ir, tsz, wsz)["A"] == 1024 * 1024 * 4


def test_schema_md_documents_every_device_key():
    from cgpredict.fpga import device

    doc = (fpga.bundled_fpga_dir() / "SCHEMA.md").read_text()
    for table in device._SCHEMA.values():
        for key in table:
            assert f"`{key}`" in doc, key
