"""A loop trip with several warps on one H100 SM (eq. (LT) of docs/models.md), checked against
every mode and warp count of ``validation/ubench/loop_trip.cu`` (lease of 2026-11-27, second
session: ``counters/loop_trip.json``).

The block's W warps sit on the SM's four sub-partitions (warp w on w % 4), so n = W / 4 of them
(at least 1) share one scheduler. A sub-partition gives a warp trip two resources (eq. (LTs)):
its issue slots, one an instruction plus ``CONTROL_SLOTS`` a trip for the loop's control (the
uniform counter, the compare and the taken back branch), and its register file's read ports,
one register a cycle from each of ``BANKS`` banks (register r in bank r % BANKS; an operand the
previous instruction marked ``.reuse`` comes from the operand cache, not a bank). The trip holds
the sub-partition for the slower of the two:

    s = max(instructions + CONTROL_SLOTS, max over banks of the trip's reads in it,
            2 x IMADs)                                                               (LTs)

One warp alone takes L cycles a trip (its own latency path: eq. (LT)). n warps form a closed
loop around one server of service s (a warp spends L - s of its trip away from it), solved by
exact mean-value analysis as ``l1_stages.closed_loop_cycles`` does for the L1:

    R(k) = s x (1 + Q(k - 1)),  T(k) = (L - s) + R(k),  Q(k) = k x R(k) / T(k)        (LTq)

T(n) tends to L for n x s << L and to n x s (the sub-partition's issue) for n x s >> L: the
model's max of the critical path and the issue bound, with the knee between them.

The SASS of each trip (``nvcc -cubin -O3 -arch=sm_90`` of loop_trip.cu, nvdisasm) is written
out below by hand. ``CONTROL_SLOTS`` is read off ``trip1`` at 32 warps (5.43 cycles a warp trip
for 4 instructions); the other three modes check it.

    python validation/loop_trips.py [loop_trip.json ...]
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOOP_TRIP = ROOT / "validation/measured/h100-session-2026-11-27b/counters/loop_trip.json"
LOOP_TRIP2 = ROOT / "validation/measured/h100-session-2026-11-27-r12-t7/loop_trip2.json"
#: each mode's trip in the sm_90 SASS (nvdisasm), of loop_trip.cu and of loop_trip2.cu
SASS_TRIPS = [ROOT / "validation/ubench/loop_trip.trips.txt",
              ROOT / "validation/ubench/loop_trip2.trips.txt"]

#: register-file banks of a sub-partition, one read a cycle each (register r in r % BANKS)
BANKS = 2
#: issue slots a loop trip's control takes beyond one an instruction: trip1 at 32 warps, 5.43
#: cycles a warp trip a sub-partition (43.44 / 8) for UIADD3, FFMA, ISETP and BRA
CONTROL_SLOTS = 1.43
#: cycles an IMAD holds the sub-partition's fmaheavy pipe, the only one that runs it (16 lanes):
#: loop_trip2.cu's imul_8, eight IMAD R9,R9,R9,RZ a trip (8 reads), 16.32 cycles a warp trip
HEAVY_CYCLES = 2.0


@dataclass(frozen=True)
class Inst:
    """One SASS instruction of a trip: the registers it reads from the banks, in operand order
    (not the operand cache, not uniform registers, constants or RZ)."""

    op: str
    reads: tuple[int, ...] = ()


_CONTROL = (Inst("UIADD3"), Inst("ISETP", (6,)), Inst("BRA"))
_CHAIN = Inst("FFMA", (4, 0, 5))  # FFMA R0, R4, R0, R5: x = x * a + b


def _lanes(regs: tuple[int, ...]) -> tuple[Inst, ...]:
    """The trip of C independent chains (registers ``regs``, the last one R0): the first FFMA
    reads R4 and R5 and marks them .reuse, the others read their own chain's register."""
    first = Inst("FFMA", (4, regs[0], 5))
    return (first,) + tuple(Inst("FFMA", (r,)) for r in regs[1:])


#: each mode's SASS trip (loop_trip.cu: trip1 U=1 C=1, trip8 U=8, ilp2/ilp4 U=1 C=2/4)
TRIPS: dict[str, tuple[Inst, ...]] = {
    "trip1": (_CHAIN,) + _CONTROL,
    "trip8": (_CHAIN,) * 8 + _CONTROL,
    "trip1_ilp2": _lanes((8, 0)) + _CONTROL,
    "trip1_ilp4": _lanes((8, 10, 12, 0)) + _CONTROL,
}

_PRED_DEST = ("ISETP", "FSETP", "PLOP3")


