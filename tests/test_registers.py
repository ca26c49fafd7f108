"""Tests of cgpredict.registers: the registers a thread of the port, estimated from the C's IR
(eq. (RG1), (RG2)).

Oracles by hand from the terms the module states. ROWDOT's k loop carries k and s (C = 2),
holds i for the store after it (L = 1), advances one pointer into A's row and one into B
(P = 2: 4 registers), loads 2 floats an iteration (D = 2) and holds the product until the add
(W = 1): 10 with one iteration's loads in flight, 2 + 1 more (RESERVED, the stack pointer)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cgpredict.devices import list_devices, load_device
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare
from cgpredict.registers import (
    RESERVED,
    STACK_POINTER,
    estimate_registers,
    full_occupancy_registers,
    value_registers,
)

ROWDOT = """\
#define N 64
#define M 64
#pragma cgp trace N=64 M=64
static float A[N][M], B[M], C[N];
int main(void) {
  for (int i = 0; i < N; i++) { B[i] = i; for (int k = 0; k < M; k++) A[i][k] = i + k; }
#pragma cgp kernel rowdot grid=1
  for (int i = 0; i < N; i++) {
    float s = 0.0f;
    for (int k = 0; k < M; k++) s += A[i][k] * B[k];
    C[i] = s;
  }
  return C[3] > 0.0f ? 0 : 1;
}
"""

# the k loop stores D[i][k]: a plain port's store may alias the next iteration's loads
SCALE = """\
#define N 64
#define M 64
#pragma cgp trace N=64 M=64
static float A[N][M], D[N][M];
int main(void) {
  for (int i = 0; i < N; i++) for (int k = 0; k < M; k++) A[i][k] = i + k;
#pragma cgp kernel scale grid=1
  for (int i = 0; i < N; i++)
    for (int k = 0; k < M; k++) D[i][k] = A[i][k] * 3.0f;
  return D[3][1] > 0.0f ? 0 : 1;
}
"""

# twelve double accumulators: more than 32 registers with one iteration's load in flight
WIDE = """\
#define N 64
#define M 64
#pragma cgp trace N=64 M=64
static double A[N][M], C[N];
int main(void) {
  for (int i = 0; i < N; i++) for (int k = 0; k < M; k++) A[i][k] = i + k;
#pragma cgp kernel wide grid=1
  for (int i = 0; i < N; i++) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0;
    double s6 = 0, s7 = 0, s8 = 0, s9 = 0, s10 = 0, s11 = 0;
    for (int k = 0; k < M; k++) {
      double x = A[i][k];
      s0 += x * 1.5; s1 += x * 2.5; s2 += x * 3.5; s3 += x * 4.5; s4 += x * 5.5;
      s5 += x * 6.5; s6 += x * 7.5; s7 += x * 8.5; s8 += x * 9.5; s9 += x * 10.5;
      s10 += x * 11.5; s11 += x * 12.5;
    }
    C[i] = s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7 + s8 + s9 + s10 + s11;
  }
  return C[3] > 0.0 ? 0 : 1;
}
"""


def _estimate(tmp_path: Path, src: str, unroll: int, restrict: bool = False):
    path = tmp_path / "k.c"
    path.write_text(src)
    with prepare(path, RunOptions(device="h100")) as prep:
        tr = prep.trace
        loops = {lp.id: unroll for lp in tr.header.loops if lp.depth > 1}
        return estimate_registers(tr, 0, 1, loops, restrict)


def test_value_sizes() -> None:
    assert [value_registers(t) for t in ("float", "i32", "i64", "double", "ptr", "i1",
                                         "<4 x float>", "<2 x double>")] == [1, 1, 1, 2, 2, 0,
                                                                            4, 4]


@pytest.mark.parametrize("name", list_devices())
def test_the_budget_is_registers_per_sm_over_threads_per_sm(name: str) -> None:
    d = load_device(name)
    assert full_occupancy_registers(d) == d.registers_per_sm // d.max_threads_per_sm == 32


def test_rowdot_by_hand(tmp_path: Path) -> None:
    e = _estimate(tmp_path, ROWDOT, unroll=4)
    loop = [s for s in e.sections if s.where.startswith("loop")][0]
    assert (loop.carried, loop.live_in, loop.pointers, loop.loaded, loop.working) == (
        2, 1, 2, 2, 1)
    base = RESERVED + STACK_POINTER
    assert e.minimum == base + 10
    assert e.hoisted == base + 10 + 3 * 2  # 4 iterations' loads in flight
    assert e.registers == e.hoisted == 19  # within the budget of 32


def test_hoisting_stops_at_the_budget(tmp_path: Path) -> None:
    e = _estimate(tmp_path, ROWDOT, unroll=16)
    assert e.hoisted == 3 + 10 + 15 * 2
    assert e.registers == 32


def test_a_plain_ports_store_keeps_loads_in_their_iteration(tmp_path: Path) -> None:
    plain = _estimate(tmp_path, SCALE, unroll=4)
    restrict = _estimate(tmp_path, SCALE, unroll=4, restrict=True)
    loop = [s for s in plain.sections if s.where.startswith("loop")][0]
    assert loop.unroll == 1 and plain.hoisted == plain.minimum
    assert restrict.hoisted == restrict.minimum + 3 * loop.loaded


def test_more_than_the_budget_when_one_iteration_needs_it(tmp_path: Path) -> None:
    e = _estimate(tmp_path, WIDE, unroll=4)
    loop = [s for s in e.sections if s.where.startswith("loop")][0]
    assert loop.carried == 1 + 12 * 2  # k and twelve doubles
    assert loop.loaded == 2
    assert e.registers == e.minimum > 32
