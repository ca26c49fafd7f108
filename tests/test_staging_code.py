"""Tests of cgpredict.memory.staging_code: the SASS of a tiled kernel's cooperative staging.

Oracles: the per-phase counts are the sm_90 SASS of validation/cuda/gemm_tiled.cu as the GPU
runs it (``python validation/sass_counts.py gemm_tiled --unroll --keep DIR``: nvcc unrolls the
staging loop 4 times, remainder first), counted by hand along a thread's path: with one element
of each tile (32x32 block) the A tile's path is 36 instructions from its entry test to its
closing BSYNC (ISETP BSSY BRA; VIADD BSSY MOV LOP3 ISETP BRA; 21 for the element and its exit
test; BSYNC ISETP BRA; BSYNC), LDG and STS among them: 22 integer, 5 branch, 7 other; the B
tile's 59, of which 43 integer, 4 branch, 10 other; with four elements of B (32x8 block) the
remainder is skipped and one 4-element trip runs: 159, of which 131 integer, 4 branch, 16
other. A brute-force oracle enumerates each thread's trip count ``len(range(t, E, T))``.

Block-shaped tiles (the advisor's textbook kernel): the sm_90 SASS of
validation/cuda/textbook/gemm_textbook.cu as the GPU runs it (``python
validation/sass_counts.py textbook/gemm_textbook --port restrict --unroll``), its tile-phase
loop counted by hand:
``gemm_textbook_kernel<0>`` (no bounds checks) ``ld_global 2 ld_shared 32 + 8 st_shared 2 fp32
32 integer 6 branch 1 barrier 2 other 4``, of which the strip loop's own UIADD3, ISETP, BRA;
the rest per tile element IADD3 + IADD3.X (the address stepped) and MOV + MOV (into the
load's registers). ``gemm_textbook_kernel<1>`` (bounds checks) ``integer 12 branch 1 other
3``: per element IADD3 (kk + tx / kk + ty), ISETP, ISETP.OR, and A's IADD3 + IADD3.X or B's
index IADD3 + IMAD.WIDE; the zeros MOV and HFMA2.MMA; B's pointer LDC.64 once."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from cgpredict.memory.staging_code import (
    POW2_LOOP,
    RUNTIME_LOOP,
    StagedTile,
    copy_sectors,
    lane_shape,
    phase_code,
    phase_sectors,
    staging_code,
)
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare
from cgpredict.profile import StagingCounts

POLYBENCH = Path(__file__).resolve().parents[1] / "polybench_c"


def test_gemm_tile_phase_is_the_sass_count():
    # A[i][k]: lanes on one element; B[k][j]: lanes on consecutive elements (bx columns)
    tiles = (StagedTile("A", 1.0, "broadcast"), StagedTile("B", 1.0, "columns"))
    assert phase_code(tiles) == StagingCounts(integer=22 + 43, branch=5 + 4, other=7 + 10)


def test_gemm_32x8_tile_phase_runs_one_four_element_trip_of_b():
    tiles = (StagedTile("A", 1.0, "broadcast"), StagedTile("B", 4.0, "columns"))
    assert phase_code(tiles) == StagingCounts(integer=22 + 131, branch=5 + 4, other=7 + 16)
    assert phase_code(tiles).total == 185  # 195 on the path less 5 LDG and 5 STS


def test_every_tile_runs_its_own_loop_frame():
    one = phase_code((StagedTile("A", 1.0, "broadcast"),))
    two = phase_code((StagedTile("A", 1.0, "broadcast"), StagedTile("A", 1.0, "rows")))
    assert two == StagingCounts(integer=2 * one.integer, branch=2 * one.branch,
                                other=2 * one.other)


def test_remainder_elements_then_four_element_trips():
    # code(n) = frame + remainder[1..n mod 4] + [n >= 4] body_entry + floor(n / 4) body  (S1)
    lp = POW2_LOOP
    for n in range(1, 13):
        parts = [lp.frame, *lp.remainder[: n % 4]] + ([lp.body_entry] if n >= 4 else [])
        parts += [lp.body] * (n // 4)
        assert lp.code(n).total == sum(p.total for p in parts)
    assert lp.code(4).total - lp.code(3).total == (1 + 65) - (21 + 22 + 18)
    assert lp.code(0) == StagingCounts(integer=1, branch=1, other=2)
    assert staging_code((StagedTile("A", 1.0, "broadcast"),), 64.0).total == pytest.approx(
        64 * lp.code(1).total
    )
    assert staging_code((), 10.0) == StagingCounts()


@pytest.mark.parametrize("elements,threads", [(1024, 256), (256, 256), (1024, 96), (96, 64),
                                              (40, 64), (1024, 1024), (2048, 384)])
def test_fractional_elements_average_the_threads_paths(elements, threads):
    # brute force: each thread's trip count, its path's count, averaged over the block
    for loop, shape in ((POW2_LOOP, "broadcast"), (RUNTIME_LOOP, "columns")):
        want = sum(loop.code(len(range(t, elements, threads))).total
                   for t in range(threads)) / threads
        got = phase_code((StagedTile("A", elements / threads, shape),)).total
        assert got == pytest.approx(want)


def _warps(rows: list[list[int]], sid: int = 0) -> SimpleNamespace:
    """A pseudo-warp trace of one static access: one warp instruction per row of addresses."""
    addr = np.array([a for r in rows for a in r], np.int64)
    starts = np.cumsum([0] + [len(r) for r in rows[:-1]]).astype(np.int64)
    return SimpleNamespace(addr=addr, inst_sid=np.full(len(rows), sid, np.int64),
                           inst_start=starts, n_events=len(addr))


def test_lane_shapes_from_addresses():
    base, row = 4096, 64 * 4
    bcast = [[base + 4 * k] * 32 for k in range(4)]  # A[i][k]: every lane on one element
    cols = [[base + row * k + 4 * t for t in range(32)] for k in range(4)]  # B[k][j]
    rows = [[base + row * t + 4 * k for t in range(32)] for k in range(4)]  # A[j][k]
    assert lane_shape(_warps(bcast), [0], 4) == "broadcast"
    assert lane_shape(_warps(cols), [0], 4) == "columns"
    assert lane_shape(_warps(rows), [0], 4) == "rows"
    # doubles: consecutive lanes 8 bytes apart are consecutive elements
    dcols = [[base + 8 * t for t in range(32)]]
    assert lane_shape(_warps(dcols), [0], 8) == "columns"
    assert lane_shape(_warps(dcols), [0], 4) == "rows"


def _profile(src: str, sizes: dict, **kw):
    opts = RunOptions(device="h100", work_sizes=sizes, trace_sizes=sizes, **kw)
    with prepare(POLYBENCH / src, opts) as prep:
        return prep.analyze(opts).kernels[0].profile


def test_syrk_tiled_profile_counts_its_staging_code(compiler):
    # NI = NJ = 64: 2 tile phases; tiles A[i][k] and A[j][k], one element each a phase
    p = _profile("syrk_tiled.c", {"NI": 64, "NJ": 64})
    assert p.shared.load_insts == pytest.approx(4.0)
    assert p.staging_code == StagingCounts(integer=2 * 44, branch=2 * 10, other=2 * 14)
    assert p.machine_insts >= p.staging_code.total + p.shared.load_insts


def test_untiled_kernel_has_no_staging_code(compiler):
    p = _profile("gemm.c", {"NI": 32, "NJ": 32, "NK": 32})
    assert p.staging_code == StagingCounts()


def test_modelled_tiling_unrolls_the_strip_whole(compiler):
    # the advisor's tiling of gemm.c strip-mines its k loop by 32: the strip is unrolled whole
    # as gemm_tiled.c's is: of the k loop's affine integer work, 1/32 is left; untiled, the k
    # loop (64 iterations, a run-time bound) keeps what ptxas's 16-iteration trip keeps
    # (runtime_trips.RuntimeTrip, re-based: A[i][k] offset by i, B[k][j] by j: the induction
    # pointer 2, A's two addresses 2, B's row base 2 + IMAD.WIDE 1 + the IMAD.U32 of its high
    # word 1, count, test and index 3 = 11 integer; the MOV of B's base's low word and 2 MOV
    # copying A's second pointer back = 3 other; 1 back edge): 15/16 an iteration, 64 a thread
    sizes = {"NI": 64, "NJ": 64, "NK": 64}
    staged = _profile("gemm.c", sizes, port="restrict",
                      stage=(("gemm", "A", 32, 32), ("gemm", "B", 32, 32)))
    plain = _profile("gemm.c", sizes, port="restrict")
    tiled = _profile("gemm_tiled.c", sizes)
    assert staged.staging_code == tiled.staging_code
    affine = staged.folded_insts / (1 - 1 / 32)
    assert affine - plain.folded_insts == pytest.approx(64 * 15 / 16)


def test_text_report_names_the_staging_code(compiler):
    from cgpredict.pipeline import predict_source
    from cgpredict.report import to_text

    sizes = {"NI": 64, "NJ": 64}
    rep = predict_source(POLYBENCH / "syrk_tiled.c",
                         RunOptions(device="h100", work_sizes=sizes, trace_sizes=sizes))
    assert "staging code: 88.0 integer, 20.0 branch and 28.0 other instructions" in to_text(rep)


def _thread_tiles(copy: str) -> tuple[StagedTile, ...]:
    """GEMM's two block-shaped tiles, one element a thread each a phase."""
    return (StagedTile("A", 1.0, "broadcast", copy), StagedTile("B", 1.0, "columns", copy))


