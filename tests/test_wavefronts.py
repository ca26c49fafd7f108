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
