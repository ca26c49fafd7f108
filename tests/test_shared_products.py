"""Eq. (12fm): a product two multiply-adds share is one FMUL and an FADD per use in the SASS
(cgpredict/shared_products.py), by hand on IR texts and on a traced escape loop."""

from __future__ import annotations

from pathlib import Path

import pytest

from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare
from cgpredict.shared_products import _factors, shared_product_insts, shared_products

ESCAPE = """\
#define N 64
#pragma cgp trace N=64
static int y[N];
int main(void) {
#pragma cgp kernel k grid=1
  for (int i = 0; i < N; i++) {
    float zr = 0.0f, zi = 0.0f, cr = 0.01f * i;
    int it = 0;
    while (it < N && zr * zr + zi * zi <= 4.0f) {
      float t = zr * zr - zi * zi + cr;
      zi = 2.0f * zr * zi + 0.1f;
      zr = t;
      it++;
    }
    y[i] = it;
  }
  return y[3] != 12345 ? 0 : 1;
}
"""


def test_factors_of_multiply_adds_and_multiplies() -> None:
    fma = "call float @llvm.fmuladd.f32(float %zr, float %zr, float %m), !dbg !8"
    assert _factors(fma) == ("%zr", "%zr")
    assert _factors("fmul float %b, %a, !dbg !3") == ("%a", "%b")
    assert _factors("call float @llvm.fmuladd.f32(float %a, float 2.0, float %m)") is None
    assert _factors("fadd float %a, %b") is None


def test_a_group_adds_one_fmul_when_every_use_runs() -> None:
    """Two groups: blocks (1, 2) run 10 and 9 times a thread (9 iterations run both uses),
    block (3,) twice: 9 + 2 = 11 FMUL."""
    assert shared_product_insts(((1, 2), (3,)), {1: 10.0, 2: 9.0, 3: 2.0}) == 11.0
    assert shared_product_insts((), {1: 1.0}) == 0.0


def test_the_escape_loop_shares_zr_squared(tmp_path: Path) -> None:
    """zr * zr feeds the test's and the update's multiply-add (clang contracts each), zi * zi
    is a plain fmul (the count has it): one group, in the header's and the latch's blocks."""
    path = tmp_path / "escape.c"
    path.write_text(ESCAPE)
    with prepare(path, RunOptions(device="h100")) as prep:
        tr = prep.trace
        (group,) = shared_products(tr, 0)
        (lp,) = [lp for lp in tr.header.loops if lp.region == 0 and lp.depth == 2]
        assert len(group) == 2 and set(group) <= set(lp.blocks)
        runs = {b: float(n) for b, n in enumerate(tr.bb_counts.sum(axis=0)) if n}
        assert shared_product_insts((group,), runs) == pytest.approx(min(runs[b] for b in group))
