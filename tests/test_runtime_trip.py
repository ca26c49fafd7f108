"""Tests of what ptxas makes of a loop bounded by a run-time size (issue 24):
compute.runtime_trip_depth, runtime_trips.RuntimeTrip / runtime_trip, and the fold of
parallelism.ThreadBodies.unrolled_savings that kernel.launch charges with them.

Oracles from the mechanisms (read from the sm_90 SASS of the ports,
validation/results/sass-check.md): nvcc unrolls such a loop 4 times; ptxas 4 times more when
an access moves one element per iteration and the loop stores at most once an iteration; a
trip keeps 2 integer instructions per pointer it advances (a 64-bit add, or a row-index add
and an IMAD.WIDE), the remaining count and its test (2), the source index the remainder
stage addresses from (1) and one back edge. A re-based trip (16 deep, its addresses offset by
two or more different loop-invariant values: GEMM, SYRK) keeps one induction pointer (2),
two addresses a trip per unit-stride access (1 each) and per strided access its row base's
add (2), an IMAD.WIDE (1) and the copy of that uniform base into a vector pair (a MOV, class
other, and an IMAD.U32, integer), 2 MOV copying the induction pointer when two or more
unit-stride accesses are addressed from it, and 2 MOV copying a single unit-stride access's
second pointer. A trip whose every access moves by a row keeps a row index per distinct
invariant offset (an add), an IMAD.WIDE per pointer, and a subtraction where there is one row
index. A 16-deep trip that is not re-based copies back (a MOV each, class other) every
pointer of a chain trip (a store every iteration, each product of two loaded values: the
plain port's dot products) and, without a store, each unit-stride pointer offset by the
thread's row (runtime_trips.trip_copies)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cgpredict.compute import PTXAS_UNROLL, UNROLL_RUNTIME, runtime_trip_depth
from cgpredict.gep_text import gep_index_types
from cgpredict.kernel.launch_loops import loop_unroll_at
from cgpredict.pipeline import predict_source
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare
from cgpredict.runtime_trips import (
    RuntimeTrip,
    base_reloads,
    loop_trip_at,
    rebased_trip,
    runtime_trip,
    trip_copies,
)


def _kernel(body: str, decl: str, init: str = "A[i][j] = i - j;") -> str:
    """A traced C file whose kernel maps i (256 threads) and runs ``body`` in a j loop of
    256 iterations (more than UNROLL_WHOLE: a size, a run-time bound in a port); ``init``
    writes every array it reads (an array never written is all zeros, which clang folds)."""
    return f"""\