def test_textbook_tile_phase_is_the_sass_count():
    # gemm_textbook_kernel<0>'s phase loop: integer 6 - strip loop 2 (UIADD3, ISETP), other 4
    # (the 4 MOV), branch 1 - the strip loop's back edge
    assert phase_code(_thread_tiles("thread")) == StagingCounts(integer=6 - 2, branch=0,
                                                                 other=4)


def test_checked_textbook_tile_phase_is_the_sass_count():
    # gemm_textbook_kernel<1>: integer 12 - strip loop 2; other 3 (2 zeros, one LDC.64)
    assert phase_code(_thread_tiles("thread-checked")) == StagingCounts(integer=12 - 2,
                                                                         branch=0, other=3)


def test_textbook_copy_is_far_less_than_the_staging_loop():
    # the loop copy of the same tiles (B's columns a run-time blockDim.x): 91 a phase, 8 here
    loop = phase_code((StagedTile("A", 1.0, "broadcast"), StagedTile("B", 1.0, "columns")))
    assert loop.total == 34 + 57
    assert phase_code(_thread_tiles("thread")).total == 8


def test_mixed_copies_add_up():
    # a pragma'd tile keeps its loop beside an advisor's block-shaped one
    mixed = phase_code((StagedTile("A", 1.0, "broadcast"), StagedTile("B", 1.0, "columns",
                                                                       "thread")))
    loop_a = phase_code((StagedTile("A", 1.0, "broadcast"),))
    assert mixed == StagingCounts(integer=loop_a.integer + 2, branch=loop_a.branch,
                                  other=loop_a.other + 2)


