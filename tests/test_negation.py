"""A negation that SASS folds into its users' operand modifier (compute.ptx_cost's ``fneg``
with detail ``operand``, instrument/opkeys._negation_folds).

Oracle by hand: FADD, FMUL and FFMA negate any operand for free, so GRAMSCHMIDT's
``A[i][j] -= Q[i][k] * R[k][j]`` (clang: fneg + fmuladd; PTX: mul.f32 + sub.f32) is one FFMA
an iteration in its sm_90 SASS (validation/results/sass-check.md); a negation stored as a
value keeps its instruction."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from cgpredict.instrument import loopbody
from cgpredict.instrument.irtext import parse_module
from cgpredict.instrument.memtrace import _negation_folds, _use_map

from cgpredict.compute import compute_counts
from cgpredict.parallelism import affine_share, traced_loop_body
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare

IR = """\
define float @f(float %a, float %b, float %c, ptr %p) {
entry:
  %n1 = fneg float %a
  %m = call float @llvm.fmuladd.f32(float %n1, float %b, float %c)
  %n2 = fneg float %b
  %s = fadd float %n2, %c
  %n3 = fneg float %c
  store float %n3, ptr %p
  %n4 = fneg float %m
  %t = fmul float %n4, %s
  %u = fsub float %n4, %m
  ret float %t
}
"""


def test_a_negation_folds_when_every_user_negates_an_operand() -> None:
    uses = _use_map(parse_module(IR).functions["f"])
    assert _negation_folds(uses["n1"])  # an fmuladd operand
    assert _negation_folds(uses["n2"])  # an fadd operand
    assert not _negation_folds(uses["n3"])  # stored: a value of its own
    assert _negation_folds(uses["n4"])  # an fmul and an fsub
    assert not _negation_folds([])


GS_LIKE = """\
#define N 256
#pragma cgp trace N=256
static float A[N][N], Q[N][N], R[N];
int main(void) {
  for (int i = 0; i < N; i++) {
    R[i] = i;
    for (int j = 0; j < N; j++) { A[i][j] = i - j; Q[i][j] = i + j; }
  }
#pragma cgp kernel k grid=1
  for (int j = 0; j < N; j++)
    for (int i = 0; i < N; i++)
      A[i][j] -= Q[i][3] * R[j];
  return A[3][4] != 12345.0f ? 0 : 1;
}
"""


@pytest.mark.parametrize("port", ["plain", "restrict"])
def test_gs_like_update_is_one_fp32_op_and_its_loop_control_all_affine(
    tmp_path: Path, port: str
) -> None:
    """Per iteration of the i loop: one FP32 operation (the FFMA), and every integer op of
    the body follows the induction (the float negation is no integer op: affine share 1)."""
    path = tmp_path / "k.c"
    path.write_text(GS_LIKE)
    with prepare(path, RunOptions(device="h100", port=port)) as prep:
        h = prep.trace.header
        (lp,) = [lp for lp in h.loops if lp.region == 0 and lp.depth == 2]
        ops = {(o, t, d): k for b in lp.blocks for o, t, d, k in h.blocks[b].ops}
        assert ops.get(("fneg", "float", "operand")) == 1
        assert compute_counts(Counter(ops)).fp == 1
        body = traced_loop_body(h, lp, loopbody.mem_by_label(h, lp.region))
        assert affine_share(body) == 1.0
