"""The advisor's warp per CSR row (issue #26): the scalar CSR SpMV re-predicted with a warp per
row, its val and col reads coalesced per row and the gather of x still a gather, each count
derived by brute force from the matrix the program builds (its generator replayed here);
no warp per row for a row loop that is not a sum."""

from __future__ import annotations

from pathlib import Path

import pytest

from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare

pytestmark = pytest.mark.usefixtures("compiler")

USER = Path(__file__).resolve().parents[1] / "examples" / "user"
ROWS = 4096  # NR = NC, traced at the work size
NNZ = 16  # entries a row (spmv_csr.c's NNZ_ROW)
SEG = 64  # the TK1's L2 transaction (no L1 for global loads: every warp load reaches it)


def _columns() -> list[int]:
    """col[] as spmv_csr.c fills it: a linear congruential generator, mod 2^32."""
    seed, out = 12345, []
    for _ in range(ROWS * NNZ):
        seed = (seed * 1664525 + 1013904223) % (1 << 32)
        out.append((seed >> 8) % ROWS)
    return out


@pytest.fixture(scope="module")
def spmv():
    """The baseline, the fixes (a warp a row, 16 lanes a row), the same trace regrouped a
    warp a row without the shuffles, and the arrays' addresses."""
    import dataclasses

    from cgpredict.advisor.csr_fix import csr_fixes

    opts = RunOptions(device="tk1", work_sizes={"NR": ROWS, "NC": ROWS},
                      trace_sizes={"NR": ROWS, "NC": ROWS})
    notes: list[str] = []
    with prepare(USER / "spmv_csr.c", opts) as prep:
        base = prep.analyze(opts)
        fixes = csr_fixes(prep, opts, base, notes)
        plain = prep.analyze(dataclasses.replace(opts, row_warp=(("spmv", 32),)))
        bases = dict(prep.trace.header.globals)
    return base, fixes, plain, bases


