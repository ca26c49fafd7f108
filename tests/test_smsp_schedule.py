"""Tests of cgpredict.smsp_schedule (uneven warps on an SM's sub-partitions, eqs. (B6)-(B7)):
hand-derived schedules, the busiest scheduler's sum by brute force over the warp placement,
(B3) as the special case of alike warps, a time-stepped reference with the chain cap, the
slots freed at one instant dealt in turn (B6t), the equal warps' waves (B7e) against the event
loop, and the mapping of traced pseudo-threads onto work warps."""

from __future__ import annotations

import numpy as np
import pytest

from cgpredict import smsp_schedule
from cgpredict.block import Block
from cgpredict.block_schedule import makespan
from cgpredict.smsp_schedule import (
    even_makespan,
    warp_makespan,
    warp_residency,
    warp_share,
    warp_work,
)


def test_hand_derived_schedules():
    """One SM of one slot and 4 schedulers, one block of warps [1, 2, 3, 4]: one warp a
    scheduler, the block ends with its slowest warp, 4. Two such blocks in turn: the
    second starts at 4 and ends at 8. Two warps on one scheduler (one scheduler), [1, 3]:
    both at half rate to 2, then the long one alone: 4. With cap 0.5 the lone warp runs at
    half rate: 2 + 2 / 0.5 = 6."""
    assert warp_makespan(np.array([[1.0, 2.0, 3.0, 4.0]]), 1, 1, 4) == pytest.approx(4.0)
    assert warp_makespan(np.array([[1.0, 2, 3, 4], [4, 3, 2, 1]]), 1, 1, 4) == pytest.approx(8.0)
    assert warp_makespan(np.array([[1.0, 3.0]]), 1, 1, 1) == pytest.approx(4.0)
    assert warp_makespan(np.array([[1.0, 3.0]]), 1, 1, 1, cap=0.5) == pytest.approx(6.0)
    assert warp_makespan(np.zeros((0, 4)), 2, 2, 4) == 0.0


@pytest.mark.parametrize("seed", range(4))
def test_one_wave_is_the_busiest_schedulers_sum(seed):
    """Every block resident from the start (blocks <= sms x slots), no cap: each scheduler
    works without idling until its warps are done, so the makespan is the largest sum of
    the warps placed on one scheduler: brute force over the placement rule (block i in
    slot i // sms of SM i mod sms, its warp w on scheduler (slot x W + w) mod 4)."""
    rng = np.random.default_rng(seed)
    sms, slots, wpb = 3, 2, int(rng.choice([1, 2, 3, 6, 8]))
    blocks = int(rng.integers(1, sms * slots + 1))
    work = rng.integers(1, 20, size=(blocks, wpb)).astype(np.float64)
    sums = np.zeros((sms, 4))
    for i in range(blocks):
        s, k = i % sms, i // sms
        for w in range(wpb):
            sums[s, (k * wpb + w) % 4] += work[i, w]
    assert warp_makespan(work, sms, slots, 4) == pytest.approx(sums.max())


@pytest.mark.parametrize("seed", range(3))
def test_alike_warps_give_the_block_schedule(seed):
    """Warps alike within each block and W a multiple of the schedulers: each scheduler
    holds W / 4 warps of every resident block, so (B6) is (B3) on the block sums over the
    SM's 4 issues a cycle."""
    rng = np.random.default_rng(seed)
    per = rng.integers(1, 9, size=23).astype(np.float64)
    work = np.repeat(per[:, None], 8, axis=1)
    assert warp_makespan(work, 3, 2, 4) == pytest.approx(makespan(per * 8 / 4, 3, 2))


def _stepped(work: np.ndarray, sms: int, slots: int, nsp: int, cap: float, dt: float) -> float:
    """A time-stepped reference of eq. (B6): each step every scheduler's live warps get
    min(cap, 1 / live) x dt; a block whose warps are all done frees its slot for the next."""
    nb, wpb = work.shape
    live: dict[int, list] = {}  # block -> its warps' remaining work
    slot_of: dict[int, tuple[int, int]] = {}
    nxt = 0
    for k in range(slots):
        for s in range(sms):
            if nxt < nb:
                live[nxt], slot_of[nxt] = list(work[nxt]), (s, k)
                nxt += 1
    t = 0.0
    while live:
        t += dt
        count: dict[tuple[int, int], int] = {}
        for b, rem in live.items():
            s, k = slot_of[b]
            for w, r in enumerate(rem):
                if r > 1e-12:
                    key = (s, (k * wpb + w) % nsp)
                    count[key] = count.get(key, 0) + 1
        for b, rem in list(live.items()):
            s, k = slot_of[b]
            for w, r in enumerate(rem):
                if r > 1e-12:
                    rem[w] = r - min(cap, 1.0 / count[(s, (k * wpb + w) % nsp)]) * dt
            if all(r <= 1e-12 for r in rem):
                del live[b]
                if nxt < nb:
                    live[nxt], slot_of[nxt] = list(work[nxt]), (s, k)
                    nxt += 1
    return t


