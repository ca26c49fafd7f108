"""The launch stream (models/launches.py): the costs a host timer sees around a kernel's
launches, by hand from the device's three fields, and through `cgpredict run --sync`."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from cgpredict.devices import DeviceError, load_device, load_device_file
from cgpredict.models.launches import (
    KernelTime,
    check_sync,
    kernel_time,
    module_load_ms,
    program_sync_ms,
)

ROOT = Path(__file__).resolve().parents[1]
DEV = dataclasses.replace(
    load_device("h100"), launch_sync_us=10.0, launch_gap_us=3.0, first_launch_us=50.0
)


def test_each_launch_is_a_round_trip():
    """100 launches of 20 us work: 2 ms of work, 100 x 10 us of round trips, one load."""
    t = kernel_time([(0.020, 100.0)], DEV, "each")
    assert t == KernelTime(kernel_ms=pytest.approx(2.0), launch_ms=pytest.approx(1.0),
                           once_ms=pytest.approx(0.05))
    assert t.total_ms == pytest.approx(3.05)


def test_queued_launches_add_the_gap_to_their_work():
    """Queued launches (--sync end) each add the 3 us gap (dispatch, ramp-up, drain) to
    their work, not a round trip: 100 x 20 us launches take 2 ms + 100 x 3 us."""
    t = kernel_time([(0.020, 100.0)], DEV, "end")
    assert t.kernel_ms == pytest.approx(2.0) and t.launch_ms == pytest.approx(0.3)


def test_distinct_launches_add_up():
    """Launches of two kinds (a host loop whose launches differ): 10 x 1 us and 5 x 5 us
    queued, gap 3 us: 10 x 1 + 5 x 5 of work and 15 x 3 of gaps."""
    t = kernel_time([(0.001, 10.0), (0.005, 5.0)], DEV, "end")
    assert t.kernel_ms == pytest.approx(0.035) and t.launch_ms == pytest.approx(0.045)
    assert kernel_time([], DEV, "each") == KernelTime(0.0, 0.0, 0.0)  # never launched: no load


def test_one_launch_costs_the_same_under_both_modes():
    """The program's first launch is a round trip under either mode, so a program of one
    launch is timed the same whether it synchronises after each launch or at the end."""
    for work in (0.0005, 0.020):  # below and above the gap
        each = kernel_time([(work, 1.0)], DEV, "each")
        end = kernel_time([(work, 1.0)], DEV, "end")
        assert each.total_ms == pytest.approx(end.total_ms + program_sync_ms(DEV, "end", 1))
        assert program_sync_ms(DEV, "each", 1) == 0.0 and program_sync_ms(DEV, "end", 0) == 0


def test_a_program_loads_its_module_once():
    """Three kernels of one program (one module): one 50 us load for the three, none for a
    program that launches nothing."""
    parts = [kernel_time([(0.010, 1.0)], DEV, "each") for _ in range(3)]
    assert module_load_ms(parts) == pytest.approx(0.05)
    assert module_load_ms([kernel_time([], DEV, "each")]) == 0.0 and module_load_ms([]) == 0.0


def test_unknown_mode_is_refused():
    with pytest.raises(ValueError, match="unknown --sync 'both'"):
        check_sync("both")


def test_old_device_key_is_read_and_both_are_refused(tmp_path):
    """launch_overhead_us, the name before launch_sync_us, still loads; both is ambiguous."""
    text = (ROOT / "cgpredict" / "devices" / "tk1.toml").read_text()
    old = tmp_path / "old.toml"
    old.write_text(text.replace("[timing]\n", "[timing]\nlaunch_overhead_us = 7.5\n", 1))
    assert load_device_file(old).launch_sync_us == 7.5
    both = tmp_path / "both.toml"
    both.write_text(text.replace(
        "[timing]\n", "[timing]\nlaunch_overhead_us = 7.5\nlaunch_sync_us = 7.5\n", 1))
    with pytest.raises(DeviceError, match="old name of launch_sync_us"):
        load_device_file(both)


HOST_LOOP = r"""
#ifndef N
#define N 4096
#endif
#ifndef T
#define T 8
#endif
static float a[N], b[N];
int main(void) {
  for (int t = 0; t < T; t++) {
#pragma cgp kernel step
    for (int i = 0; i < N; i++)
      b[i] = a[i] + 1.0f;
  }
  return b[1] > 0.5f ? 0 : 1;
}
"""


def _run(src: Path, *args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "cgpredict", "run", str(src), "--device", "h100", "--json",
         "--no-cache", *args],
        capture_output=True, text=True, timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


@pytest.mark.slow
def test_run_reports_the_parts_of_a_host_loop(tmp_path):
    """A host loop of 8 tiny launches on the H100: the JSON gives the work, the launches and
    the module load apart, their sum is the kernel's time, and --sync end queues them (each
    the device's gap; one round trip for the program, in place of its first gap)."""
    dev = load_device("h100")
    src = tmp_path / "loop.c"
    src.write_text(HOST_LOOP)
    each, end = _run(src), _run(src, "--sync", "end")
    for rep in (each, end):
        (k,) = rep["kernels"]
        assert k["launches"] == 8
        assert k["time_ms"] == pytest.approx(k["kernel_ms"] + k["launch_ms"] + k["once_ms"],
                                             abs=1e-5)
        assert k["once_ms"] == pytest.approx(dev.first_launch_us * 1e-3, abs=1e-6)
    ke, kq = each["kernels"][0], end["kernels"][0]
    assert ke["kernel_ms"] == pytest.approx(kq["kernel_ms"])
    assert ke["launch_ms"] == pytest.approx(8 * dev.launch_sync_us * 1e-3, abs=1e-6)
    assert kq["launch_ms"] == pytest.approx(8 * dev.launch_gap_us * 1e-3, abs=1e-6)
    assert end["sync_ms"] == pytest.approx((dev.launch_sync_us - dev.launch_gap_us) * 1e-3)
    assert each["sync"] == "each" and each["sync_ms"] == 0.0 and end["sync"] == "end"
    assert end["total_ms"] < each["total_ms"]  # 7 round trips saved
    assert end["total_ms"] == pytest.approx(
        kq["time_ms"] + end["sync_ms"], abs=1e-5)


