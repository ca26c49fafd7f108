"""Tests of cgpredict.advisor: ranked fixes, each re-predicted from the same trace.

SYRK reads A[j][k] with adjacent threads a row apart (uncoalesced, 32 transactions per warp);
storing A transposed makes it coalesced, and the predicted time must then match the
hand-transposed variant syrk_transposed.c. GEMM's A and B are only read inside the k loop:
the shared-memory candidates."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from cgpredict.advisor import (BLOCKS_1D, BLOCKS_2D, _swap, advise, benefits, block_fix,
                               render_text, shared_candidates)
from cgpredict.pipeline import RunOptions, predict_source, prepare
from cgpredict.warps import Block

pytestmark = pytest.mark.usefixtures("compiler")

POLYBENCH = Path(__file__).resolve().parents[1] / "polybench_c"
SYRK_OPTS = RunOptions(work_sizes={"NI": 128, "NJ": 128}, trace_sizes={"NI": 64, "NJ": 64})
GEMM_OPTS = RunOptions(work_sizes={"NI": 128, "NJ": 128, "NK": 128},
                       trace_sizes={"NI": 64, "NJ": 64, "NK": 64})


@pytest.mark.parametrize("text, swapped", [
    ("A[j][k]", "A[k][j]"), ("A[i][k]", "A[k][i]"), ("x[i]", "x[i]"), ("s", "s"),
    ("T[a][b][c]", "T[a][c][b]"), ("B[k + 1][j - 1]", "B[j - 1][k + 1]")])
def test_swap(text, swapped):
    assert _swap(text) == swapped


@pytest.fixture(scope="module")
def syrk_advice():
    return advise(POLYBENCH / "syrk.c", SYRK_OPTS)


def test_syrk_coalescing_fix_first(syrk_advice):
    a = syrk_advice
    assert a.source == "syrk.c" and a.device == "tk1"
    assert [f.speedup for f in a.fixes] == sorted((f.speedup for f in a.fixes), reverse=True)
    top = a.fixes[0]
    assert top.kind == "coalescing"
    assert top.speedup > 5
    assert top.title == "store A transposed"
    assert "A[j][k] -> A[k][j]" in top.instruction
    line = next(n for n, t in enumerate(POLYBENCH.joinpath("syrk.c").read_text().split("\n"), 1)
                if "A[i][k] * A[j][k]" in t)
    assert any(e.startswith(f"A[j][k] at syrk.c:{line}") and "uncoalesced" in e
               and "32 transactions per warp" in e for e in top.evidence)
    assert top.predicted_ms == pytest.approx(a.baseline_ms / top.speedup)
    assert a.baseline_ms == pytest.approx(a.baseline.total_ms)


def test_syrk_coalescing_fix_matches_transposed_source(syrk_advice):
    """The remapped-address prediction agrees with predicting syrk_transposed.c itself."""
    fixed = predict_source(POLYBENCH / "syrk_transposed.c", SYRK_OPTS)
    assert syrk_advice.fixes[0].predicted_ms == pytest.approx(fixed.total_ms, rel=0.05)


def test_syrk_other_fixes_and_benefits(syrk_advice):
    kinds = [f.kind for f in syrk_advice.fixes]
    assert kinds.count("coalescing") == 1 and "block-shape" in kinds
    assert "shared-memory" in kinds
    (b,) = syrk_advice.benefits
    assert b.kernel == "syrk" and b.bound == "memory"
    assert b.t_mem_exposed > b.t_comp > 0
    assert b.b_memlp >= 0 and b.b_itilp >= 0
    text = render_text(syrk_advice)
    assert text.startswith("syrk.c on tk1: ")
    assert "[coalescing] store A transposed" in text
    assert "GPUPerf benefits" in text


def test_gemm_shared_memory_fix():
    a = advise(POLYBENCH / "gemm.c", GEMM_OPTS)
    assert not [f for f in a.fixes if f.kind == "coalescing"]  # nothing uncoalesced
    sh = next(f for f in a.fixes if f.kind == "shared-memory")
    assert sh.title == "tile A, B in shared memory (32x32)"
    assert "A, B" in sh.instruction
    assert any("8192 B of shared memory per block" in e for e in sh.evidence)
    assert sh.speedup > 1
    assert a.fixes[0] is sh


@pytest.fixture(scope="module")
def gemm_prep():
    with prepare(POLYBENCH / "gemm.c", GEMM_OPTS) as prep:
        yield prep


def test_shared_candidates(gemm_prep):
    base = gemm_prep.analyze(GEMM_OPTS)
    assert shared_candidates(gemm_prep, base) == ["A", "B"]  # C is written


def test_block_sweep_legal_shapes(gemm_prep):
    base = gemm_prep.analyze(GEMM_OPTS)
    fix = block_fix(gemm_prep, GEMM_OPTS, base)
    shapes = [e.split(":")[0] for e in fix.evidence]
    assert sorted(shapes) == sorted(BLOCKS_2D)
    assert all(Block.parse(s).threads <= 1024 for s in shapes)
    best_ms = min(float(e.split(": ")[1].split()[0]) for e in fix.evidence)
    assert fix.predicted_ms == pytest.approx(best_ms, rel=1e-3)


def test_block_sweep_respects_device_limit(gemm_prep, tmp_path):
    """A device allowing 256 threads per block: only the 256-thread shapes are swept."""
    src = Path(__file__).resolve().parents[1] / "cgpredict" / "devices" / "tk1.toml"
    text = src.read_text().replace("max_threads_per_block = 1024", "max_threads_per_block = 256")
    assert "max_threads_per_block = 256" in text
    dev = tmp_path / "small.toml"
    dev.write_text(text)
    opts = dataclasses.replace(GEMM_OPTS, device=str(dev), block=Block(16, 16))
    base = gemm_prep.analyze(opts)
    fix = block_fix(gemm_prep, opts, base)
    shapes = sorted(e.split(":")[0] for e in fix.evidence)
    assert shapes == sorted(s for s in BLOCKS_2D if Block.parse(s).threads <= 256)


def test_block_sweep_1d():
    opts = RunOptions(work_sizes={"NX": 256, "NY": 256}, trace_sizes={"NX": 32, "NY": 32})
    with prepare(POLYBENCH / "atax.c", opts) as prep:
        base = prep.analyze(opts)
        fix = block_fix(prep, opts, base)
        assert sorted(e.split(":")[0] for e in fix.evidence) == sorted(BLOCKS_1D)
        (b1, b2) = benefits(base, "tk1")
        assert (b1.kernel, b2.kernel) == ("atax_k1", "atax_k2")


def test_no_tiling_offered_without_reuse(tmp_path):
    """B[i][j] = A[i][j] * 2 has no per-thread loop: A is read once per element, so the advisor
    offers no shared-memory tiling."""
    src = tmp_path / "copy.c"
    src.write_text("#include <stdio.h>\n#ifndef N\n#define N 64\n#endif\n"
                   "static float A[N][N], B[N][N];\nint main(void) {\n"
                   "  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) A[i][j] = i - j;\n"
                   "#pragma cgp kernel k1\n"
                   "  for (int i = 0; i < N; i++)\n    for (int j = 0; j < N; j++)\n"
                   "      B[i][j] = A[i][j] * 2;\n  printf(\"%f\\n\", B[1][2]);\n  return 0;\n}\n")
    a = advise(src, RunOptions())
    assert not [f for f in a.fixes if f.kind == "shared-memory"]
