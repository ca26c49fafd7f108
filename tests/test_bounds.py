"""Tests of cgpredict.models.bounds: the physical lower bounds no prediction may beat.

Oracles: a profile whose counts are chosen by hand (every bound computed on paper), SAXPY's
compulsory DRAM traffic (x read, y read and written back), and every corpus kernel on every
bundled device predicted no faster than any of its bounds."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from cgpredict.block import Block
from cgpredict.devices import list_devices, load_device
from cgpredict.models import launch_bounds, launch_geometry, predict
from cgpredict.models.bounds import l1_path_cycles, l2_miss_path_cycles
from cgpredict.pipeline import predict_source
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare
from cgpredict.profile import KernelProfile, PatternCounts, SharedMemoryCounts, StoreCounts

POLYBENCH = Path(__file__).resolve().parents[1] / "polybench_c"


def _profile() -> KernelProfile:
    # per thread: 10 coalesced loads (4 sectors each, 1 of them from DRAM), 2 stores (one
    # coalesced full-sector store, one uncoalesced store of 32 partial sectors), 20 compute
    return KernelProfile(
        "hand", threads_per_block=256, blocks=1056,
        coal=PatternCounts(11, 4.0, 10 / 11), uncoal=PatternCounts(1, 32.0, 32.0),
        comp_insts=20, stores=StoreCounts(PatternCounts(1, 4.0, 0.0),
                                          PatternCounts(1, 32.0, 32.0),
                                          write_back_trans=2.0))


def test_bounds_by_hand():
    # without eq. (LW)'s loaded warp life (tests/test_loaded_wave.py): one round trip a wave
    dev = dataclasses.replace(load_device("h100"), dd_store_cycles=2.0,
                              dram_loaded_latency_cycles=0.0, l2_miss_slot_ns=None)
    p = _profile()
    geo = launch_geometry(p, dev)
    b = launch_bounds(p, dev, geo)
    warps = 1056 * 8
    assert geo.total_warps == warps and geo.active_sms == 132
    # DRAM: 10 load instructions x 1 sector + 2 write-backs, 32 B each, per warp; 1056 blocks
    # of 8 warps on 132 SMs holding 8 blocks each are one wave: one round trip of
    # 369.2 + 315.9 cycles (L2 then DRAM, SPEC eq. (2)) before the bytes stream
    assert b.dram_bytes == pytest.approx(warps * 12 * 32)
    assert b.dram_read_bytes == pytest.approx(warps * 10 * 32)  # the loads' 10, eq. (E5b)
    assert b.dram_wave_cycles == pytest.approx(369.2 + 315.9)
    assert b.dram_cycles == pytest.approx(b.dram_bytes / 3097e9 * 1980e6 + 685.1)
    # issue: 12 memory + 20 compute instructions per warp, 0.25 cycles each, over 132 SMs
    assert b.issue_cycles == pytest.approx(warps * 32 * 0.25 / 132)
    # L2: 10 x 4 load sectors at dd_l2 back; stores 4 + 32 sectors out, the strided store's
    # 32 all partly written (4 of each 32 bytes), each partial one twice, at dd_store; the two
    # directions overlap, so the slower one (the stores: 136 > 40 cycles per warp) bounds
    assert b.l2_load_trans == pytest.approx(warps * 40)
    assert b.l2_cycles == pytest.approx(warps * (36 + 32) * 2.0 / 132)
    assert b.binding == "l2" and b.cycles == b.l2_cycles


def test_each_wave_of_blocks_exposes_one_dram_round_trip():
    """4.5 waves of blocks (4752 blocks, 1056 resident) start 5 times: 5 round trips; a
    profile whose loads all hit the L2 waits for no DRAM round trip, however many waves
    (a device without eq. (LW)'s loaded warp life, tests/test_loaded_wave.py)."""
    dev = dataclasses.replace(load_device("h100"), dram_loaded_latency_cycles=0.0)
    p = dataclasses.replace(_profile(), blocks=4752)
    geo = launch_geometry(p, dev)
    b = launch_bounds(p, dev, geo)
    assert geo.waves == pytest.approx(4.5)
    trip = dev.l2_latency_cycles + dev.dram_latency_cycles
    assert b.dram_wave_cycles == pytest.approx(5 * trip)
    assert b.dram_cycles == pytest.approx(b.dram_bytes / 3097e9 * 1980e6 + b.dram_wave_cycles)
    hits = dataclasses.replace(p, coal=PatternCounts(11, 4.0, 0.0),
                               uncoal=PatternCounts(1, 32.0, 0.0))
    assert launch_bounds(hits, dev, geo).dram_wave_cycles == 0.0


def test_l2_bound_is_the_slower_direction():
    # loads at 4 cycles per sector: 160 cycles per warp back, 136 out: the loads bound
    dev = dataclasses.replace(load_device("h100"), dd_store_cycles=2.0, dd_l2_cycles=4.0)
    p = _profile()
    b = launch_bounds(p, dev, launch_geometry(p, dev))
    assert b.l2_cycles == pytest.approx(1056 * 8 * 40 * 4.0 / 132)


def test_prediction_is_floored_by_the_bounds_without_its_launch():
    """The model's time is the GPU's work alone: the launch stream is added per kernel
    (models/launches.py), so a launch cost in the device file does not change it."""
    dev = dataclasses.replace(load_device("h100"), dd_store_cycles=50.0, launch_sync_us=5.0)
    r = predict(_profile(), dev)
    assert r.binding == "l2" and r.bound == "memory"
    assert r.cycles == pytest.approx(r.bounds.l2_cycles)
    assert r.model_cycles < r.cycles
    assert r.time_ms == pytest.approx(dev.cycles_to_ms(r.cycles))


SAXPY = r"""
#include <stdio.h>
#ifndef N
#define N 16777216
#endif
#pragma cgp trace N=65536
static float x[N], y[N];
int main(void) {
  for (int i = 0; i < N; i++) { x[i] = i % 7; y[i] = i % 5; }
#pragma cgp kernel saxpy
  for (int i = 0; i < N; i++)
    y[i] = 2.0f * x[i] + y[i];
  printf("%f\n", y[N / 2]);
  return 0;
}
"""


def test_saxpy_pays_its_compulsory_dram_traffic(tmp_path):
    """2^24 floats: x and y read (2 x 64 MiB) and y written back (64 MiB): 201 MB at the
    H100's measured 3097 GB/s is 65 us, which the prediction may not beat."""
    src = tmp_path / "saxpy.c"
    src.write_text(SAXPY)
    rep = predict_source(src, RunOptions(device="h100", port="restrict"))
    (k,) = rep.kernels
    b = k.result.bounds
    compulsory = 3 * 4 * 2**24
    assert b.dram_bytes == pytest.approx(compulsory, rel=0.02)
    assert k.time_ms >= compulsory / 3097e9 * 1e3


def test_block_dispatch_is_blocks_times_the_distributor_gap_by_hand():
    """Eq. (BD): 524288 blocks started 1.24 cycles apart chip-wide take 650117 cycles,
    whatever the block's size (the same blocks of 128 threads, four times the threads, the
    same bound); 16384 blocks of 1024 threads 20316; a device without the field none."""
    dev = load_device("h100")
    small = dataclasses.replace(_profile(), threads_per_block=32, blocks=524288)
    wide = dataclasses.replace(small, threads_per_block=128)
    for p in (small, wide):
        b = launch_bounds(p, dev, launch_geometry(p, dev))
        assert b.dispatch_cycles == pytest.approx(524288 * 1.24)
    few = dataclasses.replace(_profile(), threads_per_block=1024, blocks=16384)
    assert launch_bounds(few, dev, launch_geometry(few, dev)).dispatch_cycles == pytest.approx(
        16384 * 1.24)
    tk1 = load_device("tk1")
    assert launch_bounds(small, tk1, launch_geometry(small, tk1)).dispatch_cycles == 0.0


def test_saxpy_in_32_thread_blocks_is_bound_by_their_dispatch(tmp_path):
    """SAXPY at 2^24 in 32-thread blocks: 524288 blocks, 1.24 cycles each at 1980 MHz is
    0.3283 ms, above its DRAM bound (201 MB: 65 us plus (LW)); the H100 measured 0.3548 ms
    with 22.4 us of launch costs (user-blocks file). In 256-thread blocks (65536) the bound
    is 41.0 us and the DRAM traffic binds."""
    src = tmp_path / "saxpy.c"
    src.write_text(SAXPY)
    rep = predict_source(src, RunOptions(device="h100", port="restrict",
                                         block=Block.parse("32x1")))
    (k,) = rep.kernels
    assert k.result.binding == "dispatch" and k.result.bound == "launch"
    assert k.result.cycles == pytest.approx(524288 * 1.24)
    rep = predict_source(src, RunOptions(device="h100", port="restrict"))
    (k,) = rep.kernels
    assert k.result.bounds.dispatch_cycles == pytest.approx(65536 * 1.24)
    assert k.result.binding != "dispatch"


def _corpus_sizes(path: Path) -> dict[str, int]:
    """The file's trace sizes, capped at 32 (a multiple of every tile): small, fast traces."""
    m = re.search(r"#pragma cgp trace (.*)", path.read_text())
    return {k: min(int(v), 32) for k, v in (item.split("=") for item in m.group(1).split())}


@pytest.mark.parametrize("path", sorted(POLYBENCH.glob("*.c")), ids=lambda p: p.stem)
def test_no_corpus_prediction_beats_a_bound(path):
    sizes = _corpus_sizes(path)
    opts = RunOptions(work_sizes=sizes, trace_sizes=sizes)
    with prepare(path, opts) as prep:
        for name in list_devices():
            dev = load_device(name)
            for k in prep.analyze(dataclasses.replace(opts, device=name), dev).kernels:
                for prof, _ in k.launch_profiles:
                    r = predict(prof, dev)
                    b = launch_bounds(prof, dev, launch_geometry(prof, dev))
                    for bound in (b.dram_cycles, b.issue_cycles, b.l2_cycles):
                        assert r.cycles >= bound * (1 - 1e-9), (name, k.name)


def test_partial_sectors_by_pattern():
    """A warp writes 32 x 4 B = 128 B = 4 sectors' worth. Contiguous over 5 sectors (not
    aligned): 4 full, 1 partial. Strided over 32 sectors: each holds one 4-byte word, all 32
    partial. All lanes on one word: its one sector is partial."""
    st = StoreCounts(PatternCounts(2, 5.0, 0.0), PatternCounts(3, 32.0, 0.0),
                     PatternCounts(5, 1.0, 0.0))
    assert st.partial_sectors(128, 32) == pytest.approx(2 * 1 + 3 * 32 + 5 * 1)


def test_partial_sectors_held_in_l2_need_no_read():
    """An array of 24-byte structs updated in place (x += vx * dt): the warp's loads bring its
    24 sectors (32 lanes x 24 B = 768 B) into the L2, so its store of x, which writes 4 bytes
    in each of those 24 sectors, merges into valid copies: none is read-modify-write. With
    half of them not held (fresh share 0.5), 12 are; a misaligned coalesced store's one
    partial sector (5 sectors, 4 full) counts as far as it is fresh."""
    aos = PatternCounts(1, 24.0, 0.0)
    assert StoreCounts(uncoal=aos, fresh=(1.0, 0.0, 1.0)).partial_sectors(128, 32) == 0.0
    half = StoreCounts(uncoal=aos, fresh=(1.0, 0.5, 1.0))
    assert half.partial_sectors(128, 32) == pytest.approx(12.0)
    shifted = StoreCounts(PatternCounts(2, 5.0, 0.0), fresh=(0.25, 1.0, 1.0))
    assert shifted.partial_sectors(128, 32) == pytest.approx(2 * 1 * 0.25)


def test_l1_path_counts_every_global_line_by_hand():
    """Eq. (B2): per warp 2 coalesced loads of 4 sectors (one 128-B line each), 2
    uncoalesced loads of 32 sectors (a line each: 64) and 1 broadcast (1 line), L1 hits or
    not: 67 lines at l1_line_cycles; and 1 uncoalesced store of 32 sectors, 32 lines at the
    SM's store cost dd_store_cycles; on each of the 4 SMs' 8 warps. A device whose L1 does
    not cache global loads (the TK1) has no such bound."""
    p = KernelProfile("lines", threads_per_block=256, blocks=4,
                      coal=PatternCounts(2, 4.0, 0.0, 0.9), uncoal=PatternCounts(3, 32.0, 0.0),
                      const=PatternCounts(1, 1.0, 0.0), comp_insts=4,
                      stores=StoreCounts(uncoal=PatternCounts(1, 32.0, 0.0)))
    dev = dataclasses.replace(load_device("h100"), l1_line_cycles=1.5, dd_store_cycles=2.0,
                              l1_request_cycles=0.0, l1_store_line_cycles=None)
    geo = launch_geometry(p, dev)
    assert geo.active_sms == 4
    assert launch_bounds(p, dev, geo).l1_cycles == pytest.approx(32 * (67 * 1.5 + 32 * 2.0) / 4)
    tk1 = load_device("tk1")
    assert launch_bounds(p, tk1, launch_geometry(p, tk1)).l1_cycles == 0.0


def test_l1_path_store_lines_take_the_look_up_and_then_the_way_out_by_hand():
    """Eqs. (B2), (B2s): a row walk's store lines cost the L1's look-up
    (l1_store_line_cycles 1.7) beside its load lines, and their data's way out to the L2
    (dd_store_cycles 2.25 a line) on its own; the slower binds. Deriche's backward pass (32
    load and 32 store lines a warp-iteration): 32 + 32 x 1.7 = 86.4 against 32 x 2.25 = 72,
    the look-ups; corr_corr's (2 and 32): 56.4 against 72, the way out (a profile's patterns
    hold its stores too: loads_only takes them out). Unset, the look-up
    costs dd_store_cycles, and (B2s) never binds (the sum of eq. (B2) as before)."""
    walk = KernelProfile("walk", threads_per_block=256, blocks=4,
                         uncoal=PatternCounts(2, 32.0, 0.0), comp_insts=8,
                         stores=StoreCounts(uncoal=PatternCounts(1, 32.0, 0.0)))
    corr = KernelProfile("corr", threads_per_block=256, blocks=4,
                         coal=PatternCounts(1, 4.0, 0.0, 0.97), const=PatternCounts(1, 1.0, 0.0),
                         uncoal=PatternCounts(1, 32.0, 0.0), comp_insts=8,
                         stores=StoreCounts(uncoal=PatternCounts(1, 32.0, 0.0)))
    dev = dataclasses.replace(load_device("h100"), l1_line_cycles=1.0, dd_store_cycles=2.25,
                              l1_request_cycles=0.0, l1_store_line_cycles=1.7)
    geo = launch_geometry(walk, dev)
    assert launch_bounds(walk, dev, geo).l1_cycles == pytest.approx(32 * 86.4 / 4)
    assert launch_bounds(corr, dev, geo).l1_cycles == pytest.approx(32 * 72.0 / 4)
    unset = dataclasses.replace(dev, l1_store_line_cycles=None)
    assert unset.l1_store_cycles == unset.store_cycles == 2.25
    assert launch_bounds(walk, unset, geo).l1_cycles == pytest.approx(32 * (32 + 72.0) / 4)
    assert launch_bounds(corr, unset, geo).l1_cycles == pytest.approx(32 * (2 + 72.0) / 4)


def test_l1_path_adds_its_requests_to_its_lines_by_hand():
    """Eq. (B2r): per warp 64 broadcast loads and 64 coalesced loads of one line each (a
    naive GEMM's A[i][k] and B[k][j]) and 1 coalesced store (4 sectors, one line): 128 load
    lines at 1 cycle and the store line at dd_store_cycles 2 (130), plus 129 requests at
    l1_request_cycles 0.23 (29.67): 159.67 (the profile's coalesced pattern holds the store
    too: 65). A row walk (2 uncoalesced loads of 32 lines): 64 + 2 x 0.23 = 64.46. At 0 the
    lines alone. Four SMs, 8 warps each."""
    gemm = KernelProfile("gemm", threads_per_block=256, blocks=4,
                         coal=PatternCounts(65, 4.0, 0.0, 0.97), const=PatternCounts(64, 1.0, 0.0),
                         comp_insts=64, stores=StoreCounts(PatternCounts(1, 4.0, 0.0)))
    rows = KernelProfile("rows", threads_per_block=256, blocks=4,
                         uncoal=PatternCounts(2, 32.0, 0.0), comp_insts=4)
    dev = dataclasses.replace(load_device("h100"), l1_line_cycles=1.0, dd_store_cycles=2.0,
                              l1_request_cycles=0.23, l1_store_line_cycles=None)
    geo = launch_geometry(gemm, dev)
    assert launch_bounds(gemm, dev, geo).l1_cycles == pytest.approx(32 * (130 + 129 * 0.23) / 4)
    off = dataclasses.replace(dev, l1_request_cycles=0.0)
    assert launch_bounds(gemm, off, geo).l1_cycles == pytest.approx(32 * 130 / 4)
    assert launch_bounds(rows, dev, geo).l1_cycles == pytest.approx(32 * 64.46 / 4)


def _serial_l1_makespan(lines: list[int], request: float, line: float) -> float:
    """Brute force: requests queued at time 0 pass one L1, in order, each holding it for a
    fixed ``request`` and ``line`` a line; the time the last one leaves."""
    t = 0.0
    for n in lines:
        t += request
        for _ in range(n):
            t += line
    return t


def test_b2r_is_a_brute_force_serial_l1():
    """Oracle for eq. (B2r): an L1 that holds each request for its cost and its lines (the
    counters' reading, validation/l1_request_counters.py) over random streams of one-line and
    32-line requests (a GEMM's loads mixed with a row walk's) takes requests x request +
    lines x line, which l1_path_cycles gives for the same stream as a profile."""
    import random

    rng = random.Random(24)
    for _ in range(20):
        share = rng.random()
        stream = [32 if rng.random() < share * 0.1 else 1 for _ in range(400)]
        request, line = rng.uniform(0.0, 1.0), rng.uniform(0.5, 2.0)
        walks = sum(1 for n in stream if n == 32)
        prof = KernelProfile("mix", threads_per_block=32, blocks=1, comp_insts=1,
                             coal=PatternCounts(len(stream) - walks, 4.0, 0.0),
                             uncoal=PatternCounts(walks, 32.0, 0.0))
        dev = dataclasses.replace(load_device("h100"), l1_line_cycles=line,
                                  l1_request_cycles=request)
        sim = _serial_l1_makespan(stream, request, line)
        assert l1_path_cycles(prof, dev) == pytest.approx(sim)


def test_staging_loads_count_in_the_l2_and_dram_bounds():
    """Issue 24: a tiled kernel's staging loads (global -> shared) read the L2 and DRAM like
    any load. The hand profile plus 64 staging sectors a warp at the L2, 8 of them from DRAM:
    the L2 load direction carries 40 + 64 sectors a warp, DRAM 12 + 8 sectors."""
    dev = dataclasses.replace(load_device("h100"), dd_store_cycles=2.0)
    plain = _profile()
    tiled = dataclasses.replace(plain, shared=SharedMemoryCounts(
        load_insts=16.0, load_l2_trans=64.0, load_dram_trans=8.0))
    geo = launch_geometry(tiled, dev)
    b0, b = launch_bounds(plain, dev, geo), launch_bounds(tiled, dev, geo)
    warps = 1056 * 8
    assert b0.l2_load_trans == pytest.approx(warps * 40)
    assert b.l2_load_trans == pytest.approx(warps * (40 + 64))
    assert b.dram_bytes == pytest.approx(warps * (12 + 8) * 32)
    # the two directions: the loads' 104 sectors at dd_l2_cycles (1 on the H100) against the
    # stores' 68 sector times at 2 cycles (136): the stores still bound
    assert b.l2_cycles == pytest.approx(warps * 136 / 132)
    assert b.l2_cycles == pytest.approx(
        warps * max(104 * dev.dd_l2_cycles, 68 * 2.0) / 132)


def test_block_dispatch_bound_by_hand():
    """Eq. (BD): blocks started one after another, chip-wide: 2^24 threads in 32-thread
    blocks are 524288 blocks, at 1.25 cycles each 655360 cycles, whatever the SMs do; in
    256-thread blocks an eighth of that. 0 on a device without the field (no bound)."""
    dev = dataclasses.replace(load_device("h100"), block_dispatch_cycles=1.25)
    for tpb, blocks in ((32, 524288), (256, 65536)):
        p = KernelProfile("tiny", threads_per_block=tpb, blocks=blocks,
                          coal=PatternCounts(1, 4.0, 0.0), comp_insts=2)
        b = launch_bounds(p, dev, launch_geometry(p, dev))
        assert b.blocks == blocks
        assert b.dispatch_cycles == pytest.approx(blocks * 1.25)
    p = KernelProfile("tiny", threads_per_block=32, blocks=524288,
                      coal=PatternCounts(1, 4.0, 0.0), comp_insts=2)
    b = launch_bounds(p, dev, launch_geometry(p, dev))
    assert b.binding == "dispatch"
    r = predict(p, dev)
    assert r.binding == "dispatch" and r.bound == "launch"
    assert r.cycles == pytest.approx(524288 * 1.25)
    off = dataclasses.replace(dev, block_dispatch_cycles=0.0)
    assert launch_bounds(p, off, launch_geometry(p, off)).dispatch_cycles == 0.0


def test_l2_miss_path_by_hand():
    """Eq. (LM): a slot a load request that misses the L2, a slot a 64-B block crossing the
    two partitions, 1.379 ns a slot on each of 80 slices (the H100's sustained reading),
    turned into 1980-MHz SM cycles."""
    dev = dataclasses.replace(load_device("h100"), dram_loaded_latency_cycles=0.0)
    # per warp: a coalesced load of 4 sectors in one line, all missing (fetches 4); a
    # gather of 32 lanes on 32 lines, 24 sectors missing (each fetches its 64-B pair: 48);
    # a coalesced store of 4 sectors (the coalesced counts hold the load and the store)
    p = KernelProfile(
        "gather", threads_per_block=256, blocks=1056,
        coal=PatternCounts(2, 4.0, 2.0, sectors_per_warp=4.0, l2_requests_per_warp=1.0,
                           dram_fetch_per_warp=2.0),
        uncoal=PatternCounts(1, 32.0, 24.0, sectors_per_warp=32.0, l2_requests_per_warp=32.0,
                             dram_fetch_per_warp=48.0),
        comp_insts=10,
        stores=StoreCounts(PatternCounts(1, 4.0, 0.0, sectors_per_warp=4.0,
                                         l2_requests_per_warp=1.0), write_back_trans=4.0))
    # missed requests 4 x 1/4 + 24 = 25; crossing (2 - 1) / 2 x (4 + 48 fetched + 4 stored)
    # / 2 sectors a block = 14: 39 slots a warp
    per_warp = 39 * 1.379e-9 * 1980e6 / 80
    fetched = 4 + 48
    assert l2_miss_path_cycles(p, dev, fetched) == pytest.approx(per_warp)
    b = launch_bounds(p, dev, launch_geometry(p, dev))
    assert b.l2_cycles == pytest.approx(1056 * 8 * per_warp)  # the slower L2 throughput
    # the same requests feed the look-up stage (B2q): the load's 1 (the store taken out) and
    # the gather's 32 a warp, under (LM) here
    assert b.l2_requests == pytest.approx(1056 * 8 * 33)
    assert 1056 * 8 * 33 * dev.l2_request_cycles / 132 < b.l2_cycles
    # a device without the figure (the TK1, one L2 partition) has no such bound
    assert l2_miss_path_cycles(p, load_device("tk1"), fetched) == 0.0
    assert l2_miss_path_cycles(p, dataclasses.replace(dev, l2_miss_slot_ns=None), fetched) == 0


def test_whole_block_share_is_the_equal_schedule_by_brute_force():
    """Eq. (B1g): equal blocks dispatched whole leave the busiest SM ceil(n / S) of them. The
    reference is (B3)'s block scheduler itself (block_schedule.makespan: each block one unit
    of an SM's work, the SM's resident blocks sharing its rate, the next block taking a
    freed slot), whose makespan over the fluid n / S is the share."""
    import numpy as np

    from cgpredict.block_schedule import makespan
    from cgpredict.models.bounds import whole_block_share

    for n, sms, slots in ((4096, 132, 8), (1024, 132, 2), (16384, 132, 8), (300, 132, 4),
                          (1056, 132, 8), (64, 132, 8), (133, 132, 1)):
        brute = makespan(np.ones(n), sms, slots) / (n / min(sms, n))
        assert whole_block_share(n, min(sms, n)) == pytest.approx(brute), (n, sms, slots)
    # by hand: 4096 blocks on 132 SMs, 31.03 a SM, the busiest 32; a whole wave, 1
    assert whole_block_share(4096, 132) == pytest.approx(32 / (4096 / 132))
    assert whole_block_share(1056, 132) == 1.0 and whole_block_share(64, 64) == 1.0


def test_whole_blocks_price_the_busiest_sm_on_the_store_path():
    """Eq. (B1g) on a launch: 4096 blocks of the hand profile on 132 SMs take the issue (per
    SM) bound 32 / 31.03 times that of 4096 / 132 blocks; the store path (chip-wide) takes
    (B1g) within one wave (300 blocks: 3 on the busiest SM of 2.27) and (B1t) beyond it."""
    dev = dataclasses.replace(load_device("h100"), dd_store_cycles=2.0)
    p = dataclasses.replace(_profile(), blocks=4096)
    b = launch_bounds(p, dev, launch_geometry(p, dev))
    warps = 4096 * 8
    whole = 32 / (4096 / 132)
    assert b.issue_cycles == pytest.approx(warps * 32 * 0.25 / 132 * whole)
    # 3.88 waves; the hand profile has no chain: its blocks would end at once alone, the
    # L2 hands them every freed slot's share and the end is the fluid one, eq. (B1t)
    assert b.l2_cycles == pytest.approx(warps * (36 + 32) * 2.0 / 132)
    p = dataclasses.replace(_profile(), blocks=300)
    b = launch_bounds(p, dev, launch_geometry(p, dev))
    assert b.l2_cycles == pytest.approx(300 * 8 * (36 + 32) * 2.0 / 132 * 3 / (300 / 132))


def _brute_ragged_end(slots: int, life: float, alone: float) -> float:
    """The end of ``slots`` blocks left a uniform fraction (i + 0.5) / slots to run when the
    supply stops, event by event: the L2 serves slots / life blocks a cycle among the busy
    slots, none faster than 1 / alone; returns the end past the fluid one (their work at the
    full rate)."""
    left = sorted((i + 0.5) / slots for i in range(slots))
    rate = slots / life
    t = done = 0.0
    for k, r in enumerate(left):
        busy = slots - k
        speed = min(1.0 / alone, rate / busy)
        t += (r - done) / speed
        done = r
    return t - sum(left) / rate


def test_ragged_end_is_a_brute_force_tail():
    """Eq. (B1t): out-of-phase slots ending at the L2's rate, each capped at its own pace
    alone, end rho^2 / 2 of a block life past the fluid time, against the event-by-event
    schedule; 0 within one wave, half a life when the blocks are as slow alone (rho 1)."""
    from cgpredict.models.bounds import ragged_end_cycles

    life, waves = 590_000.0, 3.88
    for rho in (0.2, 0.5, 0.69, 0.9, 1.0):
        brute = _brute_ragged_end(4000, life, rho * life)
        got = ragged_end_cycles(life * waves, rho * life, waves)
        assert got == pytest.approx(brute, rel=2e-3, abs=life * 1e-3), rho
        assert got == pytest.approx(rho * rho * life / 2)
    # GEMM 1024 at 32x8 by hand: alone 407,014 of a 589,866-cycle life: 0.238 of a life
    assert ragged_end_cycles(2_288_000, 407_014, 3.878788) / (2_288_000 / 3.878788) == \
        pytest.approx(0.5 * (407_014 / (2_288_000 / 3.878788)) ** 2)
    assert ragged_end_cycles(1e6, 2e6, 4.0) == pytest.approx(1e6 / 4 / 2)  # rho at most 1
    assert ragged_end_cycles(1e6, 5e5, 1.0) == 0.0 and ragged_end_cycles(0.0, 5e5, 3.0) == 0.0
