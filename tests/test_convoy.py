"""Eq. (CV): a dependent step's latency when the warps of a sub-partition run it together."""

from __future__ import annotations

import pytest

from cgpredict.compute import OpLatencies, op_chain_cycles
from cgpredict.convoy import (
    convoy_latencies,
    convoy_step,
    convoy_warps,
    in_step_share,
    loaded_latencies,
    pipe_warp_cycles,
)
from cgpredict.devices import load_device


@pytest.fixture(scope="module")
def h100():
    return load_device("h100")


def test_h100_pipe_cycles_by_hand(h100):
    # 4 schedulers x 32 lanes / (128, 64, 16, 64 lanes a clock an SM); the issue slot 4 x 0.25
    assert pipe_warp_cycles(h100) == pytest.approx(
        {"fp32": 1.0, "fp64": 2.0, "sfu": 8.0, "integer": 2.0})


def test_one_warp_keeps_every_latency(h100):
    assert convoy_latencies(h100, 1) == h100.op_latencies


def test_h100_dfma_step_at_8_and_4_warps(h100):
    at8, at4 = convoy_latencies(h100, 8), convoy_latencies(h100, 4)
    assert at8.fp64 == pytest.approx(16.0)  # 8 warps x 2 cycles over 8.03
    assert at8.sfu == pytest.approx(64.0)  # 8 x 8 over 17.0
    assert at8.fp32 == pytest.approx(8.0)  # 8 x 1 over 4.0
    assert at8.integer == pytest.approx(h100.inst_latency_cycles)  # IR steps: kept
    assert at4.fp64 == pytest.approx(h100.fp64_latency_cycles)  # 4 x 2 = 8 < 8.03
    assert at4.fp32 == pytest.approx(4.0)


def test_measured_ieee_chain_adds_its_steps_excess():
    lat = OpLatencies(fp32=4.0, integer=4.0, fp64=8.0, sfu=17.0,
                      measured=(("fdiv_f64", 124.0), ("other", 5.0)))
    assert loaded_latencies(lat, 16, {"fp32": 1.0, "fp64": 2.0, "sfu": 8.0,
                                      "integer": 2.0}).integer == 4.0
    cycles = {"fp32": 1.0, "fp64": 2.0, "sfu": 8.0, "integer": 2.0}
    got = loaded_latencies(lat, 8, cycles)
    # fdiv_f64's SASS chain: 1 MUFU, 8 DFMA, 2 ALU steps: + 1 x 47 + 8 x 8 + 2 x 4
    assert op_chain_cycles("fdiv_f64", got) == pytest.approx(124.0 + 47.0 + 64.0 + 8.0)
    assert dict(got.measured)["other"] == 5.0


def test_chain_of_8_dependent_steps_by_brute_force():
    """A chain of 8 dependent 2-cycle instructions of latency 4 run by n warps in lockstep on
    one issue port, simulated cycle by cycle, against 8 x max(4, 2 n)."""
    for n in (1, 2, 4, 8, 16):
        ready, port_free = [0] * n, 0
        for _ in range(8):
            for w in range(n):  # each warp issues its step when ready and the pipe is free
                start = max(ready[w], port_free)
                port_free = start + 2
                ready[w] = start + 4
        simulated = max(ready)  # the last warp's last result
        lat = loaded_latencies(OpLatencies(fp32=4.0, integer=4.0, fp64=4.0, sfu=4.0), n,
                               {"fp32": 2.0, "fp64": 2.0, "sfu": 2.0, "integer": 2.0})
        assert 8 * lat.fp32 == pytest.approx(simulated, abs=2.0)  # the last warp's offset


def test_convoy_warps_by_hand(h100):
    # nbody_f64: 4096 threads; 1024x1 is 4 blocks of 32 warps on 4 SMs: 8 a sub-partition
    assert convoy_warps(h100, 1024, 60, 0, 4) == 8
    assert convoy_warps(h100, 256, 60, 0, 16) == 2  # one block of 8 warps an SM
    assert convoy_warps(h100, 32, 60, 0, 128) == 1  # one warp an SM


def test_in_step_share_multiplies_the_loads_together_shares():
    together = {1: 1.0, 2: 0.5, 3: 0.25}
    assert in_step_share(together, []) == 1.0  # no load: every trip in step
    assert in_step_share(together, [1, 2, 3]) == pytest.approx(0.125)
    assert in_step_share(together, [1, 9]) == 0.0  # a load not named fetches its own


class _Load:
    def __init__(self, sid, served, total, inflight=0):
        self.sid, self.l1_served, self.total_warp_insts = sid, (served, 0, 0), total
        self.l1_inflight = (inflight, 0, 0)


def test_convoy_step_reads_the_l1_served_share(h100):
    assert convoy_step(h100, 1, []) is None
    lat, share = convoy_step(h100, 8, [_Load(1, 31, 32, 1), _Load(2, 0, 32)], fixed=[2])
    assert lat == convoy_latencies(h100, 8)
    assert share([1]) == pytest.approx(30 / 32)  # a wait on another warp's fetch: not in step
    assert share([2]) == 1.0  # fixed latency (staged in shared memory)
