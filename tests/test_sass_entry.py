"""Tests of cgpredict.sass_entry: a kernel's entry code and loop pointers as the sm_90 SASS
has them, against the PTX-level count.

Oracles by hand from the rule the module states (read from the SASS of covar_reduce,
fdtd_k2, gemver_k1, MM: validation/results/sass-check.md): per grid dimension an IMAD and an
ISETP (the PTX's mad and setp, in compute.kernel_entry_insts), no cvta per array, no loop
control of the mapped loop, one row index for a 2-D thread, the addresses its row completes
once per thread, an IADD3 per mapped index starting off 0, and an IMAD.WIDE per pointer a
sequential loop advances at each of its entries."""

from __future__ import annotations

from pathlib import Path

import pytest

from cgpredict.frontend.loop_bounds import condition_at, offset_size_bounds
from cgpredict.machine_code import MachineExtras, machine_extras, machine_shape
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare
from cgpredict.sass_entry import (
    EntryShape,
    entry_delta,
    hoisted_address_insts,
    loop_pointer_insts,
    row_test_insts,
    thread_shares,
)
from cgpredict.warps import mapped_loops

# 1-D, i from 1 to N - 1: B[i] = A[i - 1] + A[i + 1]. SASS integer: IMAD, ISETP, IADD3
# (1 + ...), UIADD3 (n - 1, the port's size a run-time parameter), IMAD.WIDE of A and of B
# = 6. PTX-level count: mad, setp, 2 cvta, the loop's add and icmp, 2 address geps (A[i - 1]
# and A[i + 1] fold into one: address_offsets.folded_address_insts) = 8 before the fold.
# Entry delta: +1 (start) + 1 (bound) - 2 (cvta) - 2 (add, icmp) = -2.
SHIFT = """\
#define N 64
#pragma cgp trace N=64
static float A[N], B[N];
int main(void) {
  for (int i = 0; i < N; i++) A[i] = i;
#pragma cgp kernel shift grid=1
  for (int i = 1; i < N - 1; i++) B[i] = A[i - 1] + A[i + 1];
  return B[3] != 12345.0f ? 0 : 1;
}
"""

# 2-D, covar_reduce's shape: D[i][j] -= m[j]. SASS integer: 2 IMAD, 2 ISETP, the row index
# (LEA), IMAD.WIDE of D and of m = 7. PTX-level: 2 mad, 2 setp, 2 cvta (entry); the inner
# loop's add, icmp and 2 geps once per thread; the outer loop's row gep D[i] and its add and
# icmp once per row (1/64 per thread). Entry delta: +1 - 1/64 (the row index for the row
# gep) - 2 (cvta) - 2 (inner add, icmp) - 2/64 (outer add, icmp) = -3 - 3/64.
REDUCE = """\
#define N 64
#pragma cgp trace N=64
static float D[N][N], m[N];
int main(void) {
  for (int i = 0; i < N; i++) { m[i] = i; for (int j = 0; j < N; j++) D[i][j] = i - j; }
#pragma cgp kernel reduce grid=2
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) D[i][j] -= m[j];
  return D[3][3] != 12345.0f ? 0 : 1;
}
"""

# 1-D with a sequential loop advancing A[i][j] and x[j]: 2 IMAD.WIDE before its one entry.
ROWSUM = """\
#define N 64
#pragma cgp trace N=64
static float A[N][N], x[N], y[N];
int main(void) {
  for (int i = 0; i < N; i++) { x[i] = i; for (int j = 0; j < N; j++) A[i][j] = i - j; }
#pragma cgp kernel rowsum grid=1
  for (int i = 0; i < N; i++) {
    float s = 0;
    for (int j = 0; j < N; j++) s += A[i][j] * x[j];
    y[i] = s;
  }
  return y[3] != 12345.0f ? 0 : 1;
}
"""


