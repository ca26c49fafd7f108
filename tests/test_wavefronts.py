"""Data-stage wavefronts of a warp load, eq. (B2w): hand-counted cases and a brute force."""

from __future__ import annotations

import numpy as np
import pytest

from cgpredict.memory.wavefronts import wavefront_counts, with_load_wavefronts


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
