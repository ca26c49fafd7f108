"""validation/ubench/block_rate_read.py and loop_probe_read.py: the launch stream's device fields
read off the H100 micro-benchmarks of 2026-11-27 (h100-worst-2026-11-27/ubench).

Oracles: a line through made-up points is recovered exactly; a made-up loop whose host clock
exceeds its pairs by a known amount gives that amount; the committed outputs give what
h100.toml carries (block_dispatch_cycles, launch_gap_us) and the figures docs/models.md cites."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import pytest

from cgpredict.devices import load_device

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation" / "ubench"))

import block_rate_read as br  # noqa: E402
import loop_probe_read as lp  # noqa: E402

UBENCH = ROOT / "validation/measured/h100-worst-2026-11-27/ubench"


def test_a_line_through_known_points_is_recovered():
    """time = 7 us + 0.6 ns x blocks at 4096 .. 1M blocks: slope 0.6 ns, 1.188 cycles at
    1980 MHz, intercept 7 us; the rows under MIN_BLOCKS (the fixed cost) are left out."""
    rows = [{"kernel": "empty", "threads": 32, "blocks": b, "smem": 0,
             "ms": (7.0 + 0.6e-3 * b) * 1e-3} for b in (4096, 16384, 65536, 1 << 20)]
    rows.append({"kernel": "empty", "threads": 32, "blocks": 1024, "smem": 0, "ms": 1.0})
    (r,) = br.rates({"rows": rows})
    assert r.points == 4
    assert r.slope_ns == pytest.approx(0.6) and r.intercept_us == pytest.approx(7.0)
    assert r.cycles(1980.0) == pytest.approx(1.188)


def test_the_device_file_keeps_the_working_block_rate_above_its_measured_floor():
    """32-256 threads, both kernels: 1.187-1.195 cycles a block, a block's cost, not a warp's;
    h100.toml's block_dispatch_cycles (the working ports' 1.24) lies 0-9 % above their
    median, the most a working port's block costs over an empty one."""
    data = json.loads((UBENCH / "block_rate.json").read_text())
    small = [r.cycles(1980.0) for r in br.rates(data)
             if r.kernel in ("empty", "store") and r.threads <= 256]
    assert len(small) == 8 and max(small) - min(small) < 0.01
    floor = statistics.median(small)
    assert floor <= load_device("h100").block_dispatch_cycles <= 1.09 * floor


def _loop(pairs_us: float, host_us: float, n: int = 200) -> dict:
    """A loop_probe output whose every mode has the given per-launch pair and host time."""
    entry = {"launches": n, "total_us": [pairs_us * n] * 7, "host_loop_us": [host_us * n] * 7,
             "pairs_rep1_us": [pairs_us] * n}
    return {f"k_{m}": entry for m in ("port", "queued", "bare", "bareq")}


def test_the_idle_time_between_pairs_is_the_host_clock_less_the_pairs():
    r = lp.read(_loop(5.0, 6.5), "k")
    assert r.pair == pytest.approx(5.0) and r.period == pytest.approx(6.5)
    assert r.idle == pytest.approx((1.5,) * 7)
    assert r.queued_head == pytest.approx(5.0) and r.queued_tail == pytest.approx(5.0)


def test_the_committed_loops_leave_the_gpu_idle_between_pairs():
    """On the H100 of 2026-11-27 each kernel's pairs sum to 1.30-1.46 us a launch less than
    the host clock around the loop, in every repetition: the pairs do not tile at the host's
    period. The shallow queued empty launch (3.14 us) is launch_gap_us (3.07) to 0.1 us."""
    data = json.loads((UBENCH / "loop_probe.json").read_text())
    for kernel in ("heat", "wavefront", "empty"):
        r = lp.read(data, kernel)
        assert all(1.25 < x < 1.5 for x in r.idle), kernel
        assert r.old_e4 > r.pair + 0.8  # the round-13 reading of (E4) over-counts
    empty = lp.read(data, "empty")
    assert empty.queued_tail == pytest.approx(load_device("h100").launch_gap_us, abs=0.1)
