"""Tests of cgpredict.advisor.tile_code: the tiling fix shows the CUDA its re-prediction
models. With 32x32 blocks (the tile's shape) that is the textbook kernel
(validation/cuda/textbook/gemm_textbook.cu): one element of each tile a thread, its tile row and
column threadIdx.y/x, no loop, bounds checks only off the tile grid; the fix's staging code is
then the block-shaped copy's (memory.staging_code, counted from that port's sm_90 SASS)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cgpredict.advisor import shared_fix
from cgpredict.advisor.tile_code import TileAccess, reduction_variable, textbook_code
from cgpredict.block import Block
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare
from cgpredict.profile import StagingCounts

POLYBENCH = Path(__file__).resolve().parents[1] / "polybench_c"


@pytest.mark.parametrize("texts, var", [
    (["A[i][k]", "B[k][j]"], "k"), (["A[i][k]", "A[j][k]"], "k"),
    (["A[i][k + 1]", "B[k][j]"], "k"), (["A[i][k]", "B[m][j]"], None), (["x[k]"], None)])
def test_reduction_variable(texts, var):
    assert reduction_variable(texts) == var


def test_gemm_textbook_snippet_is_the_measured_kernel():
    code = textbook_code("gemm", [TileAccess("A[i][k]"), TileAccess("B[k][j]")],
                         checked=False, register=True)
    lines = [x.strip() for x in code.splitlines()]
    # one element of each tile a thread, no loop over elements, no bounds, no division
    assert "A_s[ty][tx] = A[i][kk + tx];" in lines
    assert "B_s[ty][tx] = B[kk + ty][j];" in lines
    assert "A[i][k] -> A_s[ty][k - kk]; B[k][j] -> B_s[k - kk][tx]" in code
    assert code.count("__syncthreads();") == 2
    assert "float sum = 0.0f;" in code
    assert "/" not in code.replace("//", "") and "?" not in code and "e +=" not in code


def test_checked_snippet_and_rows_tile():
    code = textbook_code("syrk", [TileAccess("A[i][k]"), TileAccess("A[j][k]", True)],
                         checked=True, register=False)
    assert "A_t[ty][tx] = (j - tx + ty < A_ROWS && kk + tx < A_COLS) ? " \
           "A[j - tx + ty][kk + tx] : 0.0f;" in code
    assert "A[j][k] -> A_t[tx][k - kk]" in code
    assert "float sum" not in code


def test_expression_subscripts_are_substituted():
    code = textbook_code("k1", [TileAccess("A[i][k + 1]"), TileAccess("B[k][j]")],
                         checked=False, register=False)
    assert "A_s[ty][tx] = A[i][(kk + tx) + 1];" in code


def test_unrelated_subscripts_give_no_snippet():
    assert textbook_code("k", [TileAccess("A[i][k]"), TileAccess("B[m][j]")], False, False) \
        == ""


SIZES = {"NI": 64, "NJ": 64, "NK": 64}


@pytest.mark.usefixtures("compiler")
@pytest.mark.parametrize("block, textbook", [("32x32", True), ("32x8", False)])
def test_fix_models_the_code_it_shows(block, textbook):
    opts = RunOptions(device="h100", work_sizes=SIZES, trace_sizes=SIZES, port="restrict",
                      block=Block.parse(block))
    with prepare(POLYBENCH / "gemm.c", opts) as prep:
        base = prep.analyze(opts)
        fix = shared_fix(prep, opts, base, None)
    code = fix.code
    staging = fix.report.kernels[0].profile.staging_code
    if textbook:
        assert "A_s[ty][tx] = A[i][kk + tx];" in code and "float sum" in code
        assert "each thread copying one element of each tile" in fix.instruction
        # 2 phases x the block-shaped copy of two tiles (2 + 2 integer, 2 + 2 other)
        assert staging == StagingCounts(integer=8, branch=0, other=8)
    else:
        assert "e += blockDim.x * blockDim.y" in code and "A_s[ty][tx]" not in code
        assert "in a loop" in fix.instruction
        assert staging.branch > 0  # the staging loop's back edges


@pytest.mark.usefixtures("compiler")
def test_fix_off_the_tile_grid_shows_and_models_the_bounds_checks():
    # 112 = 3.5 tiles: the snippet guards each copy, the model counts the checked copy
    # (5 integer an element, a zero each and one LDC.64 a phase) over 112 / 32 phases
    sizes = {"NI": 112, "NJ": 112, "NK": 112}
    opts = RunOptions(device="h100", work_sizes=sizes, trace_sizes=sizes, port="restrict",
                      block=Block(32, 32))
    with prepare(POLYBENCH / "gemm.c", opts) as prep:
        base = prep.analyze(opts)
        fix = shared_fix(prep, opts, base, None)
    assert "A_s[ty][tx] = (i < A_ROWS && kk + tx < A_COLS) ? A[i][kk + tx] : 0.0f;" in fix.code
    staging = fix.report.kernels[0].profile.staging_code
    assert staging.integer == pytest.approx(112 / 32 * 10)
    assert staging.other == pytest.approx(112 / 32 * 3)
