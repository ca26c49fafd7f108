"""Tests of cgpredict.pipeline: C source -> trace -> warps -> memory + computation -> model ->
Report, with the trace size smaller than the work size.

Hand counts at the work size, plain port (the default: nvcc stores C[i][j] on every k
iteration): GEMM: per thread 1 load + 1 store of C[i][j] (the `*= beta`), then NK loads each
of A[i][k] and B[k][j] and NK stores of C[i][j]: 3 * NK + 2 memory instructions, A constant,
B and C coalesced. SYRK: NJ loads each of A[i][k]
(constant) and A[j][k] (uncoalesced: adjacent threads read rows NJ * 4 bytes apart)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from cgpredict.block import Block
from cgpredict.devices import load_device
from cgpredict.errors import CGPredictError
from cgpredict.frontend.tracefile import read_trace
from cgpredict.pipeline import predict_source
from cgpredict.prediction import PredictionError, RunOptions
from cgpredict.prepared import prepare
from cgpredict.trace_analysis import analyze_trace
from cgpredict.trace_sizes import resolve_sizes

pytestmark = pytest.mark.usefixtures("compiler")

POLYBENCH = Path(__file__).resolve().parents[1] / "polybench_c"


def sizes(names, n):
    return {k: n for k in names}


GEMM_N = ("NI", "NJ", "NK")
GEMM_OPTS = RunOptions(work_sizes=sizes(GEMM_N, 64), trace_sizes=sizes(GEMM_N, 32))


@pytest.fixture(scope="module")
def gemm_prep():
    with prepare(POLYBENCH / "gemm.c", GEMM_OPTS) as prep:
        yield prep


def per_instr(kernel):
    out = {}
    for m in kernel.mem:
        out[(m.text, m.kind)] = m
    return out


def test_gemm_counts_at_work_size(gemm_prep):
    rep = gemm_prep.analyze(GEMM_OPTS)
    assert rep.source == "gemm.c" and rep.device == "tk1" and rep.model == "cgpredict"
    assert rep.work_sizes == sizes(GEMM_N, 64) and rep.trace_sizes == sizes(GEMM_N, 32)
    assert len(rep.kernels) == 1
    k = rep.kernels[0]
    assert (k.name, k.grid_dims, k.block) == ("gemm", 2, "32x32")
    assert k.grid_threads == (64, 64) and k.blocks == 4 and k.launches == 1
    p = k.profile
    # plain port: A, B loaded and C stored every k iteration (the reload of C forwarded),
    # plus the C load and store of `C[i][j] *= beta`
    assert p.mem_insts == pytest.approx(3 * 64 + 2)
    assert p.const.insts == pytest.approx(64)
    assert p.coal.insts == pytest.approx(2 * 64 + 2)
    assert p.uncoal.insts == pytest.approx(0)
    assert p.coal.l2_trans_per_warp == pytest.approx(2) and p.const.l2_trans_per_warp == 1
    mem = per_instr(k)
    assert mem[("A[i][k]", "load")].pattern == "constant"
    assert mem[("A[i][k]", "load")].per_thread == pytest.approx(64)
    assert mem[("B[k][j]", "load")].pattern == "coalesced"
    assert mem[("B[k][j]", "load")].per_thread == pytest.approx(64)
    stores = [m.per_thread for m in k.mem if (m.text, m.kind) == ("C[i][j]", "store")]
    assert sorted(stores) == pytest.approx([1, 64])
    line = next(n for n, t in enumerate(POLYBENCH.joinpath("gemm.c").read_text().split("\n"), 1)
                if "alpha * A[i][k] * B[k][j]" in t)
    assert mem[("B[k][j]", "load")].location == f"gemm.c:{line}"
    assert 0 < k.total_ms == rep.total_ms and math.isfinite(k.total_ms)
    assert k.time_ms == k.total_ms


@pytest.fixture(scope="module")
def gemm_direct64():
    opts = RunOptions(work_sizes=sizes(GEMM_N, 64), trace_sizes=sizes(GEMM_N, 64))
    return predict_source(POLYBENCH / "gemm.c", opts).kernels[0].profile


def test_gemm_scaled_memory_counts_equal_counts_traced_at_work_size(gemm_prep, gemm_direct64):
    """The trip-count scaling reproduces what tracing at the work size itself counts."""
    scaled = gemm_prep.analyze(GEMM_OPTS).kernels[0].profile
    for p in ("coal", "uncoal", "const"):
        assert getattr(scaled, p).insts == pytest.approx(getattr(gemm_direct64, p).insts,
                                                         rel=1e-9), p
    assert scaled.blocks == gemm_direct64.blocks
    assert scaled.sfu_insts == gemm_direct64.sfu_insts == 0


def test_gemm_scaled_compute_counts_equal_counts_traced_at_work_size(gemm_prep, gemm_direct64):
    scaled = gemm_prep.analyze(GEMM_OPTS).kernels[0].profile
    assert scaled.comp_insts == pytest.approx(gemm_direct64.comp_insts, rel=1e-9)
    assert scaled.fp_insts == pytest.approx(gemm_direct64.fp_insts, rel=1e-9)


def test_analyze_trace_from_saved_trace(gemm_prep):
    """Re-running the model from the trace file (no compiler) gives the same report."""
    dev = load_device("tk1")
    tr = read_trace(gemm_prep.trace.path)
    a = analyze_trace(tr, dev, GEMM_OPTS, gemm_prep.sizes, gemm_prep.trace_sizes,
                      gemm_prep.work_sizes)
    b = gemm_prep.analyze(GEMM_OPTS)
    assert a.total_ms == pytest.approx(b.total_ms, rel=1e-12)
    assert a.kernels[0].profile == b.kernels[0].profile
    # without a size model the work size is the trace size
    c = analyze_trace(tr, dev, GEMM_OPTS)
    assert c.kernels[0].grid_threads == (32, 32)
    assert c.kernels[0].profile.mem_insts == pytest.approx(3 * 32 + 2)


@pytest.mark.parametrize("block", [Block(2000, 1), Block(64, 32), Block(1025, 1)])
def test_block_too_large(gemm_prep, block):
    with pytest.raises(PredictionError, match="at most 1024"):
        gemm_prep.analyze(RunOptions(block=block))
    assert PredictionError.exit_code == 2 and issubclass(PredictionError, CGPredictError)


def test_block_shape_and_warnings(gemm_prep):
    rep = gemm_prep.analyze(RunOptions(block=Block(16, 16), work_sizes=sizes(GEMM_N, 64)))
    k = rep.kernels[0]
    assert k.block == "16x16" and k.blocks == 16
    odd = gemm_prep.analyze(RunOptions(block=Block(24, 1), work_sizes=sizes(GEMM_N, 64)))
    assert any("not a multiple of the warp size" in w for w in odd.kernels[0].warnings)
    assert odd.kernels[0].blocks == math.ceil(64 / 24) * 64


@pytest.mark.parametrize("model", ["cgpredict", "hongkim", "gpuperf"])
def test_models_run(gemm_prep, model):
    rep = gemm_prep.analyze(RunOptions(model=model, work_sizes=sizes(GEMM_N, 64)))
    assert rep.model == model and rep.kernels[0].result.model == model
    assert 0 < rep.total_ms < 1e3 and math.isfinite(rep.total_ms)


def test_batch_modes(gemm_prep):
    """16 blocks of 32x8 with B = 8 per SM: 2 batches. The 'whole' reading repeats the whole
    expression per batch, the printed one only its compute term: whole > paper."""
    whole = gemm_prep.analyze(RunOptions(block=Block(32, 8), work_sizes=sizes(GEMM_N, 64)))
    paper = gemm_prep.analyze(RunOptions(block=Block(32, 8), batch_mode="paper",
                                         work_sizes=sizes(GEMM_N, 64)))
    assert whole.kernels[0].result.details.batch == pytest.approx(2)
    assert whole.kernels[0].result.model_cycles > paper.kernels[0].result.model_cycles


def test_prepared_cleans_up(monkeypatch):
    """A trace of its own (the cache off: another test may have cached this size) is
    removed when the prepared trace is closed."""
    monkeypatch.setenv("CGPREDICT_NO_CACHE", "1")
    opts = RunOptions(work_sizes=sizes(GEMM_N, 32), trace_sizes=sizes(GEMM_N, 32))
    with prepare(POLYBENCH / "gemm.c", opts) as prep:
        path = prep.trace.path
        assert path.exists()
        rep = prep.analyze(opts)
    assert not path.exists()
    assert set(rep.seconds) >= {"trace", "analysis", "total"}
    assert rep.kernels[0].grid_threads == (32, 32)


def test_syrk_uncoalesced_counts():
    opts = RunOptions(work_sizes={"NI": 256, "NJ": 256}, trace_sizes={"NI": 64, "NJ": 64})
    k = predict_source(POLYBENCH / "syrk.c", opts).kernels[0]
    p = k.profile
    assert p.uncoal.insts == pytest.approx(256)  # A[j][k]: half of the k loop's loads
    assert p.const.insts == pytest.approx(256)  # A[i][k]
    assert p.coal.insts == pytest.approx(2 + 256)  # C[i][j] load and store, stored per k
    r = predict_source(POLYBENCH / "syrk.c", dataclasses.replace(opts, port="restrict"))
    # the sum in a register: C[i][j] loaded, `*= beta` stored (the k loop may run no
    # iteration: its bound is a run-time parameter, frontend.loop_bounds), stored after
    assert r.kernels[0].profile.coal.insts == pytest.approx(3)
    assert p.uncoal.l2_trans_per_warp == pytest.approx(32)
    assert per_instr(k)[("A[j][k]", "load")].pattern == "uncoalesced"


@pytest.mark.parametrize("name, names, work, traces", [
    ("gemm.c", GEMM_N, 256, (64, 128)),
    ("atax.c", ("NX", "NY"), 256, (32, 64)),
])
def test_prediction_independent_of_trace_size(name, names, work, traces):
    """Two trace sizes whose batches hold whole rows of blocks alike (SPEC §8's advice: a
    representative per-batch working set) predict the same work size within 5%."""
    got = [predict_source(POLYBENCH / name, RunOptions(work_sizes=sizes(names, work),
                                                       trace_sizes=sizes(names, t))).total_ms
           for t in traces]
    assert got[0] == pytest.approx(got[1], rel=0.05)


def test_fdtd_launches_scale_with_tmax():
    opts = RunOptions(work_sizes={"NX": 64, "NY": 64, "TMAX": 10},
                      trace_sizes={"NX": 32, "NY": 32, "TMAX": 2})
    rep = predict_source(POLYBENCH / "fdtd2d.c", opts)
    assert [k.name for k in rep.kernels] == ["fdtd_k1", "fdtd_k2", "fdtd_k3"]
    assert [k.launches for k in rep.kernels] == [10, 10, 10]
    # the grids of the C loop bounds: k1 NX x NY, k2 j from 1, k3 (NX-1) x (NY-1)
    assert [k.grid_threads for k in rep.kernels] == [(64, 64), (63, 64), (63, 63)]
    for k in rep.kernels:
        # the first launch (k.result) starts from an empty L2; later steps find the 16 KB
        # arrays in the 128 KB L2 (residency.py): never slower, never free
        assert k.result.time_ms < k.total_ms <= 10 * k.result.time_ms * (1 + 1e-9)
    # time steps 2..TMAX repeat step 2: the time is linear in TMAX
    rep2 = predict_source(POLYBENCH / "fdtd2d.c", RunOptions(
        work_sizes={"NX": 64, "NY": 64, "TMAX": 20}, trace_sizes={"NX": 32, "NY": 32, "TMAX": 2}))
    assert rep2.total_ms == pytest.approx(2 * rep.total_ms, rel=1e-9)


def test_tiled_gemm_faster_than_naive():
    opts = RunOptions(work_sizes=sizes(GEMM_N, 128), trace_sizes=sizes(GEMM_N, 64))
    naive = predict_source(POLYBENCH / "gemm.c", opts)
    tiled = predict_source(POLYBENCH / "gemm_tiled.c", opts)
    assert tiled.total_ms < naive.total_ms
    k = tiled.kernels[0]
    # 128 / 32 = 4 tile phases: one staging load of A and of B per thread and 2 barriers each
    assert k.profile.sync_insts == pytest.approx(8)
    assert k.profile.shared.load_insts == pytest.approx(8)
    assert k.profile.shared.bytes_per_block == 2 * 32 * 32 * 4
    assert {m.pattern for m in k.mem if m.text.startswith(("A", "B"))} == {"shared"}


def test_transposed_syrk_faster():
    opts = RunOptions(work_sizes={"NI": 128, "NJ": 128}, trace_sizes={"NI": 64, "NJ": 64})
    syrk = predict_source(POLYBENCH / "syrk.c", opts)
    fixed = predict_source(POLYBENCH / "syrk_transposed.c", opts)
    assert fixed.total_ms < syrk.total_ms / 5
    assert fixed.kernels[0].profile.uncoal.insts == pytest.approx(0)


def test_1d_kernel_block_replaced():
    opts = RunOptions(block=Block(32, 8), work_sizes={"NX": 64, "NY": 64},
                      trace_sizes={"NX": 32, "NY": 32})
    rep = predict_source(POLYBENCH / "atax.c", opts)
    assert [k.grid_dims for k in rep.kernels] == [1, 1]
    assert [k.block for k in rep.kernels] == ["256x1", "256x1"]
    assert all(any("1-D kernel" in w for w in k.warnings) for k in rep.kernels)
    k1 = rep.kernels[0]
    assert per_instr(k1)[("A[i][j]", "load")].pattern == "uncoalesced"
    assert per_instr(rep.kernels[1])[("A[i][j]", "load")].pattern == "coalesced"


def test_resolve_sizes():
    text = POLYBENCH.joinpath("gemm.c").read_text()
    assert resolve_sizes(text, {}, {})[:2] == (sizes(GEMM_N, 1024), sizes(GEMM_N, 128))
    assert resolve_sizes(text, {"NI": 2048}, {"NK": 16})[:2] == (
        {"NI": 2048, "NJ": 1024, "NK": 1024}, {"NI": 128, "NJ": 128, "NK": 16})
    plain = ("#ifndef N\n#define N 4096\n#endif\nint main(void) {\n#pragma cgp kernel k\n"
             "  for (int i = 0; i < N; i++);\n}\n")
    work, trace = resolve_sizes(plain, {}, {})[:2]
    assert work == {"N": 4096} and trace["N"] <= 4096
    assert resolve_sizes(plain, {"N": 64}, {"N": 32})[:2] == ({"N": 64}, {"N": 32})


def test_trace_size_never_exceeds_work_size():
    text = POLYBENCH.joinpath("gemm.c").read_text()
    assert resolve_sizes(text, sizes(GEMM_N, 64), {})[:2] == (sizes(GEMM_N, 64),
                                                             sizes(GEMM_N, 64))


def test_unmapped_and_dependence_warnings(tmp_path):
    src = tmp_path / "dep.c"
    src.write_text(r"""
