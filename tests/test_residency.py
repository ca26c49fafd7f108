"""Tests of cgpredict.memory.residency and memory.warm_start: data a launch finds in the L2 from
earlier launches.

Hand oracles on a three-kernel program at N = 256 (floats): k1 writes A (N x N, 256 KiB)
from x; k2 reads A and writes y (N floats); k3 reads B (N x N, never touched by a kernel)
and y. Since its last use, A has seen 256 KiB + 1 KiB (A and x, touched by k1); y 1 KiB +
256 KiB (y and A, touched by k2). B was only initialised by the host: never resident."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from cgpredict.devices import load_device
from cgpredict.memory.residency import region_arrays, resident_arrays, warm_start
from cgpredict.memory.transactions import InstrMemStats, MemoryAnalysis
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare

THREE_C = r"""
#include <stdio.h>
#ifndef N
#define N 64
#endif
#pragma cgp trace N=64
static float A[N][N], B[N][N], x[N], y[N];
int main(void) {
  for (int i = 0; i < N; i++) {
    x[i] = (float)i;
    for (int j = 0; j < N; j++) B[i][j] = (float)(i - j);
  }
#pragma cgp kernel k1 grid=2
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = x[i] * x[j];
#pragma cgp kernel k2 grid=1
  for (int i = 0; i < N; i++) {
    float s = 0.0f;
    for (int j = 0; j < N; j++) s += A[j][i];
    y[i] = s;
  }
#pragma cgp kernel k3 grid=1
  for (int i = 0; i < N; i++) {
    float s = 0.0f;
    for (int j = 0; j < N; j++) s += B[j][i] * y[j];
    x[i] = s;
  }
  printf("%f\n", x[3]);
  return 0;
}
"""

KIB = 1024.0


@pytest.fixture(scope="module")
def three(tmp_path_factory, compiler):
    src = tmp_path_factory.mktemp("residency") / "three.c"
    src.write_text(THREE_C)
    with prepare(src, RunOptions(device="h100", work_sizes={"N": 256})) as prep:
        prep.sizes.launches  # the probes' fit, while the files exist
        yield src, prep


def test_array_sizes_at_the_work_size(three):
    _, prep = three
    assert prep.sizes.array_bytes("A", {"N": 256}) == 256 * 256 * 4
    assert prep.sizes.array_bytes("x", {"N": 256}) == 256 * 4
    assert prep.sizes.array_bytes("nothing", {"N": 256}) is None


def test_resident_arrays_by_hand(three):
    _, prep = three
    tr, work = prep.trace, {"N": 256}
    touched = region_arrays(tr)
    assert touched[0] == {"A", "x"} and touched[1] == {"A", "y"} and touched[2] == {"B", "x", "y"}
    rows = {int(tr.launches["region"][r]): r for r in range(len(tr.launches))}

    def resident(region, capacity):
        got = resident_arrays(tr, rows[region], prep.sizes, work, capacity, touched)
        return {r.array: (r.bytes, r.since_bytes) for r in got}

    assert resident(0, 1e9) == {}  # the first launch finds nothing
    assert resident(1, 1e9) == {"A": (256 * KIB, 257 * KIB)}
    # k3 loads y (in the L2 since k2, which touched A and y) and B (never); x it only stores
    assert resident(2, 1e9) == {"y": (KIB, 257 * KIB)}
    assert resident(1, 257 * KIB) == {"A": (256 * KIB, 257 * KIB)}  # exactly fits
    assert resident(1, 257 * KIB - 1) == {}
    assert resident(1, 0) == {}


def test_warm_start_turns_first_touch_misses_into_hits():
    s = InstrMemStats(3, (10, 0, 0), (40, 0, 0), (25, 0, 0), cold=(20, 0, 0))
    other = InstrMemStats(4, (10, 0, 0), (40, 0, 0), (30, 0, 0), cold=(30, 0, 0))
    mem = MemoryAnalysis((s, other), 80, 25)
    warm = warm_start(mem, frozenset({3}))
    assert warm.by_sid()[3].dram_trans == (5, 0, 0) and warm.by_sid()[3].cold == (0, 0, 0)
    assert warm.by_sid()[4] == other
    assert warm.l2_hits == 45 and warm.l2_accesses == 80
    assert warm_start(mem, frozenset()) is mem


def test_a_resident_array_makes_the_next_kernel_hit(three):
    """k2 finds A in the L2: its first reads hit, and with nothing persisting between
    launches it is slower and hits less; k1, which finds nothing, does not change."""
    _, prep = three
    rep = prep.analyze(RunOptions(device="h100", work_sizes={"N": 256}))
    k2 = rep.kernels[1]
    assert any("A (0.3 MB" in w and "still in the L2" in w for w in k2.warnings)
    assert not any("still in the L2" in w for w in rep.kernels[0].warnings)
    # with nothing persisting between launches, k2 reads A from DRAM again
    cold = dataclasses.replace(load_device("h100"), l2_persist_bytes=0)
    rep0 = prep.analyze(RunOptions(device="h100", work_sizes={"N": 256}), cold)
    assert rep0.kernels[1].l2_hit_rate < k2.l2_hit_rate
    assert rep0.kernels[1].total_ms >= k2.total_ms
    assert rep0.kernels[0].total_ms == pytest.approx(rep.kernels[0].total_ms)
    assert np.isfinite(k2.total_ms)
