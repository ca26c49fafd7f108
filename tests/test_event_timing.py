"""The event-timed launch stream (models/event_timing.py, eq. (E1)-(E3)): hand-derived waits
and a brute-force reference, a FIFO stream simulated command by command."""

from __future__ import annotations

import dataclasses
import random

import pytest

from cgpredict.devices import load_device
from cgpredict.models.event_timing import (
    event_timed_ms,
    event_waits,
    first_call_late_us,
    host_paced_range,
    host_paced_share,
    issue_order,
    loop_call_ms,
    upload_is_large,
)

DEV = dataclasses.replace(load_device("h100"), launch_call_us=5.0, upload_launch_us=15.0,
                          launch_gap_us=3.0, upload_launch_min_bytes=64 << 20,
                          loop_launch_us=0.0)  # a loop as fast as the gap (eq. (E3))
US = 1e-3  # ms


def brute_force(works_ms, first_ms, later_ms, period_ms=None):
    """The ports' stream command by command: the host records ev0 (at once), spends the
    launch call (``first_ms`` for the first launch, ``later_ms`` after), records ev1 and
    spends the rest of its loop period (``period_ms - later_ms``; none without a period);
    the GPU takes commands in order, a command not before the host issued it; an event is
    stamped when the GPU reaches it."""
    host, cmds = 0.0, []
    rest = 0.0 if period_ms is None else period_ms - later_ms
    for i, w in enumerate(works_ms):
        cmds.append(("ev", host, 0.0))
        host += first_ms if i == 0 else later_ms
        cmds.append(("kernel", host, w))
        cmds.append(("ev", host, 0.0))
        host += rest
    gpu, stamps = 0.0, []
    for kind, issued, w in cmds:
        gpu = max(gpu, issued) + w
        if kind == "ev":
            stamps.append(gpu)
    return sum(stamps[2 * i + 1] - stamps[2 * i] for i in range(len(works_ms))) - sum(works_ms)


def test_one_launch_on_an_idle_gpu_counts_the_call():
    """One launch: the GPU waits the whole call (5 us), and after an upload 15 us more."""
    w = event_waits([70 * US], DEV)
    assert w.host_ms == pytest.approx(5 * US) and w.upload_ms == 0.0
    w = event_waits([70 * US], DEV, late_us=DEV.upload_launch_us)
    assert w.host_ms == pytest.approx(5 * US) and w.upload_ms == pytest.approx(15 * US)


def test_a_launch_behind_a_longer_kernel_waits_for_nothing():
    """Kernels of 70 us: the host is 5 us a launch ahead after the first: one call in all."""
    assert event_waits([70 * US] * 10, DEV).host_ms == pytest.approx(5 * US)


def test_launches_shorter_than_the_loop_cadence_wait_for_it():
    """1-us launches (less than the 3-us gap, so only through event_waits directly): the
    first waits its 5-us call, every later one the cadence less the launch before, 3 - 1
    (by hand): 5 + 2 + 2."""
    assert event_waits([1 * US] * 3, DEV).host_ms == pytest.approx(9 * US)


def test_a_host_loop_of_short_kernels_pays_one_call():
    """3DCONV-like: 254 launches of 1.7 us of work; each holds the 3-us gap, which the
    loop's cadence never exceeds: 254 x 4.7 us + one 5-us call (by hand)."""
    total, waits = event_timed_ms([(254 * 1.7 * US, 254)], DEV)
    assert total == pytest.approx((254 * 4.7 + 5) * US)
    assert waits.host_ms == pytest.approx(5 * US)


@pytest.mark.parametrize("seed", range(20))
def test_recurrence_matches_the_simulated_stream(seed):
    rng = random.Random(seed)
    works = [rng.choice([0.5, 2.0, 2.9, 3.1, 20.0, 300.0]) * US for _ in range(rng.randint(1, 30))]
    for up in (False, True):
        got = event_waits(works, DEV, late_us=15.0 if up else 0.0).total_ms
        assert got == pytest.approx(brute_force(works, (20 if up else 5) * US, 3 * US))


def test_event_timed_ms_adds_work_gaps_and_waits():
    """SAXPY-like: 72 us of work, one launch, after a large upload: 72 + 3 + 5 + 15 us."""
    total, waits = event_timed_ms([(72 * US, 1)], DEV, late_us=15.0)
    assert total == pytest.approx(95 * US) and waits.total_ms == pytest.approx(20 * US)
    assert event_timed_ms([], DEV)[0] == 0.0


def test_issue_order_interleaves_a_host_loop():
    assert issue_order([(1.0, 2), (2.0, 2)]) == [1.0, 2.0, 1.0, 2.0]
    assert issue_order([(1.0, 1), (2.0, 2)]) == [1.0, 2.0, 2.0]
    assert issue_order([(1.0, 1), (2.0, 1)]) == [1.0, 2.0]