#include <stdio.h>
#define N 8
#define M 64
static float A[N][M];
static float x[N];
int main(void) {
  for (int i = 0; i < N; i++) { x[i] = i; for (int j = 0; j < M; j++) A[i][j] = i + j; }
#pragma cgp kernel mirror grid=2
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++)
      A[i][j] = A[i][M - 1 - j] + x[i];
  printf("%f\n", A[1][2]);
  return 0;
}
""")
    k = predict_source(src, RunOptions(port="restrict")).kernels[0]
    assert k.grid_dims == 2  # forced by the pragma
    assert any("inter-thread dependence" in w and "A[i]" in w for w in k.warnings)
    assert any("outside the mapped loops" in w for w in k.warnings)
    auto = predict_source(src, RunOptions(grid=None)).kernels[0]
    assert auto.grid_dims == 2  # the pragma's grid hint is kept when no --grid is given
    one = predict_source(src, RunOptions(grid=1)).kernels[0]
    assert one.grid_dims == 1
    assert not any("inter-thread dependence" in w for w in one.warnings)


HELPER_KERNEL = """\
#include <stdio.h>
#ifndef N
#define N 256
#endif
static float A[N][N], x[N], y[N];
__attribute__((noinline)) static float dot(int i) {
  float s = 0;
  for (int k = 0; k < N; k++) s += A[i][k] * x[k];
  return s;
}
int main(void) {
  for (int i = 0; i < N; i++) { x[i] = i; for (int k = 0; k < N; k++) A[i][k] = (i + k) % 5; }
#pragma cgp kernel mv grid=1
  for (int i = 0; i < N; i++) BODY
  printf("%f\\n", y[2]);
  return 0;
}
"""


def test_loops_inside_helper_functions_scale_to_the_work_size(tmp_path):
    """A per-thread loop inside a called function scales like the same loop written inline."""
    helper = tmp_path / "helper.c"
    helper.write_text(HELPER_KERNEL.replace("BODY", "y[i] = dot(i);"))
    inline = tmp_path / "inline.c"
    inline.write_text(HELPER_KERNEL.replace(
        "BODY", "{ float s = 0; for (int k = 0; k < N; k++) s += A[i][k] * x[k]; y[i] = s; }"))
    opts = RunOptions(work_sizes={"N": 256}, trace_sizes={"N": 32})
    h = predict_source(helper, opts).kernels[0].profile
    i = predict_source(inline, opts).kernels[0].profile
    assert h.uncoal.insts == pytest.approx(256) and i.uncoal.insts == pytest.approx(256)
    assert h.const.insts == pytest.approx(i.const.insts)
    assert h.comp_insts == pytest.approx(i.comp_insts, abs=3)  # + the call and its return


def test_function_kernel_with_two_top_level_loops(tmp_path):
    """Two for nests: a kernel each. A while loop beside a for keeps the body whole, and one
    kernel cannot hold two top-level loops: refused in one line."""
    text = ("#include <stdio.h>\n#define N 64\nstatic float A[N], B[N], C[N];\n"
            "__attribute__((noinline)) void kern(void) {\n"
            "  for (int i = 0; i < N; i++) B[i] = A[i] * 2;\n"
            "  for (int i = 0; i < N; i++) C[i] = B[i] + A[i];\n}\n"
            "int main(void) { for (int i = 0; i < N; i++) A[i] = i;\n"
            "  kern(); printf(\"%f\\n\", C[3]); return 0; }\n")
    src = tmp_path / "two.c"
    src.write_text(text)
    rep = predict_source(src, RunOptions(functions=("kern",)))
    assert [(k.name, k.location) for k in rep.kernels] == [("kern_k1", "two.c:5"),
                                                           ("kern_k2", "two.c:6")]
    src.write_text(text.replace("  for (int i = 0; i < N; i++) C[i]",
                                "  int i = 0; while (i < N) { C[i] = B[i] + A[i]; i++; }\n"
                                "  for (int i = 0; i < N; i++) C[i]"))
    with pytest.raises(PredictionError, match="top-level loops"):
        predict_source(src, RunOptions(functions=("kern",)))


def test_size_names_the_source_never_mentions_are_typos():
    from cgpredict.prediction import PredictionError
    from cgpredict.trace_sizes import resolve_sizes

    text = (POLYBENCH / "gemm.c").read_text()
    with pytest.raises(PredictionError, match=r"-D Ni: the source never mentions Ni "
                                              r"\(its size macros: NI NJ NK\)"):
        resolve_sizes(text, {"Ni": 64}, {})
    with pytest.raises(PredictionError, match="--trace-size FOO"):
        resolve_sizes(text, {}, {"FOO": 32})


def test_a_trace_size_of_one_is_refused():
    from cgpredict.prediction import PredictionError
    from cgpredict.trace_sizes import resolve_sizes

    text = (POLYBENCH / "gemm.c").read_text()
    with pytest.raises(PredictionError, match="trace size NI=1: trace at least 2"):
        resolve_sizes(text, {}, {"NI": 1})
    work, trace, _ = resolve_sizes(text, {"NI": 1}, {})  # a work size of 1 traces as it is
    assert work["NI"] == trace["NI"] == 1


def test_restrict_port_borrows_the_plain_ports_probes(gemm_prep, monkeypatch):
    """The restrict port of GEMM has the plain port's loops and trip counts (same_loops):
    prepared with probes_of, it runs no probe of its own and its trip-count model is the one
    its own probes give, loop for loop (matched by region and source line)."""
    import cgpredict.prepared as prepared
    from cgpredict.scaling import loop_keys

    monkeypatch.setenv("CGPREDICT_NO_CACHE", "1")  # both restrict traces made here
    ropts = dataclasses.replace(GEMM_OPTS, port="restrict")
    with prepare(POLYBENCH / "gemm.c", ropts) as own:
        own_trips = {loop_keys(own.trace)[i]: m for i, m in own.sizes.trips.items()}
    assert prepared.same_loops(own.trace, gemm_prep.trace)

    def no_probes(*args, **kwargs):
        raise AssertionError("a probe ran")

    monkeypatch.setattr(prepared, "_Probes", no_probes)
    with prepare(POLYBENCH / "gemm.c", ropts, probes_of=gemm_prep) as lent:
        assert lent.probe_runs is gemm_prep.probe_runs
        lent_trips = {loop_keys(lent.trace)[i]: m for i, m in lent.sizes.trips.items()}
    assert lent_trips == own_trips and own_trips


def test_same_loops_tells_traces_apart(gemm_prep):
    """Another size (other trip counts) or another program (other loops) is not the same."""
    from cgpredict.prepared import same_loops

    assert same_loops(gemm_prep.trace, gemm_prep.trace)
    other = dataclasses.replace(GEMM_OPTS, trace_sizes=sizes(GEMM_N, 48))
    with prepare(POLYBENCH / "gemm.c", other) as bigger:
        assert not same_loops(bigger.trace, gemm_prep.trace)
    with prepare(POLYBENCH / "syrk.c", RunOptions(work_sizes={"NI": 64, "NJ": 64},
                                                    trace_sizes={"NI": 32, "NJ": 32})) as syrk:
        assert not same_loops(syrk.trace, gemm_prep.trace)


def test_a_fix_leaves_the_kernels_it_does_not_touch_as_they_were():
    """2mm: B is read by the first kernel only. Transposing it re-analyses that kernel; the
    second kernel's report is the memo's (the very object of the baseline), and both equal an
    analysis from scratch (no memo)."""
    from cgpredict.trace_analysis import analyze_trace

    names = ("NI", "NJ", "NK", "NL")
    opts = RunOptions(work_sizes=sizes(names, 64), trace_sizes=sizes(names, 32))
    with prepare(POLYBENCH / "2mm.c", opts) as prep:
        base = prep.analyze(opts)
        moved = dataclasses.replace(opts, transpose=("B",))
        rep = prep.analyze(moved)
        assert rep.kernels[1] is base.kernels[1]
        assert rep.kernels[0] != base.kernels[0]
        fresh = analyze_trace(prep.trace, load_device(opts.device), moved, prep.sizes,
                              prep.trace_sizes, prep.work_sizes, None)
        assert rep.kernels == fresh.kernels


def test_a_trace_too_large_names_the_trace_size_option(tmp_path):
    """In run, -D is the work size: the hint of a trace past --max-events is --trace-size."""
    from cgpredict.errors import TraceRunError

    src = tmp_path / "big.c"
    src.write_text("#ifndef NB\n#define NB 4096\n#endif\nstatic float a[NB];\nint main(void) {\n"
                   "#pragma cgp kernel k\n  for (int i = 0; i < NB; i++) a[i] = i;\n"
                   "  return a[3] < 0;\n}\n")
    opts = RunOptions(work_sizes={"NB": 8192}, trace_sizes={"NB": 4096}, max_events=100)
    with pytest.raises(TraceRunError, match=r"e\.g\. --trace-size NB=2048\)"):
        predict_source(src, opts)
