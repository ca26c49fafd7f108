"""Tests of cgpredict.issue_blocks and models.alone: one iteration's chain in a warp's issue
order (slow-path branches, eqs. (IB1)-(IB2)) and a warp with a scheduler to itself (22k) or
sharing it (22q), on hand-built loop bodies with hand-derived chains."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from cgpredict.instrument.loopbody import LoopBody, Op

from cgpredict.compute import OpLatencies
from cgpredict.issue_blocks import NUMERATOR_CHAIN, issue_order, ordered_far
from cgpredict.models.alone import alone_cycles, priced
from cgpredict.parallelism import _chain, _latencies

#: FP32 4, integer 1, FP64 8, MUFU 17 cycles (the H100's figures, rounded)
_LAT = OpLatencies(fp32=4.0, integer=1.0, fp64=8.0, sfu=17.0)


def _body(*ops: tuple[str, tuple[int, ...]]) -> LoopBody:
    return LoopBody(tuple(Op(k, f"%{k}", c, "double", deps) for k, (c, deps) in enumerate(ops)),
                    frozenset())


def _nbody_like() -> LoopBody:
    """px[j] - px_i; sqrt(r2); m[j] / (r2 * sqrt(r2)); an FMA into the force: the user kernel
    nbody_f64's iteration cut to one coordinate (m[j] loaded before the square root in the
    IR, as clang emits it)."""
    return _body(("load", ()), ("dsub", (0,)), ("load", ()), ("dsqrt", (1,)),
                 ("dmul", (1, 3)), ("ddiv", (2, 4)), ("dmul", (1, 5)))


def test_a_load_issues_at_its_first_use_never_past_a_store():
    # m[j] (op 2) is first used by the division (op 5): NVVM sinks it below the square root
    assert issue_order(_nbody_like()) == (0, 1, 3, 4, 2, 5, 6)
    # a load whose use follows a store stays above the store (the store may alias it)
    body = _body(("load", ()), ("store", ()), ("dadd", (0,)))
    assert issue_order(body) == (0, 1, 2)
    # a load nothing uses keeps its place
    assert issue_order(_body(("dadd", ()), ("load", ()), ("dadd", (0,)))) == (0, 1, 2)


def test_ops_after_a_slow_path_branch_wait_for_its_result_and_the_numerator_joins_late():
    """By hand (loads 100): px 100, dsub 108, dsqrt 108 + (17 + 7 x 8) = 181. Dataflow:
    m ready at 100, dmul 189, ddiv max(100, 189) + (17 + 8 x 8 + 2 x 4) = 278, dmul 286.
    Issue order (IB1): m issues after the square root's branch, 181 + 100 = 281; the
    division's denominator path gives 189 + 89 = 278, its numerator 281 + (3 x 8 + 2 x 4)
    = 313 (IB2); the last dmul 321."""
    body = _nbody_like()
    lat = _latencies(body, lambda sid: 100.0, 4.0, 1.0, _LAT)
    far = ordered_far(body, lat, frozenset(), gated=False, op_lat=_LAT)
    assert far == pytest.approx([100, 108, 281, 181, 189, 313, 321])
    assert _chain(body, tuple(lat), False, 1, op_lat=_LAT) == pytest.approx(321)
    assert NUMERATOR_CHAIN["ddiv"] == (0, 3, 2)


def test_a_late_numerator_waits_only_the_end_of_the_division():
    # x (load 100) / y (load 10), float: the denominator's path 10 + 37 = 47, the
    # numerator's 100 + 3 x 4 = 112 (IB2), not 100 + 37 = 137
    body = LoopBody((Op(0, "%0", "load", "float", ()), Op(1, "%1", "load", "float", ()),
                     Op(2, "%2", "fdiv", "float", (0, 1))), frozenset())
    lat = [100.0, 10.0, 17 + 5 * 4.0]
    assert ordered_far(body, lat, frozenset(), False, _LAT)[2] == pytest.approx(112)
    # without the device's latencies by kind the division stays one step on both operands
    assert ordered_far(body, lat, frozenset(), False)[2] == pytest.approx(137)


def test_a_body_without_a_slow_path_keeps_its_dataflow_chain():
    body = _body(("load", ()), ("load", ()), ("dmul", (0, 1)), ("dadd", (2,)))
    lat = [100.0, 50.0, 8.0, 8.0]
    assert ordered_far(body, lat, frozenset(), False, _LAT) == pytest.approx([100, 50, 108, 116])


def test_a_warp_alone_on_its_scheduler_runs_its_chain():
    """(22k): N <= schedulers_per_sm: the critical path, at least the warp's instructions at
    one a cycle (comp 100 SM cycles at 4 schedulers = 400)."""
    dev = SimpleNamespace(schedulers_per_sm=4)
    prof = _profile(1000.0, const=_pattern(100, 0.75, 1.0, 0.0))
    assert alone_cycles(prof, dev, 1, 100.0) == pytest.approx(1000.0)
    assert alone_cycles(prof, dev, 4, 300.0) == pytest.approx(1200.0)
    assert alone_cycles(_profile(0.0), dev, 1, 100.0) == 0.0


def test_22q_two_warps_on_a_scheduler_share_its_issue_slot():
    """(22q) by hand: N = 5 or 8 warps on 4 schedulers put 2 on a sub-partition; a path of
    L = 1000 cycles alone that holds the issue slot s = 75 instructions x 4 cycles = 300
    (one issue a cycle an SM, 4 schedulers). Mean-value analysis: k = 1, R = s, T = L,
    Q = s / L; k = 2, R = s (1 + s / L), T = L - s + R = L + s^2 / L = 1090. A longer
    (CV) chain (1200) stays; no priced loads, or several trips' loads in flight: 0."""
    dev = SimpleNamespace(schedulers_per_sm=4, inst_cycles_per_warp_inst=1.0, pipes=None,
                          warp_size=32)

    def prof(chain: float, alone: float, const=_pattern(100, 0.75, 1.0, 0.0)):
        p = _profile(chain, const=const)
        p.alone_chain_cycles, p.total_insts, p.loads_in_flight = alone, 75.0, 1.0
        p.shared, p.pipes = SimpleNamespace(transactions=0.0), None
        return p

    assert alone_cycles(prof(1000.0, 1000.0), dev, 5, 100.0) == pytest.approx(1090.0)
    assert alone_cycles(prof(1000.0, 1000.0), dev, 8, 100.0) == pytest.approx(1090.0)
    assert alone_cycles(prof(1200.0, 1000.0), dev, 8, 100.0) == pytest.approx(1200.0)
    unpriced = prof(1000.0, 1000.0, _pattern(100, 0.0, 4.0, 4.0))
    assert alone_cycles(unpriced, dev, 8, 100.0) == 0.0
    hoisted = prof(1000.0, 1000.0)  # an unrolled trip's loads in flight: (22m), not (22q)
    hoisted.loads_in_flight = 2.0
    assert alone_cycles(hoisted, dev, 8, 100.0) == 0.0


