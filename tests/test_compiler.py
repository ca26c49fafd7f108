"""Tests of cgpredict.frontend.compiler's IR flags: dead stores deleted within their block
only, as NVVM does (eq. (12w)).

Oracles: the stores of the sm_90 SASS of the restrict CORR mean (validation/cuda/corr.cu,
``-DCGP_PORT_RESTRICT=1``): ``mean[j] = 0``, the register-promoted sum's store at the loop's
exit and the division's store, 3 ``STG`` a thread; of the plain port: those 2 and one per
iteration (the accumulator may alias ``data``), 1 + 64 + 1 at N = 64. Two stores to one
element in one block keep only the last (the division's and the square root's of CORR's
standard deviation: ``stddev[j] /= FLOAT_N; stddev[j] = sqrtf(stddev[j])``: 1 store).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cgpredict.frontend.compiler import DSE_FLAGS, IR_FLAGS
from cgpredict.pipeline import predict_source
from cgpredict.prediction import RunOptions

MEAN = """\
#include <math.h>
#define N 64
#pragma cgp trace N=64
static float data[N][N], mean[N], sd[N];
int main(void) {
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) data[i][j] = i - j;
#pragma cgp kernel mean grid=1
  for (int j = 0; j < N; j++) {
    mean[j] = 0.0f;
    for (int i = 0; i < N; i++)
      mean[j] += data[i][j];
    mean[j] /= 64.0f;
  }
#pragma cgp kernel root grid=1
  for (int j = 0; j < N; j++) {
    sd[j] = mean[j] * mean[j] + 1.0f;
    sd[j] /= 64.0f;
    sd[j] = sqrtf(sd[j]);
  }
  return mean[3] + sd[3] != 12345.0f ? 0 : 1;
}
"""


def test_the_flags_keep_dead_store_elimination_in_its_block() -> None:
    assert tuple(IR_FLAGS[-len(DSE_FLAGS):]) == DSE_FLAGS
    assert DSE_FLAGS == ("-mllvm", "-dse-memoryssa-otherbb-cost=1000")


@pytest.mark.parametrize("port,mean,root", [("restrict", 3.0, 1.0), ("plain", 1.0 + 64 + 1, 1.0)])
def test_a_promoted_sum_keeps_its_stores_before_and_after_the_loop(
    tmp_path: Path, port: str, mean: float, root: float
) -> None:
    path = tmp_path / "k.c"
    path.write_text(MEAN)
    pred = predict_source(path, RunOptions(device="h100", port=port))
    kernels = {k.name: k for k in pred.kernels}
    stores = {name: sum(m.per_thread for m in k.mem if m.kind == "store")
              for name, k in kernels.items()}
    assert stores["mean"] == pytest.approx(mean)
    assert stores["root"] == pytest.approx(root)