@pytest.mark.parametrize("seed, cap", [(0, 1.0), (1, 0.5), (2, 0.3)])
def test_makespan_matches_a_time_stepped_reference(seed, cap):
    """Random integer warps, 2 SMs of 2 slots, blocks of 3 warps on 2 schedulers (a
    scheduler holding warps of two blocks, slots turning over): the event schedule equals
    the stepped one within its steps."""
    rng = np.random.default_rng(seed)
    work = rng.integers(1, 7, size=(11, 3)).astype(np.float64)
    dt = 1.0 / 64
    ref = _stepped(work, 2, 2, 2, cap, dt)
    assert warp_makespan(work, 2, 2, 2, cap) == pytest.approx(ref, abs=work.size * dt / cap)


@pytest.mark.parametrize("seed", range(3))
def test_the_tournament_tree_is_the_argmin_of_the_due_events(seed):
    """The event loop finds its next scheduler at the tree's root, updated on one leaf's
    path at each change: after every change of random due times, many of them equal or
    infinite, the root is np.argmin's choice (the lowest index on a tie), so the schedule
    is the one the scan over every scheduler gave, event for event."""
    rng = np.random.default_rng(seed)
    total = int(rng.integers(1, 40))
    size = 1 << max(total - 1, 0).bit_length()
    due, tree = np.full(size, np.inf), np.zeros(2 * size, np.int64)
    tree[size:] = np.arange(size)
    for i in range(size - 1, 0, -1):
        tree[i] = tree[2 * i]
    for _ in range(300):
        p = int(rng.integers(total))
        v = np.inf if rng.random() < 0.2 else float(rng.integers(0, 6))
        smsp_schedule._due(due, tree, p, v)
        assert tree[1] == np.argmin(due[:total])


def test_the_scheduled_warps_at_scale_by_hand():
    """2,048 blocks of 8 warps on 4 SMs of 2 slots and 4 schedulers, block warp w of work
    w + 1: slot k's warp w sits on scheduler (8 k + w) mod 4 = w mod 4, so scheduler p
    holds warps p and p + 4 of every block, (p + 1) + (p + 5) = 2 p + 6 a block. Scheduler
    3, 12 a block, always holds warps of both slots and never idles, so the launch ends
    with its 512 blocks' 6,144; the tree's event loop finds it exactly."""
    work = np.tile(np.arange(1.0, 9.0), (2048, 1))
    assert warp_makespan(work, 4, 2, 4) == 512 * 12.0


def test_live_warps_a_scheduler_by_hand():
    """One SM of one slot: a block of warps [1, 2, 3, 4] on 4 schedulers holds one warp on
    each while it is busy: 1.0. Warps [1, 3] on one scheduler: 2 warps for 2, then 1 for 2:
    (2 x 2 + 1 x 2) / 4 = 1.5, the makespan 4 as warp_makespan's."""
    assert warp_residency(np.array([[1.0, 2.0, 3.0, 4.0]]), 1, 1, 4) == pytest.approx((4.0, 1.0))
    assert warp_residency(np.array([[1.0, 3.0]]), 1, 1, 1) == pytest.approx((4.0, 1.5))


def test_slots_freed_at_one_instant_are_dealt_in_turn_over_the_sms():
    """(B6t) by hand: 2 SMs of 2 slots, six blocks of one warp of 1 on one scheduler. Blocks
    0-3 share the SMs two by two and all end at 2; blocks 4 and 5 go one to each SM (in
    turn, as the first four were dealt), alone at the SM's rate: 3. Handing both to the
    first SM, whose event comes first, would end at 4."""
    assert warp_makespan(np.ones((6, 1)), 2, 2, 1) == pytest.approx(3.0)
    assert makespan(np.ones(6), 2, 2) == pytest.approx(3.0)