#define N 256
#pragma cgp trace N=256
static float {decl};
int main(void) {{
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) {{ {init} }}
#pragma cgp kernel k grid=1
  for (int i = 0; i < N; i++) {{
    float s = 0;
    for (int j = 0; j < N; j++) {body}
    y[i] = s;
  }}
  return y[3] != 12345.0f ? 0 : 1;
}}
"""


# three pointers moving one element per iteration (A[i][j], B[i][j], x[j]), no store in the
# loop: 16 iterations a trip, 2 x 3 pointer adds + counter + test + index = 9 integer, 1
# branch; offset by i only (x[j] by nothing): not re-based; A's and B's pointers (offset by
# the thread's row) copied back: 2 MOV
THREE_POINTERS = _kernel("s += A[i][j] * B[i][j] * x[j];", "A[N][N], B[N][N], x[N], y[N]")
# one pointer moving by a row per iteration (A[j][i]): nvcc's 4 a trip, rows only, one row
# index (offset by i): its add, the IMAD.WIDE, the subtraction re-basing it from the trip's
# last row (3), count, test and index (3): 6 integer, 1 branch (the CORR and COVAR means)
COLUMN = _kernel("s += A[j][i];", "A[N][N], y[N]")
# two stores per iteration, both moving one element: nvcc's 4 a trip
TWO_STORES = _kernel("{ B[i][j] = A[i][j]; C[i][j] = 2 * A[i][j]; }",
                     "A[N][N], B[N][N], C[N][N], y[N]")
# two pointers into one array, one moving an element (A[i][j]), one a row (A[j][i]): 16 a
# trip, 2 x 2 + 2 + 1 = 7 integer; both offset by i alone: not re-based; A[i][j]'s pointer
# copied back (1 MOV), the row pointer advanced in place
ONE_ARRAY_TWO_POINTERS = _kernel("s += A[i][j] * A[j][i];", "A[N][N], y[N]")
# one store per iteration: ptxas's 16; its product scales a load by a constant (not a chain
# trip): nothing copied back
ONE_STORE = _kernel("B[i][j] = 2 * A[i][j];", "A[N][N], B[N][N], y[N]")
# one pointer moving an element with an IEEE division or square root in the body (n-body's
# j loop, softmax's output row): nvcc's 4 a trip; expf (no slow path) keeps ptxas's 16
DIVISION = _kernel("s += 1.0f / A[i][j];", "A[N][N], y[N]", "A[i][j] = 1 + i + j;")
SQRT = "#include <math.h>\n" + _kernel("s += sqrtf(A[i][j]);", "A[N][N], y[N]",
                                       "A[i][j] = 1 + i + j;")
EXP = "#include <math.h>\n" + _kernel("s += expf(A[i][j]);", "A[N][N], y[N]",
                                      "A[i][j] = 1 + i + j;")
# the fields of an array of structures (n-body's p[j].x ... p[j].m), at constant byte
# offsets of one element's address: one pointer (one 64-bit add a trip in the sm_90 SASS of
# the user port nbody_aos, the fields LDG [R.64+0x4] ...); 16 a trip (no slow path)
FIELDS = """\
#define N 256
#pragma cgp trace N=256
struct pt { float x, y, z, m; };
static struct pt p[N];
static float y[N];
int main(void) {
  for (int j = 0; j < N; j++) { p[j].x = j; p[j].y = 2 * j; p[j].z = 3 * j; p[j].m = 1; }
#pragma cgp kernel k grid=1
  for (int i = 0; i < N; i++) {
    float s = 0;
    for (int j = 0; j < N; j++) s += p[j].m * (p[j].x + p[j].y + p[j].z);
    y[i] = s;
  }
  return y[3] != 12345.0f ? 0 : 1;
}
"""
# COLUMN counting down (Deriche's backward column pass): nvcc's remainder comes first and
# its trip tests the index itself, which ptxas unrolls again: 16 a trip, rows only, one row
# index: 3 + 4 x 3 = 15 integer
COLUMN_DOWN = _kernel("s += A[j][i];", "A[N][N], y[N]").replace(
    "for (int j = 0; j < N; j++) s", "for (int j = N - 1; j >= 0; j--) s")
# a row counting down with a store (Deriche's backward row pass, deriche_hbwd): 16 a trip,
# uniform bases stepped down (eq. 12d): 2 + 2 x 3 = 8 integer, 2 x 2 MOV, no pointer copy
ROW_DOWN = _kernel("{ s += A[i][j]; B[i][j] = s; }", "A[N][N], B[N][N], y[N]").replace(
    "for (int j = 0; j < N; j++) {", "for (int j = N - 1; j >= 0; j--) {")


def _kernel_2d(body: str, decl: str, init: str = "A[i][j] = i - j;") -> str:
    """A traced C file whose kernel maps i and j (256 x 256 threads) and runs ``body`` in a
    k loop of 256 iterations (a size: a run-time bound in a port); ``init`` writes every
    array it reads (an array never written is all zeros, which clang folds away)."""
    return f"""\
