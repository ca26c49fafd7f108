"""validation/port_resets.py: how each port's repetition ends its re-upload, and the launch
calls' device fields read from the 2026-11-27 lease (validation/ubench/launch_state.cu).

Oracle: the reset lambdas and buffer sizes read by hand from the ports' sources."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import port_resets  # noqa: E402

USER = ROOT / "validation" / "cuda" / "user"
LEASE = ROOT / "validation" / "measured" / "h100-session-2026-11-27"


@pytest.mark.parametrize("port, sizes, want", [
    ("saxpy", {"N": 1 << 24}, ("upload", 4 << 24)),           # dx.upload(x); dy.upload(y)
    ("sfu_heavy", {"N": 1 << 22}, ("memset", None)),          # dx.upload(x); dy.zero()
    ("jacobi2d", {"N": 4096, "TSTEPS": 10}, ("upload", 4 * 4096 * 4096)),  # db(a.size())
    ("particles", {"NP": 1 << 22}, ("upload", 24 << 22)),     # dq(NP) of 6-float parts
])
def test_user_ports(port, sizes, want):
    assert port_resets.reset_state((USER / f"{port}.cu").read_text(), sizes) == want


def test_polybench_ports():
    src = (ROOT / "validation" / "cuda" / "gemver.cu").read_text()
    assert port_resets.reset_state(src, {"N": 2048}) == ("upload", 4 * 2048)  # dz(N) last
    src = (ROOT / "validation" / "cuda" / "gemm.cu").read_text()
    assert port_resets.reset_state(src, {"NI": 1024, "NJ": 1024, "NK": 1024}) == (
        "upload", 4 << 20)


def test_measured_files_carry_the_resets():
    data = json.loads((ROOT / "validation/measured/nvidia-h100-80gb-hbm3-user.json").read_text())
    got = {(e["kernel"], e.get("reset"), e.get("reset_bytes")) for e in data["results"]}
    assert ("saxpy", "upload", 4 << 24) in got and ("sfu_heavy", "memset", None) in got


def test_the_device_file_carries_the_measured_launch_calls():
    """launch_call_us: the host clock around the launch call with no or a pinned upload
    before it (mean of the two medians); upload_launch_us: after the pageable upload, less
    that."""
    m = json.loads((LEASE / "host-or-gpu" / "launch_state.json").read_text())
    split = m["saxpy_16777216_host_or_gpu"]
    call = (split["none"]["host_launch_us"] + split["pinned"]["host_launch_us"]) / 2
    dev = tomllib.loads((ROOT / "cgpredict/devices/h100.toml").read_text())["timing"]
    assert dev["launch_call_us"] == pytest.approx(call, abs=0.05)
    assert dev["upload_launch_us"] == pytest.approx(
        split["pageable"]["host_launch_us"] - dev["launch_call_us"], abs=0.05)
    assert dev["upload_launch_min_bytes"] == 4 << 24  # x alone, 2^24 floats, caused it
