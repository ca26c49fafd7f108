"""Tests of eq. (LTq2), the closed loop of a sub-partition's warps (models/warp_queue.py)."""

from __future__ import annotations

import itertools
import math
import sys
from pathlib import Path

import pytest

from cgpredict.models.warp_queue import closed_loop_cycles, sub_partition_warps

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validation"))
import loop_trips  # noqa: E402


def product_form_cycles(delay: float, services: list[float], warps: int) -> float:
    """Brute force: the cycle time n / X(n) of the closed product-form network (one delay
    station of demand ``delay``, one queue per service), X(n) = G(n-1) / G(n) from the
    normalising constant summed over every placement of the warps."""
    def g(n: int) -> float:
        total = 0.0
        for placed in itertools.product(range(n + 1), repeat=len(services)):
            rest = n - sum(placed)
            if rest < 0:
                continue
            term = delay ** rest / math.factorial(rest)
            for s, k in zip(services, placed):
                term *= s ** k
            total += term
        return total
    return warps * g(warps) / g(warps - 1)


def test_one_warp_is_its_path():
    assert closed_loop_cycles(323.0, [36.5, 24.0], 1) == 323.0
    assert closed_loop_cycles(323.0, [], 8) == 323.0


@pytest.mark.parametrize("warps", [2, 3, 5, 8, 16])
@pytest.mark.parametrize("delay,services", [(286.5, [36.5]), (262.5, [36.5, 24.0]),
                                            (10.0, [20.0, 5.0]), (0.0, [3.0, 7.0, 2.0])])
def test_mean_value_analysis_matches_the_product_form(warps, delay, services):
    path = delay + sum(services)
    got = closed_loop_cycles(path, services, warps)
    assert got == pytest.approx(product_form_cycles(delay, services, warps), rel=1e-9)


def test_one_server_is_eq_ltq_of_the_loop_trip_benchmark():
    # the trip of 8 dependent FFMAs: 40.1 cycles alone, 17.19 a warp trip at 32 warps;
    # measured 137.5 at 8 warps a sub-partition (docs/models.md, (LTq))
    for n in (1, 2, 4, 8):
        assert closed_loop_cycles(40.1, [17.19], n) == pytest.approx(
            loop_trips.closed_loop_trip(40.1, 17.19, n), rel=1e-12)
    assert closed_loop_cycles(40.1, [17.19], 8) == pytest.approx(137.5, rel=0.01)


def test_bounded_by_the_path_and_the_busiest_server():
    for n in (2, 4, 8, 32):
        t = closed_loop_cycles(323.0, [36.5, 24.0], n)
        assert t >= max(323.0, n * 36.5) - 1e-9
        assert t <= 323.0 + n * (36.5 + 24.0)
    # far past the knee the busiest server sets it
    assert closed_loop_cycles(10.0, [5.0, 1.0], 200) == pytest.approx(1000.0, rel=0.01)


def test_sub_partition_warps():
    assert sub_partition_warps(32, 4) == 8
    assert sub_partition_warps(2, 4) == 1
    assert sub_partition_warps(6, 4) == 2
    assert sub_partition_warps(0, 4) == 1


def test_launch_bound_takes_the_closed_loop_by_hand():
    from cgpredict.devices import load_device
    from cgpredict.models import launch_bounds, launch_geometry
    from cgpredict.profile import KernelProfile, PipeCounts

    # 16 blocks of 1024 threads on the H100: one block an SM, 32 warps, 8 a sub-partition;
    # a thread 100 FP32 and 10 SFU instructions (8 cycles a warp each on a sub-partition:
    # 16 lanes a clock an SM), a path of 300 cycles alone and 250 in the (CV) convoy
    dev = load_device("h100")
    p = KernelProfile("hand", threads_per_block=1024, blocks=16, comp_insts=110,
                      pipes=PipeCounts(fp32=100, sfu=10), chain_cycles=250.0,
                      alone_chain_cycles=300.0)
    b = launch_bounds(p, dev, launch_geometry(p, dev))
    want = product_form_cycles(300.0 - 110 - 80, [110.0, 80.0], 8)
    assert b.queue_cycles == pytest.approx(want, rel=1e-9)
    assert b.chain_cycles == pytest.approx(max(250.0, want), rel=1e-9)
    # one warp a sub-partition (32x1 blocks, one an SM): no queue, the path alone
    one = KernelProfile("hand", threads_per_block=32, blocks=16, comp_insts=110,
                        pipes=PipeCounts(fp32=100, sfu=10), chain_cycles=300.0)
    b1 = launch_bounds(one, dev, launch_geometry(one, dev))
    assert b1.queue_cycles == 0.0 and b1.chain_cycles == 300.0
    # an FP32-only path: that pipe is as fast as issue, so the issue slot is the one server
    fp = dataclasses_replace(p, comp_insts=100, pipes=PipeCounts(fp32=100))
    bf = launch_bounds(fp, dev, launch_geometry(fp, dev))
    assert bf.queue_cycles == pytest.approx(product_form_cycles(200.0, [100.0], 8), rel=1e-9)


def dataclasses_replace(obj, **kw):
    import dataclasses
    return dataclasses.replace(obj, **kw)


def _list_form_cycles(path, services, warps):
    """closed_loop_cycles' iteration over lists of servers, as first written: the one-server
    path must reproduce it to the last bit."""
    s = [max(float(x), 0.0) for x in services]
    if warps <= 1 or path <= 0 or not any(s):
        return float(path)
    delay = max(path - sum(s), 0.0)
    queued, cycle = [0.0] * len(s), float(path)
    for k in range(1, warps + 1):
        resid = [si * (1.0 + qi) for si, qi in zip(s, queued)]
        cycle = delay + sum(resid)
        queued = [k * r / cycle for r in resid]
    return cycle


@pytest.mark.parametrize("path,service", [(100.0, 1.0), (37.3, 12.9), (8.0, 8.0),
                                          (5.0, 9.5), (1e6, 3.3e3), (0.1, 0.07)])
def test_one_server_equals_the_list_form_to_the_bit(path, service):
    for warps in (1, 2, 3, 7, 16, 64):
        assert closed_loop_cycles(path, [service], warps) == \
            _list_form_cycles(path, [service], warps)
