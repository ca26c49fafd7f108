"""Eq. (12xb): the two exit tests of an escape loop (``it < N && |z|^2 <= 4``) are one branch
an iteration in the SASS (cgpredict/merged_exits.py): the latch's test is branched on with the
header's, which computes nothing with a side effect; a counted loop has one test."""

from __future__ import annotations

from pathlib import Path

from test_shared_products import ESCAPE

from cgpredict.machine_code import MachineShape, machine_extras
from cgpredict.merged_exits import merged_exits
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare

#: one exit test an iteration (a counted loop): nothing to merge
COUNTED = ESCAPE.replace("while (it < N && zr * zr + zi * zi <= 4.0f) {",
                         "for (int k = 0; k < N; k++) {")


def _latches(tmp_path: Path, src: str) -> tuple[tuple[int, ...], set[int], object]:
    path = tmp_path / "k.c"
    path.write_text(src)
    with prepare(path, RunOptions(device="h100")) as prep:
        tr = prep.trace
        (lp,) = [lp for lp in tr.header.loops if lp.region == 0 and lp.depth == 2]
        return merged_exits(tr, 0, 1), set(lp.blocks), tr


def test_the_escape_loops_latch_branches_with_its_header(tmp_path: Path) -> None:
    (latch,), blocks, tr = _latches(tmp_path, ESCAPE)
    assert latch in blocks
    h = tr.header
    assert h.blocks[latch].label != h.loops[[lp.id for lp in h.loops if lp.depth == 2][0]].header
    # one conditional branch fewer per execution of the latch (an iteration that goes on)
    shape = MachineShape(merged_exits=(latch,))
    extras = machine_extras(shape, lambda _: 0.0, {latch: 7.0}, touches_global=True,
                            staging_stores=0.0)
    assert extras.merged_exits == 7.0
    assert extras.total == extras.added - 7.0


def test_a_counted_loop_has_no_second_test(tmp_path: Path) -> None:
    path = tmp_path / "k.c"
    path.write_text(COUNTED)
    with prepare(path, RunOptions(device="h100")) as prep:
        assert merged_exits(prep.trace, 0, 1) == ()
