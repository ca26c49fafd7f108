"""Tests of cgpredict.kernel.analysis: how a region's trace becomes per-launch model inputs.

Oracles from first principles: the active batch of the cache analysis is the set of warps the
occupancy calculation lets the SMs hold (SPEC §2.3), so the L2 hit rate of a kernel whose
threads each stream their own row depends on how many warps are resident."""

from __future__ import annotations

from pathlib import Path

import pytest

from cgpredict.block import Block
from cgpredict.devices import load_device
from cgpredict.kernel.region import resident_warps
from cgpredict.occupancy import BlockDoesNotFit
from cgpredict.pipeline import predict_source
from cgpredict.prediction import RunOptions

ROWS = """\
#ifndef N
#define N 2048
#endif
#pragma cgp trace N=2048
static float A[N][80], B[N][80], y[N];
int main(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < 80; j++) { A[i][j] = i + j; B[i][j] = i; }
#pragma cgp kernel rows grid=1
  for (int i = 0; i < N; i++) {
    float s = 0;
    for (int j = 0; j < 64; j++) s += A[i][j] + B[i][j];
    y[i] = s;
  }
  return y[7] > 0 ? 0 : 1;
}
"""


def test_resident_warps_follow_the_occupancy():
    tk1 = load_device("tk1")
    assert resident_warps(tk1, Block(32, 1), 32, 0) == 16  # 16 blocks/SM of one warp
    assert resident_warps(tk1, Block(64, 1), 32, 0) == 32
    assert resident_warps(tk1, Block(32, 32), 32, 0) == 64
    assert resident_warps(tk1, Block(32, 3), 32, 0) == 48  # whole blocks: 16 x 3 warps
    assert resident_warps(tk1, Block(32, 8), 32, 24 * 1024) == 16  # 2 blocks of 24 KB
    h100 = load_device("h100")
    assert resident_warps(h100, Block(32, 32), 32, 0) == 64 * 132
    with pytest.raises(BlockDoesNotFit, match="registers"):
        resident_warps(tk1, Block(32, 32), 64, 0)


@pytest.mark.usefixtures("compiler")
def test_cache_batch_is_the_resident_warps(tmp_path: Path):
    """Each thread reads 4 lines of its A row and 4 of its B row (64-B lines), one float at a
    time: a line is re-read 15 times, each after one instruction round of the batch, in which
    every resident thread touches 2 lines. 16 or 32 resident warps touch 1024 or 2048 lines
    per round, which the 2048-line TK1 L2 holds (15 of 16 accesses hit); 64 warps touch 4096
    and thrash it (no hits)."""
    src = tmp_path / "rows.c"
    src.write_text(ROWS)
    rates = {}
    for x in (32, 64, 256):
        (k,) = predict_source(src, RunOptions(block=Block(x, 1), device="tk1")).kernels
        rates[x] = k.l2_hit_rate
    assert rates[32] == pytest.approx(15 / 16, abs=0.01)
    assert rates[64] == pytest.approx(15 / 16, abs=0.01)
    assert rates[256] == pytest.approx(0.0, abs=0.01)