# Gram-Schmidt k2's shape inside its host loop over k: Q[i][k] = A[i][k] / R[k][k]. The IR
# forms A + k, Q + k, the row R[k] and &R[k][k] once per launch before the i loop; the sm_90
# SASS of gs_k2 forms per thread one IMAD i * 0x2000 + k (shared by A and Q: one shape, one
# index), and IMAD k * 0x2001 + IMAD.WIDE for &R[k][k]: 3 (eq. 12h).
COLUMN = """\
#define N 64
#pragma cgp trace N=64
static float A[N][N], Q[N][N], R[N][N];
int main(void) {
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) { A[i][j] = i - j; R[i][j] = 1 + i; }
  for (int k = 0; k < 2; k++) {
#pragma cgp kernel column grid=1
    for (int i = 0; i < N; i++) Q[i][k] = A[i][k] / R[k][k];
  }
  return Q[3][1] != 12345.0f ? 0 : 1;
}
"""


def _traced(tmp_path: Path, src: str, grid: int, port: str = "plain"):
    """(shape, block executions per thread, loop entries per thread) of the file's kernel."""
    path = tmp_path / "k.c"
    path.write_text(src)
    with prepare(path, RunOptions(device="h100", port=port)) as prep:
        tr = prep.trace
        d1, d2 = mapped_loops(tr, 0)
        mapped = d2 if grid == 2 else d1
        shape = machine_shape(tr, 0, grid, mapped, set())
        threads = float(sum(tr.loop_iters[:, i].sum() for i in mapped))
        per_thread = {b: float(n) / threads for b, n in enumerate(tr.bb_counts.sum(axis=0)) if n}
        entries = {lp.id: float(tr.loop_entries[:, lp.id].sum()) / threads
                   for lp in tr.header.loops}
    return shape, per_thread, entries


def test_a_1d_thread_drops_cvta_and_loop_control_and_adds_its_start(tmp_path: Path) -> None:
    shape, per_thread, _ = _traced(tmp_path, SHIFT, 1)
    e = shape.entry
    assert (e.grid, e.arrays, e.start_offsets, e.rows, e.row_addresses) == (1, 2, 1, (), ())
    assert e.bound_offsets == 1  # i < N - 1
    assert [n for _, n in e.latches] == [2]
    assert entry_delta(e, per_thread) == pytest.approx(1 + 1 - 2 - 2)


# 1-D reduction, dot_reduce's shape: s += x[i] * y[i]. The C loads s before the mapped
# loop and stores it after; the port passes s as a pointer (its atomic's address). PTX: a
# cvta per pointer parameter (x, y, s: 3); SASS (validation/cuda/user/dot_reduce.cu): none.
# Entry delta: -3 (cvta) - 2 (the mapped loop's add and icmp) = -5.
DOT = """\
#define N 64
#pragma cgp trace N=64
static float x[N], y[N], s;
int main(void) {
  for (int i = 0; i < N; i++) { x[i] = i; y[i] = 1; }
#pragma cgp kernel dot grid=1
  for (int i = 0; i < N; i++) s += x[i] * y[i];
  return s != 12345.0f ? 0 : 1;
}
"""


def test_a_reduction_accumulator_is_a_pointer_without_cvta(tmp_path: Path) -> None:
    shape, per_thread, _ = _traced(tmp_path, DOT, 1)
    e = shape.entry
    assert e.arrays == 3  # x, y and the accumulator s, stored after the mapped loop
    assert entry_delta(e, per_thread) == pytest.approx(-3 - 2)


def test_a_load_hoisted_before_the_mapped_loop_is_an_array_parameter(tmp_path: Path) -> None:
    """Restrict: clang hoists R[k][k]'s load before the i loop, once a launch; every CUDA
    thread loads it (eq. (12L)), so R is one of the entry's arrays as in the plain port
    (R[k][k] loaded in the loop): A, Q and R, 3 either way."""
    assert _traced(tmp_path, COLUMN, 1, "restrict")[0].entry.arrays == 3
    assert _traced(tmp_path, COLUMN, 1, "plain")[0].entry.arrays == 3


