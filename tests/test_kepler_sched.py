"""Kepler control words and the issue-26 GEMM schedules (``validation/kepler_sched.py``).

The oracles: the control-byte layout of KeplerAs (Zhang et al., PPoPP 2017 artifact), a
control word of the textbook kernel's cubin decoded by hand, the register counts ``ptxas -v``
printed when the cubins committed in validation/kepler/ were built (ptxas 11.8 -O3
-arch=sm_35), the textbook phase from its source (32 k steps: 32 LDS of B's column, 8
LDS.128 of A's row, 2 STS), and a brute-force L2 on a problem small enough to count by hand.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import kepler_sched  # noqa: E402
import sass_counts  # noqa: E402

KEPLER_DIR = ROOT / "validation" / "kepler"
TEXTBOOK = "_Z20gemm_textbook_kernelILi0EEviiiffPfS0_S0_"


def test_control_byte_fields():
    """Bits 0-3 stall, 4 shared barrier, 5 clear = dual issue, 6 global, 7 texture barrier."""
    assert kepler_sched.decode_byte(0x04) == kepler_sched.Control(4, False, True, False, False)
    assert kepler_sched.decode_byte(0x28) == kepler_sched.Control(8, False, False, False, False)
    assert kepler_sched.decode_byte(0xFF) == kepler_sched.Control(15, True, False, True, True)


def test_control_word_bytes_at_bits_2_to_57():
    """A word packed from seven known bytes decodes to them; the textbook kernel's second
    control word, 0x0880b0a010a09c80, by hand: (w >> 2) & 0xff = 0x20, (w >> 10) & 0xff =
    0x27, then 0x28, 0x04, 0x28, 0x2c, 0x20."""
    raw = (0x20, 0x27, 0x28, 0x04, 0x28, 0x2C, 0x20)
    word = sum(b << (2 + 8 * j) for j, b in enumerate(raw)) | (0x08 << 56)
    assert word == 0x0880B0A010A09C80
    assert kepler_sched.decode_control(word) == tuple(kepler_sched.decode_byte(b) for b in raw)
    data = (KEPLER_DIR / "gemm_textbook.plain.sm_35.cubin").read_bytes()
    codes = kepler_sched.control_codes(data, TEXTBOOK)
    assert [codes[0x48 + 8 * j] for j in range(7)] == list(kepler_sched.decode_control(word))


@pytest.mark.parametrize(("stem", "expected"), [
    ("gemm_textbook.plain", {TEXTBOOK: 26, "_Z20gemm_textbook_kernelILi1EEviiiffPfS0_S0_": 27}),
    ("gemm_tiled.plain", {"_Z17gemm_tiled_kernelffPfS_S_": 40}),
])  # fmt: skip
def test_register_counts_are_ptxas_v(stem, expected):
    """EIATTR_REGCOUNT of the committed cubins: what ptxas -v printed (26 and 27 for the
    textbook kernels; 40 for the generic staging loop, too many for a 1024-thread block on a
    compute capability 3.2 GPU: 40 x 1024 > 32768 registers a block)."""
    data = (KEPLER_DIR / f"{stem}.sm_35.cubin").read_bytes()
    assert kepler_sched.register_counts(data) == expected


def test_textbook_phase_schedule():
    """The textbook kernel's hot loop, one phase: 32 k steps, 85 instructions (the listing),
    50 shared passes (32 LDS + 8 LDS.128 x 2 + 2 STS), 24 dual-issued pairs (counted by
    hand in the decoded loop: the two global-load pairs of the staging and 22 LDS/FFMA
    pairs), so 61 issue groups; on the TK1 a warp k step issues 85/32 x 0.5 cycles and
    passes the shared path 50/32 cycles, 64 warps resident (26 registers, 2 blocks)."""
    data = (KEPLER_DIR / "gemm_textbook.plain.sm_35.cubin").read_bytes()
    listing = (KEPLER_DIR / "gemm_textbook.plain.sm_35.sass").read_text()
    kern = sass_counts.kernels_by_launch("textbook/gemm_textbook", listing)["gemm_textbook"]
    s = kepler_sched.loop_schedule(kern, kepler_sched.control_codes(data, TEXTBOOK))
    assert (s.k_steps, s.insts, s.shared_passes, s.dual_pairs, s.groups) == (32, 85, 50, 24, 61)
    t = kepler_sched.tk1_cycles(s, 26)
    assert t["warps_resident"] == 64
    assert t["issue"] == pytest.approx(85 / 32 * 0.5)
    assert t["shared_path"] == pytest.approx(50 / 32)
    assert t["own_schedule"] == pytest.approx(s.own_cycles / 32 / 64)
    # the published pair: 249.16 / 2.22 ms at 852 MHz over 1024^3 / 32 warp k steps
    assert t["published"] == pytest.approx(249.16 / 2.22e3 * 852e6 / (1024**3 / 32))


def test_shared_passes_by_width():
    assert kepler_sched.shared_passes("LDS") == kepler_sched.shared_passes("STS.64") == 1
    assert kepler_sched.shared_passes("LDS.128") == 2
    assert kepler_sched.shared_passes("FFMA") == kepler_sched.shared_passes("LD.E") == 0


def test_staging_misses_brute_force_by_hand():
    """n = 64, 32x32 tiles: 4 blocks x 2 phases x (32 rows of A + 32 of B) x 2 lines of 64 B
    = 1024 line accesses. An L2 holding everything misses each line once: A and B are 64 x 64
    floats, 256 lines each, 512 misses. A one-line direct-mapped cache misses every access
    but the second line of no row (each row's two lines differ): all 1024."""
    assert kepler_sched.staging_misses(64, 32, 1 << 20, 64, 16, 2) == (1024, 512)
    assert kepler_sched.staging_misses(64, 32, 64, 64, 1, 1) == (1024, 1024)
