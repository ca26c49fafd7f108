"""Data-stage wavefronts of a warp load, eqs. (B2w), (B2t), (B2f): hand-counted cases and
brute forces."""

from __future__ import annotations

import numpy as np
import pytest

from cgpredict.memory.wavefronts import missed_sectors, wavefront_counts, with_load_wavefronts


def _one(addrs, size=4, banks=32, bank_bytes=4) -> int:
    """Wavefronts of one warp instruction reading ``addrs`` (static instruction 0)."""
    addr = np.asarray(addrs, np.uint64)
    out = wavefront_counts(addr, np.array([0]), np.array([0]), np.array([0]),
                           np.array([size]), 1, banks, bank_bytes)
    return int(out[0, 0])


def _brute(addrs, size=4, banks=32, bank_bytes=4) -> int:
    """(B2w) by sets: the distinct words of each bank, the busiest bank's count."""
    words = {a // bank_bytes + j for a in addrs for j in range(max(size // bank_bytes, 1))}
    per_bank = [sum(1 for w in words if w % banks == b) for b in range(banks)]
    return max(max(per_bank), max(size // bank_bytes, 1))


def test_aligned_floats_one_pass():
    assert _one([4096 + 4 * t for t in range(32)]) == 1


def test_unaligned_floats_one_pass_across_two_lines():
    # in[i + 5]: 128 B from byte 20 of a line, 5 sectors of two lines, each bank once
    assert _one([4096 + 20 + 4 * t for t in range(32)]) == 1


def test_row_walk_one_bank_32_passes():
    # A[t][k], rows 16 KiB apart: every lane in bank 0, 32 distinct words
    assert _one([16384 * t for t in range(32)]) == 32


def test_broadcast_one_pass():
    assert _one([4096] * 32) == 1


def test_stride_two_floats_two_passes():
    # words 0, 2, ..., 62: banks 0, 2, ..., 30 twice each
    assert _one([8 * t for t in range(32)]) == 2


def test_stride_three_floats_one_pass():
    # 3 is coprime with 32: lanes land in 32 different banks (12 sectors, 3 lines)
    assert _one([12 * t for t in range(32)]) == 1


def test_doubles_two_passes_broadcast_too():
    assert _one([8 * t for t in range(32)], size=8) == 2
    assert _one([800] * 32, size=8) == 2


@pytest.mark.parametrize("seed", range(5))
def test_random_gather_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    addrs = [int(a) * 4 for a in rng.integers(0, 1 << 20, 32)]
    assert _one(addrs) == _brute(addrs)


def test_sums_per_instruction_and_pattern():
    # two warp instructions of sid 0 (coalesced), one of sid 1 (pattern 1: uncoalesced)
    addr = np.array([4 * t for t in range(32)] + [16384 * t for t in range(32)]
                    + [4 * t for t in range(32)], np.uint64)
    out = wavefront_counts(addr, np.array([0, 32, 64]), np.array([0, 1, 0]),
                           np.array([0, 1, 0]), np.array([4, 4]), 2)
    assert out.tolist() == [[2, 0, 0], [0, 32, 0]]


def test_stores_keep_their_lines():
    addr = np.array([20 + 4 * t for t in range(32)] * 2, np.uint64)
    args = (addr, np.array([0, 32]), np.array([0, 1]), np.array([0, 0]), np.array([4, 4]))
    lines = np.array([[2, 0, 0], [2, 0, 0]], np.int64)  # an unaligned load and store
    got = with_load_wavefronts(lines, *args, np.array([False, True]), 32, 4)
    assert got.tolist() == [[1, 0, 0], [2, 0, 0]]


def _tagged(addrs, tag_lines=4, size=4) -> int:
    """Passes of one warp instruction with the tag stage's line limit (eq. (B2t))."""
    addr = np.asarray(addrs, np.uint64)
    out = wavefront_counts(addr, np.array([0]), np.array([0]), np.array([0]),
                           np.array([size]), 1, 32, 4, tag_lines, 128)
    return int(out[0, 0])


def _word_pattern(off) -> list[int]:
    """Byte addresses of the 32 lanes reading float word ``off(lane)`` of a line-aligned
    buffer (the modes of validation/ubench/l1_wavefronts.cu and l1_banks.cu)."""
    return [4096 * 32 + 4 * off(t) for t in range(32)]


@pytest.mark.parametrize("name, off, passes, measured", [
    # l1_wavefronts.cu at 32 warps an SM (cycles a warp load; 2.36 is the loop's floor)
    ("aligned", lambda t: t, 1, 2.36),
    ("stride3", lambda t: 3 * t, 1, 2.36),            # 3 lines, 12 sectors: lines, not sectors
    ("rows128B", lambda t: 32 * t, 32, 32.0),          # bank ways (B2w)
    ("stride4_unaligned", lambda t: 4 * t + 1, 4, 4.0),
    ("lines8_nobank", lambda t: (t >> 2) * 132 + (t & 3), 2, 2.36),
    ("lines16_nobank", lambda t: (t >> 1) * 66 + (t & 1), 4, 4.0),   # 16 lines / 4
    ("lines32_nobank", lambda t: 33 * t, 8, 8.0),      # 32 lines / 4 (l1_banks diag: 8.63)
    ("diag4", lambda t: 32 * (t >> 2) + t, 2, 2.61),   # l1_banks: 8 lines in 32 banks
    ("rows8", lambda t: 32 * (t >> 2) + (t & 3), 8, 8.0),  # 8 rows, 8-way conflict
])
def test_tag_stage_four_lines_a_cycle_matches_the_ubench(name, off, passes, measured):
    """(B2t) by hand on the micro-benchmarks' lane patterns: max(bank ways, ceil(lines/4)).
    Each equals the measured cycles where those lie above the loop's floor."""
    assert _tagged(_word_pattern(off)) == passes
    assert passes <= measured + 0.7


def test_tag_stage_off_keeps_b2w():
    assert _tagged(_word_pattern(lambda t: 33 * t), tag_lines=0) == 1


@pytest.mark.parametrize("seed", range(5))
def test_random_gather_with_tag_stage_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    addrs = [int(a) * 4 for a in rng.integers(0, 1 << 20, 32)]
    lines = len({a // 128 for a in addrs})
    assert _tagged(addrs) == max(_brute(addrs), -(-lines // 4))



def _filled(addrs, missed, fill_sectors=4, tag_lines=4) -> int:
    """Passes of one warp load that missed ``missed`` sectors, eq. (B2f)."""
    out = wavefront_counts(np.asarray(addrs, np.uint64), np.array([0]), np.array([0]),
                           np.array([0]), np.array([4]), 1, 32, 4, tag_lines, 128,
                           np.array([missed]), fill_sectors)
    return int(out[0, 0])


@pytest.mark.parametrize("missed, passes", [(0, 1), (1, 2), (4, 2), (5, 3)])
def test_a_coalesced_load_takes_a_pass_more_per_four_missed_sectors(missed, passes):
    """(B2f) by hand: one line, one bank way: 1 + ceil(m / 4) (ncu: 1.93 for 4 missed)."""
    assert _filled([4096 + 4 * t for t in range(32)], missed) == passes


def test_fills_off_keeps_b2t():
    assert _filled([4096 + 4 * t for t in range(32)], 4, fill_sectors=0) == 1


def test_a_row_walks_fills_ride_in_its_bank_passes():
    """32 rows in one bank, every sector missed: max(32 ways, 8 + 8) = 32, as ncu's 33.00
    wavefronts a warp-iteration of the row walks (32 lines and a broadcast, 4 fills)."""
    assert _filled([16384 * t for t in range(32)], 32) == 32


def test_missed_sectors_per_warp_instruction():
    inst = np.array([0, 0, 0, 1, 2, 2])
    missed = np.array([True, False, True, False, True, True])
    sid = np.array([0, 0, 1, 1])
    assert missed_sectors(inst, missed, sid).tolist() == [2, 0, 2, 0]
    assert missed_sectors(inst, missed, sid, sectors_per_unit=4).tolist() == [8, 0, 8, 0]
    # sid 1 read through the read-only path (restrict's LDG.E.CONSTANT): no fill passes
    assert missed_sectors(inst, missed, sid, (True, False)).tolist() == [2, 0, 0, 0]


def _trmv_t_warp_steps(n: int = 8192, steps: range = range(64)):
    """Word addresses of warp 0's L[i][j] and x[i] loads of blind trmv_t in the sm_90 SASS
    order (validation/trmv_t_lanes.py): lane j starts at row j rounded up to 4, so lanes
    4m+1..4m+4 read one row together, nine rows a load."""
    j = np.arange(32)
    start = j + ((n - j) & 3)
    for s in steps:
        i = start + s
        yield i * n + j
        yield i


def test_trmv_t_three_passes_a_request_with_its_fills():
    """(B2f) on trmv_t's warp in steady state, its misses by brute force (a sector missed at
    its first touch, no eviction): the L[i][j] load reads 9 rows, misses one sector in each
    of 4 of them: max(1, 3 + 1) = 4; x[i] 2 lines in 2 bank ways, its leading lane a new
    sector every 8th step: max(2, 1 + 1) = 2 either way. 6 passes a warp-iteration, 3.0 a
    request, Nsight Compute's 3.00 and 2.99 at 32x1 and 128x1
    (h100-worst-2026-11-27/blind-ncu); (B2t) alone gives 2.5."""
    seen: set[int] = set()
    tag = passes = requests = 0
    for k, words in enumerate(_trmv_t_warp_steps(steps=range(96))):
        sectors = np.unique(words // 8)
        missed = [int(x) for x in sectors if int(x) not in seen]
        seen.update(int(x) for x in sectors)
        if k < 64:  # warm-up: the leading group has fetched the rows the others read
            continue
        addrs = [4 * int(w) for w in words]
        tag += _tagged(addrs)
        passes += _filled(addrs, len(missed))
        requests += 1
        if k % 2 == 0:
            assert len(missed) == 4 and len({m // 4 for m in missed}) == 4
    assert (tag, passes, requests) == (320, 384, 128)


def test_read_only_path_loads_of_the_restrict_port_take_no_fills():
    """kernel/region.coherent_loads by hand: the restrict port reads ``A`` and ``x`` (never
    stored: LDG.E.CONSTANT, no fill passes) and ``y`` (stored too: LDG.E); the plain port
    reads every array through the coherent path."""
    from types import SimpleNamespace as NS

    from cgpredict.kernel.region import coherent_loads

    mem = [NS(kind="load", base="A[i][j]", region=0), NS(kind="load", base="x[j]", region=0),
           NS(kind="load", base="y[i]", region=0), NS(kind="store", base="y[i]", region=0),
           NS(kind="store", base="x[j]", region=1)]  # another region's store of x
    for port, want in (("restrict", (False, False, True, True, True)),
                       ("plain", (True,) * 5)):
        trace = NS(header=NS(port=port, mem=mem))
        assert coherent_loads(trace, 0) == want