def test_a_hoisted_loads_address_is_formed_by_every_thread(tmp_path: Path) -> None:
    """Eq. (12h) with (12L): the IR computes before the mapped loop the columns A + k and
    Q + k (one index computation, shared: 1) and R[k][k] (the row R[k], then the element: 2
    getelementptr, the SASS's IMAD k * 0x2001 and IMAD.WIDE). Restrict hoists R[k][k]'s load
    with them, so the body uses that address through the load: 3 hoisted address
    instructions a thread all the same, as the plain port, whose body loads it itself."""
    shape, per_thread, _ = _traced(tmp_path, COLUMN, 1, "restrict")
    plain = _traced(tmp_path, COLUMN, 1, "plain")[0]
    assert hoisted_address_insts(shape.entry.hoisted, per_thread) == pytest.approx(3.0)
    assert hoisted_address_insts(plain.entry.hoisted, per_thread) == pytest.approx(3.0)


def test_a_2d_thread_forms_its_row_index_once(tmp_path: Path) -> None:
    shape, per_thread, _ = _traced(tmp_path, REDUCE, 2)
    e = shape.entry
    assert (e.grid, e.arrays, e.start_offsets, e.bound_offsets) == (2, 2, 0, 0)
    assert sum(n for _, n in e.rows) == 1 and e.row_addresses == ()
    assert sorted(n for _, n in e.latches) == [2, 2]
    assert entry_delta(e, per_thread) == pytest.approx(-3 - 3 / 64)


# 2-D transpose, the user kernel's shape: B[j][i] = A[i][j]. sm_90 SASS of
# validation/cuda/user/transpose.cu: IMAD x2, ISETP + ISETP.OR, LEA i * W + j (A's index),
# IMAD.WIDE, LEA j * W + i (B's: its row is the inner index j), IMAD.WIDE: 8 integer. The IR
# forms A[i] and the column B + i once per row (2 row pointers, 2/64 a thread) and steps B's
# row by j in the body (gep [64 x float], %col, %j): one row step (eq. 12t). Entry delta by
# hand: row index 1 - 2/64, row step + 1, cvta -2, the two mapped loops' add and icmp
# -(2 + 2/64): -2 - 4/64.
TRANSPOSE = """\
#define N 64
#pragma cgp trace N=64
static float A[N][N], B[N][N];
int main(void) {
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) A[i][j] = i - j;
#pragma cgp kernel transpose grid=2
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) B[j][i] = A[i][j];
  return B[3][3] != 12345.0f ? 0 : 1;
}
"""


MATMUL = """\
#define N 64
#pragma cgp trace N=64
static float A[N][N], B[N][N], C[N][N];
int main(void) {
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) { A[i][j] = i - j; B[i][j] = i; }
#pragma cgp kernel mm grid=2
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < N; k++) C[i][j] += A[i][k] * B[k][j];
  return C[3][3] != 12345.0f ? 0 : 1;
}
"""


def test_a_2d_thread_forms_a_second_linear_index_for_a_row_of_its_inner_index(
        tmp_path: Path) -> None:
    shape, per_thread, _ = _traced(tmp_path, TRANSPOSE, 2)
    e = shape.entry
    assert sum(n for _, n in e.row_steps) == 1
    assert all(per_thread[b] == pytest.approx(1.0) for b, _ in e.row_steps)
    assert entry_delta(e, per_thread) == pytest.approx(-2 - 4 / 64)


def test_rows_of_the_outer_index_or_a_sequential_loop_are_no_row_steps(tmp_path: Path) -> None:
    """D[i][j] (the row pointer D[i] formed per row: the row index) has none, nor has a
    sequential loop's B[k][j] (a pointer the k loop advances: machine_code.loop_pointers),
    nor the row B[j] a thread forms before its k loop (SYR2K's shape: one IMAD.WIDE of j
    into B's base, that loop's pointer)."""
    assert _traced(tmp_path, REDUCE, 2)[0].entry.row_steps == ()
    assert _traced(tmp_path, MATMUL, 2)[0].entry.row_steps == ()
    syr = MATMUL.replace("C[i][j] += A[i][k] * B[k][j]", "C[i][j] += A[i][k] * B[j][k]")
    assert _traced(tmp_path, syr, 2)[0].entry.row_steps == ()


