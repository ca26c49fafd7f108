"""validation/l1_fills.py: the data-stage passes a missed sector costs, eq. (B2f), read off the
committed Nsight Compute counters (h100-worst-2026-11-27). Oracles: the counters' own
ratios by hand (particles step_soa misses its 4 sectors a request), and the device file's
``l1_fill_sectors``."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import l1_fills as lf  # noqa: E402

from cgpredict.devices import load_device  # noqa: E402


def _ratios() -> dict[str, tuple[float, float, float]]:
    """Per case (csv, kernel): wavefronts a request, missed sectors a request, hit passes."""
    out = {}
    for name, kernel, hit in lf.CASES:
        for launch in lf.read_ncu(lf.NCU / name):
            if launch.kernel.startswith(kernel):
                m = launch.metrics
                req = m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
                out[f"{name} {kernel}"] = (
                    m["l1tex__data_pipe_lsu_wavefronts.sum"] / req,
                    m["l1tex__m_xbar2l1tex_read_sectors.sum"] / req, hit)
    return out


def test_a_coalesced_miss_of_four_sectors_takes_one_pass_more():
    wf, missed, hit = _ratios()["more-ncu/particles-1024x1.csv step_soa"]
    assert abs(missed - 4.0) < 0.01 and abs(wf - hit - 1.0) < 0.1


def test_a_missed_sector_is_a_quarter_pass_where_the_l1_is_not_crowded():
    """0.21-0.25 a sector on every case but trmv_t 1024x1 (32 warps an SM: 0.19)."""
    for key, (wf, missed, hit) in _ratios().items():
        per = (wf - hit) / missed
        assert 0.18 < per < 0.26, key
        if "1024x1" not in key or "trmv_t" not in key:
            assert abs(hit + missed / lf.FILL_SECTORS - wf) / wf < 0.12, key


def test_the_device_file_holds_the_same_figure():
    assert load_device("h100").l1_fill_sectors == lf.FILL_SECTORS
    assert load_device("tk1").l1_fill_sectors == 0
