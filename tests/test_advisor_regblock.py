"""The advisor's register blocking along rows (issue #26): the loads, threads, blocks and
registers of a register-blocked 3x3 stencil derived by hand, its DRAM traffic unchanged, no
fix for a stencil that writes the array it reads, the __restrict__ it needs said, and the
blocked C code computing the same values as the plain one (and not in place)."""

from __future__ import annotations

import dataclasses
import subprocess

import pytest
from click.testing import CliRunner

from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare

pytestmark = pytest.mark.usefixtures("compiler")

# 64 x 64 points of an 80 x 80 array (rows of 320 B), blocks of 32 x 32: ``box`` is a 3x3
# stencil writing another array (legal); ``inplace`` and ``alias`` write the array they read,
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
#pragma cgp kernel box grid=2
  for (int i = 1; i <= M; i++)
    for (int j = 1; j <= M; j++)
      B[i][j] = A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1]
              + A[i][j - 1] + A[i][j] + A[i][j + 1]
              + A[i + 1][j - 1] + A[i + 1][j] + A[i + 1][j + 1];
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


@pytest.fixture(scope="module")
def stencil(tmp_path_factory):
    """The baseline on the TK1 (no L1 for global loads), the box kernel register-blocked by
    2, 4 and 8 rows, and the advisor's fixes and notes."""
    from cgpredict.advisor.regblock_fix import regblock_fixes

    src = tmp_path_factory.mktemp("regblock") / "stencil.c"
    src.write_text(SOURCE)
    opts = RunOptions(device="tk1")
    notes: list[str] = []
    with prepare(src, opts) as prep:
        base = prep.analyze(opts)
        blocked = {r: prep.analyze(dataclasses.replace(opts, reg_block=(("box", r),)))
                   for r in (2, 4, 8)}
        fixes = regblock_fixes(prep, opts, base, notes)
    return base, blocked, fixes, notes, src


def _kernel(rep, name="box"):
    return next(k for k in rep.kernels if k.name == name)


