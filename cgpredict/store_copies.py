"""Eq. (12sc): the pointers a run-time trip copies back behind its stores (issue 24, SPEC
§2.4): which advancing pointers ptxas re-registers before the back edge of a 16-deep trip that
stores through one, and how many MOVs each copy takes (split out of ``runtime_trips``, which
charges them in ``RuntimeTrip.other``).
"""

from __future__ import annotations

import functools

from .compute import PTXAS_UNROLL, UNROLL_RUNTIME
from .frontend.port import opaque_aliases
from .instrument import loopbody

# --- copies of the pointers a trip stores through (``store_copies``, eq. (12sc)) -----------
#
# A 16-deep trip that is neither re-based nor a chain trip and stores every iteration through
# an advancing pointer (``out[i][j] = f(in[i][j])``, Deriche's row pass ``Y1[i][j] = ...``)
# ends with its last iteration's store, which waits for that iteration's arithmetic: ptxas
# schedules the pointer's 64-bit add before it, into other registers, and copies the new value
# back before the back edge. Where the loads may alias the stores (the plain port's opaque
# pointers) they cannot move above the trip's stores either, and every advancing pointer a
# load addresses is copied too; with ``__restrict__`` the loads issue at the trip's top and
# their pointers are advanced in place. A copy moves the pointer's two words: both by MOV
# (class other) where an iteration issues two or more FP32 instructions (the FMA pipe busy:
# Deriche's FMUL and 3 FFMA, a scaled recurrence's FMUL + FFMA), else the low word by MOV and
# the high one by IMAD.MOV (integer, not counted, as for the chain trips). Read from the sm_90
# SASS of deriche_hfwd (4 MOV a trip plain: imgIn and Y1; 2 restrict: Y1) and of the probes
# of validation/cuda/probes/store_copies.cu (a run-time bound): B[i][j] = 2 * A[i][j]
# (restrict: B, MOV + IMAD.MOV; plain: A and B, MOV + IMAD.MOV each), y = a * A[i][j] + b * y;
# B[i][j] = y (restrict: B, 2 MOV), y += A[i][j]; B[i][j] = y (restrict: B, MOV + IMAD.MOV).
# The plain recurrence copies B's two words and A's low one: 3 where the rule says 4. A store
# to an invariant address (the accumulator of GEMVER plain) advances no pointer: no copy; nor
# does a rows-only trip (every access moving by a row: ``RuntimeTrip.rows_only``), which forms its
# addresses from row indices (an IMAD.WIDE each) and adds to no pointer (Deriche's column
# passes; their copies, of the backward pass, are not modelled).

#: eq. (12sc): MOVs per pointer a store copies back, by the FP32 instructions of an iteration:
#: both words where it issues two or more (STORE_COPY_BUSY_FP32), else the low word only
STORE_COPY_WORDS_BUSY = 2
STORE_COPY_WORDS = 1
STORE_COPY_BUSY_FP32 = 2


def store_copies(depth: int, rebased: bool, chain: bool, stored: int, loaded: int,
                 aliased: bool) -> int:
    """Eq. (12sc): pointers a 16-deep trip that is neither re-based nor a chain trip copies
    back behind its stores (see the section comment): each advancing pointer a store
    addresses (``stored``) and, where the loads may alias the stores (``aliased``: the plain
    port), each one only loads address (``loaded``); none in another trip."""
    if rebased or chain or depth != UNROLL_RUNTIME * PTXAS_UNROLL or not stored:
        return 0
    return stored + (loaded if aliased else 0)


def store_copy_words(body: loopbody.LoopBody) -> int:
    """Eq. (12sc): MOVs per pointer a store copies back: both words where an iteration of
    ``body`` issues STORE_COPY_BUSY_FP32 or more FP32 instructions (each ``fmul`` and
    ``fadd``, an ``llvm.fmuladd``'s two parts once: loopbody names its multiply ``.mul``),
    else the low word."""
    fp32 = sum(o.klass in ("fmul", "fadd") for o in body.ops)
    fp32 -= sum(o.klass == "fmul" and o.name.endswith(".mul") for o in body.ops)
    return STORE_COPY_WORDS_BUSY if fp32 >= STORE_COPY_BUSY_FP32 else STORE_COPY_WORDS


@functools.lru_cache(maxsize=64)
def _opaque_functions(ir_text: str) -> frozenset[str]:
    """The functions of ``ir_text`` that reach their arrays through the plain port's opaque
    pointers (``frontend.port.opaque_aliases``)."""
    return frozenset(f for f, _ in opaque_aliases(ir_text))


def plain_port(ir_text: str, function: str) -> bool:
    """Whether ``function``'s loads may alias its stores: its arrays are the plain port's
    opaque pointers (``frontend.port``), as a kernel's ``float *`` parameters are to nvcc."""
    return function in _opaque_functions(ir_text)
