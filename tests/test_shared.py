"""Tests of cgpredict.shared (SPEC §2.6): bank-conflict degrees, array layouts from IR, the
transposed layout the advisor's coalescing fix uses, and staged accesses of a tiled kernel.

Bank rules by hand. 4-byte banks (32 banks): word w is in bank w mod 32; distinct words of one
bank conflict. Kepler 8-byte banks: word w is in bank (w // 2) mod 32, and two words of one bank
conflict only when they lie in different 64-word segments; the same word never conflicts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cgpredict.shared import (ArrayLayout, array_layouts, array_name, conflict_degree,
                              staged_accesses, tile_bytes, transpose_addresses)
from cgpredict.tracer import TraceOptions, trace_program
from cgpredict.warps import Block, form_warps

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


def test_staged_accesses_syrk(syrk_trace):
    """A staged in 32x32 tiles: A[i][k] is one word per warp (broadcast, X = 1); A[j][k] reads
    column k of the tile, words 32 apart: 16-way on Kepler's 8-byte banks, 32-way on 4-byte
    banks (the ports' README says the literal tile is a 32-way conflict on 4-byte banks)."""
    tr = syrk_trace
    is_store = np.array([m.kind == "store" for m in tr.header.mem])
    wt = form_warps(tr, 0, 0, 2, Block(32, 32), is_store)
    texts = {m.id: m.base for m in tr.header.mem}
    layouts = array_layouts(tr.header.ir_text)
    for bank_bytes, x_jk in ((8, 16), (4, 32)):
        st = staged_accesses(wt, texts, (("A", 32, 32),), layouts, 32, bank_bytes,
                             tr.header.globals)
        by = {texts[a.sid]: a for a in st}
        assert set(by) == {"A[i][k]", "A[j][k]"}
        assert by["A[i][k]"].conflicts == ((1, 32 * 32),)
        assert by["A[j][k]"].conflicts == ((x_jk, 32 * 32),)
        assert by["A[j][k]"].mean_degree == x_jk
    assert staged_accesses(wt, texts, (("Z", 32, 32),), layouts, 32, 8) == ()