def test_unknown_copy_is_refused():
    with pytest.raises(ValueError, match="unknown tile copy"):
        StagedTile("A", 1.0, "broadcast", "unrolled")


GEMM_TILES = (("gemm", "A", 32, 32), ("gemm", "B", 32, 32))


def _textbook(sizes: dict, block: str = "32x32", copy: str = "thread"):
    """gemm.c's restrict port with the advisor's 32x32 tiles of A and B, copied as ``copy``."""
    from cgpredict.block import Block

    return _profile("gemm.c", sizes, port="restrict", block=Block.parse(block),
                    stage=GEMM_TILES, stage_copy=copy)


def test_advisor_textbook_tiling_counts_the_block_shaped_copy(compiler):
    # NK = 64 with 32x32 blocks: 2 tile phases, a thread one element of A's and of B's tile
    # each: per phase 2 x (IADD3, IADD3.X) and 2 x (MOV, MOV), nothing else (the SASS count)
    p = _textbook({"NI": 64, "NJ": 64, "NK": 64})
    assert p.shared.load_insts == pytest.approx(4.0)
    assert p.staging_code == StagingCounts(integer=2 * 4, branch=0, other=2 * 4)


def test_advisor_textbook_tiling_checks_bounds_off_the_tile_grid(compiler):
    # NI = NJ = NK = 96 + 16: not multiples of 32 -> gemm_textbook_kernel<1>'s copy, per
    # phase 2 x 5 integer, 2 zeros and one LDC.64; the phases are the k loop's trips / 32
    sizes = {"NI": 112, "NJ": 112, "NK": 112}
    p = _textbook(sizes)
    phases = 112 / 32
    assert p.staging_code.integer == pytest.approx(phases * 10)
    assert p.staging_code.other == pytest.approx(phases * 3)
    assert p.staging_code.branch == 0


