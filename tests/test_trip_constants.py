"""The moves of the library calls' constants (cgpredict/trip_constants.py): eq. (12cm), which
of them ptxas issues as IMAD.MOV.U32, on kernels of our own."""

from __future__ import annotations

from pathlib import Path

import pytest

from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare
from cgpredict.trip_constants import FMA_PIPE_MOVE_OPS, TRIP_CONSTANTS, fma_pipe_constant_moves


def _kernel(body: str) -> str:
    """A 1-D kernel of 64 threads (i) running ``body``."""
    return f"""\
#include <math.h>
#define N 64
#pragma cgp trace N=64
static float A[N][N], x[N], y[N], z[N];
int main(void) {{
  for (int i = 0; i < N; i++) {{ x[i] = 0.01f * i; z[i] = 1 + i;
    for (int j = 0; j < N; j++) A[i][j] = 0.001f * (i - j); }}
#pragma cgp kernel k grid=1
  for (int i = 0; i < N; i++) {{
    {body}
  }}
  return y[3] != 12345.0f ? 0 : 1;
}}
"""


def _moves(tmp_path: Path, body: str) -> float:
    """fma_pipe_constant_moves per thread of the kernel running ``body``."""
    path = tmp_path / "k.c"
    path.write_text(_kernel(body))
    with prepare(path, RunOptions(device="h100")) as prep:
        tr = prep.trace
        bb = tr.bb_counts[0]
        per_thread = {b: float(bb[b]) / 64 for b in range(len(bb)) if bb[b]}
        return fma_pipe_constant_moves(tr, 0, 1, per_thread)


@pytest.mark.parametrize(
    "body, want",
    [
        # expf's two constants once a thread, the kernel divides: both IMAD.MOV.U32
        ("y[i] = expf(x[i]) / z[i];", 2.0),
        # logf's one, with a division
        ("y[i] = logf(z[i]) / z[i];", 1.0),
        # expf beside a sinf (its own slow path): IMAD.MOV.U32 as well
        ("y[i] = expf(x[i]) + sinf(z[i]);", 2.0),
        # no division, sine or cosine: HFMA2.MMA and MOV (class other), none here
        ("y[i] = expf(x[i]) + z[i];", 0.0),
        # a square root's slow path is not one of them
        ("y[i] = expf(x[i]) + sqrtf(z[i]);", 0.0),
        # a division without a library constant: nothing to move
        ("y[i] = x[i] / z[i];", 0.0),
        # the calls in a loop: ptxas mixes the two moves there, not counted
        ("float s = 0; for (int j = 0; j < N; j++) s += expf(A[i][j]) / z[j]; y[i] = s;",
         0.0),
        # two calls in the straight-line code of a dividing kernel: 4
        ("y[i] = (expf(x[i]) + expf(z[i])) / z[i];", 4.0),
    ],
    ids=["exp_div", "log_div", "exp_sin", "exp_add", "exp_sqrt", "div_only", "in_loop",
         "two_exps"],
)
def test_library_constants_move_on_the_fma_pipe_in_a_dividing_kernel(
        tmp_path: Path, body: str, want: float) -> None:
    assert _moves(tmp_path, body) == pytest.approx(want)


def test_the_table_of_the_rule() -> None:
    """The operations of eq. (12cm) and the constants a call moves (the SASS of arith_ops'
    exp_f32 and log_f32: 2 and 1)."""
    assert FMA_PIPE_MOVE_OPS == {"fdiv_f32", "sin_f32", "cos_f32"}
    assert TRIP_CONSTANTS == {"exp_f32": 2, "log_f32": 1}