#define N 256
#pragma cgp trace N=256
static float {decl};
int main(void) {{
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) {{ {init} }}
#pragma cgp kernel k grid=2
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {{
      float s = 0;
      for (int k = 0; k < N; k++) {body}
      C[i][j] = s;
    }}
  return C[3][4] != 12345.0f ? 0 : 1;
}}
"""


# two pointers moving by a row, both offset by i (Deriche's column pass): one row index, an
# IMAD.WIDE each and the re-basing subtraction (4) + 3 = 7 integer
TWO_ROWS_ONE_INDEX = _kernel("s += A[j][i] * B[j][i];", "A[N][N], B[N][N], y[N]")


# GEMM's k loop: A[i][k] moves an element offset by the thread's row i, B[k][j] a row offset
# by its column j: two different offsets, 16 a trip, re-based: one induction pointer (2), A's
# two addresses (2), B's row base add (2), IMAD.WIDE (1) and the IMAD.U32 copying its high
# word (1), the count, its test and the index (3): 11 integer; the MOV of that base's low word
# and the 2 MOV copying A's second pointer back: 3 other; 1 branch
GEMM_LIKE = _kernel_2d("s += A[i][k] * B[k][j];", "A[N][N], B[N][N], C[N][N]",
                       "A[i][j] = i - j; B[i][j] = i + j;")
# SYRK's: A[i][k] and A[j][k], two unit-stride pointers offset by i and by j: re-based,
# 2 + 2 x 2 + 3 = 9 integer; the induction pointer their IMAD.WIDEs add to copied: 2 other
SYRK_LIKE = _kernel_2d("s += A[i][k] * A[j][k];", "A[N][N], C[N][N]")
# the same loop with both accesses offset by the thread's row i (GESUMMV's A[i][k], B[i][k])
# and one by nothing (x[k]): not re-based, 2 x 3 + 3 = 9 integer; A's and B's pointers
# copied back (2 MOV)
ONE_OFFSET = _kernel_2d("s += A[i][k] * B[i][k] * x[k];", "A[N][N], B[N][N], C[N][N], x[N]",
                        "A[i][j] = i - j; B[i][j] = i + j; x[j] = j;")
# SYRK transposed's: A[k][i] and A[k][j], rows only, two row indices (offset by i and by j):
# 2 adds, 2 IMAD.WIDE, no re-basing, + 3 = 7 integer; A's base reloaded a trip (1 LDC.64)
TWO_ROW_INDICES = _kernel_2d("s += A[k][i] * A[k][j];", "A[N][N], C[N][N]")
# Gram-Schmidt k3's: Q[k][i] and A[k][j], two row indices into two arrays: both bases
# reloaded a trip (2 LDC.64)
TWO_ROW_ARRAYS = _kernel_2d("s += B[k][i] * A[k][j];", "A[N][N], B[N][N], C[N][N]",
                            "A[i][j] = i - j; B[i][j] = i + j;")


def test_ptxas_unrolls_nvccs_trip_again_when_an_access_moves_one_element() -> None:
    assert (UNROLL_RUNTIME, PTXAS_UNROLL) == (4, 4)
    assert runtime_trip_depth(True, 0) == 16
    assert runtime_trip_depth(True, 1) == 16
    assert runtime_trip_depth(True, 2) == 4  # two stores: nvcc's 4
    assert runtime_trip_depth(False, 0) == 4  # every access moves by a row
    assert runtime_trip_depth(False, 1) == 4


def test_ptxas_keeps_nvccs_trip_of_a_loop_with_a_slow_path_call() -> None:
    """An IEEE division or square root in the body (its fast path branches to a subroutine):
    4 a trip whatever the strides (sm_90 SASS: ``s += 1.0f / a[j]`` 4 loads a trip)."""
    assert runtime_trip_depth(True, 0, slow_path=True) == 4
    assert runtime_trip_depth(False, 1, counts_up=False, slow_path=True) == 4
    assert runtime_trip_depth(True, 1, slow_path=False) == 16


def test_ptxas_unrolls_a_row_loop_again_unless_it_counts_up_from_a_constant() -> None:
    """A loop counting down, or up from a run-time start, tests its own counter
    (loop_counter): 16 a trip whatever its strides; two stores keep nvcc's 4."""
    assert runtime_trip_depth(False, 1, counts_up=False) == 16
    assert runtime_trip_depth(False, 0, counts_up=False) == 16
    assert runtime_trip_depth(True, 1, counts_up=False) == 16
    assert runtime_trip_depth(False, 2, counts_up=False) == 4
    assert runtime_trip_depth(False, 1, counts_up=True) == 4


@pytest.mark.parametrize("k", [0, 1, 2, 5])
def test_a_trip_keeps_a_64_bit_add_per_pointer_the_counter_index_and_a_back_edge(k: int) -> None:
    trip = RuntimeTrip(depth=16, pointers=k, strided=0)
    assert trip.integer == 2 * k + 2 + 1  # pointer adds, count and test, the index
    assert trip.branch == 1
    assert trip.other == 0
    assert trip.per_iteration("all") == pytest.approx((2 * k + 4) / 16)
    assert trip.per_iteration("other") == 0.0
    strided = RuntimeTrip(depth=4, pointers=k + 1, strided=1)
    assert strided.integer == 2 * (k + 1) + 2 + 1  # a row pointer costs 2 as well
    assert strided.per_iteration("integer") == pytest.approx((2 * k + 5) / 4)


@pytest.mark.parametrize("pointers, indices, want", [(1, 1, 6), (2, 1, 7), (2, 2, 7), (3, 2, 8)])
def test_a_rows_only_trip_keeps_a_row_index_per_offset_and_an_address_per_pointer(
    pointers: int, indices: int, want: int
) -> None:
    """3 (count, test, index) + an add per row index + an IMAD.WIDE per pointer, + 1 to
    re-base a single row index from the trip's last row."""
    trip = RuntimeTrip(depth=4, pointers=pointers, strided=pointers, row_indices=indices)
    assert trip.rows_only
    assert trip.integer == want
    assert trip.per_iteration("all") == pytest.approx((want + 1) / 4)
    assert not RuntimeTrip(depth=4, pointers=2, strided=1, row_indices=1).rows_only


@pytest.mark.parametrize("pointers, indices, rows", [(1, 1, 3), (2, 1, 4), (2, 2, 4)])
def test_a_16_deep_rows_only_trip_repeats_its_row_code_per_nvcc_trip(
    pointers: int, indices: int, rows: int
) -> None:
    """ptxas's 16-deep trip of a loop counting down (Deriche's backward column pass) is 4 of
    nvcc's trips, each with its row code (``rows``: an add per row index, an IMAD.WIDE per
    pointer, 1 re-basing a single index), and one count, test and index: 3 + 4 x rows
    (Deriche's two pointers, one index: 19 integer a trip, as its sm_90 SASS)."""
    trip = RuntimeTrip(depth=16, pointers=pointers, strided=pointers, row_indices=indices)
    assert trip.integer == 3 + 4 * rows
    assert trip.per_iteration("branch") == pytest.approx(1 / 16)