def test_upload_is_large_only_for_a_large_last_copy():
    assert upload_is_large(DEV, "upload", 64 << 20)
    assert upload_is_large(DEV, "upload", None)  # size unknown: taken as large
    assert not upload_is_large(DEV, "upload", 4096)
    assert not upload_is_large(DEV, "memset", None)
    assert not upload_is_large(dataclasses.replace(DEV, upload_launch_us=0.0), "upload", None)


def test_first_call_late_us_by_the_resets_copies_and_last_call():
    """Eq. (E6) by hand (DEV: 15 us after a large last copy, 64 MiB the least, and 4 us left
    when a memset follows the copies): the copies' bytes decide, the last call picks the
    figure; a reset without copies, or with less than 64 MiB of them, leaves none."""
    dev = dataclasses.replace(DEV, upload_memset_launch_us=4.0)
    assert first_call_late_us(dev, "upload", 64 << 20, 64 << 20) == 15.0
    assert first_call_late_us(dev, "upload", 4096, 192 << 20) == 0.0  # the last copy is small
    assert first_call_late_us(dev, "memset", None, 192 << 20) == 4.0  # strided: 192 MiB, memset
    assert first_call_late_us(dev, "memset", None, 64 << 20) == 4.0  # the least that counts
    assert first_call_late_us(dev, "memset", None, (64 << 20) - 1) == 0.0
    assert first_call_late_us(dev, "memset", None, None) == 0.0  # mandelbrot: no copy
    assert first_call_late_us(dev, "none", None, 192 << 20) == 0.0
    bare = dataclasses.replace(DEV, upload_memset_launch_us=0.0)  # not measured: nothing
    assert first_call_late_us(bare, "memset", None, 192 << 20) == 0.0


def test_the_former_flag_is_refused():
    with pytest.raises(TypeError, match="microseconds"):
        event_waits([70 * US], DEV, True)


def test_the_late_first_call_through_a_memset_adds_to_the_first_pair_only():
    """Eq. (E6) in the stream, against the command-by-command simulation: the strided port's
    one launch (90 us of work) pays 5 + 4 us of calls; a host loop of 50 launches of 1 us
    (host-paced) and one of 50 launches of 300 us (GPU-paced) each pay the 4 us once, on the
    first pair, whatever the later launches wait."""
    for works in ([90 * US], [1 * US] * 50, [300 * US] * 50):
        for dev in (DEV, LOOP):
            period = None if dev is DEV else 6 * US
            plain = event_waits(works, dev).total_ms
            late = event_waits(works, dev, late_us=4.0).total_ms
            assert late - plain == pytest.approx(4 * US)
            assert late == pytest.approx(brute_force(works, 9 * US, 5 * US if period else 3 * US,
                                                     period))


LOOP = dataclasses.replace(DEV, loop_launch_us=6.0)  # d' = launch_call_us = 5, P = 6


def test_no_loop_period_keeps_the_gap_cadence():
    """loop_launch_us unset: a loop's calls come every launch_gap_us (d' = P = 3 us)."""
    assert loop_call_ms(DEV) == pytest.approx((3 * US, 3 * US))
    assert loop_call_ms(LOOP) == pytest.approx((5 * US, 6 * US))
    short = dataclasses.replace(DEV, loop_launch_us=4.0)  # the call at most the period
    assert loop_call_ms(short) == pytest.approx((4 * US, 4 * US))


@pytest.mark.parametrize("w_us, pair_us", [(7.0, 7.0), (4.0, 6.0), (0.5, 5.5)])
def test_a_loop_settles_at_eq_e4(w_us, pair_us):
    """Eq. (E4) by hand, P = 6, d' = 5: the GPU the slower (w = 7: pairs of 7); the host
    the slower, the GPU busy as the next event comes (w = 4 < 6 < 9: pairs of P = 6); the GPU
    idle between launches (w = 0.5, 6 >= 5.5: pairs of d' + w = 5.5). The first launch adds
    its 5-us call on top of its own pair's work; over 10 launches the waits are 5 + 9 x
    (pair - w)."""
    waits = event_waits([w_us * US] * 10, LOOP).host_ms
    assert waits == pytest.approx((5 + 9 * (pair_us - w_us)) * US)


def test_heat1d_like_loop_pays_the_host_period():
    """200 launches of 0.875 us of work + the 3-us gap (3.875 us) under a 6-us host
    period: 200 x 6 us less the first launch's lead (by hand: the first pair is its call
    and work, 5 + 3.875; launch 2 starts at max(6 + 5, 8.875) = 11 and its pair runs from
    8.875, so 2.125 waited; then P - w = 2.125 each)."""
    total, waits = event_timed_ms([(200 * 0.875 * US, 200)], LOOP)
    assert waits.host_ms == pytest.approx((5 + 199 * 2.125) * US)
    assert total == pytest.approx((200 * 3.875 + 5 + 199 * 2.125) * US)


