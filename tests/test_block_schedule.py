"""Tests of cgpredict.block_schedule (uneven blocks on more blocks than SMs, eqs. (B3)-(B5)):
hand-derived schedules, a brute-force time-stepped reference, the equal-blocks normalisation,
and the mapping of traced pseudo-threads and trip records onto work blocks."""

from __future__ import annotations

import numpy as np
import pytest

from cgpredict.block import Block
from cgpredict.block_schedule import block_work, makespan, schedule_share, thread_trips
from cgpredict.frontend.tracefile_format import NO_INDEX, TRIP_DTYPE


def test_hand_derived_schedules():
    """One SM, one slot: the blocks one after another. Two SMs of one slot, [3, 1, 1, 1]:
    SM 1 runs the three short blocks while SM 0 runs the long one (3). One SM of two slots,
    [1, 3]: both at half rate until t = 2, then the long block alone (2 left): 4, the
    total (the SM never idles). Two SMs of two slots, [4, 1, 1, 1] (round-robin: SM 0 holds
    4 and 1, SM 1 the two 1s): SM 0's short block leaves at 2, the long one has 3 left: 5."""
    assert makespan(np.array([1.0, 2.0, 3.0]), 1, 1) == pytest.approx(6.0)
    assert makespan(np.array([3.0, 1.0, 1.0, 1.0]), 2, 1) == pytest.approx(3.0)
    assert makespan(np.array([1.0, 3.0]), 1, 2) == pytest.approx(4.0)
    assert makespan(np.array([4.0, 1.0, 1.0, 1.0]), 2, 2) == pytest.approx(5.0)
    assert makespan(np.zeros(0), 4, 2) == 0.0


def _stepped(work: np.ndarray, sms: int, slots: int, dt: float) -> float:
    """A time-stepped reference of eq. (B3): each step every SM's resident blocks get dt
    over their number of work; the blocks done in a step free their slots for the next
    blocks, dealt in turn over the SMs (the first of each SM's, then the second, ...),
    as the first blocks are at the start."""
    left = [[] for _ in range(sms)]  # per SM: [block, remaining]
    nxt = 0
    for _ in range(slots):
        for s in range(sms):
            if nxt < len(work):
                left[s].append(float(work[nxt]))
                nxt += 1
    t = 0.0
    while any(left):
        t += dt
        done = [0] * sms
        for s in range(sms):
            if left[s]:
                share = dt / len(left[s])
                left[s] = [r - share for r in left[s]]
                done[s] = sum(r <= 1e-12 for r in left[s])
                left[s] = [r for r in left[s] if r > 1e-12]
        for turn in range(slots):  # the slots freed in a step: in turn over the SMs (B6t)
            for s in range(sms):
                if done[s] > turn and nxt < len(work):
                    left[s].append(float(work[nxt]))
                    nxt += 1
    return t


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_makespan_matches_a_time_stepped_reference(seed):
    """Random integer works on 3 SMs of 2 slots: the event schedule equals the stepped one
    to within its step (the stepped one may start a block up to a step late)."""
    rng = np.random.default_rng(seed)
    work = rng.integers(1, 9, size=17).astype(np.float64)
    dt = 1.0 / 64
    ref = _stepped(work, 3, 2, dt)
    assert makespan(work, 3, 2) == pytest.approx(ref, abs=len(work) * dt)


def test_share_is_one_for_equal_blocks_and_charges_a_late_heavy_block():
    """Equal blocks: 1 whatever their count (the equal schedule's granularity is not
    charged). 8 blocks on 4 SMs of one slot, the last one 5 times the others: the equal
    schedule ends at 2 x 1.5 (the mean), the uneven one at 1 + 5 = 6: share 6 / 3 = 2."""
    assert schedule_share(np.full(1000, 3.0), 132, 2) == 1.0
    w = np.array([1.0] * 7 + [5.0])
    assert schedule_share(w, 4, 1) == pytest.approx(6.0 / 3.0)
    assert schedule_share(w[::-1], 4, 1) == pytest.approx(5.0 / 3.0)  # heavy first: 5


def test_block_work_sums_each_block_when_the_trace_is_the_work():
    """A 4 x 2 trace of a 4 x 2 grid in 2 x 1 blocks: each block's work is its threads'
    sum (its mean times its 2 threads), in block order x fastest."""
    u = np.arange(8, dtype=np.float64)  # thread y * 4 + x
    got = block_work(u, (4, 2), (4.0, 2.0), Block(2, 1))
    assert got == pytest.approx([0 + 1, 2 + 3, 4 + 5, 6 + 7])


def test_block_work_takes_the_centre_thread_of_a_coarse_trace():
    """A 2 x 2 trace of an 8 x 8 grid in 2 x 2 blocks (16 blocks, 4 threads each): the
    traced threads stand at 2 and 6 along each axis (blocks 1 and 3), so the other blocks
    take the traced thread at their centre: every block its quadrant's thread."""
    u = np.array([1.0, 2.0, 3.0, 4.0])
    got = block_work(u, (2, 2), (8.0, 8.0), Block(2, 2)).reshape(4, 4)
    assert got == pytest.approx(4 * np.array([[1, 1, 2, 2], [1, 1, 2, 2],
                                              [3, 3, 4, 4], [3, 3, 4, 4]], np.float64))


def test_block_work_counts_the_threads_inside_the_grid():
    """A 5-thread 1-D grid in blocks of 4: the last block holds one thread."""
    got = block_work(np.ones(5), (5, 1), (5.0, 1.0), Block(4, 1))
    assert got == pytest.approx([4.0, 1.0])


def test_thread_trips_sum_each_pseudo_threads_records():
    """2-D grid (x = index2, y = index1): two entries of loop 3 for thread (x 1, y 0), one
    for (0, 1); loop 4's records and depth-2 records (index2 NO_INDEX) are left out."""
    t = np.array([(0, 3, 5, 0, 1), (0, 3, 2, 0, 1), (0, 3, 7, 1, 0), (0, 4, 9, 1, 1),
                  (0, 3, 8, 1, NO_INDEX)], TRIP_DTYPE)
    got = thread_trips(t, 2, {3}, (2, 2))
    assert got == pytest.approx([0.0, 7.0, 7.0, 0.0])  # index y * 2 + x
    one_d = np.array([(0, 3, 4, 2, NO_INDEX), (0, 3, 1, 0, NO_INDEX)], TRIP_DTYPE)
    assert thread_trips(one_d, 1, {3}, (3, 1)) == pytest.approx([1.0, 0.0, 4.0])
    assert not thread_trips(t, 0, {3}, (2, 2)).any()


KERNEL = """
#ifndef N
#define N 8192
#endif
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


@pytest.mark.parametrize("trips, uneven", [("(i >= N - N / 16 ? 256 : 1)", True), ("8", False)])
def test_a_traced_kernel_of_uneven_blocks(tmp_path, compiler, trips, uneven):
    """256 blocks of 32 threads on the H100's 132 SMs: the last 16 blocks' threads run 256
    iterations, the others 1; the launch's sm_share is the schedule's (B4), > 1. With every
    thread at 8 iterations the blocks are equal: exactly 1."""
    from cgpredict.api import predict

    src = tmp_path / "k.c"
    src.write_text(KERNEL.replace("TRIPS", trips))
    rep = predict(src, "32x1", "h100")
    share = rep.kernels[0].profile.sm_share
    assert share > 1.05 if uneven else share == 1.0