def test_a_loop_forms_each_pointer_it_advances_at_each_entry(tmp_path: Path) -> None:
    shape, per_thread, entries = _traced(tmp_path, ROWSUM, 1)
    assert [n for _, n in shape.loop_pointers] == [loop_pointer_insts(2)] == [2]
    x = machine_extras(shape, entries.get, per_thread, touches_global=True, staging_stores=0.0)
    assert x.loop_pointers == pytest.approx(2.0)
    assert x.entry_code == pytest.approx(-1 - 2 - 2)  # 3 arrays, the i loop's add and icmp


def test_each_thread_forms_the_addresses_hoisted_before_the_mapped_loop(tmp_path: Path) -> None:
    shape, per_thread, _ = _traced(tmp_path, COLUMN, 1)
    assert sum(n for _, n in shape.entry.hoisted) == 3
    assert hoisted_address_insts(shape.entry.hoisted, per_thread) == pytest.approx(3.0)


def test_a_hoisted_address_counts_for_the_threads_that_use_it() -> None:
    # used by a block one thread in 256 runs (gs_k1's t == 0), and by two blocks of which
    # the most-run one runs once per thread (an address used again in an inner loop)
    hoisted = (((7,), 2), ((3, 4), 1))
    per_thread = {7: 1 / 256, 3: 1.0, 4: 64.0}
    assert hoisted_address_insts(hoisted, per_thread) == pytest.approx(2 / 256 + 1)


# conv3d's shape: a 2-D thread (j, k) in a host loop over the planes i. The IR forms the
# plane addresses of A[i - 1], A[i + 1] and B[i] once per launch before the j loop and uses
# them in the j loop's own block (once per row: 1/64 of a thread in the trace); every CUDA
# thread forms them itself (conv3d's sm_90 SASS: the plane folded into its LEA, IADD3
# -0x10000 for i - 1), so they count in full, as in a 1-D kernel (eq. 12h).
PLANES = """\
#define N 64
#pragma cgp trace N=64
static float A[N][N][N], B[N][N][N];
int main(void) {
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) for (int k = 0; k < N; k++)
    A[i][j][k] = i + j - k;
  for (int i = 1; i < N - 1; i++) {
#pragma cgp kernel planes grid=2
    for (int j = 0; j < N; j++)
      for (int k = 0; k < N; k++) B[i][j][k] = A[i - 1][j][k] + A[i + 1][j][k];
  }
  return B[3][3][3] != 12345.0f ? 0 : 1;
}
"""


def test_a_row_block_counts_once_per_thread_for_its_hoisted_addresses(tmp_path: Path) -> None:
    shape, per_thread, _ = _traced(tmp_path, PLANES, 2)
    e = shape.entry
    used = {b for blocks, _ in e.hoisted for b in blocks}
    n = sum(k for _, k in e.hoisted)
    assert n >= 2 and used <= e.row_blocks and len(e.row_headers) == 1
    assert per_thread[e.row_headers[0]] == pytest.approx(1 / 64)  # once per row in the trace
    assert hoisted_address_insts(e.hoisted, per_thread) == pytest.approx(n / 64)
    assert hoisted_address_insts(e.hoisted, thread_shares(e, per_thread)) == pytest.approx(n)


def test_thread_shares_divide_row_blocks_by_the_rows() -> None:
    e = EntryShape(grid=2, row_blocks=frozenset({1, 2}), row_headers=(1,))
    per_thread = {1: 1 / 64, 2: 1 / 128, 5: 1.0}
    assert thread_shares(e, per_thread) == pytest.approx({1: 1.0, 2: 0.5, 5: 1.0})
    assert thread_shares(EntryShape(grid=1), per_thread) == per_thread


def test_the_entry_code_and_pointers_are_integer_instructions_of_the_total() -> None:
    e = MachineExtras(prologue=3.0, folded_addresses=1.0, entry_code=-3.0, loop_pointers=2.0)
    assert e.integer == pytest.approx(-2.0) and e.total == pytest.approx(1.0)
    assert e.added == pytest.approx(3.0)  # machine_insts: the SASS's own instructions only
    assert entry_delta(EntryShape(grid=1, arrays=0), {}) == 0.0


