"""validation/loop_trips.py: a loop trip with several warps on one H100 SM (eqs. (LTs), (LTq))
against validation/ubench/loop_trip.cu (lease of 2026-11-27, second session).

Oracles: the sub-partition's slots of each SASS trip counted by hand (instructions plus the
control's slots, or the busiest register bank's reads); a closed loop of one warp is its own
trip, of many warps the issue alone, and always between the flat max and a full FIFO wait; the
ubench's measured figures."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import loop_trips as lt  # noqa: E402


@pytest.mark.parametrize("mode, banks, slots", [
    ("trip1", 2, 4 + 1.43),  # UIADD3, FFMA, ISETP, BRA: issue binds (bank 0: R0, R4, R6)
    ("trip8", 2, 17.0),  # 8 x (R0, R4) + ISETP's R6 in bank 0; issue 11 + 1.43
    ("trip8", 4, 16.0),  # with four banks R6 leaves bank 0
    ("trip1_ilp2", 2, 5 + 1.43),  # the second FFMA takes R4, R5 from the operand cache
    ("trip1_ilp4", 2, 7 + 1.43),
])
def test_the_slots_by_hand(mode, banks, slots):
    assert lt.slot_cycles(lt.TRIPS[mode], banks=banks) == pytest.approx(slots)


def test_one_warp_is_its_own_trip_and_many_are_the_issue():
    assert lt.closed_loop_trip(29.0, 5.43, 1) == pytest.approx(29.0)
    assert lt.closed_loop_trip(29.0, 5.43, 400) == pytest.approx(400 * 5.43, rel=0.01)


@pytest.mark.parametrize("n", [2, 3, 4, 6, 8, 16])
def test_the_closed_loop_lies_between_the_flat_max_and_a_full_wait(n):
    """No warp waits for more than the n - 1 others' service, and none runs faster than its
    own trip or the sub-partition's issue."""
    alone, s = 40.1, 17.0
    t = lt.closed_loop_trip(alone, s, n)
    assert max(alone, n * s) - 1e-9 <= t <= alone + (n - 1) * s + 1e-9


def test_the_partition_count():
    assert [lt.per_partition(w) for w in (1, 2, 4, 8, 16, 32)] == [1, 1, 1, 2, 4, 8]


@pytest.mark.parametrize("mode", sorted(lt.TRIPS))
def test_the_slots_match_the_32_warp_trips(mode):
    """At 32 warps (8 a sub-partition) the SM is saturated: 8 x (LTs) within 1.5 % of the
    slowest warp's trip (trip1 sets CONTROL_SLOTS; trip8 17.19, ilp2 6.43, ilp4 8.55)."""
    t32 = lt.measured()[mode][32]
    assert 8 * lt.slot_cycles(lt.TRIPS[mode]) == pytest.approx(t32, rel=0.015)


def test_the_closed_loop_beats_the_flat_max():
    """Over the 24 points: (LTq) mean 1.7 %, worst 7.8 %; max(L, n x s) 2.6 %, 19.7 %."""
    flat_mean, flat_worst, mean, worst = lt.errors()
    assert mean < flat_mean and worst < flat_worst
    assert mean < 0.02 and worst < 0.08


def test_the_parsed_sass_trips_are_the_hand_written_ones():
    """The nvdisasm text of loop_trip.cu's trips (.reuse operands from the cache, ISETP's
    predicate destinations, the uniform counter) gives TRIPS' reads, in SASS order."""
    parsed = lt.sass_trips()
    for mode, trip in lt.TRIPS.items():
        assert sorted(parsed[mode], key=repr) == sorted(trip, key=repr)


def test_a_reuse_flag_serves_only_the_next_instruction_in_its_slot():
    trip = lt.parse_trip("FFMA R8, R4.reuse, R8, R5.reuse ; FFMA R0, R4, R0, R5 ; "
                         "FFMA R2, R4, R2, R5 ; @!P0 BRA `(.L_x_4)")
    assert [i.reads for i in trip] == [(4, 8, 5), (0,), (4, 2, 5), ()]


def test_the_lease_modes_tell_two_banks_from_four():
    """loop_trip2.cu's ffma_v8 and ffma_v23 trips: two sources in one bank modulo 2 only."""
    trips = lt.sass_trips()
    for mode in ("ffma_v8_R6R4R6R5", "ffma_v23_R7R5R7R0"):
        assert lt.slot_cycles(trips[mode], banks=2) == pytest.approx(15.0)
        assert lt.slot_cycles(trips[mode], banks=4) == pytest.approx(11 + lt.CONTROL_SLOTS)


def test_a_register_named_twice_is_read_once_and_imad_takes_the_heavy_pipe():
    """loop_trip2.cu on the H100: FFMA R9,R9,R9,R4 runs at 11.13 cycles a trip of 11 (as FADD
    and FMUL), IMAD R9,R9,R9,RZ at 16.32 (2 cycles each on the fmaheavy pipe)."""
    assert lt.parse_trip("FFMA R9, R9, R9, R4")[0].reads == (9, 4)
    trips = lt.sass_trips()
    assert lt.slot_cycles(trips["imul_8"]) == pytest.approx(16.0)
    assert lt.slot_cycles(trips["ffma_xx_8"]) == pytest.approx(11 + lt.CONTROL_SLOTS)


@pytest.mark.parametrize("mode, measured", [
    ("ffma_v8_R6R4R6R5", 15.61), ("ffma_v23_R7R5R7R0", 15.63), ("ffma_v1_R17R5R17R4", 16.37),
    ("ffma_v34_R8R0R8R5", 17.19), ("ffma_ab_8", 17.20), ("ffma_ab_16", 33.20),
    ("ffma_ab_8x2", 25.09), ("imad_ab_8", 16.34), ("imul_8", 16.32)])
def test_the_bank_and_pipe_bound_trips_of_the_lease(mode, measured):
    """Two banks (r mod 2): the sources in one bank modulo 2 only cost 15 reads a trip, not
    the 12.43 of four banks; 32-warp trips / 8 within 4.5 %."""
    t32 = lt.measured(lt.LOOP_TRIP2)[mode][32]
    assert t32 / 8 == pytest.approx(measured, abs=0.01)
    assert lt.slot_cycles(lt.sass_trips()[mode]) == pytest.approx(measured, rel=0.045)