@pytest.mark.parametrize("unit, strided", [(1, 1), (2, 0), (1, 0), (1, 2), (3, 1)])
def test_a_rebased_trip_addresses_each_unit_access_twice_and_copies_uniform_bases(
    unit: int, strided: int
) -> None:
    trip = RuntimeTrip(depth=16, pointers=unit + strided, strided=strided, rebased=True)
    # induction 2, two addresses per unit access, per strided access its row base's add (2),
    # IMAD.WIDE (1) and the IMAD.U32 of its high word (1); count, test, index 3
    assert trip.integer == 2 + 2 * unit + 4 * strided + 3
    # per row base the MOV of its low word; one unit access: its second pointer copied (2),
    # two or more: the induction pointer they are addressed from (2)
    copies = strided + 2
    assert trip.other == copies
    assert trip.branch == 1
    assert trip.per_iteration("all") == pytest.approx(
        (2 + 2 * unit + 4 * strided + 3 + copies + 1) / 16
    )
    plain = RuntimeTrip(depth=16, pointers=unit + strided, strided=strided)
    assert trip.integer - plain.integer == 2 + 2 * strided  # induction, IMAD.WIDEs, IMAD.U32s
    assert plain.other == 0  # copied = 0: nothing copied back


def test_a_rebased_trip_without_a_unit_access_copies_only_its_row_bases() -> None:
    trip = RuntimeTrip(depth=16, pointers=2, strided=2, rebased=True)
    assert trip.other == 2  # a MOV of each row base's low word
    assert trip.integer == 2 * 4 + 3  # no induction pointer, no unit-stride address


@pytest.mark.parametrize("copied", [0, 1, 2, 3])
def test_a_trip_that_is_not_rebased_moves_each_pointer_it_copies_back(copied: int) -> None:
    trip = RuntimeTrip(depth=16, pointers=3, strided=0, copied=copied)
    assert trip.other == copied
    assert trip.integer == 2 * 3 + 3  # the copies add no integer instruction
    assert trip.per_iteration("other") == pytest.approx(copied / 16)


def test_a_descending_trip_steps_a_uniform_base_per_pointer_and_copies_it() -> None:
    # deriche_hbwd's SASS, both ports: 8 integer, 1 branch, 4 MOV a 16-iteration trip
    trip = RuntimeTrip(depth=16, pointers=2, strided=0, stores=1, descending=True)
    assert (trip.integer, trip.branch, trip.other) == (8.0, 1.0, 4.0)
    assert trip.per_iteration() == pytest.approx(13 / 16)


def test_which_pointers_a_trip_copies_back() -> None:
    # a chain trip (a store every iteration, products of loaded values): every pointer
    assert trip_copies(16, False, 1, True, 1, 2) == 2
    # a store but a product scaled by an invariant (GEMVER plain): none
    assert trip_copies(16, False, 1, False, 1, 2) == 0
    # no store: the unit-stride pointers offset by the thread's row, whatever the chain
    assert trip_copies(16, False, 0, True, 1, 2) == 1
    assert trip_copies(16, False, 0, False, 2, 3) == 2
    assert trip_copies(16, False, 0, True, 0, 2) == 0  # a column walk and x[j]
    # a re-based trip counts its own copies; nvcc's 4-deep trip is not modelled
    assert trip_copies(16, True, 1, True, 1, 2) == 0
    assert trip_copies(4, False, 1, True, 1, 2) == 0


# The main trip of SYRK transposed's k loop (plain port), as nvdisasm -c prints it from
# ``nvcc -cubin -O3 -arch=sm_90`` of validation/cuda/syrk_transposed.cu (loop .L_x_1 of the
# unrolled build; the LDG/STG/FMUL/FFMA lines of iterations 2-4 abridged to one each)
SYRK_TRANSPOSED_TRIP = """\
.L_x_1:
        /*0230*/                   LDC.64 R6, c[0x0][0x220] ;
        /*0240*/                   IMAD.WIDE R4, R11, 0x4, R6 ;
        /*0250*/                   IMAD.WIDE R6, R12, 0x4, R6 ;
        /*0260*/                   LDG.E R14, desc[UR4][R4.64] ;
        /*0270*/                   LDG.E R16, desc[UR4][R6.64] ;
        /*0280*/                   FMUL R14, R14, UR6 ;
        /*0290*/                   FFMA R15, R14, R16, R15 ;
        /*02a0*/                   STG.E desc[UR4][R2.64], R15 ;
        /*0350*/                   LDG.E R14, desc[UR4][R4.64+0x3000] ;
        /*0360*/                   LDG.E R15, desc[UR4][R6.64+0x3000] ;
        /*0370*/                   IADD3 R10, R10, 0x4, RZ ;
        /*0380*/                   VIADD R11, R11, 0x1000 ;
        /*0390*/                   IADD3 R12, R12, 0x1000, RZ ;
        /*03a0*/                   FMUL R14, R14, UR6 ;
        /*03b0*/                   FFMA R15, R14, R15, R19 ;
        /*03c0*/                   IADD3 R14, R13, R10, RZ ;
        /*03d0*/                   ISETP.NE.AND P0, PT, R14, RZ, PT ;
        /*03e0*/                   STG.E desc[UR4][R2.64], R15 ;
        /*03f0*/               @P0 BRA `(.L_x_1) ;
"""