@pytest.mark.parametrize("rows", [2, 4, 8])
def test_register_blocked_counts_by_hand(stencil, rows):
    """R rows a thread: 9R loads become 3(R + 2) (the rows i-1 and i loaded by the first
    output only, row i+1 by every output), R stores; 64 x 64/R threads in four blocks of
    32 x 32/R (the same outputs a block); 4(R - 1) registers more (3(R + 2) - 9 loaded
    values and R - 1 sums more live at once); A's DRAM traffic unchanged, every 64-B
    segment of rows 0..65 once (66 rows x 5)."""
    base, blocked, _, _, _ = stencil
    b, k = _kernel(base), _kernel(blocked[rows])
    loads = {m.text: m.per_thread for m in k.mem if m.kind == "load"}
    assert sum(loads.values()) == pytest.approx(3 * (rows + 2))
    assert sum(m.per_thread for m in b.mem if m.kind == "load") == pytest.approx(9)
    for text, n in loads.items():
        assert n == pytest.approx(rows if text.startswith("A[i+1]") else 1.0), text
    (store,) = [m for m in k.mem if m.kind == "store"]
    assert store.per_thread == pytest.approx(rows) and not store.restored
    assert k.grid_threads == (64, 64 // rows) and k.blocks == 4
    assert k.block == f"32x{32 // rows}"
    assert k.profile.registers_per_thread == b.profile.registers_per_thread + 4 * (rows - 1)
    assert b.registers_from == "estimated" and b.profile.registers_per_thread <= 32
    line = next(w for w in k.warnings if "register-blocked" in w)
    assert f"{3 * (rows + 2)} loads a thread (was 9 per output" in line
    # lower bound: one element of A and one of B a point
    assert "touches 32768 B for 4096 outputs" in line
    def dram_loads(kernel, threads):
        lo = kernel.profile.loads_only()
        per_warp = sum(c.insts * (1 - c.l1_hit_fraction) * c.dram_trans_per_warp
                       for c in (lo.coal, lo.uncoal, lo.const))
        return per_warp * threads / 32

    assert dram_loads(b, 64 * 64) == pytest.approx(66 * 5)
    assert dram_loads(k, 64 * 64 / rows) == pytest.approx(dram_loads(b, 64 * 64))


def test_register_block_needs_restrict_and_is_checked_against_the_bounds(stencil):
    """The fix says the arrays must be __restrict__ (the plain port reloads after a store),
    picks the fastest R it printed, and states its DRAM traffic against the compulsory."""
    base, blocked, fixes, _, _ = stencil
    (fix,) = fixes
    assert fix.kind == "register-blocking" and "in box" in fix.title
    assert "__restrict__" in fix.instruction and "__restrict__" in fix.code
    best = min((2, 4, 8), key=lambda r: blocked[r].total_ms)
    assert fix.title.startswith(f"compute {best} rows a thread")
    assert fix.predicted_ms == pytest.approx(blocked[best].total_ms)
    assert f"float acc[{best}]" in fix.code and "y0 + r < ny" in fix.code
    assert any("compulsory" in e for e in fix.evidence)
    for r in (2, 4, 8):
        assert any(e.startswith(f"R = {r}: ") and "+" in e for e in fix.evidence), r


def test_no_register_blocking_for_a_stencil_that_writes_its_array(stencil):
    """A value kept in a register is stale once a store writes it: not offered in place, by
    name or through a pointer, and the option is a one-line error there."""
    from cgpredict.prediction import PredictionError

    _, _, fixes, notes, src = stencil
    assert [f.title.split(" in ")[1].split(",")[0] for f in fixes] == ["box"]
    assert any("register blocking of inplace is not offered" in n for n in notes), notes
    assert any("register blocking of alias is not offered" in n and "in-place" in n
               for n in notes), notes
    opts = RunOptions(device="tk1")
    with prepare(src, opts) as prep:
        with pytest.raises(PredictionError, match="in-place"):
            prep.analyze(dataclasses.replace(opts, reg_block=(("alias", 4),)))


# The blocked kernel as the fix's snippet writes it, R = 4 over 62 rows (R does not divide
# them: the guard), against the plain one; ``same`` stencils of distinct arrays, ``inplace``
# both writing the array they read.
CHECK = r"""
#include <stdio.h>
#include <string.h>
#define N 64
#define R 4
static float A[N][N], B1[N][N], B2[N][N], C1[N][N], C2[N][N];
static float w(int q) { return 0.5f + 0.25f * q; }
static void plain(const float (*a)[N], float (*b)[N]) {
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++) {
      float s = 0.0f;
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) s += w(dy * 3 + dx) * a[i + dy][j + dx];
      b[i][j] = s;
    }
}
static void blocked(const float (*a)[N], float (*b)[N]) {  /* a thread: R rows */
  for (int y0 = 1; y0 < N - 1; y0 += R)
    for (int j = 1; j < N - 1; j++) {
      float v[R + 2][3], acc[R];
      for (int q = -1; q < R + 1; q++)  /* each input row once, into registers */
        for (int dx = -1; dx <= 1; dx++)
          v[q + 1][dx + 1] = y0 + q < N ? a[y0 + q][j + dx] : 0.0f;
      for (int r = 0; r < R; r++) {
        float s = 0.0f;
        for (int dy = -1; dy <= 1; dy++)
          for (int dx = -1; dx <= 1; dx++) s += w(dy * 3 + dx) * v[r + dy + 1][dx + 1];
        acc[r] = s;
      }
      for (int r = 0; r < R; r++)
        if (y0 + r < N - 1) b[y0 + r][j] = acc[r];  /* the guard */
    }
}
int main(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) A[i][j] = C1[i][j] = C2[i][j] = (float)((i * 7 + j) % 13) / 3;
  plain(A, B1);
  blocked(A, B2);
  plain(C1, C1);
  blocked(C2, C2);
  printf("same %d inplace %d\n", !memcmp(B1, B2, sizeof B1), !memcmp(C1, C2, sizeof C1));
  return 0;
}
"""


def test_register_blocked_code_computes_the_same_values(compiler, tmp_path):
    """The blocked stencil over distinct arrays gives the plain one's values bit for bit
    (each output sums the same products in the same order), with a short last row; in
    place it does not (a register keeps a value a store has since replaced): why the fix
    needs distinct __restrict__ arrays and is not offered in place."""
    src, exe = tmp_path / "check.c", tmp_path / "check"
    src.write_text(CHECK)
    subprocess.run([*compiler.command, "-O1", "-o", str(exe), str(src)], check=True,
                   capture_output=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "same 1 inplace 0"


@pytest.mark.slow
def test_advise_text_shows_the_register_blocking_and_its_code(stencil):
    """``cgpredict advise`` lists the fix with its kind and prints its CUDA snippet."""
    from cgpredict.cli import main

    *_, src = stencil
    r = CliRunner().invoke(main, ["advise", str(src), "--device", "tk1"])
    assert r.exit_code == 0, r.output
    lines = r.output.split("\n")
    fix = next(i for i, line in enumerate(lines) if "[register-blocking] compute" in line)
    assert "in box, reusing A in registers" in lines[fix]
    assert any("__restrict__ A" in line for line in lines[fix:])
    assert any("register blocking of inplace is not offered" in line for line in lines)


@pytest.mark.slow
def test_advice_html_shows_the_register_blocking_snippet(stencil):
    """The HTML report's advice table carries the fix's CUDA snippet, escaped as written."""
    from cgpredict.advisor import advise
    from cgpredict.render.html import _advice_section

    *_, src = stencil
    a = advise(src, RunOptions(device="tk1"))
    (fix,) = [f for f in a.fixes if f.kind == "register-blocking"]
    assert fix.speedup > 1
    page = _advice_section(a)
    assert "[register-blocking] compute" in page
    assert "const float *__restrict__ A, float *__restrict__ B" in page
    assert "if (y0 + r &lt; ny)" in page


def test_a_prediction_under_the_compulsory_bytes_is_refused(stencil):
    """The bound check: the R = 4 prediction keeps its DRAM traffic and time above the bytes
    the launch must move (one element of A and of B a point: 32768 B for 4096 outputs); the
    same prediction against a compulsory traffic twice its own breaks the bound."""
    from cgpredict.advisor.regblock_fix import compulsory_mb, within_bounds
    from cgpredict.advisor.roofline import kernel_roofline
    from cgpredict.devices import load_device

    base, blocked, *_ = stencil
    dev = load_device("tk1")
    b, k = _kernel(base), _kernel(blocked[4])
    assert compulsory_mb(k.reg_block, b) == pytest.approx(32768 / 1e6)
    ok, text = within_bounds(b, k, dev)
    assert ok and "0.03277 MB compulsory" in text
    more = 2 * kernel_roofline(k, dev).dram_mb * 1e6 * 4096 / b.launches
    bad = dataclasses.replace(k.reg_block, compulsory_bytes=round(more))
    assert not within_bounds(b, dataclasses.replace(k, reg_block=bad), dev)[0]


@pytest.mark.parametrize("rows", [2, 4, 8])
def test_register_blocking_figures_are_typed_fields_of_the_report(stencil, rows):
    """KernelReport.reg_block holds the figures by hand (module SOURCE: 9 loads an output
    before, 3(R + 2) a thread after, 3(R + 2) - 9 + (R - 1) registers added to the kernel's
    estimated count (registers.py);
    32768 B compulsory for 4096 outputs), the report's line says the same, the JSON carries
    them, and a kernel not blocked has none."""
    import json

    base, blocked, *_ = stencil
    f = _kernel(blocked[rows]).reg_block
    extra = 3 * (rows + 2) - 9 + (rows - 1)
    assert (f.rows, f.loads_before, f.loads_after) == (rows, 9, 3 * (rows + 2))
    assert (f.extra_registers, f.registers) == (
        extra, _kernel(base).profile.registers_per_thread + extra)
    assert (f.compulsory_bytes, f.outputs) == (32768, 4096)
    line = next(w for w in _kernel(blocked[rows]).warnings if "register-blocked" in w)
    assert "touches 32768 B for 4096 outputs" in line and f"+{extra} registers" in line
    d = json.loads(blocked[rows].to_json())
    (k,) = [k for k in d["kernels"] if k["name"] == "box"]
    assert k["reg_block"]["compulsory_bytes"] == 32768 and k["halo"] is None
    assert all(x.reg_block is None and x.halo is None for x in base.kernels)
