"""Tests of cgpredict.memory.shared (SPEC §2.6): bank-conflict degrees, array layouts from IR, the
transposed layout the advisor's coalescing fix uses, and staged accesses of a tiled kernel.

Bank rules by hand. 4-byte banks (32 banks): word w is in bank w mod 32; distinct words of one
bank conflict. Kepler 8-byte banks: word w is in bank (w // 2) mod 32, and two words of one bank
conflict only when they lie in different 64-word segments; the same word never conflicts."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from cgpredict.block import Block
from cgpredict.frontend.tracer import TraceOptions, trace_program
from cgpredict.memory.shared import (
    ArrayLayout,
    StagedAccess,
    array_layouts,
    array_name,
    conflict_degree,
    staged_accesses,
    tile_bytes,
)
from cgpredict.memory.transpose import transpose_addresses
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare
from cgpredict.warps import WarpTrace, form_warps

POLYBENCH = Path(__file__).resolve().parents[1] / "polybench_c"


def lanes(stride, start=0, n=32):
    return np.arange(n) * stride + start


@pytest.mark.parametrize("words, expected", [
    (lanes(1), 1), (lanes(2), 2), (lanes(4), 4), (lanes(32), 32), (lanes(33), 1),
    (np.zeros(32, np.int64), 1), (lanes(0, 7), 1), (np.r_[lanes(1, 0, 16), lanes(1, 0, 16)], 1),
    (np.array([0, 32, 64, 0]), 3), (lanes(16), 16)])
def test_conflict_degree_4_byte_banks(words, expected):
    assert conflict_degree(words, 32, 4) == expected


@pytest.mark.parametrize("words, expected", [
    (lanes(1), 1),                 # 32 words = 16 banks x 2 words of one segment
    (lanes(32), 16),               # words 0, 32, 64, ...: banks 0 and 16, 16 segments each
    (lanes(2), 1),                 # 32 distinct banks
    (lanes(64), 32),               # all in bank 0, 32 segments
    (np.array([0, 1]), 1),         # one 8-byte bank word
    (np.array([0, 64]), 2),        # bank 0 in two segments
    (np.array([0, 32]), 1),        # banks 0 and 16
    (np.array([5, 5, 5]), 1),      # broadcast
    (lanes(4), 2),                 # banks 0, 2, ..., 30, 0, ...: words 0 and 64 share bank 0
])
def test_conflict_degree_kepler_8_byte_banks(words, expected):
    assert conflict_degree(words, 32, 8) == expected


IR = """\
@A = internal unnamed_addr global [32 x [8 x float]] zeroinitializer, align 16, !dbg !0
@B = dso_local global [8 x [16 x double]] zeroinitializer, align 16
@v = internal global [64 x i32] zeroinitializer, align 16
@T = internal global [2 x [3 x [4 x i16]]] zeroinitializer
@alpha = internal global float 1.500000e+00, align 4
@.str = private unnamed_addr constant [17 x i8] c"checksum C %.6e\\0A\\00", align 1
define i32 @main() {
  ret i32 0
}
"""


def test_array_layouts():
    lay = array_layouts(IR)
    assert lay["A"] == ArrayLayout((32, 8), 4) and lay["A"].row_elems == 8
    assert lay["B"] == ArrayLayout((8, 16), 8)
    assert lay["v"] == ArrayLayout((64,), 4)
    assert lay["T"] == ArrayLayout((2, 3, 4), 2)
    assert lay[".str"] == ArrayLayout((17,), 1)
    assert "alpha" not in lay and "main" not in lay
    assert array_layouts("") == {}


@pytest.mark.parametrize("text, name", [("A[i][k]", "A"), ("tmp[i]", "tmp"), ("s", "s"),
                                        ("_x1[j]", "_x1"), ("", "")])
def test_array_name(text, name):
    assert array_name(text) == name


def test_transpose_addresses():
    """Element (r, c) of a 3 x 5 float array at base 1000 moves to (c, r) of a 5 x 3 one."""
    lay = ArrayLayout((3, 5), 4)
    r, c = np.meshgrid(np.arange(3), np.arange(5), indexing="ij")
    addr = (1000 + 4 * (r * 5 + c)).ravel().astype(np.uint64)
    moved = transpose_addresses(addr, 1000, lay)
    assert moved.dtype == np.uint64
    assert moved.tolist() == (1000 + 4 * (c * 3 + r)).ravel().tolist()
    # a bijection on the array, and applying the transposed layout twice is the identity
    assert sorted(moved.tolist()) == sorted(addr.tolist())
    back = transpose_addresses(moved, 1000, ArrayLayout((5, 3), 4))
    assert back.tolist() == addr.tolist()


def test_transpose_addresses_3d_keeps_outer_index():
    lay = ArrayLayout((2, 2, 3), 8)
    addr = np.array([0, 8, 16, 24, 48 + 8], np.uint64)  # (0,0,0) (0,0,1) (0,0,2) (0,1,0) (1,0,1)
    moved = transpose_addresses(addr, 0, lay)
    # (o, r, c) -> (o, c, r) of a 3 x 2 plane: offsets o*6 + c*2 + r
    assert (moved // 8).tolist() == [0, 2, 4, 1, 6 + 2]


def test_tile_bytes():
    lay = {"A": ArrayLayout((64, 64), 4), "D": ArrayLayout((64, 64), 8)}
    assert tile_bytes((("A", 32, 32), ("D", 16, 8), ("X", 4, 4)), lay) == 4096 + 1024 + 64


@pytest.fixture(scope="module")
def syrk_trace(tmp_path_factory, compiler):
    d = tmp_path_factory.mktemp("shared")
    return trace_program(POLYBENCH / "syrk.c", d / "syrk.cgptrace",
                         TraceOptions(macros={"NI": "32", "NJ": "32"}))


def _syrk_warps(tr):
    """(syrk's warps in 32x32 blocks, access texts by id, array layouts)."""
    is_store = np.array([m.kind == "store" for m in tr.header.mem])
    wt = form_warps(tr, 0, 0, 2, Block(32, 32), is_store)
    return wt, {m.id: m.base for m in tr.header.mem}, array_layouts(tr.header.ir_text)


def _syrk_staged_a(tr, bank_bytes: int) -> dict:
    """syrk's accesses of A staged in 32x32 tiles (32x32 blocks), by access text."""
    wt, texts, layouts = _syrk_warps(tr)
    st = staged_accesses(wt, texts, (("A", 32, 32),), layouts, 32, bank_bytes,
                         tr.header.globals)
    return {texts[a.sid]: a for a in st}


def test_staged_accesses_syrk(syrk_trace):
    """A staged in 32x32 tiles: A[i][k] is one word per warp (broadcast, X = 1); A[j][k] reads
    column k of the tile, words 32 apart: 16-way on Kepler's 8-byte banks, 32-way on 4-byte
    banks (the ports' README says the literal tile is a 32-way conflict on 4-byte banks)."""
    for bank_bytes, x_jk in ((8, 16), (4, 32)):
        by = _syrk_staged_a(syrk_trace, bank_bytes)
        assert set(by) == {"A[i][k]", "A[j][k]"}
        assert by["A[i][k]"].conflicts == ((1, 32 * 32),)
        assert by["A[j][k]"].conflicts == ((x_jk, 32 * 32),)
        assert by["A[j][k]"].mean_degree == x_jk
    wt, texts, layouts = _syrk_warps(syrk_trace)
    assert staged_accesses(wt, texts, (("Z", 32, 32),), layouts, 32, 8) == ()


# --- staging loads follow the block shape (review F2), the tile loop (F1), per-kernel stage ---

SIZES128 = {"NI": 128, "NJ": 128, "NK": 128}


@pytest.fixture(scope="module")
def gemm_tiled_prep(compiler):
    opts = RunOptions(work_sizes=SIZES128, trace_sizes=SIZES128)
    with prepare(POLYBENCH / "gemm_tiled.c", opts) as prep:
        yield prep, opts


@pytest.mark.parametrize("block, loads_per_phase, tile_elems", [
    # a bx x by block reads A[by rows][32 k] and B[32 k][bx cols] per kk phase; each thread
    # loads ceil(elements / threads) of each tile
    ("32x32", 1 + 1, 32 * 32 + 32 * 32),
    ("32x8", 256 // 256 + 1024 // 256, 8 * 32 + 32 * 32),    # 1 + 4 = 5
    ("16x16", 512 // 256 + 512 // 256, 16 * 32 + 32 * 16),   # 2 + 2 = 4
    ("8x4", 128 // 32 + 256 // 32, 4 * 32 + 32 * 8),         # 4 + 8 = 12
    ("128x1", 1 + 4096 // 128, 1 * 32 + 32 * 128),           # ceil(32/128) + 32 = 33
])
def test_staging_loads_follow_block_shape(gemm_tiled_prep, block, loads_per_phase, tile_elems):
    """gemm_tiled at NK = 128: 128 / 32 = 4 kk phases per thread, two barriers each."""
    prep, opts = gemm_tiled_prep
    (k,) = prep.analyze(dataclasses.replace(opts, block=Block.parse(block))).kernels
    assert k.profile.shared.load_insts == pytest.approx(4 * loads_per_phase)
    assert k.profile.shared.bytes_per_block == 4 * tile_elems
    assert k.profile.sync_insts == pytest.approx(4 * 2)


@pytest.mark.parametrize("block, loads_per_phase, tile_elems", [
    # two tiles of A per phase: A[i0..][kk..] (by rows) and A[j0..][kk..] (bx rows)
    ("32x32", 1 + 1, 32 * 32 + 32 * 32),
    ("32x8", 256 // 256 + 1024 // 256, 8 * 32 + 32 * 32),
])
def test_syrk_tiled_stages_two_tiles_of_a(compiler, block, loads_per_phase, tile_elems):
    sizes = {"NI": 128, "NJ": 128}
    opts = RunOptions(work_sizes=sizes, trace_sizes=sizes, block=Block.parse(block))
    with prepare(POLYBENCH / "syrk_tiled.c", opts) as prep:
        (k,) = prep.analyze(opts).kernels
    assert k.profile.shared.load_insts == pytest.approx(4 * loads_per_phase)
    assert k.profile.shared.bytes_per_block == 4 * tile_elems


def test_staged_read_before_tile_loop_stays_global(tmp_path, compiler):
    """gemm_tiled with one more read of A before the kk loop: that read is a global access (with
    a warning), and the tiles of A and B are still modelled (2 loads per phase, 4 phases)."""
    text = POLYBENCH.joinpath("gemm_tiled.c").read_text()
    assert "float acc = 0.0f;" in text
    src = tmp_path / "gemm_tiled_pro.c"
    src.write_text(text.replace("float acc = 0.0f;", "float acc = A[i][j] * 0.0f;"))
    opts = RunOptions(work_sizes=SIZES128, trace_sizes=SIZES128)
    with prepare(src, opts) as prep:
        (k,) = prep.analyze(opts).kernels
    assert k.profile.shared.load_insts == pytest.approx(8)
    assert k.profile.shared.bytes_per_block == 8192
    assert k.profile.sync_insts == pytest.approx(8)
    by = {m.text: m.pattern for m in k.mem if m.kind == "load"}
    assert by["A[i][j]"] != "shared"
    assert by["A[i][k]"] == "shared" and by["B[k][j]"] == "shared"
    assert any("A[i][j]" in w and "outside the tile loop" in w for w in k.warnings)


def test_stage_1d_kernel_per_kernel(compiler):
    """mvt staged A in mvt_k1 only: a 256 x 1 block reads 256 rows x 32 columns of A per
    phase, 32 elements per thread; N = 128 gives 4 phases, so 128 loads per thread. mvt_k2
    is left untiled."""
    opts = RunOptions(work_sizes={"N": 128}, trace_sizes={"N": 128})
    with prepare(POLYBENCH / "mvt.c", opts) as prep:
        rep = prep.analyze(dataclasses.replace(opts, stage=(("mvt_k1", "A", 32, 32),)))
    k1, k2 = rep.kernels
    assert (k1.name, k1.block, k2.name) == ("mvt_k1", "256x1", "mvt_k2")
    assert k1.profile.shared.load_insts == pytest.approx(4 * 32)
    assert k1.profile.sync_insts == pytest.approx(4 * 2)
    assert k1.profile.shared.bytes_per_block == 256 * 32 * 4
    assert k2.profile.shared.bytes_per_block == 0 and k2.profile.shared.load_insts == 0


@pytest.mark.slow
def test_pragma_on_loop_that_is_not_strip_mined(tmp_path, compiler):
    """gemm.c with A and B pragma'd but its k loop not strip-mined: phases are counted every
    32 iterations of k (NK = 128: 4 phases, 2 loads and 2 barriers each), not from the mapped
    j loop, and a warning says so."""
    text = POLYBENCH.joinpath("gemm.c").read_text()
    assert "#pragma cgp kernel gemm grid=2\n" in text
    src = tmp_path / "gemm_prag.c"
    src.write_text(text.replace("#pragma cgp kernel gemm grid=2\n",
                                "#pragma cgp kernel gemm grid=2\n#pragma cgp shared A tile 32x32\n"
                                "#pragma cgp shared B tile 32x32\n"))
    opts = RunOptions(work_sizes=SIZES128, trace_sizes=SIZES128)
    with prepare(src, opts) as prep:
        (k,) = prep.analyze(opts).kernels
    assert k.profile.shared.load_insts == pytest.approx(8)
    assert k.profile.sync_insts == pytest.approx(8)
    assert k.profile.shared.bytes_per_block == 8192
    assert any("not strip-mined" in w for w in k.warnings)


def _one_warp(addrs, sid=0):
    """A WarpTrace of one warp instruction: lane L accesses addrs[L]."""
    from cgpredict.warps import EVENT_DTYPE
    n = len(addrs)
    ev = np.zeros(n, EVENT_DTYPE)
    ev["lane"] = np.arange(n)
    ev["thread"] = np.arange(n)
    ev["sid"] = sid
    ev["addr"] = np.asarray(addrs, np.uint64)
    return WarpTrace.from_records(1, Block(32, 1), n, 1, ev, np.array([0]), n, 1)


@pytest.mark.parametrize("bank_bytes, expected", [(4, 8), (8, 4)])
def test_char_tile_column_packs_four_elements_a_word(bank_bytes, expected):
    """char T[32][32] staged 32x32, lane r reads T[r][0]: byte 32r, word 8r. 4-byte banks:
    banks 8r mod 32 = {0, 8, 16, 24}, 8 distinct words each: 8-way. Kepler 8-byte banks: bank
    4r mod 32, 8 banks, each word 8r, 8r+64, 8r+128, 8r+192 in 4 different 64-word segments:
    4-way. (Treating each char as its own word gave 32 and 16.)"""
    wt = _one_warp(1000 + 32 * np.arange(32))
    st = staged_accesses(wt, {0: "T[r][0]"}, (("T", 32, 32),),
                         {"T": ArrayLayout((32, 32), 1)}, 32, bank_bytes, {"T": 1000})
    assert st[0].conflicts == ((expected, 1),)


def test_block_footprints_two_tiles_and_active_threads():
    """One warp of 32 threads in a 32x1 block: lanes read A[0][L] and A[L][0] of a 64x64 float
    array (two tiles): 32 + 32 - 1 (A[0][0] shared) = 63 distinct elements, 32 threads."""
    from cgpredict.memory.shared import block_footprints
    base = 4096
    row = base + 4 * np.arange(32)
    col = base + 4 * 64 * np.arange(32)
    a, b = _one_warp(row, 0), _one_warp(col, 1)
    ev = np.concatenate([a.events, b.events])
    ev["k"][32:] = 1
    wt = WarpTrace.from_records(1, a.block, a.grid_x, 1, ev, np.array([0, 32]), 32, 1)
    assert block_footprints(wt, {"A": [0, 1]}, {"A": 4}) == {"A": (63, 32)}
    assert block_footprints(wt, {"A": [0]}, {"A": 4}) == {"A": (32, 32)}


@pytest.mark.slow
def test_parameter_array_bank_mapping_uses_row_length_from_ir(tmp_path, compiler):
    """syrk tiled inside a function taking float A[N][N] (malloc'd, not a global, N = 128):
    the row length comes from the IR's [128 x float] GEP. A[j][k] (lanes j, k fixed) is tile
    word 32(j mod 32) + k mod 32: 16-way on tk1's 8-byte banks, as with a global array. With
    rows taken as 32 wide, element 128j + k mapped to tile row 4j mod 32: 8 distinct words
    128m + k, one bank, 8 segments: 8-way. 128 / 32 = 4 phases x 2 tiles = 8 loads."""
    src = tmp_path / "fn.c"
    src.write_text(
        "#include <stdio.h>\n#include <stdlib.h>\n#define N 128\n#pragma cgp trace\n"
        "__attribute__((noinline)) void syrk(float C[N][N], float A[N][N]) {\n"
        "#pragma cgp kernel syrk grid=2\n#pragma cgp shared A tile 32x32\n"
        "  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++)\n"
        "    for (int kk = 0; kk < N; kk += 32) for (int k = kk; k < kk + 32; k++)\n"
        "      C[i][j] += A[i][k] * A[j][k];\n}\n"
        "int main(void) {\n"
        "  float (*A)[N] = malloc(sizeof(float) * N * N);\n"
        "  float (*C)[N] = malloc(sizeof(float) * N * N);\n"
        "  for (int i = 0; i < N; i++)\n"
        "    for (int j = 0; j < N; j++) { A[i][j] = i + j; C[i][j] = 0; }\n"
        "  syrk(C, A);\n  printf(\"%f\\n\", C[3][4]);\n  free(A); free(C);\n  return 0;\n}\n")
    opts = RunOptions()
    with prepare(src, opts) as prep:
        (k,) = prep.analyze(opts).kernels
    assert [x for x, _ in k.profile.shared.insts_by_conflict] == [1.0, 16.0]
    assert k.profile.shared.load_insts == pytest.approx(8)
    assert not [w for w in k.warnings if "row length" in w]


@pytest.mark.parametrize("huge", [False, True])
def test_block_footprints_against_sets(huge):
    """Distinct elements per block against Python sets, for a span that fits the bitmap and
    one (elements 2^27 apart) that takes the hash set; threads per block from the events."""
    from cgpredict.memory.shared import block_footprints
    from cgpredict.warps import EVENT_DTYPE

    rng = np.random.default_rng(7)
    n_warps, per = 12, 6  # 4 blocks of 3 warps (block 96x1), 6 instructions per warp
    rows = []
    for w in range(n_warps):
        for k in range(per):
            sid = k % 3
            for lane in range(32):
                if w == n_warps - 1 and lane >= 16:
                    continue  # a partial last warp: its block has fewer threads
                elem = int(rng.integers(0, 50)) + (int(rng.integers(0, 2)) << 27 if huge else 0)
                rows.append((w, k, lane, sid, w * 32 + lane, 4096 + 4 * elem))
    ev = np.array(rows, EVENT_DTYPE)
    new = np.r_[True, (ev["warp"][1:] != ev["warp"][:-1]) | (ev["k"][1:] != ev["k"][:-1])]
    wt = WarpTrace.from_records(1, Block(96), 384, 1, ev, np.flatnonzero(new), 376, n_warps)
    seen: dict[int, set] = {}
    threads: dict[int, set] = {}
    for w, _, _, sid, th, a in rows:
        threads.setdefault(w // 3, set()).add(th)
        if sid in (0, 2):
            seen.setdefault(w // 3, set()).add(a // 4)
    most = max(len(t) for t in threads.values())
    full = [b for b in sorted(threads) if len(threads[b]) == most]
    best = max(full, key=lambda b: (len(seen[b]), -b))
    got = block_footprints(wt, {"A": [0, 2]}, {"A": 4})
    assert got == {"A": (len(seen[best]), most)}


@pytest.mark.parametrize("bank_bytes", [4, 8])
def test_conflict_degrees_of_many_accesses_equal_the_reference(bank_bytes):
    """The one-pass degrees of many warp accesses equal conflict_degree of each (random words
    from broadcast to 32-way conflicts)."""
    from cgpredict.memory.shared import _conflict_degrees

    rng = np.random.default_rng(bank_bytes)
    groups = []
    for g in range(300):
        lanes = int(rng.integers(1, 33))
        spread = [1, 32, 64, 4096][g % 4]
        groups.append(rng.integers(0, spread, lanes) * [1, 32, 2, 1][g % 4])
    words = np.concatenate(groups).astype(np.int64)
    ends = np.cumsum([len(x) for x in groups])
    starts = ends - [len(x) for x in groups]
    got = _conflict_degrees(words, starts.astype(np.int64), ends.astype(np.int64), 32, bank_bytes)
    assert got.tolist() == [conflict_degree(x, 32, bank_bytes) for x in groups]


@pytest.mark.parametrize("elem, rows, cols", [(4, 32, 32), (8, 16, 32), (1, 32, 32), (4, 24, 32),
                                              (4, 32, 48), (12, 32, 32)])
def test_staged_degrees_equal_the_tile_word_reference(elem, rows, cols):
    """Each warp access's conflict degree from its lanes' tile words, (r mod rows, c mod cols)
    of element (addr - base) / elem in rows of 100 elements, against conflict_degree on
    words computed in Python: the shifts and masks of power-of-two sides and element sizes
    and the divisions of others give the same words."""
    from cgpredict.memory.shared import _conflict_degrees, _staged_words, conflict_degree

    rng = np.random.default_rng(elem * rows + cols)
    base, row_len, n_inst = 4096, 100, 40
    sid = np.array([2, 1] * (n_inst // 2), np.int64)
    lanes = rng.integers(1, 33, n_inst)
    bounds = np.r_[0, np.cumsum(lanes)].astype(np.int64)
    addr = (base + elem * rng.integers(0, 100 * row_len, bounds[-1])).astype(np.uint64)
    for banks, bank_bytes in ((32, 4), (32, 8), (24, 4), (24, 8)):  # 24: no bank mask
        lane = (np.arange(bounds[-1]) % 32).astype(np.uint8)
        words, starts, ends, _ = _staged_words(addr, lane, sid, bounds, 1, base, elem, row_len,
                                               rows, cols)
        got = _conflict_degrees(words, starts, ends, banks, bank_bytes)
        want = []
        for i in np.flatnonzero(sid == 1):
            e = (addr[bounds[i]:bounds[i + 1]].astype(np.int64) - base) // elem
            words = ((e // row_len % rows) * cols + (e % row_len % cols)) * elem // 4
            want.append(conflict_degree(words, banks, bank_bytes))
        assert got.tolist() == want


def _union_wavefronts(first_words, regs, banks, bank_bytes):
    """Brute-force bank passes of one warp load whose lane reads ``regs`` consecutive 4-byte
    words from its first word: every bank serves one of its distinct keys (a word; a 64-word
    segment with 8-byte banks) a pass, so the load takes as many passes as its busiest bank
    has keys, over all the words of all lanes."""
    keys: dict[int, set] = {}
    for w in {int(f) + j for f in first_words for j in range(regs)}:
        bank, key = ((w // 2) % banks, w // 64) if bank_bytes == 8 else (w % banks, w)
        keys.setdefault(bank, set()).add(key)
    return max(len(k) for k in keys.values())


@pytest.mark.parametrize("stride, vector, elem, bank_bytes", [
    (4, 4, 4, 4),     # LDS.128, 16-B chunks side by side: 512 B in 4 passes
    (32, 4, 4, 4),    # syrk_tiled's A[j][k]: rows 32 words apart, all lanes in banks 4k..4k+3
    (36, 4, 4, 4),    # a row padded by 4 words: 4 passes
    (8, 4, 4, 4),     # 8 lanes a bank group
    (2, 2, 4, 4),     # LDS.64 side by side
    (34, 2, 4, 4),
    (2, 1, 8, 4),     # scalar doubles side by side: 256 B in 2 passes
    (4, 2, 8, 4),     # two doubles a lane (LDS.128)
    (64, 2, 8, 4),
    (1, 1, 4, 4), (32, 1, 4, 4), (33, 1, 4, 4),   # scalar floats: X passes
    (4, 4, 4, 8), (32, 4, 4, 8), (2, 1, 8, 8), (1, 1, 4, 8),  # Kepler's 8-byte banks
])
def test_wavefronts_of_a_vector_load_equal_the_bank_pass_reference(stride, vector, elem,
                                                                   bank_bytes):
    """A staged load's wavefronts per element times its width equal the brute-force passes
    of the whole vector load, from its first word's conflict degree X alone: a lane's vector
    fills the banks beside its first word's, so an X-way conflict is X passes for the whole
    load (syrk_tiled: 32 for an LDS.128 of 4 elements, 8 an element, not 32)."""
    first = lanes(stride)
    regs = vector * elem // 4
    x = conflict_degree(first, 32, bank_bytes)
    access = StagedAccess(sid=0, array="A", conflicts=((x, 10),), vector=vector, elem_bytes=elem)
    assert access.wavefronts * vector == _union_wavefronts(first, regs, 32, bank_bytes)


def test_syrk_tiled_column_read_is_8_wavefronts_an_element(syrk_trace):
    """syrk's A[j][k] staged in 32x32 tiles: a thread walks its tile row (LDS.128 of four k),
    the lanes' rows 32 words apart: on 4-byte banks 32 passes a load, 8 an element; on
    Kepler's 8-byte banks 16 passes, 4 an element. A[i][k] is an LDS.128 broadcast (2)."""
    for bank_bytes, per_element in ((4, 8.0), (8, 4.0)):
        by = _syrk_staged_a(syrk_trace, bank_bytes)
        assert by["A[j][k]"].vector == 4
        assert by["A[j][k]"].wavefronts == per_element
        assert by["A[i][k]"].uniform and by["A[i][k]"].wavefronts == 0.5


@pytest.mark.parametrize("block, l2_per_warp", [
    # per kk phase a block reads its A tile (by rows of 32 k) and B tile (32 k rows of bx
    # columns), 4-byte floats, each tile row its own transactions: ceil(row bytes / 64) on
    # the TK1 (64-byte L2 transactions); over the block's warps, 4 phases at NK = 128
    ("32x32", 4 * (32 * 2 + 32 * 2) / 32),    # 32 rows of A and of B, 128 B each: 4 a phase
    ("32x8", 4 * (8 * 2 + 32 * 2) / 8),       # 10 a phase: 40
    ("16x16", 4 * (16 * 2 + 32 * 1) / 8),     # B's rows 64 B: 8 a phase: 32
    ("8x4", 4 * (4 * 2 + 32 * 1) / 1),        # B's rows 32 B, one transaction each: 160
])
def test_staging_loads_read_the_tile_sectors(gemm_tiled_prep, block, l2_per_warp):
    """Issue 24: the staging loads' L2 transactions a warp are the tiles' rows; their DRAM
    transactions (compulsory) are A's and B's 2 x 128 x 128 x 4 bytes in 64-byte ones over
    the 128 x 128 / 32 = 512 warps: 4 a warp, whatever the block."""
    prep, opts = gemm_tiled_prep
    (k,) = prep.analyze(dataclasses.replace(opts, block=Block.parse(block))).kernels
    assert k.profile.shared.load_l2_trans == pytest.approx(l2_per_warp)
    assert k.profile.shared.load_dram_trans == pytest.approx(2 * 128 * 128 * 4 / 64 / 512)


# ---- eq. (20w): wide loads served in phases of lanes ----------------------------------------


def test_phase_lanes_hand_cases():
    """256-B phases: an LDS.128 (16 B a lane) in half-warps, an LDS.64 or a scalar load in
    one phase; no phase stated (0): one phase a warp."""
    from cgpredict.memory.shared_phases import phase_lanes

    assert phase_lanes(16, 256) == 16
    assert phase_lanes(8, 256) == 32
    assert phase_lanes(4, 256) == 32
    assert phase_lanes(16, 128) == 8
    assert phase_lanes(16, 0) == 32


def test_phased_degrees_equal_the_per_phase_reference():
    """Eq. (20w) over random warp accesses (masked lanes, broadcasts, strides): the grouped
    one-pass degrees summed per access equal conflict_degree of each phase's lanes summed
    in Python."""
    from cgpredict.memory.shared import _conflict_degrees
    from cgpredict.memory.shared_phases import phase_groups, summed_by_access

    rng = np.random.default_rng(7)
    words, lanes, want = [], [], []
    for g in range(200):
        used = np.sort(rng.choice(32, int(rng.integers(1, 33)), replace=False))
        w = rng.integers(0, [1, 32, 64, 4096][g % 4], len(used)) * [4, 32, 4, 4][g % 4]
        words.append(w)
        lanes.append(used)
        for lpp in (16,):
            want.append(sum(conflict_degree(w[used // lpp == p], 32, 4)
                            for p in range(2) if (used // lpp == p).any()))
    ends = np.cumsum([len(x) for x in words]).astype(np.int64)
    starts = ends - [len(x) for x in words]
    flat, flat_lanes = np.concatenate(words).astype(np.int64), np.concatenate(lanes)
    g = phase_groups(flat_lanes, starts, ends, 16)
    xs = _conflict_degrees(flat[g.order], g.starts, g.ends, 32, 4)
    assert summed_by_access(xs, g, len(starts)).tolist() == want


def _phased_union_wavefronts(first_words, regs, lanes_per_phase):
    """Brute-force bank passes of a load served in phases: each phase of consecutive lanes
    its own union of words (4-byte banks), the phases' passes added."""
    return sum(_union_wavefronts(first_words[p:p + lanes_per_phase], regs, 32, 4)
               for p in range(0, len(first_words), lanes_per_phase))


@pytest.mark.parametrize("words", [
    [32 * (lane % 16) for lane in range(32)],     # 16x16 block, A[j][k]: 16 rows, twice
    [32 * (lane // 16) for lane in range(32)],    # 16x16 block, A[i][k]: 2 rows
    [32 * lane for lane in range(32)],            # 32-wide block, A[j][k]
    [0] * 32,                                     # broadcast
    [4 * lane for lane in range(32)],             # side by side
    [36 * (lane % 16) for lane in range(32)],     # padded rows, 16x16
])
def test_lds128_wavefronts_in_half_warps_equal_the_bank_pass_reference(words):
    """An LDS.128 on a 256-B-phase device (the H100): StagedAccess.wavefronts x 4 equals the
    brute-force passes of its two half-warps; a broadcast gives the 2 wavefronts the
    counters show (syrk_tiled 32x32: 17.0 shared wavefronts an instruction, 16 + 1 + 1 over
    a broadcast and a 32-way pair)."""
    from cgpredict.memory.shared import _conflict_degrees
    from cgpredict.memory.shared_phases import phase_groups, summed_by_access

    first = np.array(words, np.int64)
    g = phase_groups(np.arange(32), np.array([0]), np.array([32]), 16)
    x = summed_by_access(_conflict_degrees(first[g.order], g.starts, g.ends, 32, 4), g, 1)
    access = StagedAccess(sid=0, array="A", conflicts=((conflict_degree(first, 32, 4), 1),),
                          vector=4, phased_degree=float(x[0]))
    assert access.wavefronts * 4 == _phased_union_wavefronts(first, 4, 16)


def test_syrk_tiled_16x16_column_read_takes_both_half_warps(syrk_trace):
    """syrk's A[j][k] in 32x32 tiles with 16x16 blocks: a warp's two halves read the same 16
    tile rows 32 words apart; one phase a warp sees 16 distinct rows (16 passes, 4 an
    element), half-warp phases 16 + 16 (8 an element, as the 32x32 block: the H100 times
    the 16x16, 32x8, 64x4 and 32x32 ports at 1.21, 1.19, 1.25 and 1.31 ms). A[i][k] (two
    rows, one a half) stays 2 passes either way."""
    is_store = np.array([m.kind == "store" for m in syrk_trace.header.mem])
    wt = form_warps(syrk_trace, 0, 0, 2, Block(16, 16), is_store)
    texts = {m.id: m.base for m in syrk_trace.header.mem}
    layouts = array_layouts(syrk_trace.header.ir_text)
    for phase_bytes, jk in ((0, 4.0), (256, 8.0)):
        st = staged_accesses(wt, texts, (("A", 32, 32),), layouts, 32, 4,
                             syrk_trace.header.globals, phase_bytes)
        by = {texts[a.sid]: a for a in st}
        assert by["A[j][k]"].vector == 4
        assert by["A[j][k]"].wavefronts == jk
        assert by["A[i][k]"].wavefronts == 0.5
