"""The trace-size check (footprint.py, reuse.scale_gathered; issue 25 item 2).

* a uniform random gather over L lines, traced small and grown g times, keeps the hit rate of
  an LRU cache of C lines over L x g lines: C / (L g) (a brute-force LRU is the oracle);
* a random-column CSR SpMV on the TK1 (x of NC floats against a 128 KB L2) predicted from
  traces at 4096, 16384 and 65536 rows: within 10% of each other, or warned; the x[col[k]]
  hit rate near 128 KB / 4 MB = 3%, not the 87% of the trace at 4096 rows;
* every prediction states the check per cache level.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from conftest import lru_hit_rate

from cgpredict.memory.footprint import gathered_loads
from cgpredict.memory.lru import CacheConfig, hit_mask
from cgpredict.memory.reuse import CacheScale, scale_gathered
from cgpredict.pipeline import predict_source
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare


def test_scaled_gather_keeps_the_work_size_hit_rate():
    rng = random.Random(3)
    small, grow, cap, n = 64, 8, 32, 40_000
    traced = [rng.randrange(small) for _ in range(n)]
    work = [rng.randrange(small * grow) for _ in range(n)]
    cache = CacheConfig(line_bytes=64, sets=1, ways=cap)
    lines = np.array(traced, np.uint64)
    exact = hit_mask(lines, cache)
    assert exact.mean() == pytest.approx(lru_hit_rate(traced, cap), abs=1e-12)  # ~50%
    sids = np.zeros(n, np.int64)
    scaled = scale_gathered(lines, exact, sids, cache, CacheScale(gathers=((0, float(grow)),)))
    truth = lru_hit_rate(work, cap)  # C / (L g) = 32 / 512
    assert truth == pytest.approx(cap / (small * grow), abs=0.01)
    assert scaled[n // 10:].mean() == pytest.approx(truth, abs=0.01)
    # another instruction's accesses are left as they were
    other = scale_gathered(lines, exact, sids + 1, cache, CacheScale(gathers=((0, 8.0),)))
    assert (other == exact).all()


SPMV = r"""
#include <stdio.h>
#ifndef NR
#define NR (1 << 20)
#endif
#ifndef NC
#define NC (1 << 20)
#endif
#define NNZ_ROW 16
static int rowptr[NR + 1];
static int col[NR * NNZ_ROW];
static float val[NR * NNZ_ROW];
static float x[NC];
static float y[NR];
int main(void)
{
  unsigned int seed = 2024u;
  for (int r = 0; r <= NR; r++)
    rowptr[r] = r * NNZ_ROW;
  for (int k = 0; k < NR * NNZ_ROW; k++) {
    seed = seed * 1664525u + 1013904223u;
    col[k] = (int)((seed >> 8) % NC);
    val[k] = 1.0f;
  }
  for (int c = 0; c < NC; c++)
    x[c] = (float)(c % 3);
#pragma cgp kernel spmv grid=1
  for (int r = 0; r < NR; r++) {
    float s = 0.0f;
    for (int k = rowptr[r]; k < rowptr[r + 1]; k++)
      s += val[k] * x[col[k]];
    y[r] = s;
  }
  printf("%f\n", (double)y[7]);
  return 0;
}
"""

WORK = {"NR": 1 << 20, "NC": 1 << 20}


@pytest.fixture(scope="module")
def spmv(tmp_path_factory, compiler):
    """(trace rows -> the spmv kernel's report on the TK1), from a random-column source."""
    src = tmp_path_factory.mktemp("spmv") / "spmv_random.c"
    src.write_text(SPMV)
    out = {}
    for rows in (4096, 16384, 65536):
        opts = RunOptions(device="tk1", work_sizes=WORK,
                          trace_sizes={"NR": rows, "NC": rows})
        (k,) = predict_source(src, opts).kernels
        out[rows] = k
    return src, out


def test_spmv_gathers_x_only(spmv):
    src, _ = spmv
    with prepare(src, RunOptions(work_sizes=WORK, trace_sizes={"NR": 512, "NC": 512})) as p:
        tr = p.trace
        names = {tr.header.mem[s].base for s in gathered_loads(tr, 0)}
    assert names == {"x[col[k]]"}


def test_spmv_predictions_agree_across_trace_sizes_or_warn(spmv):
    _, ks = spmv
    times = {rows: k.total_ms for rows, k in ks.items()}
    big = times[65536]
    for rows, t in times.items():
        warned = any("trace-size check moved" in w for w in ks[rows].warnings)
        assert abs(t / big - 1) <= 0.10 or warned, times


def test_spmv_x_hit_rate_is_that_of_the_work_size(spmv):
    """x: 4 MB of random gathers against 128 KB of L2 (2048 lines): at most ~3% hit."""
    _, ks = spmv
    for rows, k in ks.items():
        (x,) = [m for m in k.mem if m.text == "x[col[k]]"]
        assert x.l2_hit_rate <= 128 * 1024 / (4 * WORK["NC"]) + 0.01, (rows, x.l2_hit_rate)


def test_every_prediction_states_the_check(spmv):
    _, ks = spmv
    for k in ks.values():
        assert any(line.startswith("L2 ") for line in k.size_check), k.size_check
    assert any("gathers into x" in line for line in ks[4096].size_check)
    assert any("x" in line and "fit it traced" in line for line in ks[4096].size_check)


def test_h100_l1_gathers_outgrow_the_l1_not_the_l2(spmv):
    """On the H100 x (16 KB traced at 4096 rows, 4 MB worked) outgrows the 256 KB L1 but not
    a 25 MB L2 partition: its L1 reuse is grown (eq. (LP2)), its L2 reuse is not, and the
    L1 serves x at most the work size's share, 256 KB / 4 MB, not the trace's nearly all."""
    src, _ = spmv
    opts = RunOptions(device="h100", work_sizes=WORK, trace_sizes={"NR": 4096, "NC": 4096})
    (k,) = predict_source(src, opts).kernels
    assert any("gathers into x" in line and "in the L1" in line for line in k.size_check)
    (x,) = [m for m in k.mem if m.text == "x[col[k]]"]
    assert x.l2_trans_per_warp >= 32 * (1 - 256 * 1024 / (4 * WORK["NC"])) - 1.0
