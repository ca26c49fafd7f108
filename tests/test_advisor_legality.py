"""Legality of the advisor's fixes (issue #26): no fix that changes what the program computes,
and every layout change applied everywhere the array is used, said so in the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from cgpredict.advisor.fixes import _swap, coalescing_fixes, shared_candidates_by_kernel
from cgpredict.advisor.legality import makes_copy, subscripts
from cgpredict.pipeline import RunOptions, prepare

pytestmark = pytest.mark.usefixtures("compiler")

USER = Path(__file__).resolve().parents[1] / "examples" / "user"


def _coalescing(name: str, opts: RunOptions):
    """The baseline, its coalescing fixes and the notes of ``examples/user/name``."""
    notes: list[str] = []
    with prepare(USER / name, opts) as prep:
        base = prep.analyze(opts)
        return base, coalescing_fixes(prep, opts, base, notes), notes, prep


def test_subscripts_and_copy():
    assert subscripts("B[j][i]") == ("j", "i")
    assert makes_copy(["B[j][i]", "A[i][j]"], "B", "B[i][j]")
    assert not makes_copy(["C[i][j]", "A[i][k]", "B[k][j]"], "B", "B[j][k]")


def test_transpose_output_never_stored_transposed():
    """B[j][i] = A[i][j]: storing B transposed makes it a copy; the store is uncoalesced but
    the fix is not offered, and a note says why."""
    opts = RunOptions(device="h100", work_sizes={"N": 256}, trace_sizes={"N": 128})
    base, fixes, notes, _ = _coalescing("transpose.c", opts)
    assert any(m.pattern == "uncoalesced" for k in base.kernels for m in k.mem)
    assert fixes == []
    assert any("storing B transposed is not offered" in n and "copy" in n for n in notes)


def test_softmax_output_layout_change_says_where_it_applies():
    """out is written by the kernel and read by the host: storing it transposed is offered only
    with the host's reads named; no transposed copy of an array a kernel writes."""
    opts = RunOptions(device="h100", work_sizes={"R": 256, "C": 64},
                      trace_sizes={"R": 256, "C": 64})
    _, fixes, _, _ = _coalescing("softmax.c", opts)
    titles = {f.title: f for f in fixes}
    assert "store out transposed" in titles
    assert "host code that reads it after the kernels" in titles["store out transposed"].instruction
    assert "store in transposed" in titles
    assert "host code that fills it" in titles["store in transposed"].instruction
    assert not any(f.title.startswith("transposed copy of out") for f in fixes)


def test_shared_tiles_only_arrays_the_kernel_does_not_write():
    """Staging an array the kernel writes would read stale tiles: never a candidate."""
    opts = RunOptions(device="h100", work_sizes={"R": 256, "C": 64},
                      trace_sizes={"R": 256, "C": 64})
    with prepare(USER / "softmax.c", opts) as prep:
        base = prep.analyze(opts)
        cands = shared_candidates_by_kernel(prep, base)
    assert "out" not in cands.get("softmax", [])


def test_swap_is_an_involution():
    for t in ("A[i][j]", "B[k + 1][j]", "T[a][b][c]"):
        assert _swap(_swap(t)) == t