def test_run_refuses_an_unknown_sync_in_one_line(tmp_path):
    src = tmp_path / "loop.c"
    src.write_text(HOST_LOOP)
    out = subprocess.run(
        [sys.executable, "-m", "cgpredict", "run", str(src), "--sync", "never"],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and "--sync" in out.stderr


TWO_KERNELS = r"""
#ifndef N
#define N 4096
#endif
static float a[N], b[N], c[N];
int main(void) {
#pragma cgp kernel first
  for (int i = 0; i < N; i++)
    b[i] = a[i] + 1.0f;
#pragma cgp kernel second
  for (int i = 0; i < N; i++)
    c[i] = b[i] * 2.0f;
  return c[1] > 0.5f ? 0 : 1;
}
"""


@pytest.mark.slow
def test_two_kernels_of_a_program_share_one_module_load(tmp_path):
    """The program's first kernel carries the module load (CUDA lazy loading loads the
    module both kernels live in at the first launch); the second pays none, and the
    program's total counts it once."""
    dev = load_device("h100")
    src = tmp_path / "two.c"
    src.write_text(TWO_KERNELS)
    rep = _run(src)
    first, second = rep["kernels"]
    assert (first["name"], second["name"]) == ("first", "second")
    assert first["once_ms"] == pytest.approx(dev.first_launch_us * 1e-3, abs=1e-6)
    assert second["once_ms"] == 0.0
    assert second["time_ms"] == pytest.approx(second["kernel_ms"] + second["launch_ms"],
                                              abs=1e-5)
    assert rep["total_ms"] == pytest.approx(
        first["kernel_ms"] + second["kernel_ms"] + 2 * dev.launch_sync_us * 1e-3
        + dev.first_launch_us * 1e-3, abs=1e-5)
