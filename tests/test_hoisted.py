"""Eq. (22h): loads a plain port's ptxas hoists above the unrolled trip's stores of their own
array (parallelism.hoisted_loads, ThreadBodies.hoisted_cycles) and what eq. (22) then keeps
of a warp's memory periods (models/cgpredict_model.py)."""

from __future__ import annotations

import dataclasses

import pytest
from cgpredict.instrument.loopbody import LoopBody, Op

from cgpredict.devices import load_device
from cgpredict.models.cgpredict_model import predict_cgpredict
from cgpredict.parallelism import ThreadBodies, hoisted_loads
from cgpredict.profile import KernelProfile, PatternCounts


def _ops(*spec: tuple[str, tuple[int, ...], int, str]) -> LoopBody:
    """Ops (klass, operands, memory id, array) in body order."""
    return LoopBody(tuple(Op(k, f"%{k}", c, "float", deps, -1, mid, arr)
                          for k, (c, deps, mid, arr) in enumerate(spec)), frozenset())


#: GRAMSCHMIDT gs_k3's second loop, A[i][j] -= Q[i][k] * R[k][j] over i (plain port): the
#: addresses of Q and A follow i (phi 0), R's is loop-invariant (no in-body gep)
GS_LOOP2 = (("phi", (), -1, ""), ("gep", (0,), -1, ""), ("load", (1,), 5, "Q"),
            ("load", (), 6, "R"), ("gep", (0,), -1, ""), ("load", (4,), 7, "A"),
            ("fmul", (2, 3), -1, ""), ("fadd", (5, 6), -1, ""), ("store", (7, 4), 8, "A"),
            ("br", (), -1, ""))
ORDERED = frozenset({5, 6, 7, 8})


def test_the_stored_arrays_own_load_at_the_stored_address_is_hoisted():
    """Only A's load: the store writes A at the same moving address; Q and R are other
    arrays, which may alias A, and stay behind the store."""
    assert hoisted_loads(_ops(*GS_LOOP2), ORDERED) == (5,)


def test_restrict_accesses_are_not_ordered_so_nothing_is_hoisted_here():
    assert hoisted_loads(_ops(*GS_LOOP2), frozenset()) == ()


def test_a_store_to_another_array_keeps_every_load_in_order():
    """y[i] = A[i][j] * x (the store to y may alias A): A's load stays behind it."""
    body = _ops(("phi", (), -1, ""), ("gep", (0,), -1, ""), ("load", (1,), 1, "A"),
                ("fmul", (2,), -1, ""), ("gep", (0,), -1, ""), ("store", (3, 4), 2, "y"),
                ("br", (), -1, ""))
    assert hoisted_loads(body, frozenset({1, 2})) == ()


def test_an_accumulator_at_a_fixed_address_is_not_hoisted():
    """R[k][j] += Q[i][k] * A[i][j]: R's address does not move with i (no in-body gep), so
    each copy's load is the previous copy's store: nothing to hoist."""
    body = _ops(("phi", (), -1, ""), ("gep", (0,), -1, ""), ("load", (1,), 1, "Q"),
                ("load", (), 2, "R"), ("fmul", (2,), -1, ""), ("fadd", (3, 4), -1, ""),
                ("store", (5,), 3, "R"), ("br", (), -1, ""))
    assert hoisted_loads(body, frozenset({1, 2, 3})) == ()


def test_a_second_store_elsewhere_blocks_the_hoisting():
    """A second store to another array in the body (may alias A) keeps A's load in order."""
    spec = list(GS_LOOP2[:-1]) + [("store", (7, 1), 9, "Q"), ("br", (), -1, "")]
    assert hoisted_loads(_ops(*spec), ORDERED | {9}) == ()


def test_all_but_one_copy_of_an_unrolled_trip_leave_the_serial_timeline():
    """1000 iterations, unrolled 4 times, A's load at 700 cycles: 3/4 of 700 000."""
    bodies = ThreadBodies(bodies=((None, (3,)),), graphs=(_ops(*GS_LOOP2),), looped=(True,),
                          loop_ids=(2,))
    lat = {5: 100.0, 6: 30.0, 7: 700.0}
    cycles = bodies.hoisted_cycles({3: 1000.0}, lat.__getitem__, lambda lid: 4, ORDERED)
    assert cycles == pytest.approx(1000 * 0.75 * 700)
    assert bodies.hoisted_cycles({3: 1000.0}, lat.__getitem__, lambda lid: 1, ORDERED) == 0.0


def test_eq22_drops_the_hoisted_periods_and_nothing_else_reads_them():
    """One warp on the TK1 (case eq22): (22) loses exactly the hoisted cycles, at most all
    its memory periods (then the warp's computing is left); (16) and (17) do not read them."""
    tk1 = load_device("tk1")
    base = KernelProfile(
        name="onewarp", threads_per_block=32, blocks=1,
        coal=PatternCounts(insts=1000, l2_trans_per_warp=1, dram_trans_per_warp=1),
        comp_insts=2000,
    )  # fmt: skip
    r0 = predict_cgpredict(base, tk1)
    assert r0.case == "eq22"
    r1 = predict_cgpredict(dataclasses.replace(base, hoisted_load_cycles=1e4), tk1)
    assert r0.exec_cycles - r1.exec_cycles == pytest.approx(1e4)
    assert r1.mem_cycles == r0.mem_cycles  # the reported memory periods stay (6)'s
    rall = predict_cgpredict(dataclasses.replace(base, hoisted_load_cycles=1e12), tk1)
    assert r0.exec_cycles - rall.exec_cycles == pytest.approx(r0.mem_cycles)
    many = dataclasses.replace(base, blocks=64, threads_per_block=256)
    assert predict_cgpredict(many, tk1).case != "eq22"
    assert predict_cgpredict(dataclasses.replace(many, hoisted_load_cycles=1e6),
                             tk1).exec_cycles == predict_cgpredict(many, tk1).exec_cycles


def test_the_lockstep_floor_loses_the_hoisted_periods_too():
    """With L1 hits (a broadcast's followers) a one-period warp in (22) is floored by (22l),
    its beyond-L1 periods one after another: the hoisted ones leave that sum as well."""
    tk1 = load_device("tk1")
    base = KernelProfile(
        name="onewarp", threads_per_block=32, blocks=1,
        coal=PatternCounts(insts=1000, l2_trans_per_warp=1, dram_trans_per_warp=1,
                           l1_hit_fraction=0.25),
        comp_insts=2000,
    )  # fmt: skip
    r0 = predict_cgpredict(base, tk1)
    assert r0.case == "eq22" and r0.lockstep_cycles > r0.mem_cycles  # (22l) sets it
    r1 = predict_cgpredict(dataclasses.replace(base, hoisted_load_cycles=1e4), tk1)
    assert r0.exec_cycles - r1.exec_cycles == pytest.approx(1e4)
