"""The advisor's stencil tile with halos (issue #26): the staged tile's global loads, shared
accesses and DRAM traffic derived by hand (and by brute force over the tile's elements) for a
small 5-point stencil, and no tile offered for a stencil that writes the array it reads."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare

pytestmark = pytest.mark.usefixtures("compiler")

USER = Path(__file__).resolve().parents[1] / "examples" / "user"

# 64 x 64 points of an 80 x 80 array (rows of 320 B: five 64-B segments, every row starting
# on one), blocks of 32 x 32: four full blocks, each tile rows i0-1..i0+32, columns
# j0-1..j0+32 (34 x 34 = 1156 elements, the four corners no thread reads included).
# ``lap`` writes another array (legal); ``inplace`` and ``alias`` write the array they read,
# by name and through a pointer (neither offered).
SOURCE = r"""
#include <stdio.h>
#define N 80
#define M 64
static float A[N][N];
static float B[N][N];
int main(void)
{
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      A[i][j] = (float)((i * 7 + j) % 13);
#pragma cgp kernel lap grid=2
  for (int i = 1; i <= M; i++)
    for (int j = 1; j <= M; j++)
      B[i][j] = A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1] + A[i][j];
#pragma cgp kernel inplace grid=2
  for (int i = 1; i <= M; i++)
    for (int j = 1; j <= M; j++)
      B[i][j] = 0.25f * (B[i - 1][j] + B[i + 1][j] + B[i][j - 1] + B[i][j + 1]);
  float (*P)[N] = A;
#pragma cgp kernel alias grid=2
  for (int i = 1; i <= M; i++)
    for (int j = 1; j <= M; j++)
      P[i][j] = 0.5f * (A[i - 1][j] + A[i + 1][j] + A[i][j]);
  printf("%f %f\n", (double)A[5][5], (double)B[7][7]);
  return 0;
}
"""
TILE = 34 * 34
THREADS = 32 * 32


@pytest.fixture(scope="module")
def stencil(tmp_path_factory):
    """The baseline on the TK1 (no L1 for global loads: every load reaches the L2), the
    halo fixes and their notes, and A's address."""
    from cgpredict.advisor.halo_fix import halo_fixes

    src = tmp_path_factory.mktemp("halo") / "stencil.c"
    src.write_text(SOURCE)
    opts = RunOptions(device="tk1", block=None)
    notes: list[str] = []
    with prepare(src, opts) as prep:
        base = prep.analyze(opts)
        fixes = halo_fixes(prep, opts, base, notes)
        base_a = prep.trace.header.globals["A"]
    return base, fixes, notes, base_a