def _opcodes(listing: str) -> list[str]:
    """The opcodes (modifiers kept, predicate dropped) of the instruction lines of a listing."""
    out = []
    for line in listing.splitlines():
        if "*/" not in line:
            continue
        tok = line.split("*/", 1)[1].split()
        out.append(tok[1] if tok[0].startswith("@") else tok[0])
    return out


def test_a_rows_only_trip_with_two_row_indices_reloads_each_arrays_base() -> None:
    """Hand count of SYRK transposed's trip: one LDC.64 (its class other: the base of A,
    from which both IMAD.WIDEs form an address, the second one into the base's own
    registers), two row-index adds, two IMAD.WIDE, the count's add and test, the index
    (IADD3 R14): 7 integer, 1 branch; the model's trip of that loop shape (TWO_ROW_INDICES:
    one array) keeps the same."""
    ops = _opcodes(SYRK_TRANSPOSED_TRIP)
    other = [op for op in ops if op.split(".")[0] in ("LDC", "MOV")]
    integer = [op for op in ops if op.split(".")[0] in ("IADD3", "VIADD", "IMAD", "ISETP")]
    assert (other, len(integer)) == (["LDC.64"], 7)
    trip = RuntimeTrip(depth=4, pointers=2, strided=2, row_indices=2,
                       reloaded=base_reloads(2, 1))
    assert (trip.other, trip.integer, trip.branch) == (1, 7, 1)
    assert trip.per_iteration("other") == pytest.approx(1 / 4)


@pytest.mark.parametrize("indices, arrays, want", [(2, 1, 1), (2, 2, 2), (3, 2, 2), (1, 1, 0),
                                                   (1, 2, 0), (0, 0, 0)])
def test_which_bases_a_rows_only_trip_reloads(indices: int, arrays: int, want: int) -> None:
    """Every array's base with two or more row indices; none with one (kept in registers in
    5 of the corpus's 10 such loops: not modelled)."""
    assert base_reloads(indices, arrays) == want


def test_a_16_deep_rows_only_trip_reloads_per_nvcc_trip() -> None:
    trip = RuntimeTrip(depth=16, pointers=2, strided=2, row_indices=2, reloaded=2)
    assert trip.other == 2 * 4


def test_only_a_16_deep_trip_with_two_different_offsets_is_rebased() -> None:
    i, j = frozenset({"i"}), frozenset({"j"})
    assert rebased_trip(16, [i, j])
    assert rebased_trip(16, [i, j, frozenset()])
    assert not rebased_trip(16, [i, i, frozenset()])  # GESUMMV: one offset
    assert not rebased_trip(16, [i, frozenset()])  # ATAX: x[j] by nothing
    assert not rebased_trip(4, [i, j])  # rows only: SYRK transposed


def test_gep_indices_step_over_rows_or_elements() -> None:
    row = "%gep = getelementptr inbounds nuw [64 x float], ptr %inv, i64 %iv"
    assert gep_index_types(row) == [("%iv", "[64 x float]")]
    elem = "%a = getelementptr inbounds nuw float, ptr %row, i64 %iv, !dbg !7"
    assert gep_index_types(elem) == [("%iv", "float")]
    whole = "%b = getelementptr inbounds [8 x [64 x float]], ptr @A, i64 0, i64 %i, i64 %j"
    assert gep_index_types(whole) == [("0", "[8 x [64 x float]]"), ("%i", "[64 x float]"),
                                      ("%j", "float")]


def _trip(tmp_path: Path, src: str, port: str | None = None):
    """(RuntimeTrip, unroll) of the innermost loop of ``src``'s kernel (``port``: the
    pointer model, the default's when None)."""
    path = tmp_path / "k.c"
    path.write_text(src)
    opts = RunOptions(device="h100") if port is None else RunOptions(device="h100", port=port)
    with prepare(path, opts) as prep:
        tr = prep.trace
        depth = max(lp.depth for lp in tr.header.loops if lp.region == 0)
        (lp,) = [lp for lp in tr.header.loops if lp.region == 0 and lp.depth == depth]
        assert loop_trip_at(tr, lp.id) == runtime_trip(tr, lp)
        return runtime_trip(tr, lp), loop_unroll_at(tr, lp.id)


