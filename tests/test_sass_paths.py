"""Tests of validation/sass_paths.py: the SASS side's code outside the loops weighed by path,
where the threads split (fdtd_k1's ``i == 0`` row, gs_k1's ``t == 0`` merged into its guard).

Oracles by hand from hand-written listings shaped as nvcc -O3 -arch=sm_90 emits the two
kernels (``nvdisasm -c``, shortened); no nvcc needed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validation"))

import sass_check  # noqa: E402
import sass_counts  # noqa: E402
import sass_paths  # noqa: E402

# fdtd_k1: the guard, then `if (i == 0) ey[0][j] = fict[t]; else ey[i][j] -= ...`, each arm
# ending in its own EXIT
_SPLIT = """
\t.section\t.text._Z7fdtd_k1v,"ax",@progbits
_Z7fdtd_k1v:
        /*0000*/                   S2R R9, SR_CTAID.X ;
        /*0010*/                   IMAD R9, R9, UR4, R0 ;
        /*0020*/                   ISETP.GE.OR P0, PT, R0, UR6, P0 ;
.L_x_8:
        /*0030*/               @P0 EXIT ;
        /*0040*/                   ISETP.NE.AND P0, PT, R0, RZ, PT ;
        /*0050*/              @!P0 BRA `(.L_x_2) ;
        /*0060*/                   IMAD.WIDE R4, R9, 0x4, R6 ;
        /*0070*/                   LDG.E R5, desc[UR4][R4.64] ;
        /*0080*/                   LDG.E R6, desc[UR4][R6.64] ;
        /*0090*/                   LDG.E R9, desc[UR4][R2.64] ;
        /*00a0*/                   FADD R0, -R6, R5 ;
        /*00b0*/                   STG.E desc[UR4][R2.64], R9 ;
        /*00c0*/                   EXIT ;
.L_x_2:
        /*00d0*/                   LDC R5, c[0x0][0x230] ;
        /*00e0*/                   LDG.E R3, desc[UR4][R2.64] ;
        /*00f0*/                   STG.E desc[UR4][R4.64], R3 ;
        /*0100*/                   EXIT ;
.L_x_3:
        /*0110*/                   BRA `(.L_x_3);
"""

# gs_k1: `t < 256 && t == 0` merged into one guard; the one thread's loop, then its store
_MERGED = """
\t.section\t.text._Z5gs_k1v,"ax",@progbits
_Z5gs_k1v:
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   ISETP.NE.AND P0, PT, R0, UR4, PT ;
        /*0020*/               @P0 EXIT ;
        /*0030*/                   LDC R7, c[0x0][0x210] ;
        /*0040*/                   ISETP.GE.AND P0, PT, R7, 0x1, PT ;
        /*0050*/              @!P0 BRA `(.L_x_17) ;
        /*0060*/                   MOV R0, RZ ;
.L_x_18:
        /*0070*/                   LDG.E R3, desc[UR8][R2.64] ;
        /*0080*/                   FFMA R0, R3, R3, R0 ;
        /*0090*/              @!P0 BRA `(.L_x_18) ;
.L_x_17:
        /*00a0*/                   MUFU.RSQ R7, R0 ;
        /*00b0*/                   STG.E desc[UR8][R2.64], R5 ;
        /*00c0*/                   EXIT ;
