"""Eq. (12q): a 2-D thread's distinct row forms (cgpredict/row_forms.py), counted by hand:
rows whose indices differ by a constant share one linear form and fold; clamped rows do
not."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from test_sass_entry import _traced

from cgpredict.machine_code import folded_address_insts
from cgpredict.row_forms import gep_parts, row_key

# rows y - 1 and y + 1 clamped to the image: y0 = max(y - 1, 0), y1 = min(y + 1, N - 1), no
# constant offset of each other or of y. The port forms in[y0][x], in[y1][x] and out[y][x]
# each as LEA + IMAD.WIDE (bilinear's SASS): 3 forms, 2 past the thread's first row index;
# and the two loads of `in` share no address (the fold keeps both: none folded).
CLAMPED = """\
#define N 64
#pragma cgp trace N=64
static float in[N][N], out[N][N];
int main(void) {
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) in[i][j] = i - j;
#pragma cgp kernel clamped grid=2
  for (int y = 0; y < N; y++)
    for (int x = 0; x < N; x++) {
      int y0 = y - 1 < 0 ? 0 : y - 1;
      int y1 = y + 1 > N - 1 ? N - 1 : y + 1;
      out[y][x] = in[y0][x] + in[y1][x];
    }
  return out[3][3] != 12345.0f ? 0 : 1;
}
"""

# the stencil: rows y - 1, y and y + 1 of one root: one form, their offsets immediates
STENCIL = """\
#define N 64
#pragma cgp trace N=64
static float in[N][N], out[N][N];
int main(void) {
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) in[i][j] = i - j;
#pragma cgp kernel stencil grid=2
  for (int y = 1; y < N - 1; y++)
    for (int x = 0; x < N; x++) out[y][x] = in[y - 1][x] + in[y + 1][x];
  return out[3][3] != 12345.0f ? 0 : 1;
}
"""


def _shape(tmp_path: Path, src: str):
    """(MachineShape, block executions per thread) of the file's 2-D kernel."""
    shape, per_thread, _ = _traced(tmp_path, src, 2)
    return shape, per_thread


def test_clamped_rows_are_forms_of_their_own(tmp_path: Path) -> None:
    shape, per_thread = _shape(tmp_path, CLAMPED)
    assert sum(n for _, n in shape.entry.row_forms) == 2
    assert len({u.base for u in shape.accesses}) == len(shape.accesses)  # no shared base
    assert folded_address_insts(shape.accesses, per_thread) == 0.0


def test_rows_a_constant_apart_are_one_form(tmp_path: Path) -> None:
    shape, per_thread = _shape(tmp_path, STENCIL)
    assert shape.entry.row_forms == ()
    assert folded_address_insts(shape.accesses, per_thread) >= 1.0  # in[y + 1][x] folds


def _ins(opcode: str, text: str):
    return SimpleNamespace(opcode=opcode, text=text)


def test_a_row_key_goes_through_constant_byte_offsets_and_casts() -> None:
    defs = {
        "y": _ins("call", "call i32 @llvm.smin.i32(i32 %a, i32 30)"),
        "w": _ins("sext", "sext i32 %y to i64"),
        "row": _ins("getelementptr", "getelementptr [32 x float], ptr %in, i64 %w"),
        "next": _ins("getelementptr", "getelementptr i8, ptr %row, i64 128"),
    }
    assert gep_parts(defs["row"]) == ("in", ("w",))
    assert row_key(defs, "next", set()) == ("y",) == row_key(defs, "row", set())
    assert row_key(defs, "in", set()) == ()  # the array parameter itself: no row
    assert row_key(defs, "row", {"row"}) == ()  # formed in the body