@pytest.mark.parametrize(
    "src, want",
    [
        (THREE_POINTERS, RuntimeTrip(depth=16, pointers=3, strided=0, stores=0, copied=2)),
        (COLUMN, RuntimeTrip(depth=4, pointers=1, strided=1, stores=0, row_indices=1)),
        (COLUMN_DOWN,
         RuntimeTrip(depth=16, pointers=1, strided=1, stores=0, row_indices=1)),
        (ROW_DOWN,
         RuntimeTrip(depth=16, pointers=2, strided=0, stores=1, descending=True)),
        (TWO_STORES, RuntimeTrip(depth=4, pointers=3, strided=0, stores=2)),
        # eq. (12sc): the plain port copies B's pointer (stored) and A's (loaded, may alias)
        (ONE_STORE, RuntimeTrip(depth=16, pointers=2, strided=0, stores=1, store_copied=2)),
        (ONE_ARRAY_TWO_POINTERS,
         RuntimeTrip(depth=16, pointers=2, strided=1, stores=0, copied=1)),
        (GEMM_LIKE, RuntimeTrip(depth=16, pointers=2, strided=1, stores=0, rebased=True)),
        (SYRK_LIKE, RuntimeTrip(depth=16, pointers=2, strided=0, stores=0, rebased=True)),
        (ONE_OFFSET, RuntimeTrip(depth=16, pointers=3, strided=0, stores=0, copied=2)),
        (TWO_ROWS_ONE_INDEX,
         RuntimeTrip(depth=4, pointers=2, strided=2, stores=0, row_indices=1)),
        (TWO_ROW_INDICES,
         RuntimeTrip(depth=4, pointers=2, strided=2, stores=0, row_indices=2, reloaded=1)),
        (TWO_ROW_ARRAYS,
         RuntimeTrip(depth=4, pointers=2, strided=2, stores=0, row_indices=2, reloaded=2)),
        (DIVISION, RuntimeTrip(depth=4, pointers=1, strided=0, stores=0)),
        (SQRT, RuntimeTrip(depth=4, pointers=1, strided=0, stores=0)),
        (EXP, RuntimeTrip(depth=16, pointers=1, strided=0, stores=0, copied=1,
                          constants=2.0, constant_kinds=2)),
        (FIELDS, RuntimeTrip(depth=16, pointers=1, strided=0, stores=0)),
    ],
    ids=["three_pointers", "column", "column_down", "row_down", "two_stores", "one_store",
         "one_array_two_pointers", "gemm_like", "syrk_like", "one_offset",
         "two_rows_one_index", "two_row_indices", "two_row_arrays", "division", "sqrt", "exp",
         "fields"],
)
def test_the_trip_of_a_loop_of_our_own(tmp_path: Path, src: str, want: RuntimeTrip) -> None:
    trip, unroll = _trip(tmp_path, src)
    assert trip == want
    assert unroll == want.depth


# CSR's row loop: 8 entries a row (at most 32 iterations an entry, so a loop of a constant
# trip would be unrolled whole), its bound loaded before it (eq. (12y)): a run-time trip, 16
# deep (val[k] and col[k] move one element); x[col[k]] is a gather, no pointer: 2 pointers
CSR = """\
#define NR 64
#define NNZ 8
#pragma cgp trace NR=64
static int rowptr[NR + 1], col[NR * NNZ];
static float val[NR * NNZ], x[NR], y[NR];
int main(void) {
  for (int r = 0; r <= NR; r++) rowptr[r] = r * NNZ;
  for (int k = 0; k < NR * NNZ; k++) { col[k] = (k * 7) % NR; val[k] = k; }
  for (int c = 0; c < NR; c++) x[c] = c;
#pragma cgp kernel spmv grid=1
  for (int r = 0; r < NR; r++) {
    float s = 0.0f;
    for (int k = rowptr[r]; k < rowptr[r + 1]; k++) s += val[k] * x[col[k]];
    y[r] = s;
  }
  return y[3] != 12345.0f ? 0 : 1;
}
"""


def test_a_loop_bounded_by_a_loaded_count_is_a_runtime_trip_without_its_gather(
        tmp_path: Path) -> None:
    trip, unroll = _trip(tmp_path, CSR)
    assert trip == RuntimeTrip(depth=16, pointers=2, strided=0, stores=0, gathered=1)
    assert unroll == 16


