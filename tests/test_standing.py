"""Tests of cgpredict.kernel.standing: the launch whose pseudo-warps stand for a region, eq. (RL).

Oracles from first principles: the rule on hand-made launch widths; the data-stage passes of
one warp of an anti-diagonal (each lane its own row of a power-of-two pitch: 32 rows in one
bank, 32 passes by eq. (B2w)) against the single lane the first diagonal traces (1 pass); and
a wavefront host loop traced end to end, whose first launches of 1 and 2 threads the tracer
records past until one fills a warp, the analysis then standing on that launch."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cgpredict.block import Block
from cgpredict.kernel.standing import launch_threads, launches_to_record, standing_row
from cgpredict.memory.wavefronts import wavefront_counts
from cgpredict.pipeline import predict_source
from cgpredict.prediction import RunOptions

N = 64
DIAGONAL = f"""\
#ifndef N
#define N {N}
#endif
#pragma cgp trace N={N}
static int H[N + 1][N + 1];
int main(void) {{
  for (int i = 0; i <= N; i++) {{ H[i][0] = -i; H[0][i] = -i; }}
  for (int d = 2; d <= 2 * N; d++) {{
    int ilo = d - N > 1 ? d - N : 1;
    int ihi = d - 1 < N ? d - 1 : N;
#pragma cgp kernel diag grid=1
    for (int i = ilo; i <= ihi; i++) {{
      int j = d - i;
      int m = H[i - 1][j - 1] + 1;
      int up = H[i - 1][j] - 1;
      int left = H[i][j - 1] - 1;
      if (up > m) m = up;
      if (left > m) m = left;
      H[i][j] = m;
    }}
  }}
  return H[N][N] > 0 ? 0 : 1;
}}
"""


@pytest.mark.parametrize("threads, row", [
    ([1, 2, 3, 32, 33, 64], 3),  # a host loop of growing launches: the first full warp
    ([40, 2, 1], 0),  # the first launch fills a warp: kept, as before (RL)
    ([4, 8, 8, 2], 1),  # none fills a warp: the first of the widest
    ([], -1),
])
def test_rule_by_hand(threads, row):
    assert standing_row(np.array(threads, np.int64)) == row


def _passes(lanes: int, pitch: int = 4 * (2048 + 1), d: int = 1500) -> int:
    """(B2w)/(B2t) passes of one warp load of H[i-1][j] on diagonal d, lanes i = 1..lanes."""
    addr = np.array([((i - 1) * pitch + 4 * (d - i)) for i in range(1, lanes + 1)], np.uint64)
    out = wavefront_counts(addr, np.array([0]), np.array([0]), np.array([1]),
                           np.array([4]), 1, 32, 4, tag_lines=4)
    return int(out[0, 1])


def test_an_anti_diagonal_warp_takes_a_pass_a_lane():
    """Lane l reads row i0 + l at column d - i0 - l: addresses (N + 1) x 4 - 4 = 4N bytes
    apart, N = 2048 a multiple of 32 words, so every lane is in one bank: 32 passes for the
    full warp, where the first diagonal's one lane takes 1 (what the model charged every
    launch before eq. (RL)); the tag stage (4 lines a cycle) gives only 8."""
    assert _passes(32) == 32
    assert _passes(1) == 1
    assert _passes(32, pitch=4 * 2049 + 4) == 8  # rows a word apart in bank: tags bind


@pytest.mark.usefixtures("compiler")
def test_a_wavefront_loop_stands_on_its_first_full_warp(tmp_path: Path):
    """Diagonal d has min(d - 1, 2N + 1 - d) cells: launch k (d = k + 2) has k + 1 threads,
    so launch 31 is the first with 32. The tracer records up to it (32 launches a region,
    not the default 2), and the analysis stands on it: each warp's three H loads take 32
    passes each (lanes in one bank), where the first launch's single lane gave 1 each."""
    src = tmp_path / "diag.c"
    src.write_text(DIAGONAL)
    rep = predict_source(src, RunOptions(block=Block(32, 1), device="h100"))
    (k,) = rep.kernels
    loads = k.profile.loads_only()
    lines = sum(p.insts * p.lines_per_warp for p in (loads.coal, loads.uncoal, loads.const))
    assert lines >= 3 * 32  # the three H loads, a row each lane
    assert lines < 3 * 32 + 8  # nothing else: no a or b in this kernel, fills ride along


@pytest.mark.usefixtures("compiler")
def test_the_tracer_records_up_to_the_first_full_warp(tmp_path: Path):
    """The default first 2 launches (1 and 2 threads) ask for 32 launches a region; the
    events that would take (several a thread, 528 threads) stay far under the limit, and a
    limit under twice them leaves the trace as it is. ``prepare`` records them."""
    from cgpredict.api import options
    from cgpredict.prepared import _trace, prepare

    src = tmp_path / "diag.c"
    src.write_text(DIAGONAL)
    narrow = _trace(src, options(block="32x1", device="h100"), tmp_path, {"N": N}, "n.cgptrace")
    rows, threads = launch_threads(narrow, 0)
    assert threads[:4].tolist() == [1, 2, 3, 4] and len(rows) == 2 * N - 1
    assert (narrow.launches["recorded"][rows] == 1).sum() == 2
    assert launches_to_record(narrow, 2, 10**9) == 32
    assert launches_to_record(narrow, 2, 2 * 528) == 0  # too many events: left as it is
    assert launches_to_record(narrow, 0, 10**9) == 0  # 0: every launch recorded already
    with prepare(src, options(block="32x1", device="h100")) as p:
        rows, _ = launch_threads(p.trace, 0)
        recorded = p.trace.launches["recorded"][rows] == 1
        assert recorded.sum() == 32 and recorded[:32].all()  # launches 0..31: 1..32 threads
        assert launches_to_record(p.trace, 32, 10**9) == 0