def parse_trip(sass: str) -> tuple[Inst, ...]:
    """A trip's instructions from its nvdisasm text (instructions separated by ';'): each
    one's source registers read from the banks. The first operand is the destination except
    for the compares (predicate destinations); a uniform instruction reads no bank; a source
    in the slot and register that the previous instruction marked ``.reuse`` comes from the
    operand cache."""
    trip: list[Inst] = []
    cached: dict[int, str] = {}
    for text in sass.split(";"):
        words = re.sub(r"@!?U?P\w+", "", text).split(None, 1)  # the guard predicate
        if not words:
            continue
        op = words[0].split(".")[0]
        operands = [o.strip() for o in words[1].split(",")] if len(words) > 1 else []
        sources = operands if op in _PRED_DEST or op == "BRA" else operands[1:]
        reads, reuse = [], {}
        for slot, src in enumerate(sources):
            reg = src.split(".")[0]
            if not (reg.startswith("R") and reg[1:].isdigit()) or op.startswith("U"):
                continue
            if cached.get(slot) != reg and int(reg[1:]) not in reads:
                reads.append(int(reg[1:]))  # a register named twice is read once
            if src.endswith(".reuse"):
                reuse[slot] = reg
        cached = reuse
        trip.append(Inst(op, tuple(reads)))
    return tuple(trip)


def sass_trips(paths: list[Path] = SASS_TRIPS) -> dict[str, tuple[Inst, ...]]:
    """Every mode's trip parsed from the ``mode | instructions`` lines of ``paths``."""
    out: dict[str, tuple[Inst, ...]] = {}
    for path in paths:
        for line in path.read_text().splitlines():
            if "|" in line and not line.startswith("#"):
                mode, text = line.split("|", 1)
                out[mode.strip()] = parse_trip(text)
    return out


def slot_cycles(trip: tuple[Inst, ...], banks: int = BANKS,
                control: float = CONTROL_SLOTS) -> float:
    """Cycles a warp trip holds its sub-partition, eq. (LTs): the slowest of its issue slots,
    its busiest register bank's reads and its IMADs on the fmaheavy pipe."""
    issue = len(trip) + control
    per_bank = [0] * banks
    for inst in trip:
        for r in inst.reads:
            per_bank[r % banks] += 1
    heavy = HEAVY_CYCLES * sum(inst.op == "IMAD" for inst in trip)  # the fmaheavy pipe alone
    return max(issue, float(max(per_bank)), heavy)  # (LTs)


def closed_loop_trip(alone: float, service: float, warps: int) -> float:
    """Cycles a trip of each of ``warps`` warps sharing one sub-partition of service
    ``service`` a trip, each ``alone`` cycles a trip by itself: exact mean-value analysis of
    one queue and a delay, eq. (LTq)."""
    think = max(alone - service, 0.0)
    queue, response = 0.0, service
    for k in range(1, max(warps, 1) + 1):
        response = service * (1.0 + queue)
        queue = k * response / (think + response)
    return think + response  # (LTq)


def per_partition(warps: int) -> int:
    """Warps of a block of ``warps`` on its busiest sub-partition (warp w on w % 4)."""
    return max(-(-warps // 4), 1)


def measured(path: Path = LOOP_TRIP) -> dict[str, dict[int, float]]:
    """The slowest warp's cycles a trip per mode and warps in the block."""
    modes = json.loads(path.read_text())["modes"]
    out: dict[str, dict[int, float]] = {}
    for name, mode in modes.items():
        out[name] = {}
        for w, v in mode["warps"].items():
            out[name][int(w)] = v[0] if isinstance(v, list) else v["cycles_per_trip_slowest_warp"]
    return out


def predictions(trip: tuple[Inst, ...], points: dict[int, float]
                ) -> dict[int, tuple[float, float]]:
    """Per warp count: (max(L, n x s), eq. (LTq)) for a mode's ``trip``, L its one-warp trip."""
    s = slot_cycles(trip)
    alone = points[1]
    return {w: (max(alone, per_partition(w) * s),
                closed_loop_trip(alone, s, per_partition(w))) for w in points}


def errors(path: Path = LOOP_TRIP, trips: dict[str, tuple[Inst, ...]] = TRIPS
           ) -> tuple[float, float, float, float]:
    """(mean, worst) |model / measured - 1| over every mode of ``trips`` and warp count:
    first max(L, n x s), then eq. (LTq)."""
    flat, mva = [], []
    for mode, points in measured(path).items():
        if mode in trips:
            for w, (f, q) in predictions(trips[mode], points).items():
                flat.append(abs(f / points[w] - 1))
                mva.append(abs(q / points[w] - 1))
    return sum(flat) / len(flat), max(flat), sum(mva) / len(mva), max(mva)


def main(paths: list[Path]) -> None:
    trips = sass_trips()
    for path in paths:
        print(f"# {path}")
        print("mode        W   measured  max(L,ns)   (LTq)   s (LTs)  s measured (32 warps / 8)")
        for mode, points in measured(path).items():
            if mode not in trips:
                continue
            s = slot_cycles(trips[mode])
            for w, (flat, mva) in predictions(trips[mode], points).items():
                print(f"{mode:11s} {w:2d} {points[w]:9.2f} {flat:9.2f} {mva:9.2f} {s:8.2f}"
                      f" {points.get(32, float('nan')) / 8:8.2f}")
        print("|error|: max(L, n x s) mean %.3f worst %.3f; (LTq) mean %.3f worst %.3f"
              % errors(path, trips))


if __name__ == "__main__":
    main([Path(p) for p in sys.argv[1:]] or [LOOP_TRIP])