@pytest.mark.parametrize("blocks, warps, slots, schedulers, cap", [
    (16384, 8, 8, 4, 1.0), (4096, 32, 2, 4, 1.0), (1000, 3, 3, 4, 1.0), (1000, 3, 3, 4, 0.3),
    (264, 4, 2, 4, 0.3), (500, 1, 7, 1, 1.0), (131, 6, 5, 4, 0.5)])
def test_the_even_makespan_is_the_event_loop_on_equal_warps(blocks, warps, slots,
                                                           schedulers, cap):
    """(B7e)'s waves against (B6)'s event loop on equal warps of 2.5 (132 SMs); the dealt
    last wave by hand: 16,384 blocks of 8 warps at 8 slots are 125 blocks on the busiest
    SM, 15 waves of 16 warps a scheduler and one of 10: 250 warps of 2.5."""
    got = even_makespan(blocks, warps, 2.5, 132, slots, schedulers, cap)
    assert got == pytest.approx(warp_makespan(np.full((blocks, warps), 2.5), 132, slots,
                                              schedulers, cap))
    if (blocks, slots, cap) == (16384, 8, 1.0):
        assert got == pytest.approx(250 * 2.5)


def test_share_is_one_for_equal_warps_and_charges_a_scheduler_of_heavy_warps():
    """Equal warps: 1. One SM, one slot, blocks of 4 warps on 4 schedulers, two blocks
    [[4, 1, 1, 1], [4, 1, 1, 1]]: each block lasts its heavy warp, 8 in all; equal warps of
    the mean (7 / 4) take 2 x 7 / 4 = 3.5: share 8 / 3.5."""
    assert warp_share(np.full((100, 8), 3.0), 132, 8, 4) == 1.0
    w = np.array([[4.0, 1, 1, 1], [4.0, 1, 1, 1]])
    assert warp_share(w, 1, 1, 4) == pytest.approx(8.0 / 3.5)


def test_warp_work_takes_each_warps_slowest_lane():
    """A 4 x 2 trace of a 4 x 2 grid in 4 x 2 blocks and warps of 2 lanes: the warps are
    the pairs (0, 1), (2, 3), (4, 5), (6, 7) of the block, x fastest; each weighs its larger
    lane. A 1-D grid of 5 in blocks of 4 (warps of 2): the last block's lanes outside the
    grid weigh 0."""
    u = np.array([1.0, 5.0, 2.0, 2.0, 7.0, 3.0, 0.5, 4.0])
    got = warp_work(u, (4, 2), (4, 2), Block(4, 2), 2)
    assert np.allclose(got, [[5.0, 2.0, 7.0, 4.0]])
    one = warp_work(np.arange(1.0, 6.0), (5, 1), (5, 1), Block(4, 1), 2)
    assert np.allclose(one, [[2.0, 4.0], [5.0, 0.0]])


def test_warp_work_of_a_coarse_trace_takes_the_thread_at_each_lanes_position():
    """A 2 x 1 trace of an 8 x 1 grid in blocks of 4 and warps of 2: lanes 0-3 stand at
    traced thread 0, 4-7 at thread 1."""
    got = warp_work(np.array([1.0, 3.0]), (2, 1), (8, 1), Block(4, 1), 2)
    assert np.allclose(got, [[1.0, 1.0], [3.0, 3.0]])


KERNEL = """
#ifndef N
#define N 33792
#endif
#pragma cgp trace N=33792
static float a[N];
int main(void) {
#pragma cgp kernel
  for (int i = 0; i < N; i++) {
    float s = 0.0f;
    for (int j = 0; j < TRIPS; j++)
      s += (float)j;
    a[i] = s;
  }
  return a[0] < 0.0f;
}
"""


def test_a_traced_kernel_whose_blocks_are_alike_and_warps_are_not(tmp_path, compiler):
    """264 blocks of 128 threads (4 warps) on the H100's 132 SMs, traced at the work size:
    the first warp of every block runs 64 iterations a thread, the other three one. Every
    block does the same work, so eq. (B4) is 1; but warp 0 of each block sits on scheduler
    0 (2 blocks an SM, slot k's warp w on scheduler (4k + w) mod 4), so that scheduler holds
    nearly all the work: (B7) is about the heavy warp over the mean warp, 4h / (h + 3l),
    3.66 here, well above 2."""
    from cgpredict.api import predict

    src = tmp_path / "k.c"
    src.write_text(KERNEL.replace("TRIPS", "(i % 128 < 32 ? 64 : 1)"))
    share = predict(src, "128x1", "h100").kernels[0].profile.sm_share
    assert share > 2.0