def test_advisor_tiling_of_another_block_keeps_the_staging_loop(compiler):
    # 32x8 blocks copy 4 elements of each 32x32 tile: the loop, as the generic port's
    sizes = {"NI": 64, "NJ": 64, "NK": 64}
    asked = _textbook(sizes, block="32x8")
    loop = _textbook(sizes, block="32x8", copy="loop")
    assert asked.staging_code == loop.staging_code
    assert asked.staging_code.branch > 0


def test_own_tiled_file_keeps_its_own_code_whatever_the_copy(compiler):
    # gemm_tiled.c's pragmas describe its own cgp::stage loops: the option does not touch them
    from cgpredict.block import Block

    sizes = {"NI": 64, "NJ": 64, "NK": 64}
    own = _profile("gemm_tiled.c", sizes, block=Block(32, 32))
    asked = _profile("gemm_tiled.c", sizes, block=Block(32, 32), stage_copy="thread")
    assert own.staging_code == asked.staging_code
    loop = phase_code((StagedTile("A", 1.0, "broadcast"), StagedTile("B", 1.0, "columns")))
    assert own.staging_code.total == pytest.approx(2 * loop.total)


def test_own_tiles_copied_a_thread_an_element_when_asked(compiler):
    # tile_copy="thread" (a measured textbook kernel, validate.py): gemm_tiled.c's own 32x32
    # tiles on 32x32 blocks take the textbook copy, per phase the SASS count of
    # test_textbook_tile_phase_is_the_sass_count; 2 phases at NK = 64
    from cgpredict.block import Block

    sizes = {"NI": 64, "NJ": 64, "NK": 64}
    textbook = _profile("gemm_tiled.c", sizes, block=Block(32, 32), tile_copy="thread")
    per_phase = phase_code(_thread_tiles("thread"))
    assert textbook.staging_code == StagingCounts(integer=2 * per_phase.integer, branch=0,
                                                  other=2 * per_phase.other)
    # 32x8 blocks copy 4 elements of a tile a phase: the staging loop, asked or not
    loop = _profile("gemm_tiled.c", sizes, block=Block(32, 8))
    asked = _profile("gemm_tiled.c", sizes, block=Block(32, 8), tile_copy="thread")
    assert asked.staging_code == loop.staging_code


