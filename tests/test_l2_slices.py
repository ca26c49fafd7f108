"""The L2 slice mapping and sector passes of atomic updates (l2_slices.py, eq. (A2)) against
hand counts and a brute-force count, and the per-slice bound replayed on the H100
micro-benchmarks (validation/measured/h100-session-2026-11-2*)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cgpredict.devices import load_device
from cgpredict.l2_slices import SliceMap, sector_passes, slice_of, slice_stats

SMAP = SliceMap(slices=80, interleave_bytes=1024, alternate_bytes=256)  # the H100's
MEASURED = Path(__file__).resolve().parents[1] / "validation/measured"
UBENCH = MEASURED / "h100-session-2026-11-26/ubench/atomics-4m.json"
DATA = MEASURED / "h100-session-2026-11-27/atomics-data/atomics_data.json"


def test_one_address_takes_a_pass_per_lane():
    """32 lanes of each of 10 warp instructions on one int: 32 passes of one sector each a
    warp instruction (an address's updates one after another), all on one slice."""
    addr = np.full(320, 4096)
    st = slice_stats(addr, np.arange(320) // 32, SMAP)
    assert st.requests_per_warp == 32.0
    assert st.busiest_share == 1.0 and st.locations_share == 1.0


def test_a_line_of_distinct_words_is_one_pass_of_four_sectors():
    """32 consecutive ints (one 128 B line): one pass updating 4 sectors; 8 ints with 4 lanes
    each (one sector): 4 passes of that sector."""
    st = slice_stats(np.arange(32) * 4, np.zeros(32, dtype=int), SMAP)
    assert st.requests_per_warp == 4.0
    st = slice_stats((np.arange(32) // 4) * 4, np.zeros(32, dtype=int), SMAP)
    assert st.requests_per_warp == 4.0


def test_pairs_of_slices_in_turn():
    """256 B pieces 0, 2 of each 1 KB on one slice, 1, 3 on the other; the next 1 KB on the next
    pair; the 41st 1 KB wraps onto the first pair (80 slices)."""
    addr = np.array([0, 256, 512, 768, 1024, 1280, 1536, 40 * 1024, 40 * 1024 + 256])
    assert list(slice_of(addr, SMAP)) == [0, 1, 0, 1, 2, 3, 2, 0, 1]
    assert list(slice_of(np.array([0, 255, 256, 511]), SMAP)) == [0, 0, 1, 1]
    plain = SliceMap(slices=80, interleave_bytes=512)
    assert list(slice_of(np.arange(81) * 512, plain)) == list(range(80)) + [0]


def test_shares_by_footprint_and_placement():
    """Every int once, one lane each: 256 B on one slice, an aligned 512 B, 1 KB on two (half
    each), 2 KB on four; 1 KB starting 512 B past the allocation's start on four."""
    for nbytes, share in ((256, 1.0), (512, 0.5), (1024, 0.5), (2048, 0.25)):
        ints = np.arange(nbytes // 4) * 4
        st = slice_stats(ints, np.arange(len(ints)) // 32, SMAP)
        assert st.busiest_share == pytest.approx(share), nbytes
        assert st.locations_share == pytest.approx(share), nbytes
    ints = np.arange(256) * 4 + 512
    assert slice_stats(ints, np.arange(256) // 32, SMAP).busiest_share == pytest.approx(0.5)
    st = slice_stats(ints, np.arange(256) // 32, SMAP, base=0)
    assert st.busiest_share == pytest.approx(0.25)


def test_sector_passes_match_a_brute_force_count():
    """Sector passes and the busiest slice against a plain Python count over random lanes: per
    instruction, pass k holds each address's k-th lane; a pass updates each sector once."""
    rng = np.random.default_rng(3)
    addr = rng.integers(0, 1024, 3200) * 4
    inst = np.arange(3200) // 32
    tuples = set()
    for w in range(100):
        seen: dict[int, int] = {}
        for a in addr[inst == w]:
            k = seen.get(int(a), 0)
            seen[int(a)] = k + 1
            tuples.add((w, k, int(a) // 32))
    assert len(sector_passes(addr, inst)) == len(tuples)
    per = [0] * 80
    for _, _, sec in tuples:
        rel = sec * 32 - int(addr.min()) // 32 * 32
        per[(2 * (rel // 1024) + (rel // 256) % 2) % 80] += 1
    st = slice_stats(addr, inst, SMAP)
    assert st.requests_per_warp == pytest.approx(len(tuples) / 100)
    assert st.busiest_share == pytest.approx(max(per) / len(tuples))


def _sweep(lanes: int, bins: int) -> np.ndarray:
    """Byte offsets of atomics.cu's bins_i kernel (its hash of the thread index)."""
    i = np.arange(lanes, dtype=np.uint64)
    h = (i * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)
    h ^= h >> np.uint64(15)
    return (h & np.uint64(bins - 1)).astype(np.int64) * 4


def _ms(dev, addr: np.ndarray, ops: int, clk: float) -> float:
    st = slice_stats(addr, np.arange(len(addr)) // 32, dev.slice_map, base=0)
    return ops / 32 * st.requests_per_warp * st.busiest_share * dev.atomic_slice_cycles / clk * 1e3


def test_ubench_replayed_through_the_device_file():
    """The H100 file's measured slice figures (no fit) predict the sweep (4M lanes) and the
    port-data footprints of up to 1 KB within 12 %, the port data's four placements of 256 bins
    within 5 %, and the one-address times within 8 and 5 %."""
    dev = load_device("h100")
    data = json.loads(UBENCH.read_text())
    clk = data["clock_khz"] * 1e3
    one = data["ops_one_address"]
    assert one * dev.atomic_address_cycles / clk * 1e3 == pytest.approx(
        data["one_address_int_ms"], rel=0.08)
    assert one * dev.atomic_float_cycles / clk * 1e3 == pytest.approx(
        data["one_address_float_ms"], rel=0.05)
    lanes = 1 << 15
    for p in data["sweep"]:
        if p["bins"] <= 1024:
            assert _ms(dev, _sweep(lanes, p["bins"]), p["ops"], clk) == pytest.approx(
                p["ms"], rel=0.12), p
    port = json.loads(DATA.read_text())
    seed, bins = 7, np.empty(lanes, np.int64)
    for k in range(lanes):  # validation/cuda/user/histogram.cu's data
        seed = (seed * 1103515245 + 12345) & 0xFFFFFFFF
        bins[k] = seed >> 16
    for p in port["random"]:
        if p["bins"] <= 1024:
            assert _ms(dev, (bins & (p["bins"] - 1)) * 4, port["ops"], 1.98e9) == pytest.approx(
                p["ms"], rel=0.12), p
    for p in port["placed_256"]:
        assert _ms(dev, (bins & 255) * 4 + p["offset"], port["ops"], 1.98e9) == pytest.approx(
            p["ms"], rel=0.05), p
