"""The port's run-time loop bounds (cgpredict.frontend.loop_bounds).

Oracles: positions counted by hand in small sources; an IR line rewritten by hand; and what
nvcc makes of a loop whose trip count is a kernel parameter (the sm_90 PTX of
validation/cuda/atax.cu, ``-DCGP_PORT_RESTRICT=1``: ``st.global [tmp + i], 0`` before the
zero-trip test, the sum's ``st.global`` after the loop): a store before the loop that the
loop's register-promoted sum overwrites stays, because the loop may run no iteration.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cgpredict.frontend.loop_bounds import (
    bound_sites,
    function_spans,
    header_span,
    opaque_bounds,
)
from cgpredict.pipeline import predict_source
from cgpredict.prediction import RunOptions

NEST = """\
int main(void) {
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++) {
      for (int k = 0; k < NK && k < 7; k++) s += 1;
      for (int q = 0; q < 4; q++) s += 2;
      for (int p = 0; NK > p; p++) s += 3;
    }
}
"""


def test_sites_are_the_size_comparisons_of_the_loops_below_the_mapped_ones() -> None:
    """Lines 2-3 are the 2-D grid (left alone); line 4: `k < NK` at column 25 names a size,
    `k < 7` does not; line 5 names none; line 6: `NK > p`, the operator at column 26."""
    sites = bound_sites(NEST, [(2, 8, 2)], ["NI", "NJ", "NK"])
    assert sites == frozenset({(4, 25), (6, 26)})


def test_an_automatic_grid_leaves_at_most_two_perfectly_nested_loops() -> None:
    assert bound_sites(NEST, [(2, 8, 0)], ["NI", "NJ", "NK"]) == frozenset({(4, 25), (6, 26)})
    # a 1-D grid: the j loop is a loop of the thread, its bound a run-time size
    assert (3, 23) in bound_sites(NEST, [(2, 8, 1)], ["NI", "NJ", "NK"])
    # outside every kernel: nothing
    assert bound_sites(NEST, [(9, 9, 1)], ["NI", "NJ", "NK"]) == frozenset()


def test_a_function_kernel_spans_its_body_with_its_grid_found_later() -> None:
    """--function kernels: the body of main is lines 1-8 of NEST (from its brace to its
    closing one); a name not defined gives nothing."""
    assert function_spans(NEST, ["main", "absent"]) == [(1, 8, 0)]


IR = """\
for.cond:
  %0 = load i32, ptr %k, align 4, !dbg !50
  %cmp = icmp slt i32 %0, 64, !dbg !51
  %cmp2 = icmp slt i32 %0, 7, !dbg !52
!51 = !DILocation(line: 4, column: 26, scope: !3)
!52 = !DILocation(line: 4, column: 38, scope: !3)
"""


def test_the_compared_constant_becomes_an_opaque_copy() -> None:
    out = opaque_bounds(IR, frozenset({(4, 26)}))
    assert '%__cgp_bound.0 = call i32 asm "", "=r,0"(i32 64) nounwind memory(none), !dbg !51' in out
    assert "%cmp = icmp slt i32 %0, %__cgp_bound.0, !dbg !51" in out
    assert "%cmp2 = icmp slt i32 %0, 7, !dbg !52" in out  # not a site
    assert opaque_bounds(IR, frozenset()) == IR


ROWSUM = """\
#define N 64
#pragma cgp trace N=64
static float A[N][N], x[N], y[N];
int main(void) {
  for (int i = 0; i < N; i++) { x[i] = i; for (int j = 0; j < N; j++) A[i][j] = i - j; }
#pragma cgp kernel rowsum grid=1
  for (int i = 0; i < N; i++) {
    y[i] = 0.0f;
    for (int j = 0; j < N; j++)
      y[i] += A[i][j] * x[j];
  }
  return y[3] != 12345.0f ? 0 : 1;
}
"""


@pytest.mark.parametrize("port,stores", [("restrict", 2.0), ("plain", 1.0 + 64)])
def test_the_store_before_a_loop_of_run_time_trips_stays(
    tmp_path: Path, port: str, stores: float
) -> None:
    """restrict: y[i] = 0 and the sum after the loop (nvcc's two stores; clang would delete
    the first were the trip count known); plain: y[i] = 0 and one store per iteration."""
    path = tmp_path / "k.c"
    path.write_text(ROWSUM)
    (k,) = predict_source(path, RunOptions(device="h100", port=port)).kernels
    st = sum(m.per_thread for m in k.mem if m.kind == "store")
    assert st == pytest.approx(stores)


def test_header_span_of_a_for_over_lines():
    """By hand: the header ``for (int i = 0;\n i < N;\n i++)`` starts on line 2 and closes on
    line 4; a line with no ``for`` has no span (eq. (MG0))."""
    text = "int x;\nfor (int i = 0;\n     i < N;\n     i++)\n  a[i] = 0;\n"
    assert header_span(text, 2) == (2, 4)
    assert header_span(text, 5) is None