def _sector_reference(cols: int, elem: int, warp: int = 32, sector: int = 32) -> int:
    """Brute force: the distinct 32-byte sectors of a warp's lanes, lane l on tile element l
    (row l // cols, column l % cols) of a tile whose rows start a sector-aligned row of 4096
    bytes."""
    return len({((lane // cols) * 4096 + (lane % cols) * elem) // sector for lane in range(warp)})


@pytest.mark.parametrize("cols, elem", [(32, 4), (64, 4), (16, 4), (8, 4), (4, 4), (1, 4),
                                        (32, 8), (16, 8), (32, 1), (8, 2), (3, 4)])
def test_copy_sectors_equal_the_lane_reference(cols, elem):
    """A warp copying 32 consecutive tile elements, x fastest: 32 floats of one row are 4
    sectors; 8-column rows of floats are 4 rows of 1 sector; 16 doubles a row 2 rows of 4."""
    assert copy_sectors(cols, elem) == _sector_reference(cols, elem)


def test_phase_sectors_sum_the_tiles():
    """gemm_tiled at 32x8: 1 element of A's tile (32 columns) and 4 of B's a thread a phase,
    each load 4 sectors: 20 sectors a warp a phase."""
    tiles = (StagedTile(array="A", loads_per_phase=1.0, sectors_per_load=copy_sectors(32, 4)),
             StagedTile(array="B", loads_per_phase=4.0, lanes="columns",
                        sectors_per_load=copy_sectors(32, 4)))
    assert phase_sectors(tiles) == 20.0


def test_fresh_sectors_counts_the_distinct_sectors_a_sort_finds():
    """staging.fresh_sectors (issue 24: distinct sectors per warp the staged accesses read),
    counted by a growing hash table, equals a set of ``addr // sector`` over the events of
    the chosen static instructions, per warp; a sector not a power of two too."""
    from types import SimpleNamespace

    import numpy as np

    from cgpredict.memory.staging import fresh_sectors

    rng = np.random.default_rng(5)
    n_inst = 2000
    per = rng.integers(1, 33, n_inst)
    starts = np.r_[0, np.cumsum(per)[:-1]].astype(np.int64)
    addr = rng.integers(0, 1 << 22, int(per.sum())).astype(np.uint64)
    sid = rng.integers(0, 6, n_inst).astype(np.int64)
    wt = SimpleNamespace(addr=addr, inst_start=starts, inst_sid=sid, n_warps=7,
                         origin=None, derived={})  # its own event source (RS1)
    for sids, sector in (([1, 4], 32), ([0, 2, 5], 64), ([3], 48), ([9], 32)):
        want = {int(addr[t]) // sector for i in range(n_inst) if sid[i] in sids
                for t in range(starts[i], starts[i] + per[i])}
        assert fresh_sectors(wt, sids, sector) == len(want) / 7


def test_distinct_units_bitmap_and_hash_agree_with_a_set():
    """staging._distinct_units counts by a bitmap over the values' range when it is small
    and by the growing hash table when it is not (values 2**40 apart); both equal a set of
    ``addr >> shift`` over the chosen instructions' events, and no event chosen counts 0."""
    import numpy as np

    from cgpredict.memory.staging import _distinct_hashed, _distinct_units

    rng = np.random.default_rng(11)
    n_inst = 1500
    per = rng.integers(1, 33, n_inst)
    starts = np.r_[0, np.cumsum(per)[:-1]].astype(np.int64)
    for top in (1 << 20, 1 << 45):  # the bitmap's range, then the hash table's
        addr = rng.integers(0, top, int(per.sum())).astype(np.uint64)
        addr[::7] = np.uint64(top - 1)  # repeats
        take = rng.random(n_inst) < 0.4
        want = {int(addr[t]) >> 5 for i in range(n_inst) if take[i]
                for t in range(starts[i], starts[i] + per[i])}
        assert _distinct_units(addr, starts, take, 5) == len(want)
        assert _distinct_hashed(addr, starts, take, 5) == len(want)
    assert _distinct_units(addr, starts, np.zeros(n_inst, np.bool_), 5) == 0


def test_tiles_of_one_trip_count_share_the_loop_frame():
    # eq. (S2). Oracle: syr2k_tiled.cu's sm_90 SASS along a one-element path
    # (sass_check.staging_path; python validation/sass_counts.py syr2k_tiled --unroll): the
    # four tiles A[i][k], B[i][k] (by rows) and A[j][k], B[j][k] (bx rows) run 80 integer,
    # 18 branch and 28 other a strip; A[i][k]'s and B[i][k]'s loops have one trip count, so
    # one entry test covers both and the remainder count is computed once
    syr2k = (StagedTile("A", 1.0, "broadcast"), StagedTile("A", 1.0, "rows"),
             StagedTile("B", 1.0, "broadcast"), StagedTile("B", 1.0, "rows"))
    assert phase_code(syr2k) == StagingCounts(integer=80, branch=18, other=28)
    # SYRK's two tiles differ in shape (by and bx rows): each its own frame, 2 x (22, 5, 7)
    syrk = (StagedTile("A", 1.0, "broadcast"), StagedTile("A", 1.0, "rows"))
    assert phase_code(syrk) == StagingCounts(integer=44, branch=10, other=14)


def test_run_time_column_tiles_share_the_entry_test():
    # validation/cuda/probes/stage_same_cols.cu (two X[k][j] tiles of one strip), its unrolled
    # SASS along a one-element path: 86 integer, 7 branch; two own frames: 86, 8
    cols = (StagedTile("A", 1.0, "columns"), StagedTile("B", 1.0, "columns"))
    assert phase_code(cols) == StagingCounts(integer=86, branch=7, other=20)


def test_a_thread_without_elements_skips_every_tile_of_the_trip_count():
    # code'(0) = 0 for the second tile: the one entry test skips both loops
    two = phase_code((StagedTile("A", 0.0, "broadcast"), StagedTile("B", 0.0, "broadcast")))
    assert two == POW2_LOOP.empty


@pytest.mark.parametrize("elements,threads", [(1024, 256), (256, 256), (96, 64), (40, 64),
                                              (2048, 384)])
def test_shared_frame_averages_the_threads_paths(elements, threads):
    # brute force: per thread, the first tile's path plus the second's less what it shares
    for loop, shape in ((POW2_LOOP, "broadcast"), (RUNTIME_LOOP, "columns")):
        want = 0.0
        for t in range(threads):
            n = len(range(t, elements, threads))
            second = loop.code(n).total - (loop.shared.total if n else loop.empty.total)
            want += loop.code(n).total + second
        got = phase_code((StagedTile("A", elements / threads, shape),
                          StagedTile("B", elements / threads, shape))).total
        assert got == pytest.approx(want / threads)
