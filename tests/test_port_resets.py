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


@pytest.mark.parametrize("folder, port, sizes, want", [
    ("blind", "strided", {"N": 1 << 24}, 4 << 24),           # dout.zero(): N floats
    ("blind", "int_hash", {"N": 1 << 24}, 4 << 24),          # DevBuf<unsigned int> dout(N)
    ("blind", "conv1d", {"N": 1 << 24}, 4 << 24),            # dout(N) after two uploads
    ("user", "saxpy", {"N": 1 << 24}, None),                 # two uploads, no zero()
    ("user", "nbody", {"NP": 1 << 14}, 12 << 14),            # dfx, dfy, dfz: 3 x NP floats
    ("", "2mm", {"NI": 1024, "NJ": 1024, "NK": 1024, "NL": 1024}, 8 << 20),  # dC, dE
])
def test_memset_bytes_sum_every_zero_call(folder, port, sizes, want):
    """The bytes a reset's zero() calls set (eq. (E5a)), read by hand from the ports."""
    src = (ROOT / "validation" / "cuda" / folder / f"{port}.cu").read_text()
    assert port_resets.memset_bytes(src, sizes) == want


def test_measured_files_carry_the_resets():
    data = json.loads((ROOT / "validation/measured/nvidia-h100-80gb-hbm3-user.json").read_text())
    got = {(e["kernel"], e.get("reset"), e.get("reset_bytes")) for e in data["results"]}
    assert ("saxpy", "upload", 4 << 24) in got and ("sfu_heavy", "memset", None) in got
    zeroed = {(e["kernel"], e.get("memset_bytes")) for e in data["results"]}
    assert ("sfu_heavy", 4 << 22) in zeroed and ("saxpy", None) in zeroed


def test_the_device_file_carries_the_measured_launch_calls():
    """launch_call_us: what an idle GPU's event pair counts over the same launch queued
    behind a spin kernel, mean of SAXPY with no and with a pinned upload and the empty
    kernel; upload_launch_us: the same after the pageable upload, less that."""
    m = json.loads((LEASE / "host-or-gpu" / "launch_state.json").read_text())
    split = m["saxpy_16777216_host_or_gpu"]
    diffs = [1e3 * (split[k]["events_ms"] - split[k]["behind_spin_ms"]) for k in ("none", "pinned")]
    diffs.append(1e3 * (m["empty_kernel_ms"] - m["empty_kernel_behind_spin_ms"]))
    dev = tomllib.loads((ROOT / "cgpredict/devices/h100.toml").read_text())["timing"]
    assert dev["launch_call_us"] == pytest.approx(sum(diffs) / 3, abs=0.01)
    page = 1e3 * (split["pageable"]["events_ms"] - split["pageable"]["behind_spin_ms"])
    assert dev["upload_launch_us"] == pytest.approx(page - dev["launch_call_us"], abs=0.01)
    assert dev["upload_launch_min_bytes"] == 4 << 24  # x alone, 2^24 floats, caused it