def test_a_gather_reloads_its_base_once_a_trip() -> None:
    """Eq. (12gb): CSR's 16-deep trip copies no pointer and reloads x's base once (the LDC.64
    at the top of spmv_csr's SASS trip): other 1 a trip, 1/16 a source iteration; the same
    trip with two gathered arrays and 4 deep (an ELL row walk gathering x and z): 2 a trip,
    2/4 an iteration; no gather, no reload."""
    csr = RuntimeTrip(depth=16, pointers=2, strided=0, stores=0, gathered=1)
    assert csr.other == 1.0
    assert csr.per_iteration("other") == pytest.approx(1 / 16)
    two = RuntimeTrip(depth=4, pointers=2, strided=2, stores=0, row_indices=1, gathered=2)
    assert two.other == 2.0
    assert two.per_iteration("other") == pytest.approx(0.5)
    assert RuntimeTrip(depth=16, pointers=2, strided=0, stores=0).other == 0.0


@pytest.mark.parametrize("port", ["plain", "restrict"])
def test_an_arrays_own_base_is_no_offset_in_either_port(tmp_path: Path, port: str) -> None:
    """The plain port reaches each array through an opaque pointer (an inline asm), the
    restrict one through the global: either way only the thread's row and column offset
    the addresses, so GEMM_LIKE is re-based and ONE_OFFSET is not."""
    assert _trip(tmp_path, GEMM_LIKE, port)[0].rebased
    assert not _trip(tmp_path, ONE_OFFSET, port)[0].rebased


# ATAX's k1 loop as written: the accumulator is the array element z[i]. The plain port stores
# it every iteration (it may alias A and x) and each product multiplies two loaded values: a
# chain trip, both pointers copied back (2 MOV); restrict keeps it in a register (no store in
# the trip): only A[i][j]'s pointer (offset by the thread's row) is copied, x[j]'s (offset by
# nothing) advanced in place
CHAIN = _kernel("z[i] += A[i][j] * x[j];", "A[N][N], x[N], y[N], z[N]",
                "A[i][j] = i - j; x[j] = j;")
# the same with the product scaled by a constant first (GEMVER's beta * A[j][i] * y[j])
SCALED_CHAIN = _kernel("z[i] += 3.0f * A[i][j] * x[j];", "A[N][N], x[N], y[N], z[N]",
                       "A[i][j] = i - j; x[j] = j;")


@pytest.mark.parametrize(
    "src, port, stores, copied",
    [(CHAIN, "plain", 1, 2), (CHAIN, "restrict", 0, 1),
     (SCALED_CHAIN, "plain", 1, 0), (SCALED_CHAIN, "restrict", 0, 1)],
    ids=["chain_plain", "chain_restrict", "scaled_plain", "scaled_restrict"],
)
def test_the_pointers_a_trip_of_our_own_copies_back(
    tmp_path: Path, src: str, port: str, stores: int, copied: int
) -> None:
    trip, _ = _trip(tmp_path, src, port)
    assert (trip.depth, trip.pointers, trip.strided, trip.rebased) == (16, 2, 0, False)
    assert (trip.stores, trip.copied) == (stores, copied)
    assert trip.other == copied


def test_the_fold_leaves_the_trips_control_per_iteration(tmp_path: Path) -> None:
    """THREE_POINTERS at the PTX level: per iteration an index instruction per access (3),
    the induction add, its compare and the conditional branch: 6, all following j (affine).
    The SASS keeps (9 integer + 1 branch + 2 copies) / 16 of them an iteration: 256 x
    (6 - 12/16) folded per thread."""
    path = tmp_path / "k.c"
    path.write_text(THREE_POINTERS)
    (k,) = predict_source(path, RunOptions(device="h100")).kernels
    assert k.profile.folded_insts == pytest.approx(256 * (6 - 12 / 16))


def test_the_fold_of_a_rebased_trip_adds_its_moves(tmp_path: Path) -> None:
    """GEMM_LIKE at the PTX level: per iteration an index instruction per access (A[i][k]:
    1, B[k][j]: 1), the induction add, its compare and the branch: 5, all affine. The SASS
    keeps (11 integer + 1 branch + 3 other) / 16 an iteration: 256 x (5 - 15/16) folded."""
    path = tmp_path / "k.c"
    path.write_text(GEMM_LIKE)
    (k,) = predict_source(path, RunOptions(device="h100")).kernels
    assert k.profile.folded_insts == pytest.approx(256 * (5 - 15 / 16))


