"""What a measurement's timer sees of a prediction (cgpredict/models/timer_view.py): the host
clock, the event pairs' work, queued starts and host calls (E1)-(E4), the host-paced note and
its range (E4s), and the reset's dirty L2 written back (E5), each by hand."""

from __future__ import annotations

import dataclasses

import pytest


def test_event_timer_sees_work_launch_gaps_and_host_calls():
    """host: everything; events: per kernel its work + launches x launch_gap_us, plus the
    host's launch call the idle GPU waits for (eq. (E1)-(E3)), by hand: 254 launches of
    3.9 us (1 ms) then one of 0.5 ms; gap 3 us, call 5 us: the first launch waits 5 us, every
    later one finds the GPU busy (3.9 + 3 > 5); after a large upload 15 us more."""
    import dataclasses
    from types import SimpleNamespace as NS

    from cgpredict.devices import load_device
    from cgpredict.models.timer_view import timed_ms

    dev = dataclasses.replace(load_device("h100"), launch_gap_us=3.0, launch_call_us=5.0,
                              upload_launch_us=15.0)
    rep = NS(total_ms=9.0, kernels=(NS(kernel_ms=1.0, launches=254), NS(kernel_ms=0.5,
                                                                         launches=1)))
    assert timed_ms(rep, "host", dev) == 9.0
    assert timed_ms(rep, "events", dev) == pytest.approx(1.0 + 0.762 + 0.5 + 0.003 + 0.005)
    assert timed_ms(rep, "events", dev, 15.0) == pytest.approx(1.5 + 0.765 + 0.020)
    assert timed_ms(rep, "events") == pytest.approx(1.5)


def test_event_timed_rows_pay_the_resets_dirty_l2():
    """Eq. (E5) in timed_ms: one DRAM-bound launch (its cycles its DRAM bound) reading
    100 MB after a reset that left 24.4 MB dirty writes back all 24.4 MB at
    l2_writeback_gbps (6.18 us more); a host-timed row and a clean reset pay nothing."""
    import dataclasses
    from types import SimpleNamespace as NS

    from cgpredict.devices import load_device
    from cgpredict.models.timer_view import timed_ms

    dev = load_device("h100")
    bounds = NS(dram_cycles=198_000.0, dram_wave_cycles=0.0, dram_read_bytes=100e6)
    rep = NS(total_ms=0.2, kernels=(NS(kernel_ms=0.1, launches=1,
                                       result=NS(cycles=198_000.0, bounds=bounds)),))
    clean = timed_ms(rep, "events", dev)
    extra = 24.4e6 / (dev.l2_writeback_gbps * 1e9) * 1e3
    assert timed_ms(rep, "events", dev, dirty_bytes=24.4e6) == pytest.approx(clean + extra)
    assert timed_ms(rep, "host", dev, dirty_bytes=24.4e6) == 0.2
    none = dataclasses.replace(dev, l2_dirty_max_bytes=0)
    assert timed_ms(rep, "events", none, dirty_bytes=0.0) == pytest.approx(clean)


def test_a_row_the_hosts_loop_period_sets_is_noted():
    """host_note: a heat1d-like loop (200 launches of 0.87 us of work on the H100: w = 0.87 +
    3.07 = 3.94 us under the 4.7-us period) waits 0.76 us a later launch, 199 x 0.76 of the
    200 x 3.94 + 4.35 + 199 x 0.76 us the events count, 16 % (by hand); a host-timed row, a
    long loop and a single launch get no note (HOST_PACED_NOTE: 1 %). The note reads the
    row's own timing (event_timed): the predicted time it divides by is the row's."""
    from types import SimpleNamespace

    from cgpredict.devices import load_device
    from cgpredict.models.timer_view import event_timed, host_note

    def note(rep, timer, device=None):
        device = device or dev
        kernels = [(k.kernel_ms, k.launches) for k in rep.kernels]
        return host_note(*event_timed(rep, timer, device), device, kernels)

    dev = load_device("h100")
    w = 0.87 + dev.launch_gap_us
    wait = dev.loop_launch_us - w
    share = 199 * wait / (200 * w + dev.launch_call_us + 199 * wait)
    rep = SimpleNamespace(total_ms=1.0,
                          kernels=[SimpleNamespace(kernel_ms=200 * 0.87e-3, launches=200)])
    timed, waits = event_timed(rep, "events", dev)
    assert timed == pytest.approx((200 * w + dev.launch_call_us + 199 * wait) * 1e-3)
    # eq. (E4s): the same loop at the leases' least and largest host period P (4.34 and 6.24
    # us, both in w < P < d + w): the first pair d + w, every later one P, by hand
    lo, hi = (w + dev.launch_call_us + 199 * p for p in (4.34, 6.24))
    assert (dev.loop_launch_lo_us, dev.loop_launch_hi_us) == (4.34, 6.24)
    assert note(rep, "events") == (
        f"host pace {100 * share:.0f} % (E4), {lo / 1e3:.3g}-{hi / 1e3:.3g} ms at the leases' "
        "hosts (E4s)") == "host pace 16 % (E4), 0.872-1.25 ms at the leases' hosts (E4s)"
    bare = dataclasses.replace(dev, loop_launch_lo_us=0.0, loop_launch_hi_us=0.0)
    assert note(rep, "events", bare) == "host pace 16 % (E4)"
    assert event_timed(rep, "host", dev) == (1.0, None) and note(rep, "host") == ""
    # wavefront 1024x1-like: 1.39 us of work a launch, w = 4.46 us, 0.24 us under the period:
    # 4094 x 0.24 of 4095 x 4.46 + 4.35 + 4094 x 0.24 us, 5 % (by hand)
    near = SimpleNamespace(kernels=[SimpleNamespace(kernel_ms=4095 * 1.39e-3, launches=4095)])
    w2 = 1.39 + dev.launch_gap_us
    s2 = 4094 * (dev.loop_launch_us - w2) / (4095 * w2 + dev.launch_call_us
                                            + 4094 * (dev.loop_launch_us - w2))
    # at P = 4.34 the GPU is the slower (w2 > P): every later pair w2; at 6.24, P
    lo2 = dev.launch_call_us + 4095 * w2
    hi2 = dev.launch_call_us + w2 + 4094 * 6.24
    assert note(near, "events") == (
        f"host pace {100 * s2:.0f} % (E4), {lo2 / 1e3:.3g}-{hi2 / 1e3:.3g} ms at the leases' "
        "hosts (E4s)") == "host pace 5 % (E4), 18.3-25.6 ms at the leases' hosts (E4s)"
    long = SimpleNamespace(kernels=[SimpleNamespace(kernel_ms=200 * 0.1, launches=200)])
    one = SimpleNamespace(kernels=[SimpleNamespace(kernel_ms=0.87e-3, launches=1)])
    assert note(long, "events") == "" and note(one, "events") == ""
