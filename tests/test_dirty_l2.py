"""The reset's dirty L2 lines written back by the first launches (models/dirty_l2.py, eq.
(E5)): hand-derived write-backs and times, and the H100 fields read back from the lease's
Nsight Compute counters (validation/measured/h100-lease-2026-11-28)."""

from __future__ import annotations

import csv
import dataclasses
from pathlib import Path
from types import SimpleNamespace

import pytest

from cgpredict.devices import load_device
from cgpredict.models.dirty_l2 import (
    LaunchDram,
    evicted_bytes,
    launch_figures,
    reset_dirty_bytes,
    writeback_ms,
)

ROOT = Path(__file__).resolve().parents[1]
LEASE = ROOT / "validation" / "measured" / "h100-lease-2026-11-28"
MB = 1e6
# round figures: 1 GHz, 4 TB/s for the written-back bytes, half a read byte evicts one
DEV = dataclasses.replace(load_device("h100"), clock_mhz=1000.0, l2_dirty_max_bytes=24_000_000,
                          l2_dirty_evict_share=0.5, l2_writeback_gbps=4000.0)


def test_the_dirty_bytes_of_a_reset():
    """(E5a): a memset's bytes up to the cap; a memset of unknown size fills it; a reset
    without memset leaves nothing."""
    assert reset_dirty_bytes(DEV, "memset", 16 << 20) == 16 << 20
    assert reset_dirty_bytes(DEV, "memset", 64 << 20) == 24e6
    assert reset_dirty_bytes(DEV, "memset", None) == 24e6
    assert reset_dirty_bytes(DEV, "upload", 4096) == 4096  # zero() calls before its last copy
    assert reset_dirty_bytes(DEV, "upload", None) == 0.0
    assert reset_dirty_bytes(DEV, "none", None) == 0.0


def test_a_dram_bound_launch_pays_the_whole_write_back():
    """100 MB read evicts 50 MB's worth, more than the 24 MB dirty: all 24 MB at 4 TB/s is
    6 us, and the launch was DRAM-bound (its cycles its DRAM bound), so it pays all 6."""
    launch = LaunchDram(cycles=50_000.0, stream_cycles=50_000.0, read_bytes=100 * MB)
    assert writeback_ms([launch], DEV, 24e6) == pytest.approx(6e-3)


def test_a_compute_bound_launch_pays_nothing():
    """The same bytes (6000 cycles at 1 GHz) under a launch 10000 cycles longer than its
    bytes at the stream's bandwidth: the write-back hides; 4000 cycles longer: 2000 cycles
    show. A launch the waves' DRAM latency bounds leaves the bandwidth idle the same way."""
    hidden = LaunchDram(cycles=60_000.0, stream_cycles=50_000.0, read_bytes=100 * MB)
    assert writeback_ms([hidden], DEV, 24e6) == 0.0
    part = LaunchDram(cycles=54_000.0, stream_cycles=50_000.0, read_bytes=100 * MB)
    assert writeback_ms([part], DEV, 24e6) == pytest.approx(2e-3)


def test_the_dirty_bytes_are_shared_by_the_first_launches():
    """Launches reading 20 MB each write back 10, 10, then the last 4 MB: 24 MB in all
    (6 us); a fourth launch finds none."""
    one = LaunchDram(cycles=10_000.0, stream_cycles=10_000.0, read_bytes=20 * MB)
    assert writeback_ms([one] * 3, DEV, 24e6) == pytest.approx(6e-3)
    assert writeback_ms([one] * 4, DEV, 24e6) == pytest.approx(6e-3)
    assert writeback_ms([one], DEV, 24e6) == pytest.approx(2.5e-3)  # 10 MB of 24
    small = LaunchDram(cycles=1000.0, stream_cycles=1000.0, read_bytes=2 * MB)  # 1 MB
    assert writeback_ms([small], DEV, 24e6) == pytest.approx(0.25e-3)