def test_the_fold_of_a_chain_trip_keeps_its_copies(tmp_path: Path) -> None:
    """CHAIN's j loop has the same affine integer and branch work in both ports (A[i][j]'s
    and x[j]'s index instructions, the induction add, its compare, the branch; z[i]'s address
    is invariant). Its trip keeps 7 integer + 1 branch in both, and copies 2 pointers back in
    the plain port, 1 in the restrict one: the plain port folds 256 x 1/16 less per thread."""
    folded = {}
    for port in ("plain", "restrict"):
        path = tmp_path / port / "k.c"
        path.parent.mkdir()
        path.write_text(CHAIN)
        (k,) = predict_source(path, RunOptions(device="h100", port=port)).kernels
        folded[port] = k.profile.folded_insts
    assert folded["restrict"] - folded["plain"] == pytest.approx(256 * 1 / 16)


# eq. (12k): expf's two constants of its range reduction, set once a trip by ptxas; logf's one;
# a division in the trip calls its slow path, which clobbers them: set again per call
EXP_LOG = "#include <math.h>\n" + _kernel("s += expf(A[i][j]) + logf(A[i][j]);", "A[N][N], y[N]",
                                          "A[i][j] = 1 + i + j;")
EXP_DIV = "#include <math.h>\n" + _kernel("s += expf(A[i][j]) / A[i][j];", "A[N][N], y[N]",
                                          "A[i][j] = 1 + i + j;")


@pytest.mark.parametrize(
    "src, per_iteration, per_trip",
    [(EXP, 2.0, 2), (EXP_LOG, 3.0, 3), (EXP_DIV, 0.0, 0)],
    ids=["exp", "exp_log", "exp_div"],
)
def test_a_trip_sets_its_calls_constants_once(tmp_path: Path, src: str, per_iteration: float,
                                              per_trip: int) -> None:
    """Eq. (12k) by hand: expf counts 2 constant moves a call, logf 1; a trip of d iterations
    sets each kind's once: its other class is per_trip - d x per_iteration (+ its copies);
    a trip that calls a slow path (the division) sets them per call: nothing taken off."""
    trip, _ = _trip(tmp_path, src)
    assert (trip.constants, trip.constant_kinds) == (per_iteration, per_trip)
    copies = trip.copied + trip.reloaded * (trip.depth // UNROLL_RUNTIME)
    assert trip.other == pytest.approx(copies + per_trip - trip.depth * per_iteration)


def test_the_fold_takes_a_trips_repeated_constants_off(tmp_path: Path) -> None:
    """EXP at the PTX level: per iteration A[i][j]'s index instruction, the induction add, its
    compare and the branch: 4, all affine. The SASS keeps of a 16-iteration trip 5 integer
    (count, test, index, the pointer's 64-bit add), 1 branch, 1 copy (trip_copies) and expf's
    2 constants, where the 16 calls' expansions count 32 (eq. (12k)): 256 x (4 - (5 + 1 + 1 +
    2 - 32) / 16) folded per thread."""
    path = tmp_path / "k.c"
    path.write_text(EXP)
    (k,) = predict_source(path, RunOptions(device="h100")).kernels
    assert k.profile.folded_insts == pytest.approx(256 * (4 - (5 + 1 + 1 + 2 - 32) / 16))


SIZED = """\
#ifndef N
#define N 256
#endif
#ifndef K
#define K 8
#endif
#pragma cgp trace N=256 K=8
static float val[K][N], y[N];
int main(void) {
  for (int k = 0; k < K; k++) for (int r = 0; r < N; r++) val[k][r] = k + r;
#pragma cgp kernel k grid=1
  for (int r = 0; r < N; r++) {
    float s = 0;
    for (int k = 0; k < K; k++) s += val[k][r];
    y[r] = s;
  }
  return y[3] != 12345.0f ? 0 : 1;
}
"""


def test_a_loop_bounded_by_a_size_is_a_trip_however_short(tmp_path: Path) -> None:
    """Eq. (12sz): K's loop runs 8 iterations (at most UNROLL_WHOLE), but K is a size macro
    (the probes at other K find its trips follow K), which the port passes as a kernel
    parameter: nvcc cannot unroll it whole; it is a run-time trip (rows only: val[k][r] moves
    by a row, one row index: 4 a trip), where the same loop read as a constant is none."""
    path = tmp_path / "sized.c"
    path.write_text(SIZED)
    opts = RunOptions(device="h100", work_sizes={"N": 512, "K": 8})
    with prepare(path, opts) as prep:
        tr = prep.trace
        (lp,) = [lp for lp in tr.header.loops if lp.region == 0 and lp.depth == 2]
        assert prep.sizes.trips[lp.id].sized
        assert loop_trip_at(tr, lp.id) is None  # 8 iterations: a constant loop
        trip = loop_trip_at(tr, lp.id, sized=True)
        assert trip == runtime_trip(tr, lp)
        assert (trip.depth, trip.pointers, trip.strided, trip.row_indices) == (4, 1, 1, 1)
        assert loop_unroll_at(tr, lp.id, sized=True) == 4
        assert loop_unroll_at(tr, lp.id) == 8
