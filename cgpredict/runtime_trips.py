"""What ptxas makes of a loop bounded by a run-time size (issue 24, SPEC §2.4): source
iterations a trip and the control and address instructions the trip keeps, derived from the
traced loop (its accesses, their strides and invariant offsets, its stores).

The ports pass sizes as run-time parameters, so nvcc cannot unroll such a loop whole; what
the sm_90 SASS keeps of a trip: the section comment below. ``kernel.launch`` charges the trip
(``loop_trip_at``) in place of the loop's affine share (``ThreadBodies.unrolled_savings``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .compute import (
    PTXAS_UNROLL,
    UNROLL_RUNTIME,
    UNROLL_WHOLE,
    ptx_cost,
    runtime_trip_depth,
)
from .constant_trips import constant_bound, constant_trip_depth, loop_body_cost
from .frontend.tracefile import Trace
from .instrument import loopbody
from .loop_blocks import own_blocks
from .loop_counter import counts_down, counts_up_from_constant
from .loop_exits import data_exit, data_tainted, loaded_bound
from .machine_code import address_geps
from .store_copies import STORE_COPY_WORDS, plain_port, store_copies, store_copy_words
from .trip_accesses import (
    access_moves_one_element,
    invariant_offsets,
    loop_ir,
    pointer_key,
    products_of_loads,
)
from .trip_constants import runs_slow_path, trip_constant_moves, trip_constants

# --- ptxas's unrolling of a loop bounded by a run-time size (issue 24) ---------------------
#
# nvcc unrolls such a loop UNROLL_RUNTIME (4) times in its PTX; ptxas unrolls that trip
# PTXAS_UNROLL (4) times more when the loop has an access that moves one element per
# iteration or does not count up from a constant (loop_counter: Deriche's backward passes),
# and at most one store, and no IEEE division or square root (whose slow-path call makes
# 16 iterations too long: compute.runtime_trip_depth). Of the unrolled trip's
# control and address arithmetic the SASS keeps (read from the sm_90 SASS of the ports'
# hot loops, validation/results/sass-check.md):
#
# * the remaining count's add and its test, one back edge, and the source index itself
#   (IADD3/VIADD): the remainder stage after the unrolled trips computes its addresses from
#   it (PTX: ``mul.wide.s32 %rd, %r_k, 4`` before the 1-iteration loop), so it stays live;
# * per pointer moving one element: its 64-bit add (IADD3 + IADD3.X);
# * per pointer moving by a row: a 64-bit add of the row pointer (2); where every access
#   moves by a row (nvcc's 4 a trip, ``RuntimeTrip.rows_only``) nvcc keeps a 32-bit row index
#   per distinct invariant offset (``invariant_offsets``: SYRK transposed's A[k][i] and A[k][j]
#   two, Deriche's column pass's imgIn[i][j] and y1[i][j] one) and ptxas forms each address
#   from it (IMAD.WIDE, one per pointer); a single such index LLVM's loop strength reduction
#   starts at the trip's last row (j + 3 M) and subtracts again every trip (PTX:
#   ``add.s32 %r, %r_row, -192``: one instruction more: the CORR and COVAR means); a loop
#   counting down (Deriche's backward column pass) ptxas unrolls 16 deep and keeps that row
#   code once per nvcc trip (4 times a trip: 19 integer instructions a trip in its SASS);
# * a *re-based* trip (``rebased_trip``): where the addresses of a 16-deep trip are offset by
#   two or more different loop-invariant values (GEMM's A[i][k] and B[k][j]: the thread's
#   row i and column j; SYRK's A[i][k] and A[j][k]), LLVM's loop strength reduction keeps
#   one induction pointer (a 64-bit add) and re-adds each offset to it: a unit-stride access
#   is then addressed twice a trip (its nvcc trip's first iteration at sext(r + k), the other
#   three at sext(r + k + 1): two addresses; one access gets two pointers of its own (a
#   64-bit add each: GEMM's A), two or more an IMAD.WIDE each from the induction pointer
#   (SYRK)), and a strided one from its row base, which is the same for every thread (a
#   uniform register pair, UIADD3), plus the thread's offset (IMAD.WIDE). The base an
#   IMAD.WIDE adds to must be a vector register pair: ptxas copies it there every trip: a
#   strided access's uniform row base as a MOV of its low word (class other) and an IMAD.U32
#   of its high word (integer: MM's trips; GEMM's issues both as MOV), the induction pointer
#   of two or more unit-stride accesses as 2 MOV (SYRK); and the one unit-stride access that
#   gets two pointers of its own (GEMM's, MM's A) has the second one's new value copied back
#   into the registers its loads name (2 MOV: MM both ports, GEMM restrict).
#
# --- a trip that counts down (``RuntimeTrip.descending``, eq. 12d) -------------------------
#
# Where the loop counts down (Deriche's backward row pass; not a grid-stride loop) and its
# accesses move one element, ptxas keeps no per-thread pointer: each array's moving part
# (the same for every thread) is a uniform register pair stepped down once a trip (UIADD3 +
# UIADD3.X), copied to a vector pair (2 MOV, other) to which one IMAD.WIDE adds the thread's
# offset (``i * W``); the trip's count is its only index. Read from the sm_90 SASS of
# deriche_hbwd, both ports (16 a trip, imgIn and Y2: IADD3 + ISETP, per array 2 UIADD3 +
# IMAD.WIDE = 8 integer, 4 MOV): integer = TRIP_CONTROL_INTEGER + (UNIFORM_BASE_ADD_INTEGER
# + BASE_ADDRESS_INTEGER) x p, other = UNIFORM_BASE_COPY_OTHER x p (p pointers). A backward
# column pass (rows only) keeps its row indices instead.

# --- register copies of a trip that is not re-based (``trip_copies``) ----------------------
#
# A value live across the back edge must be in the same registers at the top of every trip.
# ptxas computes a pointer's next-trip value (its 64-bit add) in the trip's last iteration,
# and where the register allocator gives the add a register other than the one the next
# trip's loads name, it copies it back before the back edge: a MOV of the low word (class
# other) per such pointer. Read from the sm_90 SASS of the ports' 16-iteration trips
# (validation/results/sass-check.md):
#
# * a *chain* trip: every iteration stores (the plain port's accumulator, which may alias the
#   arrays it reads, so each iteration's loads wait for the previous store) and each product
#   multiplies two of the values the trip loads (``tmp[i] += A[i][j] * x[j]``): the adds are
#   scheduled after the last multiply-add has read its two loaded values and take those freed
#   registers: every advancing pointer is copied (ATAX, BICG, MVT, DCT1D plain: 2 MOV a trip
#   for 2 pointers). Where a product scales a loaded value by an invariant first
#   (``beta * A[j][i] * y[j]``: GEMVER, Deriche) the adds go in place: no copy;
# * a trip without a store (restrict: the accumulator stays in a register), whose loads all
#   issue at its top: the pointer of each unit-stride access offset by the thread's row (a
#   loop-invariant value: ``A[i][j]``) is copied, one offset by nothing (``x[j]``) and one
#   moving by a row are advanced in place (ATAX k1, BICG k2, MVT k1, DCT1D, GEMVER k3: 1 MOV;
#   GESUMMV's A[i][j] and B[i][j]: 2; ATAX k2, BICG k1, MVT k2, GEMVER k2: none);
# * a 4-deep trip (nvcc's trip, kept by ptxas): no copies modelled (GESUMMV plain's 2 MOV a
#   trip follow no rule of the traced program read so far).
#
# --- constant-bank reloads of a rows-only trip (``base_reloads``) ---------------------------
#
# A rows-only trip forms each address from a 32-bit row index and the array's base pointer,
# a kernel parameter (IMAD.WIDE Rd, R_row, 4, R_base). Where the trip has two or more row
# indices (distinct invariant offsets: SYRK transposed's A[k][i] and A[k][j], Gram-Schmidt
# k3's Q[i][k] and A[i][j], CORR's and COVAR's inner product of two columns), ptxas writes
# the last address formed from a base into the base's own register pair and loads the base
# again from the constant bank at the top of the next trip: one LDC.64 (class other) per
# array per nvcc trip, in both ports (read from the sm_90 SASS of all five such loops: SYRK
# transposed 1 a trip, GS k3 2 in each of its loops, CORR/COVAR corr 1). With one row index
# ptxas keeps the base in registers in 5 of the 10 such loops and reloads it in the other 5
# (kept: the plain CORR/COVAR means, CORR's restrict standard deviation, Deriche's column
# pass in both ports; reloaded: the restrict means, CORR's plain standard deviation, GS k1
# in both ports): the same loop shape either way, a register-allocation choice that no
# rule of the traced program read so far separates (a store in the trip: 1 of 5 reload,
# none: 4 of 5): not counted.
#
# --- a gather's base, reloaded every trip (``RuntimeTrip.gathered``, eq. (12gb)) ----------
#
# A gathered access (``x[col[k]]``: an address from a value the loop loads) advances no
# pointer: each iteration forms its address from the array's base, a kernel parameter, and
# the loaded index (IMAD.WIDE Rd, R_index, 4, R_base). ptxas gives the trip's last such
# address the base's own register pair and loads the base again from the constant bank at
# the top of the next trip: one LDC.64 (class other) per gathered array and SASS trip, read
# from the sm_90 SASS of both gathers in run-time loops: the user spmv_csr (16 a trip) and
# the blind spmv_ell (4 a trip), both ports.

# Which registers the allocator gives an add is its own choice: the two rules are what the
# 16-deep trips of the corpus show, with the copies behind a trip's stores (eq. (12sc),
# ``store_copies``: Deriche's forward row pass), all of them but Deriche's backward column
# pass (rows only) and GEMM restrict's (4 where MM's rule says 3).
# Where a pointer's high word is copied too, ptxas issues that copy on the FMA pipe
# (IMAD.MOV, class integer: one a trip in the plain ATAX, BICG, MVT, DCT1D): not counted.

#: integer instructions per trip for the loop's control: the remaining count's add and its test
TRIP_CONTROL_INTEGER = 2
#: integer instructions per trip for the source index the remainder stage addresses from
TRIP_INDEX_INTEGER = 1
#: integer instructions per trip per advancing pointer: its 64-bit add (IADD3 + IADD3.X)
POINTER_ADD_INTEGER = 2
#: rows-only trip: per row index its 32-bit add; per pointer the IMAD.WIDE of its address
ROW_INDEX_ADD_INTEGER = 1
ROW_ADDRESS_INTEGER = 1
#: rows-only trip with one row index: the subtraction re-basing it from the trip's last row
ROW_REOFFSET_INTEGER = 1
#: re-based trip: the shared induction pointer's 64-bit add (integer, per trip)
REBASED_INDUCTION_INTEGER = 2
#: re-based trip: addresses per unit-stride access a trip (one integer instruction each)
REBASED_UNIT_ADDRESSES = 2
#: re-based trip, per strided access: the IMAD.WIDE adding the thread's offset to the row base
STRIDED_BASE_INTEGER = 1
#: re-based trip, per strided access: its uniform row base copied into a vector pair, the
#: low word by a MOV (other), the high word by an IMAD.U32 (integer)
ROW_BASE_COPY_OTHER = 1
ROW_BASE_COPY_INTEGER = 1
#: re-based trip: the induction pointer of two or more unit-stride accesses copied into a
#: vector pair (2 MOV)
INDUCTION_COPY_OTHER = 2
#: re-based trip with one unit-stride access: its second pointer copied back (2 MOV)
OWN_POINTER_COPY_OTHER = 2
#: trip not re-based: per pointer whose next-trip value is copied back (``trip_copies``)
POINTER_COPY_OTHER = 1
#: rows-only trip with two or more row indices: per array and nvcc trip, the LDC.64 of its base
BASE_RELOAD_OTHER = 1
#: per gathered array and SASS trip: the LDC.64 reloading its base (eq. (12gb))
GATHER_RELOAD_OTHER = 1
#: branch instructions per trip: the back edge
TRIP_BRANCHES = 1
#: descending trip, per pointer: the uniform base's 64-bit step (UIADD3 + UIADD3.X)
UNIFORM_BASE_ADD_INTEGER = 2
#: descending trip, per pointer: the IMAD.WIDE adding the thread's offset to the base
BASE_ADDRESS_INTEGER = 1
#: descending trip, per pointer: the uniform base copied into a vector pair (2 MOV)
UNIFORM_BASE_COPY_OTHER = 2

@dataclass(frozen=True)
class RuntimeTrip:
    """What ptxas makes of one loop bounded by a run-time size: source iterations a trip
    and the integer, branch and other instructions each trip keeps."""

    depth: int  # source iterations per trip (16 or 4)
    pointers: int = 0  # distinct address bases the loop advances
    strided: int = 0  # of them, those moving by more than one element per iteration
    stores: int = 0  # global stores per iteration
    rebased: bool = False  # a 16-deep trip whose addresses have 2+ invariant offsets
    # a rows-only trip's distinct invariant offsets: its row indices (0: not counted, each
    # pointer then costs POINTER_ADD_INTEGER)
    row_indices: int = 0
    # a trip not re-based: the pointers whose next-trip value ptxas copies back (trip_copies)
    copied: int = 0
    # a rows-only trip: the arrays whose base ptxas reloads every nvcc trip (base_reloads)
    reloaded: int = 0
    # a 16-deep trip of a loop that does not count up from a constant, its pointers moving
    # one element: uniform bases stepped down, eq. (12d)
    descending: bool = False
    # eq. (12k): library calls' constant moves a source iteration (their expansions count
    # them a call) and the moves one trip sets of them (trip_constants; 0 with a slow path)
    constants: float = 0.0
    constant_kinds: int = 0
    # eq. (12gb): the arrays the trip gathers from (x[col[k]]), whose bases it reloads
    gathered: int = 0
    # eq. (12ct): a compile-time count: no remainder stage (no index kept), no copy
    constant: bool = False
    # a re-based trip: the arrays of its unit-stride accesses, one induction pointer each
    unit_arrays: int = 1
    # eq. (12sc): the pointers copied back behind the trip's stores (store_copies) and the
    # MOVs each copy takes (store_copy_words)
    store_copied: int = 0
    copy_words: int = STORE_COPY_WORDS

    @property
    def rows_only(self) -> bool:
        """Whether every pointer moves by a row (nvcc's 4 a trip, no unit-stride access)."""
        return self.pointers > 0 and self.strided == self.pointers

    @property
    def integer(self) -> float:
        """Integer instructions per trip: control, index, pointer adds and addresses."""
        unit = self.pointers - self.strided
        if self.rows_only and self.row_indices:
            rows = ROW_INDEX_ADD_INTEGER * self.row_indices + ROW_ADDRESS_INTEGER * self.strided
            rows += ROW_REOFFSET_INTEGER if self.row_indices == 1 else 0
            # per nvcc trip: ptxas's deeper trip (a loop counting down) repeats its row code
            nvcc_trips = self.depth // UNROLL_RUNTIME
            return float(TRIP_CONTROL_INTEGER + TRIP_INDEX_INTEGER + nvcc_trips * rows)
        if self.descending:
            per = UNIFORM_BASE_ADD_INTEGER + BASE_ADDRESS_INTEGER
            return float(TRIP_CONTROL_INTEGER + per * self.pointers)
        if self.rebased:
            induction = REBASED_INDUCTION_INTEGER * max(self.unit_arrays, 1)
            units = (induction + REBASED_UNIT_ADDRESSES * unit) if unit else 0
            per_row = POINTER_ADD_INTEGER + STRIDED_BASE_INTEGER + ROW_BASE_COPY_INTEGER
            rows = per_row * self.strided
        else:
            units, rows = POINTER_ADD_INTEGER * unit, POINTER_ADD_INTEGER * self.strided
        index = 0 if self.constant else TRIP_INDEX_INTEGER  # eq. (12ct): no remainder stage
        return float(TRIP_CONTROL_INTEGER + index + units + rows)

    @property
    def branch(self) -> float:
        """Branch instructions per trip: the back edge."""
        return float(TRIP_BRANCHES)

    @property
    def other(self) -> float:
        """Moves per trip (class other): a re-based trip's copies of the bases its
        IMAD.WIDEs add to (each strided access's row base, the induction pointer of two or
        more unit-stride accesses) and of a single unit-stride access's second pointer; in
        another trip, the copies of the pointers ``trip_copies`` and ``store_copies`` (eq.
        (12sc)) name and the constant-bank reloads of the bases ``base_reloads`` names, once
        per nvcc trip; in any trip, the
        reload of each gathered array's base (eq. (12gb)), less the library calls' constant
        moves the trip does not repeat (eq. (12k), negative)."""
        consts = trip_constant_moves(self.depth, self.constants, self.constant_kinds)
        consts += GATHER_RELOAD_OTHER * self.gathered  # eq. (12gb): LDC.64 of a gather's base
        if self.descending:
            return float(UNIFORM_BASE_COPY_OTHER * self.pointers) + consts
        if not self.rebased:
            reloads = BASE_RELOAD_OTHER * self.reloaded * (self.depth // UNROLL_RUNTIME)
            stored = self.copy_words * self.store_copied  # eq. (12sc)
            return float(POINTER_COPY_OTHER * self.copied + reloads + stored) + consts
        unit = self.pointers - self.strided
        own = {0: 0, 1: OWN_POINTER_COPY_OTHER}.get(unit, INDUCTION_COPY_OTHER)
        if self.constant:  # eq. (12ct): SYR2K's 8-deep trip copies no register
            return consts
        return float(ROW_BASE_COPY_OTHER * self.strided + own) + consts

    def per_iteration(self, cls: str = "all") -> float:
        """Kept instructions per source iteration of class ``cls`` (integer, branch, other,
        all)."""
        n = {"integer": self.integer, "branch": self.branch, "other": self.other,
             "all": self.integer + self.branch + self.other}.get(cls, 0.0)
        return n / self.depth


def rebased_trip(depth: int, offsets) -> bool:
    """Whether a trip of ``depth`` source iterations is re-based (see RuntimeTrip): deeper
    than nvcc's 4 (ptxas's 16, a compile-time 8 or more: eq. (12ct)), its advancing addresses
    offset by two or more different sets of loop-invariant values (one set a pointer)."""
    return depth > UNROLL_RUNTIME and len({f for f in offsets if f}) >= 2


def trip_copies(depth: int, rebased: bool, stores: int, chain: bool, row_offset_units: int,
                pointers: int) -> int:
    """Pointers whose next-trip value ptxas copies back a trip (see the section comment):
    in a 16-deep trip that is not re-based, every pointer of a chain trip (``stores`` every
    iteration and ``chain``: each product multiplies two loaded values), and in a trip
    without a store each unit-stride pointer offset by the thread's row
    (``row_offset_units``); none otherwise."""
    if rebased or depth != UNROLL_RUNTIME * PTXAS_UNROLL:
        return 0
    if stores:
        return pointers if chain else 0
    return row_offset_units


def descending_trip(depth: int, down: bool, rebased: bool, moves_one: list[bool]) -> bool:
    """Whether a trip steps uniform bases down (see the section comment, eq. 12d): 16
    deep, not re-based, its loop counting down (``down``: loop_counter.counts_down; not a
    grid-stride loop, whose SASS keeps per-thread pointers) and every pointer it advances
    moving one element (``moves_one``: per pointer)."""
    deep = depth == UNROLL_RUNTIME * PTXAS_UNROLL
    return deep and down and not rebased and bool(moves_one) and all(moves_one)


def base_reloads(row_indices: int, arrays: int) -> int:
    """Arrays whose base a rows-only trip reloads from the constant bank every nvcc trip
    (see the section comment): all of them (``arrays``) where the trip has two or more row
    indices (``row_indices``), none otherwise."""
    return arrays if row_indices >= 2 else 0


def runtime_trip(trace: Trace, loop, trip: int = 0) -> RuntimeTrip:
    """``RuntimeTrip`` of ``loop`` (a loop of the trace bounded by a run-time size): its global
    accesses at an address that changes every iteration, their distinct address bases
    (``pointer_key``: the pointers ptxas advances), which of them move by more than an element
    and its stores an iteration decide the depth (compute.runtime_trip_depth; a compile-time
    ``trip`` > 0 and the body's size: eq. (12ct)); their invariant offsets if it is re-based."""
    h = trace.header
    ir = loop_ir(trace, loop)
    if ir is None:
        return RuntimeTrip(depth=runtime_trip_depth(False, 0))
    body, geps, defs = ir.body, ir.geps, ir.defs
    inv, gather = loopbody.invariant_ops(body.ops), data_tainted(body)  # x[col[k]]: no pointer
    moving: dict[tuple, bool] = {}  # per advancing pointer: moves one element
    offsets: dict[tuple, frozenset] = {}  # per advancing pointer: its invariant offsets
    loads: set[int] = set()  # body ops loading at an advancing address
    stored: set[tuple] = set()  # advancing pointers a store addresses: eq. (12sc)
    gathered: set[str] = set()  # arrays addressed from a loaded index: eq. (12gb)
    for o in body.mem_ops:
        at = address_geps(body.ops, o)
        if o.mem_id >= 0 and o.array and any(gather[g] for g in at):
            gathered.add(o.array)
        if o.mem_id >= 0 and o.array and not any(gather[g] for g in at) and any(
                not inv[g] for g in at):
            key = pointer_key(body, o, geps)
            moving[key] = moving.get(key, False) or access_moves_one_element(body, o, geps)
            offsets[key] = invariant_offsets(body, o, geps, defs)
            loads |= {o.index} if o.klass == "load" else set()
            stored |= {key} if o.klass == "store" else set()
    stores = sum(o.klass == "store" and o.mem_id >= 0 for o in body.mem_ops)
    counts_up, slow = counts_up_from_constant(trace, loop), runs_slow_path(trace, loop)
    depth = runtime_trip_depth(any(moving.values()), stores, counts_up, slow_path=slow)
    if trip > 0:  # eq. (12ct): nvcc knows the count
        blocks = [h.blocks[b] for b in own_blocks(trace, loop)]
        depth = constant_trip_depth(loop_body_cost(blocks, ptx_cost), trip)
    rebased = rebased_trip(depth, offsets.values())
    row_units = sum(bool(offsets[k]) for k, unit in moving.items() if unit)
    chain = products_of_loads(body, loads)
    rows = len(set(offsets.values())) if moving and not any(moving.values()) else 0
    down = descending_trip(depth, counts_down(trace, loop), rebased, list(moving.values()))
    consts, kinds = (0.0, 0) if slow else trip_constants(trace, loop)  # eq. (12k)
    # eq. (12sc): not a rows-only trip, and a compile-time one copies no register (12ct)
    behind = 0 if down or rows or trip > 0 else store_copies(
        depth, rebased, chain, len(stored), len(moving) - len(stored),
        plain_port(h.ir_text, loop.function))
    return RuntimeTrip(
        depth=depth,
        pointers=len(moving),
        strided=sum(not unit for unit in moving.values()),
        stores=stores,
        rebased=rebased,
        row_indices=rows,
        copied=0 if down or trip > 0 else trip_copies(depth, rebased, stores, chain, row_units,
                                                      len(moving)),
        reloaded=base_reloads(rows, len({array for array, _ in moving})),
        descending=down,
        constants=consts,
        constant_kinds=kinds,
        gathered=len(gathered),
        constant=trip > 0,
        unit_arrays=max(len({a for (a, _), unit in moving.items() if unit}), 1) if rebased else 1,
        store_copied=behind,
        copy_words=store_copy_words(body) if behind else STORE_COPY_WORDS,
    )


def loop_iterations(trace: Trace, loop: int, ratio: float) -> float:
    """Iterations an entry of loop ``loop`` of ``trace``, grown by ``ratio`` to the work size."""
    entries = float(trace.loop_entries[:, loop].sum())
    return (float(trace.loop_iters[:, loop].sum()) / entries if entries else 0.0) * ratio


def loop_trip_at(trace: Trace, loop: int, ratio: float = 1.0,
                 sized: bool = False) -> RuntimeTrip | None:
    """runtime_trip of loop ``loop`` bounded by a run-time size (> UNROLL_WHOLE iterations, or
    ``sized``: its trip grows with a size macro the port passes at run time, eq. (12sz)), a
    loaded count (eq. (12y)) or its port's constant (12ct); None: straight code, data exits."""
    if loop < 0 or data_exit(trace, loop):
        return None
    lp = trace.header.loops[loop]
    loaded = loaded_bound(trace, loop)
    known = constant_bound(trace, lp) and not loaded  # eq. (12ct)
    n = loop_iterations(trace, loop, ratio)
    run_time_size = sized and not known  # eq. (12sz): a size passed at run time is a trip
    if n <= UNROLL_WHOLE and not run_time_size and not loaded:
        return None
    return runtime_trip(trace, lp, int(round(n)) if known else 0)