def test_zeroed_outputs_stored_in_order():
    """(E5b) when the launch stores the zeroed buffer in order: a buffer all dirty (S = D)
    whose launch reads less than D / share loses each line at q with the chance a q
    (a = share x R / D), a q^2 / 2 of it in all: share x R / 2; the last D of a buffer much
    larger than what the reads evict before reaching it: all of D; a buffer it never
    stores (None): min(D, share x R)."""
    assert evicted_bytes(10 * MB, 20 * MB, 0.5, 20 * MB) == pytest.approx(2.5 * MB)
    assert evicted_bytes(10 * MB, 20 * MB, 0.5) == pytest.approx(5 * MB)
    assert evicted_bytes(200 * MB, 24 * MB, 0.5, 240 * MB) == pytest.approx(24 * MB)
    # the last half of S = 48 MB dirty, a = 0.5 x 96 / 24 = 2: F(x) = x^2 up to 1/2, then
    # 1/4 + (x - 1/2): F(1) - F(1/2) = 3/4 - 1/4, 24 MB, all of D; with 48 MB read (a = 1)
    # F(x) = x^2 / 2: 1/2 - 1/8 of 48 MB = 18 MB
    assert evicted_bytes(96 * MB, 24 * MB, 0.5, 48 * MB) == pytest.approx(24 * MB)
    assert evicted_bytes(48 * MB, 24 * MB, 0.5, 48 * MB) == pytest.approx(18 * MB)
    assert evicted_bytes(0.0, 24 * MB, 0.5, 48 * MB) == 0.0


def test_zeroed_outputs_brute_force():
    """The integral against a line-by-line reference: line i of n at q = (i + 0.5) / n, dirty
    when in the last D, evicted before the launch stores it with the chance min(1, a q)."""
    for read, dirty, size in ((30 * MB, 24 * MB, 67 * MB), (67 * MB, 24 * MB, 67 * MB),
                              (5 * MB, 16 * MB, 16 * MB), (300 * MB, 10 * MB, 400 * MB)):
        n, a = 200_000, 0.46 * read / dirty
        first = round(n * (1 - dirty / size))
        want = sum(min(1.0, a * (i + 0.5) / n) for i in range(first, n)) * size / n
        want = min(want, dirty, 0.46 * read)
        assert evicted_bytes(read, dirty, 0.46, size) == pytest.approx(want, rel=2e-3)