@pytest.mark.parametrize("seed", range(20))
def test_recurrence_with_a_loop_period_matches_the_simulated_stream(seed):
    rng = random.Random(100 + seed)
    works = [rng.choice([0.5, 2.0, 3.9, 5.5, 7.0, 300.0]) * US for _ in range(rng.randint(1, 30))]
    for up in (False, True):
        got = event_waits(works, LOOP, late_us=15.0 if up else 0.0).total_ms
        assert got == pytest.approx(brute_force(works, (20 if up else 5) * US, 5 * US, 6 * US))


def test_short_launches_behind_a_long_one_never_wait_for_the_host():
    """GRAMSCHMIDT-like: per column a 700-us launch, a 4.6-us one, a 5-ms one: the host is
    far ahead, so a 6-us loop period changes nothing (one first call in all)."""
    works = [700 * US, 4.6 * US, 5000 * US] * 20
    assert event_waits(works, LOOP).host_ms == pytest.approx(5 * US)
    assert event_waits(works, LOOP).host_ms == pytest.approx(event_waits(works, DEV).host_ms)


def test_one_launch_is_the_same_with_a_loop_period():
    for late in (0.0, 15.0):
        assert event_waits([2 * US], LOOP, late) == event_waits([2 * US], DEV, late)


def _max_form_waits(works_ms, device, late_us=0.0):
    """eq. (E1)-(E3) as first written, with max(): the reference event_waits' comparisons
    must reproduce to the last bit (it takes max() out of a loop of tens of thousands of
    launches)."""
    extra = late_us * 1e-3
    first = device.launch_call_us * 1e-3 + extra
    later, period = loop_call_ms(device)
    h = g = waited = 0.0
    for i, w in enumerate(works_ms):
        d = first if i == 0 else later
        stamp, start = max(h, g), max(h + d, g)
        waited += start - stamp
        h, g = h + d + (period - later), start + w
    upload = extra if works_ms else 0.0
    return max(waited - upload, 0.0), upload


@pytest.mark.parametrize("seed", range(10))
def test_event_waits_equal_the_max_form_to_the_bit(seed):
    rng = random.Random(seed)
    dev = dataclasses.replace(DEV, loop_launch_us=rng.choice([0.0, 4.0, 6.5]))
    works = [rng.choice([0.0, 0.5, 2.0, 2.9, 3.1, 20.0]) * US * rng.random()
             for _ in range(rng.randint(0, 300))]
    for late in (0.0, 4.06, 15.0):
        got = event_waits(works, dev, late_us=late)
        assert (got.host_ms, got.upload_ms) == _max_form_waits(works, dev, late)


def test_the_host_paced_share_of_a_loop_of_short_launches_by_hand():
    """200 launches of 1 us of work (w = 1 + 3-us gap = 4 us), a 4.7-us loop period, a 5-us
    first call: the first launch waits its call, each later one 4.7 - 4 = 0.7 us (the call
    d' = min(5, 4.7) = 4.7 and d' + w > P): total 200 x 4 + 5 + 199 x 0.7 = 944.3 us, of
    which 139.3 is the host's period (the first call not counted). Launches longer than the
    period, and a single launch, have none."""
    dev = dataclasses.replace(DEV, loop_launch_us=4.7)

    def share(kernels, device):
        return host_paced_share(*event_timed_ms(kernels, device), device)

    total, waits = event_timed_ms([(200 * 1.0 * US, 200)], dev)
    assert total == pytest.approx(944.3 * US) and waits.host_ms == pytest.approx(144.3 * US)
    assert share([(200 * 1.0 * US, 200)], dev) == pytest.approx(139.3 / 944.3)
    assert share([(200 * 70 * US, 200)], dev) == 0.0
    assert share([(1.0 * US, 1)], dev) == 0.0
    assert share([], dev) == 0.0
    assert share([(200 * 1.0 * US, 200)], DEV) == 0.0  # no period: the gap's pace


def test_host_paced_range_is_the_loop_at_the_least_and_largest_period():
    """eq. (E4s) by hand, d = launch_call_us = 5, gap 3: 10 launches of 1 us of work (w = 4)
    at P = 4.5 and P = 8 (both above w): the first pair d + w = 9, each later one max(w,
    min(P, d' + w)) with d' = min(5, P): 4.5 at the least period, 8 at the largest (8 < 5 +
    4 = 9), so 9 + 9 x 4.5 = 49.5 us and 9 + 9 x 8 = 81 us; no range without both bounds."""
    dev = dataclasses.replace(DEV, loop_launch_us=6.0, loop_launch_lo_us=4.5,
                              loop_launch_hi_us=8.0)
    lo, hi = host_paced_range([(10 * 1.0 * US, 10)], dev)
    assert (lo, hi) == pytest.approx((49.5 * US, 81.0 * US))
    assert event_timed_ms([(10 * US, 10)], dev)[0] == pytest.approx((9 + 9 * 6.0) * US)
    bare = dataclasses.replace(dev, loop_launch_lo_us=0.0, loop_launch_hi_us=0.0)
    assert host_paced_range([(10 * US, 10)], bare) is None
