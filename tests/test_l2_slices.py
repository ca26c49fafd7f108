"""The L2 slice mapping of atomic requests (l2_slices.py, eq. (A2)) against hand counts, and
the per-slice bound replayed on the H100 micro-benchmark's footprint sweep."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from cgpredict.devices import load_device
from cgpredict.l2_slices import SliceMap, slice_of, slice_stats

SMAP = SliceMap(slices=80, interleave_bytes=512)
UBENCH = Path(__file__).resolve().parents[1] / (
    "validation/measured/h100-session-2026-11-26/ubench/atomics-4m.json")


def test_one_address_is_one_request_per_warp_on_one_slice():
    """32 lanes of each of 10 warp instructions on one int: 10 requests, all on one slice."""
    addr = np.full(320, 4096)
    st = slice_stats(addr, np.arange(320) // 32, SMAP)
    assert st.requests_per_warp == 1.0
    assert st.busiest_share == 1.0 and st.locations_share == 1.0


def test_granules_go_to_slices_in_turn():
    """Granule k of an allocation is slice k mod 80; the 81st wraps to the first slice."""
    addr = np.arange(81) * 512 + 1024 * 512
    assert list(slice_of(addr, SMAP)) == list(range(80)) + [0]


def test_spread_footprint_shares():
    """One lane per granule over 160 granules (two per slice): busiest share 2/160; 1 KB of
    ints (two granules) updated evenly: half the requests on each of two slices."""
    addr = np.arange(160) * 512
    st = slice_stats(addr, np.arange(160) // 32, SMAP)
    assert st.busiest_share == pytest.approx(2 / 160)
    assert st.requests_per_warp == 32.0
    ints = np.arange(256) * 4  # every bin once, 8 warp instructions of 32 distinct bins
    st = slice_stats(ints, np.arange(256) // 32, SMAP)
    assert st.busiest_share == pytest.approx(0.5)
    assert st.locations_share == pytest.approx(0.5)


def test_xor_bit_splits_each_granule_over_a_pair_of_slices():
    """With bit 8 XORed into the slice number: the 256 B halves of granules 0, 1, 2 go to
    slices 0, 1 | 1, 0 | 2, 3; granule 80 wraps onto slice 0's pair."""
    smap = SliceMap(slices=80, interleave_bytes=512, xor_bytes=256)
    addr = np.array([0, 256, 512, 768, 1024, 1280, 80 * 512, 80 * 512 + 256]) + 5 * 512 * 80
    assert list(slice_of(addr, smap)) == [0, 1, 1, 0, 2, 3, 0, 1]
    assert list(slice_of(np.array([0, 255, 256, 511]), smap)) == [0, 0, 1, 1]


def test_xor_bit_shares_by_footprint():
    """Every int once, one lane each: 256 B on one slice, an aligned 512 B and 1 KB on two
    (half each), 2 KB on four; without the XOR bit 512 B is one slice."""
    smap = SliceMap(slices=80, interleave_bytes=512, xor_bytes=256)
    for nbytes, share in ((256, 1.0), (512, 0.5), (1024, 0.5), (2048, 0.25)):
        ints = np.arange(nbytes // 4) * 4
        st = slice_stats(ints, np.arange(len(ints)) // 32, smap)
        assert st.busiest_share == pytest.approx(share), nbytes
        assert st.locations_share == pytest.approx(share), nbytes
    st = slice_stats(np.arange(128) * 4, np.arange(128) // 32, SMAP)
    assert st.busiest_share == 1.0


def test_requests_match_a_brute_force_count():
    """Requests (distinct instruction, address pairs) and the busiest slice against a plain
    Python count over random lanes."""
    rng = np.random.default_rng(3)
    addr = rng.integers(0, 4096, 3200) * 4
    inst = np.arange(3200) // 32
    smap = SliceMap(slices=80, interleave_bytes=512, xor_bytes=256)
    pairs = {(int(i), int(a)) for i, a in zip(inst, addr)}
    lo = int(addr.min())
    per = [0] * 80
    for _, a in pairs:
        per[(((a - lo) // 512) ^ (((a - lo) // 256) & 1)) % 80] += 1
    st = slice_stats(addr, inst, smap)
    assert st.requests_per_warp == pytest.approx(len(pairs) / 100)
    assert st.busiest_share == pytest.approx(max(per) / len(pairs))


def test_lanes_on_one_address_combine():
    """A warp instruction whose 32 lanes fall on 4 addresses makes 4 requests."""
    addr = np.repeat(np.array([0, 4, 8, 12]), 8)
    st = slice_stats(addr, np.zeros(32, dtype=int), SMAP)
    assert st.requests_per_warp == 4.0


def _sweep(lanes: int, bins: int) -> np.ndarray:
    """Byte offsets of atomics.cu's bins_i kernel (its hash of the thread index)."""
    i = np.arange(lanes, dtype=np.uint64)
    h = (i * np.uint64(2654435761)) & np.uint64(0xFFFFFFFF)
    h ^= h >> np.uint64(15)
    return (h & np.uint64(bins - 1)).astype(np.int64) * 4


def test_sweep_replayed_through_the_device_file():
    """The H100 file's slice figures predict the measured sweep (4M lanes) at the
    footprints that cover 1..80 slices (32..64K bins) within 30 % and with a mean error
    under 12 %, and the one-address times within 8 and 5 %."""
    dev = load_device("h100")
    data = json.loads(UBENCH.read_text())
    clk = data["clock_khz"] * 1e3
    one = data["ops_one_address"]
    assert one * dev.atomic_address_cycles / clk * 1e3 == pytest.approx(
        data["one_address_int_ms"], rel=0.08)
    assert one * dev.atomic_float_cycles / clk * 1e3 == pytest.approx(
        data["one_address_float_ms"], rel=0.05)
    errs = []
    for p in data["sweep"]:
        if p["bins"] > 65536:
            continue
        lanes = 1 << 17
        st = slice_stats(_sweep(lanes, p["bins"]), np.arange(lanes) // 32, dev.slice_map)
        cycles = p["ops"] / 32 * st.requests_per_warp * st.busiest_share
        ms = cycles * dev.atomic_slice_cycles / clk * 1e3
        errs.append(ms / p["ms"] - 1)
    assert len(errs) == 12
    assert max(abs(e) for e in errs) < 0.30, errs
    assert np.mean(np.abs(errs)) < 0.12, errs