@pytest.mark.parametrize(
    ("condition", "sizes", "expected"),
    [
        (" i < NI - 1", ["NI"], {("NI", -1)}),  # conv2d: ptxas's UIADD3 UR4, UR4, -0x1
        ("i < NI", ["NI"], set()),  # compared with the size itself: no add
        ("j < (NJ-1) && k < 1 + NK", ["NJ", "NK"], {("NJ", -1), ("NK", 1)}),
        ("i < N - 1", ["M"], set()),  # not a size of the trace
        ("i < n * 2", ["n"], set()),  # not a size plus or minus a constant
        ("i + 1 < N", ["N"], set()),  # the offset on the index, not on the bound
    ],
)
def test_a_bound_of_a_size_plus_or_minus_a_constant_is_a_uniform_add(
    condition: str, sizes: list[str], expected: set
) -> None:
    assert offset_size_bounds(condition, sizes) == expected


# jacobi2d's shape: both mapped loops bounded by N - 1. SASS (the user port): one UIADD3 for
# both guards (n - 1 once), 2 IMAD, 2 IADD3 (starts at 1), 2 ISETP, LEA, 2 IMAD.WIDE = 10
JACOBI = """\
#define N 64
#pragma cgp trace N=64
static float a[N][N], b[N][N];
int main(void) {
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) a[i][j] = (float)(i + 2 * j);
#pragma cgp kernel jacobi grid=2
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++)
      b[i][j] = 0.2f * (a[i][j] + a[i - 1][j] + a[i + 1][j] + a[i][j - 1] + a[i][j + 1]);
  return b[3][3] != 12345.0f ? 0 : 1;
}
"""


def test_one_uniform_add_serves_every_bound_of_the_same_size(tmp_path: Path) -> None:
    shape, _, _ = _traced(tmp_path, JACOBI, 2)
    assert (shape.entry.grid, shape.entry.start_offsets, shape.entry.bound_offsets) == (2, 2, 1)


def test_the_bound_is_read_from_the_for_header_on_the_loops_line() -> None:
    text = "int f(void) {\n  for (int i = 1; i < NI - 1; i++)\n    g(i);\n}\n"
    assert condition_at(text, 2) == " i < NI - 1"
    assert condition_at(text, 3) is None


# 2-D, fdtd_k1's shape: row 0 takes fict[t], the others a difference of two rows. The IR
# tests i == 0 once per row (LICM hoists the invariant compare out of the j loop into the
# outer loop's header, the row: 1/64 a thread in the trace); the port's every thread tests
# its own i (the sm_90 SASS of fdtd_k1: ISETP.NE after the guard): eq. (12v), one compare
# a thread, of which the PTX-level count has 1/64.
FIRST_ROW = """\
#define N 64
#pragma cgp trace N=64
static float E[N][N], H[N][N], f[4];
int main(void) {
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) { E[i][j] = i; H[i][j] = j; }
#pragma cgp kernel first_row grid=2
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      if (i == 0)
        E[i][j] = f[1];
      else
        E[i][j] = E[i][j] - 0.5f * (H[i][j] - H[i - 1][j]);
    }
  return E[3][3] != 12345.0f ? 0 : 1;
}
"""


def test_a_compare_hoisted_into_the_row_is_made_by_every_thread(tmp_path: Path) -> None:
    shape, per_thread, _ = _traced(tmp_path, FIRST_ROW, 2)
    e = shape.entry
    (block, n), = e.row_tests
    assert n == 1 and block in e.row_blocks
    assert per_thread[block] == pytest.approx(1 / 64)  # once per row in the trace
    assert row_test_insts(e.row_tests, per_thread, thread_shares(e, per_thread)) == \
        pytest.approx(1 - 1 / 64)


def test_a_row_block_without_a_test_of_the_thread_adds_nothing(tmp_path: Path) -> None:
    """covar_reduce's shape: the row blocks hold row pointers and the outer loop's own exit
    test (used by its latch, not by the thread's blocks): no row test."""
    shape, _, _ = _traced(tmp_path, REDUCE, 2)
    assert shape.entry.row_tests == ()
    e = EntryShape(grid=2, row_blocks=frozenset({1}), row_headers=(1,), row_tests=((1, 2),))
    assert row_test_insts(e.row_tests, {1: 1 / 32}, thread_shares(e, {1: 1 / 32})) == \
        pytest.approx(2 * (1 - 1 / 32))
