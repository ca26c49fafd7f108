"""Kepler (sm_35) SASS of the GEMM kernels of issue 26 (``validation/kepler_sass.py``).

The listings committed in validation/kepler/ (ptxas 11.8 -O3 -arch=sm_35 of nvcc 13's PTX;
nvdisasm 11.8) are counted without any tool; the oracles come from the kernels' source: a
textbook phase is 32 k steps, each one FFMA, one shared read of B's column and a quarter of a
vectorised read of A's row, plus two staging loads, two staging stores and two barriers. The
rebuild test needs ptxas and nvdisasm 11.8 (and nvcc) and skips without them.
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import kepler_sass  # noqa: E402
import sass_counts  # noqa: E402

KEPLER_DIR = ROOT / "validation" / "kepler"
PORT_OF = {"gemm": "gemm", "gemm_tiled": "gemm_tiled", "gemm_textbook": "textbook/gemm_textbook"}


def _listing(stem: str, port: str) -> str:
    return (KEPLER_DIR / f"{stem}.{port}.sm_35.sass").read_text()


def _steps(stem: str, port: str) -> dict[str, kepler_sass.KStep]:
    return kepler_sass.kepler_steps(PORT_OF[stem], _listing(stem, port))


def test_kepler_opcode_classes():
    """Kepler's generic loads/stores are global, its immediate forms integer."""
    assert kepler_sass.kepler_class("LD.E") == "ld_global"
    assert kepler_sass.kepler_class("ST.E") == "st_global"
    assert kepler_sass.kepler_class("LDG.E.T") == "ld_global"
    assert kepler_sass.kepler_class("IADD32I") == "integer"
    assert kepler_sass.kepler_class("ISCADD") == "integer"
    assert kepler_sass.kepler_class("TEXDEPBAR") == "other"
    assert kepler_sass.kepler_class("LDS.128") == "ld_shared_128"
    assert kepler_sass.kepler_class("BAR.SYNC") == "barrier"


def test_retarget_ptx_sets_version_and_target():
    text = "//\n.version 9.0\n.target sm_75\n.address_size 64\n"
    out = kepler_sass.retarget_ptx(text)
    assert ".version 7.8\n.target sm_35\n" in out
    with pytest.raises(ValueError):
        kepler_sass.retarget_ptx(".address_size 64\n")


@pytest.mark.parametrize("port", ["plain", "restrict"])
def test_textbook_phase_on_kepler(port):
    """A phase of the textbook kernel: the 32-step loop unrolled whole, A's row read 4 floats
    at a time (LDS.128), B's column one LDS a k step, every shared offset folded."""
    step = _steps("gemm_textbook", port)["gemm_textbook"]
    c = step.counts
    assert step.k_steps == 32
    assert (c["ld_shared_32"], c["ld_shared_128"], c["ld_shared_64"]) == (32, 8, 0)
    assert (c["st_shared_32"], c["ld_global"], c["barrier"], c["fp32"]) == (2, 2, 2, 32)
    # kk += 32, kk < nk, and two 64-bit pointers stepped (add with carry + carry): 6
    assert c["integer"] == 6 and c["branch"] == 1
    # restrict: A and B through the read-only path (LDG), each waited on by a TEXDEPBAR
    assert c["other"] == (2 if port == "restrict" else 0)
    assert step.total_per_k == pytest.approx((87 if port == "restrict" else 85) / 32)


def test_kepler_ldg_takes_no_immediate_offset():
    """Every sm_35 read-only load (``LDG``, restrict ports) addresses a bare register, while
    the plain ports' ``LD.E`` fold constant offsets; so the naive restrict GEMM pays a 64-bit
    address (2 integer instructions) per load and k step on Kepler."""
    ldg = re.compile(r"\bLDG\.\S*\s+R\d+,\s*\[([^\]]*)\]")
    ld = re.compile(r"\bLD\.E\S*\s+R\d+,\s*\[([^\]]*)\]")
    restrict = "".join(_listing(s, "restrict") for s in PORT_OF)
    addrs = ldg.findall(restrict)
    assert addrs and all("+" not in a for a in addrs)
    assert any("+" in a for a in ld.findall(_listing("gemm", "plain")))
    naive = _steps("gemm", "restrict")["gemm"]
    assert naive.counts["ld_global"] == 2 * naive.k_steps
    assert naive.counts["integer"] >= 2 * naive.counts["ld_global"]
    plain = _steps("gemm", "plain")["gemm"]
    assert plain.counts["integer"] < plain.k_steps


def _tools() -> tuple[str | None, str | None]:
    return kepler_sass.find_ptxas11(), kepler_sass.find_nvdisasm11()


@pytest.mark.skipif(
    None in _tools() or shutil.which("nvcc") is None,
    reason=f"Kepler tools not found ({kepler_sass.TOOL_HINT})",
)
def test_rebuilt_listing_matches_committed(tmp_path):
    """The build script reproduces the committed textbook listing's counts."""
    ptxas, nvdisasm = _tools()
    name = PORT_OF["gemm_textbook"]
    text = kepler_sass.kepler_listing(name, "restrict", tmp_path, ptxas, nvdisasm)
    fresh = kepler_sass.kepler_steps(name, text)
    committed = _steps("gemm_textbook", "restrict")
    assert {k: v.counts for k, v in fresh.items()} == {k: v.counts for k, v in committed.items()}
    assert sass_counts.parse_sass(text)
