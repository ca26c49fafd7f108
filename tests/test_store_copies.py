"""Tests of eq. (12sc), cgpredict.store_copies: the pointers a 16-deep run-time trip copies
back behind its stores, and the MOVs each copy takes.

Oracles: the sm_90 SASS of deriche_hfwd's 16-iteration trip (hand-counted below from its
``nvdisasm -c`` listing) and of one-thread probes compiled with ``nvcc -cubin -O3
-arch=sm_90`` (a run-time bound): ``B[i][j] = 2 * A[i][j]`` copies B's pointer with
``__restrict__`` (MOV + IMAD.MOV), A's and B's with plain pointers; ``y = a * A[i][j] + b *
y; B[i][j] = y`` copies B's pointer by 2 MOV (an FMUL and an FFMA an iteration; plain: B's
2 and A's low word, 3 where the rule counts 4); a store to an invariant address (GEMVER's
accumulator) advances no pointer and copies none (validation/cuda/probes/store_copies.cu)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cgpredict.runtime_trips import RuntimeTrip
from cgpredict.store_copies import (
    STORE_COPY_WORDS,
    STORE_COPY_WORDS_BUSY,
    plain_port,
    store_copies,
)
from tests.test_runtime_trip import SCALED_CHAIN, _kernel, _trip

# the end of deriche_hfwd's main trip (plain port), as nvdisasm -c prints it from nvcc
# -cubin -O3 -arch=sm_90 of validation/cuda/deriche.cu (loop .L_x_20 of the unrolled build;
# its 15 first iterations abridged): the adds of imgIn's pointer (R4) and Y1's (R6) go to
# R13:R14 and R11:R12 before the last store and the last load, and are copied back
DERICHE_HFWD_TRIP_END = """\
        /*0900*/                   LDG.E R2, desc[UR6][R4.64+0x34] ;
        /*0910*/                   LDG.E R13, desc[UR6][R4.64+0x30] ;
        /*0920*/                   IADD3 R8, R8, -0x10, RZ ;
        /*0930*/                   ISETP.GT.AND P1, PT, R8, 0xc, PT ;
        /*0940*/                   UIADD3 UR4, UR4, 0x10, URZ ;
        /*0950*/                   FMUL R2, R2, UR8 ;
        /*0960*/                   FFMA R2, R13, UR9, R2 ;
        /*0970*/                   FFMA R2, R9, UR10, R2 ;
        /*0980*/                   IADD3 R13, P2, R4, 0x40, RZ ;
        /*0990*/                   FFMA R2, R11, UR11, R2 ;
        /*09a0*/                   IADD3 R11, P3, R6, 0x40, RZ ;
        /*09b0*/                   IADD3.X R14, RZ, R5, RZ, P2, !PT ;
        /*09c0*/                   STG.E desc[UR6][R6.64+0x34], R2 ;
        /*09d0*/                   IADD3.X R12, RZ, R7, RZ, P3, !PT ;
        /*09e0*/                   LDG.E R10, desc[UR6][R4.64+0x34] ;
        /*09f0*/                   MOV R6, R11 ;
        /*0a00*/                   MOV R7, R12 ;
        /*0a10*/                   MOV R4, R13 ;
        /*0a20*/                   MOV R5, R14 ;
        /*0a30*/               @P1 BRA `(.L_x_20) ;
"""


def _moves(listing: str) -> int:
    """The MOV instructions (class other) of a listing: register copies on the ALU pipe."""
    return sum(line.split("*/", 1)[1].split()[0] == "MOV" for line in listing.splitlines()
               if "*/" in line)


def test_a_trip_of_deriche_copies_both_words_of_both_pointers() -> None:
    """Hand count: 4 MOV, both words of imgIn's and Y1's pointers; the trip's FMUL and 3 FFMA
    an iteration keep the FMA pipe busy, so no IMAD.MOV: eq. (12sc) with 2 pointers x 2."""
    assert _moves(DERICHE_HFWD_TRIP_END) == 4
    trip = RuntimeTrip(depth=16, pointers=2, strided=0, stores=1, store_copied=2,
                       copy_words=STORE_COPY_WORDS_BUSY)
    assert trip.other == 4.0
    assert trip.per_iteration("other") == pytest.approx(4 / 16)
    assert trip.integer == 2 * 2 + 3  # the copies add no integer instruction


@pytest.mark.parametrize(
    "depth, rebased, chain, stored, loaded, aliased, want",
    [
        (16, False, False, 1, 1, False, 1),  # restrict: the stored pointer only
        (16, False, False, 1, 1, True, 2),  # plain: the loads' pointer too
        (16, False, False, 2, 3, True, 5),
        (16, False, False, 0, 2, True, 0),  # a store to an invariant address: none
        (16, False, True, 1, 1, True, 0),  # a chain trip: trip_copies counts it
        (16, True, False, 1, 1, True, 0),  # re-based: its own copies
        (4, False, False, 1, 1, True, 0),  # nvcc's trip: not modelled
    ],
)
def test_which_pointers_a_trip_copies_behind_its_stores(
    depth: int, rebased: bool, chain: bool, stored: int, loaded: int, aliased: bool, want: int
) -> None:
    assert store_copies(depth, rebased, chain, stored, loaded, aliased) == want



def _stored(body: str) -> str:
    """A kernel of ``body`` storing to B, which the program reads after the kernel (a store
    nothing reads is dead code to the restrict port's compiler)."""
    src = _kernel(body, "A[N][N], B[N][N], y[N]")
    return src.replace("return y[3] != 12345.0f", "return y[3] + B[3][5] != 12345.0f")


# one FMUL an iteration (the probe B[i][j] = 2 * A[i][j]), and a scaled recurrence stored
# every iteration: an FMUL and an FFMA an iteration
ONE_STORE = _stored("B[i][j] = 2.0f * A[i][j];")
RECURRENCE = _stored("{ s = 3.0f * A[i][j] + 0.5f * s; B[i][j] = s; }")


@pytest.mark.parametrize(
    "src, port, copied, words",
    [(ONE_STORE, "plain", 2, STORE_COPY_WORDS), (ONE_STORE, "restrict", 1, STORE_COPY_WORDS),
     (RECURRENCE, "plain", 2, STORE_COPY_WORDS_BUSY),
     (RECURRENCE, "restrict", 1, STORE_COPY_WORDS_BUSY),
     (SCALED_CHAIN, "plain", 0, STORE_COPY_WORDS)],
    ids=["one_store_plain", "one_store_restrict", "recurrence_plain", "recurrence_restrict",
         "invariant_store"],
)
def test_the_pointers_a_trip_of_our_own_copies_behind_its_stores(
    tmp_path: Path, src: str, port: str, copied: int, words: int
) -> None:
    trip, _ = _trip(tmp_path, src, port)
    assert trip.depth == 16 and not trip.rebased
    assert (trip.store_copied, trip.copy_words) == (copied, words)
    assert trip.other == trip.copied + copied * words


def test_the_plain_port_is_told_by_its_opaque_pointers() -> None:
    ir = ("define void @k() {\n  %0 = tail call ptr asm sideeffect \"\", \"=r,0\"(ptr @A)\n}\n"
          "define void @r() {\n  ret void\n}\n")
    assert plain_port(ir, "k")
    assert not plain_port(ir, "r")