def test_brute_force_line_by_line():
    """A reference that evicts 128-B lines one read line at a time: each read line written
    back with the share's chance, here every second one while dirty lines remain."""
    reads = [3_000_000, 500_000, 40_000_000]
    lines, dirty, wrote = 128, 24_000_000 // 128, []
    for r in reads:
        w = 0
        for i in range(r // lines):
            if dirty and i % 2 == 1:
                dirty -= 1
                w += lines
        wrote.append(w)
    launches = [LaunchDram(cycles=1e9, stream_cycles=1e9, read_bytes=float(r)) for r in reads]
    want = sum(wrote) / 4e12 * 1e3  # DRAM-bound launches: the bytes at 4 TB/s
    assert writeback_ms(launches, DEV, 24e6) == pytest.approx(want, rel=1e-4)


def test_no_write_back_without_the_fields():
    """TK1 and the other device files carry no dirty L2 (0): nothing is charged."""
    launch = LaunchDram(cycles=1.0, stream_cycles=1.0, read_bytes=100 * MB)
    tk1 = load_device("tk1")
    assert tk1.l2_dirty_max_bytes == 0 and writeback_ms([launch], tk1, 24e6) == 0.0
    assert reset_dirty_bytes(tk1, "memset", None) == 0.0
    stream = dataclasses.replace(DEV, l2_writeback_gbps=0.0)  # the stream's rate instead
    want = 24e6 / (stream.dram_bandwidth_gbps * 1e9) * 1e3
    assert writeback_ms([LaunchDram(1e9, 1e9, 100 * MB)], stream, 24e6) == pytest.approx(want)


def test_launches_in_issue_order():
    """Two kernels launched twice each are one host loop, interleaved (event_timing's
    issue_order): the first launch of each kernel comes before the second of the first."""
    def kernel(cycles: float, launches: int):
        bounds = SimpleNamespace(dram_cycles=cycles + 7.0, dram_wave_cycles=7.0,
                                 dram_read_bytes=cycles)
        return SimpleNamespace(result=SimpleNamespace(cycles=cycles, bounds=bounds),
                               launches=launches)
    got = launch_figures([kernel(1.0, 2), kernel(2.0, 2)])
    assert [f.cycles for f in got] == [1.0, 2.0, 1.0, 2.0]
    assert [f.stream_cycles for f in got] == [1.0, 2.0, 1.0, 2.0]  # the waves' latency out
    got = [f.cycles for f in launch_figures([kernel(1.0, 1), kernel(2.0, 2)])]
    assert got == [1.0, 2.0, 2.0]
    nobounds = SimpleNamespace(result=SimpleNamespace(cycles=5.0, bounds=None), launches=1)
    assert launch_figures([nobounds]) == [LaunchDram(5.0, 0.0, 0.0)]


def _ncu(path: Path) -> list[dict[str, float]]:
    """Per profiled launch: DRAM bytes read and written and the duration in ns."""
    rows = list(csv.reader(line for line in path.open() if line.startswith('"')))
    head, out = rows[0], []
    for r in rows[2:]:
        get = lambda k: float(r[head.index(k)].replace(",", ""))  # noqa: E731
        out.append({"read": get("dram__bytes_read.sum"), "write": get("dram__bytes_write.sum"),
                    "ns": get("gpu__time_duration.sum")})
    return out


def test_the_h100_fields_are_the_leases_counters():
    """l2_dirty_max_bytes: what a memset of 24-128 MB adds to the strided launch's DRAM
    writes (dirty_l2.cu: launch 0 the warm-up, then memset S = 0, 4, 8, 16, 24, 32, 40,
    48, 64, 128 MB, three launches each); l2_dirty_evict_share: the mean written-back share
    of the read bytes at n = 2^18..2^21 (dirty_evict.cu: warm-up, then per n three clean and
    three after a 64 MB memset); l2_writeback_gbps: 24.4 MB over the time they add at
    n = 2^24, 3.8-4.1 TB/s."""
    h100 = load_device("h100")
    runs = _ncu(LEASE / "dirty" / "dirty_l2_ncu.csv")[1:31]
    clean = sum(r["write"] for r in runs[:3]) / 3
    full = [r["write"] - clean for r in runs[12:]]  # S >= 24 MB
    assert sum(full) / len(full) == pytest.approx(h100.l2_dirty_max_bytes, rel=0.01)
    ev = _ncu(LEASE / "evict" / "dirty_evict_ncu.csv")[1:]
    shares, mean = [], lambda xs: sum(xs) / len(xs)  # noqa: E731
    for n in range(4):
        group = ev[6 * n:6 * n + 6]
        extra = mean([r["write"] for r in group[3:]]) - mean([r["write"] for r in group[:3]])
        shares.append(extra / group[0]["read"])
    assert 0.39 < min(shares) and max(shares) < 0.55
    assert mean(shares) == pytest.approx(h100.l2_dirty_evict_share, abs=0.01)
    big = ev[36:42]  # n = 2^24
    added = [mean([r["ns"] for r in big[3:]]) - mean([r["ns"] for r in big[:3]])]
    added.append(mean([r["ns"] for r in runs[12:]]) - mean([r["ns"] for r in runs[:3]]))
    port = _ncu(LEASE / "reset" / "reset_ncu.csv")  # 1-7 after the port's reset, 8-14 clean
    added.append(mean([r["ns"] for r in port[1:8]]) - mean([r["ns"] for r in port[8:15]]))
    rates = [h100.l2_dirty_max_bytes / ns for ns in added]  # bytes a ns: GB/s
    assert all(3750 < r < 4100 for r in rates)
    assert h100.l2_writeback_gbps == pytest.approx(mean(rates), rel=0.01)