def _segments_per_warp(base_a: int, seg: int) -> tuple[float, float]:
    """Brute force: the mean distinct ``seg``-byte segments of a warp instruction of each
    staging round, thread t of a block loading tile element q x 1024 + t (row-major)."""
    rounds: list[list[int]] = [[], []]
    for bi in range(2):
        for bj in range(2):
            i0, j0 = 1 + 32 * bi, 1 + 32 * bj
            for q in range(2):
                for w in range(32):
                    elems = [q * THREADS + w * 32 + lane for lane in range(32)]
                    elems = [e for e in elems if e < TILE]
                    if not elems:
                        continue
                    segs = {(base_a + ((i0 - 1 + e // 34) * 80 + j0 - 1 + e % 34) * 4) // seg
                            for e in elems}
                    rounds[q].append(len(segs))
    return tuple(sum(r) / len(r) for r in rounds)


def test_halo_tile_counts_by_hand(stencil):
    """Two staging rounds (1156 elements, 1024 threads): round 0 in all 32 warps of a block,
    round 1 in 5 (4 full, 4 lanes of the fifth): 5/32 a thread; their L2 transactions as
    the brute force counts them; the other three reads and the tile's stores conflict-free
    shared accesses (5 reads + 1156/1024 stores a thread), 4624 B a block, one barrier; A's
    DRAM traffic unchanged: every 64-B segment of rows 0..65, columns 0..65 once (330)."""
    base, fixes, _, base_a = stencil
    (fix,) = [f for f in fixes if "in lap" in f.title]
    k = next(k for k in fix.report.kernels if k.name == "lap")
    b = next(k for k in base.kernels if k.name == "lap")
    loads = [m for m in k.mem if m.text.startswith("A")]
    rounds = [m for m in loads if m.pattern != "shared"]
    assert len(loads) == 5 and len(rounds) == 2
    assert [m.per_thread for m in rounds] == pytest.approx([1.0, 5 / 32])
    r0, r1 = _segments_per_warp(base_a, 64)
    assert [m.l2_trans_per_warp for m in rounds] == pytest.approx([r0, r1])
    sh = k.profile.shared
    ((x, n),) = sh.insts_by_conflict
    assert x == 1.0 and n == pytest.approx(5 + TILE / THREADS)
    assert sh.bytes_per_block == TILE * 4 and sh.load_insts == 0
    assert k.profile.sync_insts == pytest.approx(1.0)
    warps = 64 * 64 / 32

    def dram_loads(p):
        lo = p.loads_only()
        return warps * sum(c.insts * (1 - c.l1_hit_fraction) * c.dram_trans_per_warp
                           for c in (lo.coal, lo.uncoal, lo.const))

    assert dram_loads(k.profile) == pytest.approx(dram_loads(b.profile))
    assert dram_loads(k.profile) == pytest.approx(66 * 5)
    assert "spans 3 rows and 3 columns" in fix.evidence[0]
    assert "tile[32 + 2][32 + 2]" in fix.code and "__syncthreads" in fix.code


def test_halo_figures_are_typed_fields_of_the_report(stencil):
    """KernelReport.halo of the staged kernel by hand: A read by lap through a 5-point stencil
    spanning 3 rows and 3 columns (one plane), a 34 x 34 tile of 4-B floats (4624 B) loaded
    in two rounds of the 1024 threads; the fix's evidence is its text; the JSON carries it."""
    import json

    from cgpredict.halo import HaloFigures, halo_text

    base, fixes, _, _ = stencil
    (fix,) = [f for f in fixes if "in lap" in f.title]
    k = next(k for k in fix.report.kernels if k.name == "lap")
    assert k.halo == HaloFigures(access="A", array="A", spans=(1, 3, 3), tile_elements=TILE,
                                 bytes_per_block=TILE * 4, rounds=2, threads=THREADS)
    assert fix.evidence[0] == halo_text(k.halo) and k.reg_block is None
    assert f"lap: {halo_text(k.halo)}" in k.warnings
    (d,) = [x for x in json.loads(fix.report.to_json())["kernels"] if x["name"] == "lap"]
    assert d["halo"]["spans"] == [1, 3, 3] and d["halo"]["tile_elements"] == TILE
    assert all(x.halo is None for x in base.kernels)


def test_no_halo_tile_for_a_stencil_that_writes_its_array(stencil):
    """An in-place stencil reads neighbours another block may have overwritten: not offered,
    whether it writes the array by its name or through a pointer."""
    _, fixes, notes, _ = stencil
    assert [f.title for f in fixes] == ["stage A in a shared-memory tile with its halo in lap"]
    assert any("halo tile of B in inplace is not offered" in n for n in notes), notes
    assert any("halo tile of A in alias" in n and "in-place" in n for n in notes), notes


def test_halo_option_is_one_line_error_on_a_non_stencil(stencil, tmp_path):
    """Asking for a halo tile of an array a kernel reads once is a one-line PredictionError."""
    from cgpredict.prediction import PredictionError

    src = tmp_path / "copy.c"
    src.write_text(SOURCE.replace("A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1] + ",
                                  ""))
    opts = RunOptions(device="tk1")
    with prepare(src, opts) as prep:
        with pytest.raises(PredictionError, match="no stencil"):
            prep.analyze(dataclasses.replace(opts, halo=(("lap", "A"),)))


def test_halo_tile_ranks_first_on_the_tk1_2dconv():
    """2DCONV on the TK1 (no L1 for global loads: the 3x3 reuse across rows goes to the L2,
    the L2 bound is the nearest): the halo tile in the top two, faster than now, the ranking
    by the predicted times printed, the tile cutting the kernel's L2 bound."""
    from cgpredict.advisor import advise
    from cgpredict.advisor.roofline import kernel_roofline
    from cgpredict.devices import load_device

    poly = Path(__file__).resolve().parents[1] / "polybench_c"
    a = advise(poly / "2dconv.c", RunOptions(device="tk1", work_sizes={"NI": 1024, "NJ": 1024},
                                             trace_sizes={"NI": 256, "NJ": 256}))
    assert "halo-tile" in [f.kind for f in a.fixes[:2]]
    (fix,) = [f for f in a.fixes if f.kind == "halo-tile"]
    assert fix.speedup > 1
    ms = [f.predicted_ms for f in a.fixes]
    assert ms == sorted(ms)
    assert a.roofline[0].nearest == "L2"
    (k,) = fix.report.kernels
    assert kernel_roofline(k, load_device("tk1")).l2_ms < a.roofline[0].l2_ms / 2


def test_halo_tile_at_the_dram_bound_says_so():
    """Jacobi on the H100 runs at its DRAM bound: the tile gains nothing (no speedup beyond
    the tolerance), and its evidence says why (every element still comes from DRAM once)."""
    from cgpredict.advisor.halo_fix import halo_fixes

    opts = RunOptions(device="h100", work_sizes={"N": 1024, "TSTEPS": 4},
                      trace_sizes={"N": 128, "TSTEPS": 2})
    with prepare(USER / "jacobi2d.c", opts) as prep:
        base = prep.analyze(opts)
        (fix,) = halo_fixes(prep, opts, base, [])
    assert fix.title == "stage src in a shared-memory tile with its halo in jacobi"
    assert fix.speedup < 1.01
    assert any("DRAM bound already" in e for e in fix.evidence), fix.evidence