def _pattern(insts: float, l1_hit: float, l2: float, dram: float) -> SimpleNamespace:
    return SimpleNamespace(insts=insts, l1_hit_fraction=l1_hit, l2_trans_per_warp=l2,
                           dram_trans_per_warp=dram)


def _profile(chain: float, coal=None, uncoal=None, const=None) -> SimpleNamespace:
    none = _pattern(0, 0.0, 0.0, 0.0)
    return SimpleNamespace(chain_cycles=chain, coal=coal or none, uncoal=uncoal or none,
                           const=const or none)


def test_the_chain_prices_loads_whole_only_without_row_walks_or_dram_misses():
    """priced by hand: broadcasts past the L1 hitting the L2 (25 x 1 transactions, 0.4
    DRAM): yes; an uncoalesced load: no; a column walk missing the L2 (100 loads of 4
    transactions, all DRAM, beside the broadcasts: 400 of 425 miss): no; 200 of 425: yes."""
    const = _pattern(100, 0.75, 1.0, 0.016)
    assert priced(_profile(1.0, const=const))
    assert not priced(_profile(1.0, const=const, uncoal=_pattern(1, 0.9, 32.0, 0.0)))
    assert not priced(_profile(1.0, coal=_pattern(100, 0.0, 4.0, 4.0), const=const))
    assert priced(_profile(1.0, coal=_pattern(100, 0.0, 4.0, 2.0), const=const))


def test_22k_caps_22_and_keeps_the_sms_load_store_turns():
    """(22) by hand as in test_models: N = MWP = CWP = 4, 10 memory instructions, mem 1000,
    comp 100: 1130. A warp alone with a 700-cycle chain: 700; the 4 warps' load/store
    turns (4 x 200 = 800) floor it; a chain above (22) leaves (22)."""
    from cgpredict.models.cgpredict_model import _exec_cycles

    def t(alone: float, lsu: float = 0.0) -> float:
        case, cycles = _exec_cycles(True, 10, 4, 4, 4, 1000.0, 100.0, 50.0, 1.0, None,
                                    1.0, lsu, alone=alone)
        assert case == "eq22"
        return cycles

    assert t(0.0) == pytest.approx(1130.0)
    assert t(700.0) == pytest.approx(700.0)
    assert t(700.0, 200.0) == pytest.approx(800.0)
    assert t(2000.0) == pytest.approx(1130.0)
