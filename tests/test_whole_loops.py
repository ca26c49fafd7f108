"""Tests of eq. (12wu), a loop nvcc unrolls whole (cgpredict.whole_loops,
kernel.launch_loops.unrolled_whole): from first principles, a constant trip count of at most
compute.UNROLL_WHOLE iterations is unrolled into straight code whose copies name the
induction as an immediate, so the SASS keeps none of the loop's control or index arithmetic
(RegionLoops.kept: 0 a source iteration), no set-up move before it, and forms a pointer
(IMAD.WIDE) only for an array a thread's value offsets (in[i + k]: one; c[k]: none)."""

from __future__ import annotations

from pathlib import Path

from cgpredict.kernel.launch_loops import region_loops, unrolled_whole
from cgpredict.machine_code import machine_shape
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare
from cgpredict.warps import mapped_loops
from cgpredict.whole_loops import offset_arrays, whole_shape

TAPS = """\
#define N 256
#define K 5
#pragma cgp trace N=256
static float in[N + K], c[K], y[N];
int main(void) {
  for (int i = 0; i < N + K; i++) in[i] = i % 7;
  for (int k = 0; k < K; k++) c[k] = k + 1;
#pragma cgp kernel k grid=1
  for (int i = 0; i < N; i++) {
    float s = 0;
    for (int k = 0; k < K; k++) s += c[k] * in[i + k];
    y[i] = s;
  }
  return y[3] != 12345.0f ? 0 : 1;
}
"""


def test_a_constant_tap_loop_keeps_no_control_and_one_pointer(tmp_path: Path) -> None:
    path = tmp_path / "taps.c"
    path.write_text(TAPS)
    with prepare(path, RunOptions(device="h100")) as prep:
        tr = prep.trace
        (lp,) = [lp for lp in tr.header.loops if lp.region == 0 and lp.depth == 2]
        assert unrolled_whole(tr, lp.id)  # 5 iterations an entry, every entry
        assert not unrolled_whole(tr, lp.id, sized=True)  # a size's loop is a run-time trip
        loops = region_loops(tr, [lp.id], lambda _: 1.0, {})
        assert loops.whole == frozenset({lp.id}) and loops.kept(lp.id) == 0.0
        assert loops.unroll(lp.id) == 5
        # c[k] is its base plus an immediate; in[i + k] needs in + 4 i: one IMAD.WIDE
        assert offset_arrays(tr, lp, set()) == 1
        d1, _ = mapped_loops(tr, 0)
        shape = machine_shape(tr, 0, 1, d1, set())
        assert dict(shape.loop_pointers)[lp.id] == 2  # a run-time loop would advance both
        whole = whole_shape(shape, tr, loops.whole, set())
        assert dict(whole.loop_pointers)[lp.id] == 1
        assert lp.id in dict(shape.loop_setups) and lp.id not in dict(whole.loop_setups)
        assert whole_shape(shape, tr, frozenset(), set()) is shape
