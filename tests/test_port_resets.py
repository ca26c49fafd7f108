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


@pytest.mark.parametrize("folder, port, sizes, want", [
    ("blind", "strided", {"N": 1 << 24}, 12 << 24),          # din(3 * N) floats
    ("blind", "gather", {"N": 1 << 24}, 12 << 24),           # dw, dx, didx: 3 x N of 4 B
    ("blind", "trmv_t", {"N": 8192}, 4 * 8192 * 8192 + 4 * 8192),  # L((size_t)N * N, 0.0f), x
    ("blind", "mandelbrot", {"H": 2048, "W": 2048}, None),   # dimg.zero() only
    ("user", "sfu_heavy", {"N": 1 << 22}, 4 << 22),          # dx(N): 16 MiB, under 64 MiB
    ("user", "saxpy", {"N": 1 << 24}, 8 << 24),              # dx, dy
])
def test_upload_bytes_sum_every_upload_call(folder, port, sizes, want):
    """The bytes a reset's upload() calls copy from pageable memory (eq. (E6)), read by hand
    from the ports; a vector's second constructor argument (its fill value) is not its
    size."""
    src = (ROOT / "validation" / "cuda" / folder / f"{port}.cu").read_text()
    assert port_resets.upload_bytes(src, sizes) == want


def test_first_arg_keeps_commas_inside_parentheses():
    assert port_resets._first_arg("(size_t)N * N, 0.0f") == "(size_t)N * N"
    assert port_resets._first_arg("f(a, b) * 2") == "f(a, b) * 2"


def test_the_reset_state_benchmark_gives_upload_memset_launch_us():
    """upload_memset_launch_us (eq. (E6)): reset_state.cu's strided launch after the port's
    reset with a pageable copy less the same with a pinned one, both then the memset, idle;
    queued behind a spin kernel the two are within 0.1 us (the GPU's time the same)."""
    lease = ROOT / "validation" / "measured" / "h100-lease-2026-11-28" / "reset"
    got = json.loads((lease / "reset_state.json").read_text())
    idle, queued = got["idle"], got["queued"]
    dev = tomllib.loads((ROOT / "cgpredict/devices/h100.toml").read_text())["timing"]
    late = (idle["port_ms"] - idle["pinned_ms"]) * 1e3
    assert dev["upload_memset_launch_us"] == pytest.approx(late, abs=0.005)
    assert abs(queued["port_ms"] - queued["pinned_ms"]) * 1e3 < 0.1
    assert late < (idle["upload_only_ms"] - idle["none_ms"]) * 1e3  # the memset takes part


def test_measured_files_carry_the_upload_bytes():
    data = json.loads((ROOT / "validation/measured/nvidia-h100-80gb-hbm3-blind.json").read_text())
    got = {(e["kernel"], e.get("upload_bytes")) for e in data["results"]}
    assert ("strided", 12 << 24) in got and ("mandelbrot", None) in got