.L_x_19:
        /*00d0*/                   BRA `(.L_x_19);
"""


def test_the_paths_of_a_split_each_end_in_their_own_exit() -> None:
    (k,) = sass_counts.parse_sass(_SPLIT)
    paths = sass_paths.outside_paths(k)
    sig = sorted((p.counts["ld_global"], p.counts["st_global"], p.counts.total) for p in paths)
    # the guard's EXIT (S2R, IMAD, ISETP, EXIT); i == 0 (+ ISETP, BRA, LDC, LDG, STG, EXIT);
    # the other rows (+ ISETP, BRA, IMAD.WIDE, 3 LDG, FADD, STG, EXIT)
    assert sig == [(0, 0, 4), (1, 1, 10), (3, 1, 13)]


def test_the_split_is_weighed_by_the_rows_that_take_each_arm() -> None:
    """Of 64 rows, row 0 takes the then-arm: 1/64 of the threads load fict[t] and store,
    63/64 load 3 and store: 2.97 loads and 1 store a thread; the static count has 4 and 2."""
    (k,) = sass_counts.parse_sass(_SPLIT)
    assert (k.outside["ld_global"], k.outside["st_global"]) == (4, 2)
    got = sass_paths.weighted_outside(k, [], [3 * 63 / 64 + 1 / 64, 1.0])
    assert got["ld_global"] == pytest.approx(3 * 63 / 64 + 1 / 64)
    assert got["st_global"] == pytest.approx(1.0)
    assert got.total == pytest.approx(13 * 63 / 64 + 10 / 64)


def test_a_condition_merged_into_the_guard_leaves_the_other_threads_at_its_exit() -> None:
    """One thread of 256 enters the loop and stores; 255 leave at the guard (3 instructions);
    the loop's own counts stay the loop's (LDG, FFMA, BRA: 1/256 entries, 64/256 trips)."""
    (k,) = sass_counts.parse_sass(_MERGED)
    (loop,) = k.loops
    got = sass_paths.weighted_outside(k, [0], [0.0, 1 / 256, 1 / 256])
    # the path through the loop: 3 + LDC, ISETP, BRA, MOV + MUFU, STG, EXIT = 10
    assert got.total == pytest.approx(255 / 256 * 3 + 10 / 256)
    assert got["st_global"] == pytest.approx(1 / 256)
    loops = [sass_check.ModelLoop(28, 1, 64 / 256, entries_per_thread=1 / 256)]
    total, why = sass_check.sass_per_thread(k, loops, (0.0, 1 / 256))
    assert why == "" and total["ld_global"] == pytest.approx(64 / 256)
    assert total["st_global"] == pytest.approx(1 / 256)


def test_the_static_count_stays_where_every_thread_runs_one_path() -> None:
    """Every thread passes the guard and enters the loop once: nothing to weigh."""
    (k,) = sass_counts.parse_sass(_MERGED)
    assert sass_paths.weighted_outside(k, [0], [0.0, 1.0, 1.0]) is None


def test_no_weighing_where_every_path_stores_more_than_the_c() -> None:
    """The split's paths store once each: a C with no store a thread is not a split of the
    threads but another program (nvcc keeping a store clang deletes): the static count
    stays."""
    (k,) = sass_counts.parse_sass(_SPLIT)
    assert sass_paths.weighted_outside(k, [], [2.0, 0.0]) is None


# conv1d with its taps unrolled whole (3 of them here): no loop left, the offsets immediates
_WHOLE = """
\t.section\t.text._Z6conv1dv,"ax",@progbits
_Z6conv1dv:
        /*0000*/                   S2R R0, SR_CTAID.X ;
        /*0010*/                   IMAD R0, R0, UR4, R1 ;
        /*0020*/                   ISETP.GE.AND P0, PT, R0, UR6, PT ;
        /*0030*/               @P0 EXIT ;
        /*0040*/                   IMAD.WIDE R2, R0, 0x4, R2 ;
        /*0050*/                   LDG.E R5, desc[UR4][R2.64] ;
        /*0060*/                   LDG.E R6, desc[UR4][R2.64+0x4] ;
        /*0070*/                   LDG.E R7, desc[UR4][R2.64+0x8] ;
        /*0080*/                   FMUL R5, R5, 0.5 ;
        /*0090*/                   FFMA R5, R6, 0.25, R5 ;
        /*00a0*/                   FFMA R5, R7, 0.25, R5 ;
        /*00b0*/                   STG.E desc[UR4][R2.64], R5 ;
        /*00c0*/                   EXIT ;
.L_x_1:
        /*00d0*/                   BRA `(.L_x_1);
"""


def test_a_kernel_unrolled_whole_is_its_straight_line_code() -> None:
    """Counted by hand: the static count (each instruction once) meets the C's 3 loads and 1
    store a thread, so nothing is weighed: 3 LDG, 1 STG, 3 FP32, 3 integer (IMAD, ISETP,
    IMAD.WIDE), the S2R (other) and both EXITs (branch: the guard's predicated one too)."""
    (k,) = sass_counts.parse_sass(_WHOLE)
    assert k.loops == []
    got = sass_check.whole_unrolled(k, {"ld_global": 3.0, "st_global": 1.0})
    assert (got["ld_global"], got["st_global"], got["fp32"], got["integer"]) == (3, 1, 3, 3)
    assert (got["other"], got["branch"], got["total"]) == (1, 2, 13)
