"""Tests of cgpredict.address_offsets: an access's constant offset from the thread's own
element, and the index and address instructions an access below it keeps (eq. (12n)).

Oracles: offsets added up by hand from IR lines (a row of 64 floats is 256 bytes), and the
sm_90 SASS of the probes the module docstring lists (nvcc 13, ``-O3 -arch=sm_90``, one
thread each): ``a[i*N+j] - a[(i-1)*N+j]`` has IADD3 -0x1000 and two IMAD.WIDE for ``a``
where the fold counts one (2 more); ``a[(i-1)*N+j] + a[(i+1)*N+j]`` IADD3 and one IMAD.WIDE
(1 more); ``a[i*N+j] - a[i*N+(j-1)]`` with the IR's own ``add -1`` (its IADD3 counted) one
IMAD.WIDE more; ``a[i*N+j] - a[(i+1)*N+j]``, the 1-D ``a[i] - a[i-1]`` and two rows below
(``-0x4000``, ``-0x8000`` folded) none; ``a`` and ``c`` each at ``(i-1)*N+j`` and ``i*N+j``
one IADD3 and 2 IMAD.WIDE more.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cgpredict.instrument.irtext import parse_module
from test_sass_entry import FIRST_ROW, _traced

from cgpredict.address_offsets import (
    Offset,
    folded_address_insts,
    induction_starts,
    pointer_offset,
    type_bytes,
    unfolded_insts,
)

# fdtd_k1's else branch as clang -O1 writes it: hz[i] and the row before it (-256 bytes) are
# formed in the row block, the column j in the body; the mapped i and j start at 0, and a
# second function has a j that starts at 1 and an index j - 1 (an IR add).
IR = """\
define void @f(ptr %hz) {
row:
  %i = phi i64 [ 0, %entry ], [ %i.next, %latch ]
  %hzi = getelementptr inbounds nuw [64 x float], ptr %hz, i64 %i
  %hzm = getelementptr i8, ptr %hzi, i64 -256
  br label %body
body:
  %j = phi i64 [ 0, %row ], [ %j.next, %body ]
  %a = getelementptr inbounds nuw float, ptr %hzi, i64 %j
  %b = getelementptr inbounds nuw float, ptr %hzm, i64 %j
  %c = getelementptr inbounds nuw [64 x float], ptr %hz, i64 %i, i64 %j
  br label %body
}
define void @g(ptr %x) {
body:
  %j = phi i64 [ 1, %entry ], [ %j.next, %body ]
  %jm = add nsw i64 %j, -1
  %k = sext i32 %w to i64
  %a = getelementptr inbounds nuw [64 x float], ptr %x, i64 %k, i64 %jm
  %b = getelementptr inbounds nuw [64 x float], ptr %x, i64 %k, i64 %j
  br label %body
}
"""


def _defs(name: str):
    fn = parse_module(IR).functions[name]
    return ({ins.result.lstrip("%"): ins for b in fn.blocks for ins in b.instrs if ins.result},
            induction_starts(fn))


def test_type_bytes_of_scalars_and_nested_arrays() -> None:
    assert type_bytes("float") == 4 and type_bytes("i8") == 1
    assert type_bytes("[64 x float]") == 256 and type_bytes("[4 x [8 x double]]") == 256
    assert type_bytes("%struct.cell") is None


def test_a_row_before_the_threads_own_is_256_bytes_below_it() -> None:
    defs, starts = _defs("f")
    assert starts == {"i": 0, "j": 0}
    assert pointer_offset(defs, "a", starts) == Offset(0, 2)
    assert pointer_offset(defs, "b", starts) == Offset(-256, 2)
    assert pointer_offset(defs, "c", starts) == Offset(0, 2)


def test_an_index_starting_at_1_puts_j_minus_1_at_the_threads_element() -> None:
    """j = 1 + thread: A[k][j - 1] is the thread's own element (offset 0, through the IR's
    add), A[k][j] the next one (+4); k is a variable term (a cast of an argument)."""
    defs, starts = _defs("g")
    assert pointer_offset(defs, "a", starts) == Offset(0, 2, False)
    assert pointer_offset(defs, "b", starts) == Offset(4, 2)


@pytest.mark.parametrize("uses,extra", [
    # a[i*N+j] - a[(i-1)*N+j], b[i*N+j]: IADD3 + a second IMAD.WIDE
    ([("a", Offset(0, 2)), ("a", Offset(-256, 2)), ("b", Offset(0, 2))], 2.0),
    # a[(i-1)*N+j] + a[(i+1)*N+j]: IADD3, the other folded onto it (+0x8000)
    ([("a", Offset(-256, 2)), ("a", Offset(256, 2)), ("b", Offset(0, 2))], 1.0),
    # a[i*N+j] - a[i*N+(j-1)], the IR's add -1 being the IADD3: a second IMAD.WIDE
    ([("a", Offset(0, 2)), ("a", Offset(-4, 2, True))], 1.0),
    # a[i*N+j] - a[(i+1)*N+j]: folded (+0x4000)
    ([("a", Offset(0, 2)), ("a", Offset(256, 2))], 0.0),
    # 1-D a[i] - a[i-1]: folded (-0x4)
    ([("a", Offset(0, 1)), ("a", Offset(-4, 1))], 0.0),
    # a[i*N+j] + a[(i-1)*N+j] + a[(i-2)*N+j], and without the first: all folded
    ([("a", Offset(0, 2)), ("a", Offset(-256, 2)), ("a", Offset(-512, 2))], 0.0),
    ([("a", Offset(-256, 2)), ("a", Offset(-512, 2)), ("b", Offset(0, 2))], 0.0),
    # a and c at (i-1)*N+j and i*N+j: one IADD3 shared, an IMAD.WIDE more for each
    ([("a", Offset(0, 2)), ("a", Offset(-256, 2)), ("c", Offset(-256, 2)),
      ("c", Offset(0, 2)), ("b", Offset(0, 2))], 3.0),
])
def test_unfolded_instructions_of_the_probes(uses, extra: float) -> None:
    accesses = [(7, array, off) for array, off in uses]
    assert unfolded_insts(accesses, {7: 1.0}) == pytest.approx(extra)
    # weighed by the executions per thread of the accesses' block (fdtd_k1's else: 63/64)
    assert unfolded_insts(accesses, {7: 63 / 64}) == pytest.approx(extra * 63 / 64)


# FIRST_ROW (fdtd_k1's shape: row 0 takes f[1], the others a difference of two rows) comes
# from test_sass_entry, which checks the same kernel's row compare (12v).


def test_fdtd_k1s_row_before_keeps_its_index_and_address(tmp_path: Path) -> None:
    """The else branch (63 of 64 rows): E and H at the thread's element, H a row below;
    the row-0 branch (1 of 64): E[0][j]. PTX-level geps: E[0][j] 1/64, E, H, H[i-1] 63/64
    each; the fold keeps one per base, a base being an array and its row (eq. (12q): E's row
    0 and row i are two: 1/64 and 63/64; H: 63/64); (12n) keeps H[i-1]'s IADD3 and
    IMAD.WIDE: folded = 1/64 + 3 x 63/64 - (1/64 + 2 x 63/64) - 2 x 63/64 = -63/64."""
    shape, per_thread, _ = _traced(tmp_path, FIRST_ROW, 2, port="restrict")
    offsets = sorted(u.offset.bytes for u in shape.accesses if u.base[0] == "H")
    assert offsets == [-256, 0]
    assert folded_address_insts(shape.accesses, per_thread) == pytest.approx(-63 / 64)
