"""The load/store (L1) path of an L1-served row walk, end to end on a kernel of our own
(nothing in the corpus, nothing tuned): thread i sums row i of A[64][64] into a register and
stores w[i] once. Hand oracle for the H100 (128-B L1 lines of four 32-B sectors, loads cached
in L1): a warp instruction reads 32 rows 256 B apart, 32 distinct sectors; a sector holds 8
floats, so 7 of every 8 instructions of a lane's walk find their sector in the L1 (64 rows of
2 lines spread over the 4-way L1's sets: nothing evicted), and each L1-served instruction
costs smem_issue_cycles per line it reads: 64 x 7/8 x 32 of them a warp."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from cgpredict.block import Block
from cgpredict.devices import load_device
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare

pytestmark = pytest.mark.usefixtures("compiler")

DEVICES = Path(__file__).resolve().parents[1] / "cgpredict" / "devices"

ROWSUM = """#include <stdio.h>
#ifndef N
#define N 64
#endif
static float A[N][N];
static float w[N];
int main(void)
{
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = (float)(i + j) / N;
#pragma cgp kernel rowsum grid=1
  for (int i = 0; i < N; i++) {
    float s = 0.0f;
    for (int j = 0; j < N; j++)
      s += A[i][j];
    w[i] = s;
  }
  printf("%f\\n", w[N - 1]);
  return 0;
}
"""


def test_row_walk_reads_a_line_per_row_on_the_l1_path(tmp_path) -> None:
    src = tmp_path / "rowsum.c"
    src.write_text(ROWSUM)
    opts = RunOptions(work_sizes={"N": 64}, trace_sizes={"N": 64})
    with prepare(src, opts) as prep:
        k = prep.analyze(dataclasses.replace(opts, device="h100")).kernels[0]
    walk = k.profile.uncoal
    assert walk.insts == pytest.approx(64)
    assert walk.sectors_per_warp == pytest.approx(32)
    assert walk.l1_hit_fraction == pytest.approx(7 / 8)
    per_line = load_device("h100").smem_issue_cycles
    assert k.result.details.l1_cycles == pytest.approx(per_line * 64 * 7 / 8 * 32)
    # the store of w[i]: one coalesced 128-B line, four sectors, never L1-served
    assert k.profile.stores.coal.insts == pytest.approx(1)
    assert k.profile.stores.coal.l2_trans_per_warp == pytest.approx(4)


def test_row_walk_at_a_power_of_two_stride_stays_in_the_h100_l1(tmp_path) -> None:
    """N = 1024: a block's 256 lanes walk 256 rows 4 KiB (32 lines) apart, one line each.
    The H100 file's L1 is fully associative (l1_ways 2048 = 256 KiB / 128 B, as Nsight
    Compute's 7/8 hit rate on ATAX k1 at N = 4096 requires): the 256 lines fit, so 7 of 8
    instructions are L1-served. A 4-way L1 indexed modulo its 512 sets maps line 32 r to
    set 32 r mod 512: 16 sets of 16 lines cycling through 4 ways, every access a miss."""
    src = tmp_path / "rowsum.c"
    src.write_text(ROWSUM)
    opts = RunOptions(work_sizes={"N": 1024}, trace_sizes={"N": 1024}, block=Block(256))
    dev = load_device("h100")
    assert dev.l1_ways == dev.l1_bytes // dev.l1_line_bytes == 2048
    text = (DEVICES / "h100.toml").read_text()
    four_way = tmp_path / "h100_4way.toml"
    four_way.write_text(re.sub(r"(?m)^l1_ways = 2048", "l1_ways = 4", text))
    with prepare(src, opts) as prep:
        full = prep.analyze(dataclasses.replace(opts, device="h100")).kernels[0]
        four = prep.analyze(dataclasses.replace(opts, device=str(four_way))).kernels[0]
    assert full.profile.uncoal.l1_hit_fraction == pytest.approx(7 / 8)
    assert four.profile.uncoal.l1_hit_fraction == pytest.approx(0.0)