def _mean_segments(groups: list[list[int]]) -> float:
    """The mean distinct SEG-byte segments of each group of addresses (a warp load)."""
    return sum(len({a // SEG for a in g}) for g in groups) / len(groups)


def test_warp_per_row_counts_by_brute_force(spmv):
    """A warp per row of 16 entries: one chunk a row, 16 lanes; val and col one row's 64
    bytes (coalesced), x 16 columns drawn at random (a gather: its segments as the brute
    force counts them); one of each load a thread (a row a warp), 32 x 4096 threads in
    blocks of 256; the butterfly's 10 instructions a thread."""
    base, fixes, plain, g = spmv
    fix = fixes[0]
    assert fix.title.startswith("a warp per row (32 threads a row)")
    assert fix.kind == "warp-per-row" and "__shfl_xor_sync" in fix.code
    (k,) = fix.report.kernels
    (p,) = plain.kernels
    col = _columns()
    mem = {m.text: m for m in k.mem}
    assert {t: mem[t].pattern for t in ("val[k]", "col[k]", "x[col[k]]")} == {
        "val[k]": "coalesced", "col[k]": "coalesced", "x[col[k]]": "uncoalesced"}
    rows = [list(range(r * NNZ, r * NNZ + NNZ)) for r in range(ROWS)]
    assert mem["val[k]"].l2_trans_per_warp == pytest.approx(
        _mean_segments([[g["val"] + 4 * e for e in row] for row in rows]))
    assert mem["x[col[k]]"].l2_trans_per_warp == pytest.approx(
        _mean_segments([[g["x"] + 4 * col[e] for e in row] for row in rows]))
    assert all(m.per_thread == pytest.approx(1.0) for m in k.mem)
    assert k.blocks == ROWS * 32 // 256 and k.block == "256x1"
    assert k.profile.comp_insts == pytest.approx(p.profile.comp_insts + 10)


def test_sixteen_lanes_a_row_by_brute_force(spmv):
    """Rows of 16 entries get 16 lanes (CUSP's choice), two rows a warp: val a warp's two
    consecutive rows (128 bytes), x 32 random columns; 16 x 4096 threads; a 4-step butterfly
    (8 instructions)."""
    _, fixes, plain, g = spmv
    assert [f.title.split(" per row")[0] for f in fixes] == ["a warp", "16 lanes"]
    (k,) = fixes[1].report.kernels
    col = _columns()
    mem = {m.text: m for m in k.mem}
    pairs = [list(range(w * 2 * NNZ, (w + 1) * 2 * NNZ)) for w in range(ROWS // 2)]
    assert mem["val[k]"].pattern == "coalesced"
    assert mem["val[k]"].l2_trans_per_warp == pytest.approx(
        _mean_segments([[g["val"] + 4 * e for e in p] for p in pairs]))
    assert mem["x[col[k]]"].l2_trans_per_warp == pytest.approx(
        _mean_segments([[g["x"] + 4 * col[e] for e in p] for p in pairs]))
    assert all(m.per_thread == pytest.approx(1.0) for m in k.mem)
    assert k.blocks == ROWS * 16 // 256
    assert "k += 16" in fixes[1].code and "o = 8" in fixes[1].code


def test_the_scalar_kernel_gathers_a_row_per_lane(spmv):
    """Before: a warp's load at iteration j reads entry j of 32 rows (16 entries apart) and
    x at 32 random columns, 16 times a thread: the brute force's segments."""
    base, _, _, g = spmv
    (k,) = base.kernels
    col = _columns()
    mem = {m.text: m for m in k.mem}
    warps = [[(w * 32 + lane) * NNZ for lane in range(32)] for w in range(ROWS // 32)]
    val = [[g["val"] + 4 * (e + j) for e in w] for w in warps for j in range(NNZ)]
    x = [[g["x"] + 4 * col[e + j] for e in w] for w in warps for j in range(NNZ)]
    assert mem["val[k]"].l2_trans_per_warp == pytest.approx(_mean_segments(val))
    assert mem["x[col[k]]"].l2_trans_per_warp == pytest.approx(_mean_segments(x))
    assert mem["val[k]"].per_thread == pytest.approx(NNZ)


def test_no_warp_per_row_for_a_recurrence(tmp_path):
    """s = s * 0.5 + val[k] is not a sum: its iterations cannot be split between lanes, so
    no warp per row is offered there, and a note says why."""
    from cgpredict.advisor.csr_fix import csr_candidates

    text = (USER / "spmv_csr.c").read_text()
    src = tmp_path / "horner.c"
    src.write_text(text.replace("s += val[k] * x[col[k]];", "s = s * 0.5f + val[k] * x[col[k]];"))
    opts = RunOptions(device="tk1", work_sizes={"NR": 1024, "NC": 1024},
                      trace_sizes={"NR": 1024, "NC": 1024})
    notes: list[str] = []
    with prepare(src, opts) as prep:
        base = prep.analyze(opts)
        assert csr_candidates(prep, base, notes) == {}
    assert any("not offered in spmv" in n and "other than a sum" in n for n in notes), notes


def test_warp_per_row_ranks_first_on_the_tk1():
    """On the TK1 (no L1 for global loads) the scalar kernel's val and col cost a
    transaction a lane: a row's lanes striding it rank first, 16 lanes (two rows a warp)
    ahead of a warp a row, ranked by the times printed."""
    from cgpredict.advisor import advise

    a = advise(USER / "spmv_csr.c", RunOptions(device="tk1",
                                              work_sizes={"NR": 1 << 16, "NC": 1 << 16},
                                              trace_sizes={"NR": ROWS, "NC": ROWS}))
    assert a.fixes[0].kind == "warp-per-row" and a.fixes[0].speedup > 1
    assert a.fixes[0].title.startswith("16 lanes per row (2 rows a warp)")
    ms = [f.predicted_ms for f in a.fixes]
    assert ms == sorted(ms)
