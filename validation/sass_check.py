#!/usr/bin/env python3
"""cgpredict's per-thread instruction counts by class against the sm_90 SASS of the ports.

For every CUDA port (validation/cuda/NAME.cu, its C file polybench_c/NAME.c) and both pointer
models (``--port plain|restrict``), per kernel:

* **SASS without unrolling** (``sass_counts.py``, every loop ``#pragma unroll 1``): the
  dynamic instructions one thread runs, by class: the counts outside every loop plus each
  loop's own counts times its iterations per thread. The iterations are the C program's,
  from cgpredict's trace at a small size (``trace_sizes``, SASS_TRACE_SIZE); the SASS loops are
  matched to the C loops a thread runs by order and nesting depth, as ``ptx_check.py``
  matches the PTX loops. A tiled port's cooperative staging loop (``cgp::stage``: global
  loads stored to shared memory, no shared loads) runs one trip per tile with the reference
  32x32 block: it is charged once per trip of its enclosing loop. The counts are static
  within a trip: code under a condition counts on every trip (the staging bounds checks),
  but for the block that calls an IEEE slow path where a predicated branch skips it
  (``sass_counts.slow_call_blocks``: ordinary operands take the branch). The code outside
  the loops of a kernel without tiles is weighed by path (``sass_paths``) where its static
  count contradicts the C's loads, stores and loop entries per thread: fdtd_k1's
  ``i == 0`` row and other rows, gs_k1's ``t == 0`` merged into the guard.
* **cgpredict**: the same classes from what the model counts per thread. Global loads and
  stores are its memory instructions (the staging loads of a tiled kernel are loads); shared
  loads are its shared-memory accesses; barriers its ``sync_insts``; the compute
  instructions (``compute.ptx_cost`` of every executed LLVM operation) are split into FP32
  (floating-point operations), branch (conditional branches), other (conversions, SFU
  operations) and integer (the rest: integer arithmetic, compares, address ``mad``); an
  operation the model counts as its SASS expansion (``compute.SASS_EXPANSION``: IEEE
  division and sqrt, expf, integer division) is split as its sm_90 fast path is
  (``sass_model.EXPANSION_CLASSES``, ``sass_ops.py --check-classes``). The
  model's unrolling fold is subtracted as the model does it (``kernel.launch``: ``folded``,
  ``ThreadBodies.unrolled_savings``): of each innermost loop of the thread, the affine shares
  (``parallelism.affine_share``, of its integer ops and of its branches apart, eq. (AF2)) of
  its integer and branch instructions
  (``compute.integer_insts``) is counted once per unrolled trip
  (``kernel.launch_loops.loop_unroll_at``), or, in a loop bounded by a run-time size, replaced
  by what ptxas's trip keeps (``runtime_trips.loop_trip_at``, ``runtime_trips.RuntimeTrip``:
  integer, branch and the trip's register copies (other), per source iteration); it is
  taken from the integer, branch and other classes by the same call on each class's share of
  the operations (``folded_classes``). The per-thread entry code
  (``compute.kernel_entry_insts``) is split as its docstring reads: per grid dimension 3
  special-register moves (other), a ``mad`` and a ``setp`` (integer); one guard branch; per
  array an ``ld.param`` (other) and a ``cvta`` (integer); the model's correction of it to
  the SASS's entry code and the ``IMAD.WIDE`` per pointer a sequential loop advances
  (``cgpredict.sass_entry``, ``MachineExtras.entry_code`` and ``loop_pointers``,
  ``_entry_integer``) are integer, and half the loop set-up moves are (``IMAD.MOV``:
  ``SETUP_MOVES_ON_FMA_PIPE``). The SASS instructions without a PTX counterpart
  (``cgpredict.machine_code``, in ``comp_insts``): the prologue's constant
  loads and the loop set-up moves are other, a tiled kernel's staging stores are shared
  stores and its staging loop code (``memory.staging_code``, ``KernelProfile.staging_code``)
  goes to the integer, branch and other classes as the model splits it, the address
  instructions ptxas folds come off the integer class and the zero-trip tests merged into
  the guard (``zero_trip_tests.merged_zero_trip_tests``) off the branch class; the
  reconvergence pair of a loop some threads skip (eq. (12rv), ``MachineExtras.reconvergence``)
  is other, and the library calls' constant moves that ptxas issues as IMAD.MOV.U32 in a
  dividing kernel's straight-line code (eq. (12cm), ``trip_constants``) integer. Check of the
  split: for the launch the report's profile is of, FP32 + integer + branch + other + shared
  stores equals the model's ``comp_insts``. cgpredict has no shared widths: each shared
  access is one 32-bit instruction.
* **Unrolling** (``hot_loop``): the measured binaries keep nvcc's and ptxas's unrolling. Per
  source iteration of the hot loop (the innermost loop with the most FP32 instructions), the
  counts of the unrolled build are compared with those without unrolling; the estimate of
  what the GPU runs per thread (``unrolled_estimate``) is the count without unrolling
  corrected by that difference times the hot loop's iterations per thread. This estimate is
  what the comparison is against (``KernelCheck.sass``; the counts without unrolling,
  ``KernelCheck.sass1``, are secondary): the model counts unrolled code. The other innermost
  loops with FP32 operations are corrected the same way (``other_loops``: gs_k3's second
  loop) when their mix of global loads and stores per FP32 operation tells their unrolled
  loop apart; the rest stay at their counts without unrolling.

``python validation/sass_check.py [NAME ...] [--out validation/results/sass-check.md]`` writes
the table; ``tests/test_port_sass.py`` asserts what holds and marks the gaps as xfails.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ptx_check  # noqa: E402
import ptx_counts  # noqa: E402
import sass_counts  # noqa: E402
import sass_gaps  # noqa: E402
import sass_paths  # noqa: E402
from sass_counts import ClassCounts, SassKernel, SassLoop  # noqa: E402
from sass_model import (  # noqa: E402, F401  (the tests read the model side through the check)
    SASS_TRACE_SIZE,
    SETUP_MOVES_ON_FMA_PIPE,
    SUMMARY,
    ModelKernel,
    ModelLoop,
    c_source,
    entry_classes,
    model_kernels,
    model_op_class,
    model_op_classes,
    trace_sizes,
)
from sass_report import TOL, class_summary, gap_of, render  # noqa: E402, F401  (re-exported)

RESULTS = HERE / "results" / "sass-check.md"
USER_RESULTS = HERE / "results" / "sass-check-user.md"  # --user: the user kernels' ports
BLIND_RESULTS = HERE / "results" / "sass-check-blind.md"  # --blind: the blind kernels' ports
C_DIR = ptx_check.C_DIR


def summary(c: dict[str, float] | ClassCounts) -> dict[str, float]:
    """The comparison classes of a SASS count (shared widths summed, total added)."""
    d = c.counts if isinstance(c, ClassCounts) else c
    out = {k: float(d.get(k, 0.0)) for k in SUMMARY if k not in ("ld_shared", "st_shared")}
    out["ld_shared"] = float(sum(v for k, v in d.items() if k.startswith("ld_shared")))
    out["st_shared"] = float(sum(v for k, v in d.items() if k.startswith("st_shared")))
    out["total"] = sum(out[k] for k in SUMMARY if k != "total")
    return {k: out[k] for k in SUMMARY}


def is_staging(lp: SassLoop) -> bool:
    """A cooperative tile-staging loop: stores to shared memory, no shared loads."""
    return lp.own.st_shared > 0 and lp.own.ld_shared == 0


def _depths(k: SassKernel) -> list[int]:
    """Nesting depth of every non-staging loop of ``k`` among the non-staging loops."""
    out = []
    for lp in k.loops:
        if is_staging(lp):
            continue
        d, q = 1, lp.parent
        while q >= 0:
            d += not is_staging(k.loops[q])
            q = k.loops[q].parent
        out.append(d)
    return out


def sass_per_thread(k: SassKernel, loops: list[ModelLoop], outside: tuple[float, float] = ()
                    ) -> tuple[ClassCounts | None, str]:
    """Dynamic per-thread SASS counts of ``k`` (no unrolling) with the C loops' iterations
    per thread; (None, why) when the loop nests cannot be matched. With ``outside`` (the C's
    global loads and stores per thread outside its loops), the code outside the loops of a
    kernel without tiles is weighed by path where the static count contradicts them
    (``sass_paths.weighted_outside``)."""
    main = [lp for lp in k.loops if not is_staging(lp)]
    if _depths(k) != [ml.depth for ml in loops]:
        return None, (
            f"loop nests differ: SASS loop depths {_depths(k)}, C sequential loop depths "
            f"{[ml.depth for ml in loops]}"
        )
    trips = {id(lp): ml.iters_per_thread for lp, ml in zip(main, loops)}
    total = k.outside
    if outside and len(main) == len(k.loops):  # no staging loop: not a tiled kernel
        top = [k.loops.index(lp) for lp in main if lp.parent < 0]
        entries = [ml.entries_per_thread for lp, ml in zip(main, loops) if lp.parent < 0]
        total = sass_paths.weighted_outside(k, top, [*outside, *entries]) or total
    for lp in k.loops:
        if is_staging(lp):  # one trip per trip of its enclosing loop (32x32 block)
            n = trips.get(id(k.loops[lp.parent]), 1.0) if lp.parent >= 0 else 1.0
        else:
            n = trips[id(lp)]
        total = total.plus(lp.own, n)
    return total, ""


@dataclass
class HotLoop:
    """Counts per source iteration of a kernel's hot loop, with and without unrolling."""

    iters_per_thread: float
    nounroll: dict[str, float]
    unrolled: dict[str, float]
    factor: float  # source iterations per trip of the unrolled SASS region
    model: dict[str, float] = field(default_factory=dict)  # cgpredict, the C loop's own blocks
    widths: dict[str, float] = field(default_factory=dict)  # unrolled shared ld/st by width


def _mix(c: ClassCounts) -> tuple[float, float]:
    """Global loads and stores per FP32 instruction: what unrolling leaves unchanged."""
    return (round(c["ld_global"] / c["fp32"], 3), round(c["st_global"] / c["fp32"], 3))


_FP64_ARITH = frozenset(("DADD", "DMUL", "DFMA"))


def _own_fp64(k: SassKernel, lp: SassLoop) -> int:
    """FP64 arithmetic instructions (DADD, DMUL, DFMA) of ``lp``'s own body, inner loops
    excluded: the work count of a double-precision loop, which has no FP32 instruction."""
    inner = [q for q in k.loops if q is not lp and lp.start <= q.start and q.end <= lp.end]
    return sum(
        1 for i in range(lp.start, lp.end + 1)
        if k.insts[i].opcode.split(".")[0] in _FP64_ARITH
        and not any(q.start <= i <= q.end for q in inner)
    )  # fmt: skip


def _hot_fp64(k: SassKernel) -> SassLoop | None:
    """The loop with the most FP64 arithmetic in its own body (ties: the deepest), for a
    kernel whose loops have no FP32 instruction (a double dot product)."""
    cands = [lp for lp in k.loops if _own_fp64(k, lp) > 0]
    return max(cands, key=lambda lp: (_own_fp64(k, lp), lp.depth)) if cands else None


def _hot(k: SassKernel, like: ClassCounts | None = None) -> SassLoop | None:
    """The loop with the most FP32 instructions in its own body (ties: the deepest); with
    ``like``, among the loops whose compute phase has its mix of global loads and stores per
    FP32 instruction (the same source loop, unrolled), when there is one. Without an FP32
    instruction in any loop, the loop with the most FP64 arithmetic (``_hot_fp64``)."""
    cands = [lp for lp in k.loops if lp.own["fp32"] > 0]
    if not cands:
        return _hot_fp64(k)
    if like is not None and like["fp32"] > 0:
        same = [
            lp
            for lp in cands
            if _between_barriers(k, lp)["fp32"] > 0 and _mix(_between_barriers(k, lp)) == _mix(like)
        ]
        cands = same or cands
    return max(cands, key=lambda lp: (lp.own["fp32"], lp.depth)) if cands else None


def _between_barriers(k: SassKernel, lp: SassLoop) -> ClassCounts:
    """Counts of the stretch of ``lp`` between its first two barriers (the compute phase of
    a tiled loop: staging before it), inner loops included once; its own counts otherwise."""
    bars = [i for i in range(lp.start, lp.end + 1) if k.insts[i].opcode.startswith("BAR")]
    if len(bars) < 2:
        return lp.own
    return k.range_counts(bars[0] + 1, bars[1] - 1)


def hot_loop(plain: SassKernel, unrolled: SassKernel, ml: ModelLoop) -> HotLoop | None:
    """Per source iteration of the hot loop: the no-unroll loop's own counts, and the
    unrolled build's hot region divided by the iterations it holds (its FP32 count over one
    iteration's: FP32 operations are neither added nor removed by unrolling)."""
    h0 = _hot(plain)
    h1 = _hot(unrolled, like=h0.own) if h0 is not None else None
    if h0 is None or h1 is None:
        return None
    region = _between_barriers(unrolled, h1)
    # the no-unroll phase: the hot loop's iterations plus the code around it between barriers
    parent = plain.loops[h0.parent] if h0.parent >= 0 else None
    per_iter = summary(h0.own)
    if h0.own["fp32"] > 0:
        factor = region["fp32"] / h0.own["fp32"]
    else:  # a double-precision loop: its FP64 arithmetic, as unrolling keeps it too
        factor = _own_fp64(unrolled, h1) / _own_fp64(plain, h0)
    if parent is not None and _between_barriers(plain, parent) is not parent.own:
        phase = _between_barriers(plain, parent).plus(h0.own, factor - 1)
        per_iter = {c: v / factor for c, v in summary(phase).items()}
    unr = {c: v / factor for c, v in summary(region).items()}
    widths = {c: v / factor for c, v in region.counts.items() if "shared" in c and v}
    return HotLoop(ml.iters_per_thread, per_iter, unr, factor, ml.per_iter, widths)


def other_loops(plain: SassKernel, unrolled: SassKernel, loops: list[ModelLoop]) -> list[HotLoop]:
    """Per source iteration, the innermost loops with FP32 operations other than the hot one
    (gs_k3's second inner loop), each matched to the unrolled loop of the same mix of global
    loads and stores per FP32 operation (its main trip: the most FP32) when exactly one
    no-unroll loop has that mix; loops with barriers (tile phases) are left to ``hot_loop``."""
    main = [lp for lp in plain.loops if not is_staging(lp)]
    h0 = _hot(plain)
    inner = [
        lp for lp in main
        if lp is not h0 and lp.own["fp32"] > 0 and _between_barriers(plain, lp) is lp.own
        and not any(q.parent == plain.loops.index(lp) for q in plain.loops)
    ]
    out = []
    for lp in inner:
        mix = _mix(lp.own)
        if sum(_mix(q.own) == mix for q in main if q.own["fp32"] > 0) != 1:
            continue
        same = [q for q in unrolled.loops if q.own["fp32"] > 0 and _mix(q.own) == mix]
        if not same:
            continue
        u = max(same, key=lambda q: q.own["fp32"])
        factor = u.own["fp32"] / lp.own["fp32"]
        ml = loops[main.index(lp)]
        out.append(HotLoop(
            ml.iters_per_thread, summary(lp.own),
            {c: v / factor for c, v in summary(u.own).items()}, factor, ml.per_iter,
        ))
    return out


def staging_path(k: SassKernel, lp: SassLoop) -> ClassCounts | None:
    """The staging of one strip of the tiled loop ``lp`` (its code before the first barrier)
    along the path of a thread with one element of each tile (the 32x32 block the check
    predicts at), in a build whose staging loops nvcc unrolled 4 times, remainder first
    (memory.staging_code, eq. (S1)): a conditional forward branch falls through (the entry
    test, the remainder count test, the bounds test over the load), except the two after each
    shared store, taken (the remainder's exit test after the thread's last element, then the
    test for a 4-element trip); unconditional forward branches are followed. None without
    two barriers."""
    bars = [i for i in range(lp.start, lp.end + 1) if k.insts[i].opcode.startswith("BAR")]
    if len(bars) < 2:
        return None
    c, i, take = ClassCounts(), lp.start, 0
    while i < bars[0]:
        inst = k.insts[i]
        if not inst.slow:
            c.add(sass_counts.sass_class(inst.opcode))
        take = 2 if inst.opcode.startswith("STS") else take
        j = k.labels.get(inst.target or "", -1)
        if inst.opcode.startswith("BRA") and j > i and (not inst.guarded or take):
            take -= inst.guarded
            i = j
            continue
        i += 1
    return c


def staging_correction(plain: SassKernel, unrolled: SassKernel,
                       loops: list[ModelLoop]) -> HotLoop | None:
    """A tiled kernel's staging per strip, the no-unroll build's (the strip loop's code
    before its first barrier, each staging loop once) against the unrolled build's path
    (``staging_path``), weighed by the strips a thread runs; None for an untiled kernel."""
    h0 = _hot(plain)
    if h0 is None or h0.parent < 0:
        return None
    strip = plain.loops[h0.parent]
    h1 = _hot(unrolled, like=h0.own)
    bars = [i for i in range(strip.start, strip.end + 1)
            if plain.insts[i].opcode.startswith("BAR")]
    path = staging_path(unrolled, h1) if h1 is not None else None
    if len(bars) < 2 or path is None:
        return None
    main = [lp for lp in plain.loops if not is_staging(lp)]
    ml = loops[main.index(strip)]
    before = summary(plain.range_counts(strip.start, bars[0] - 1))
    return HotLoop(ml.iters_per_thread, before, summary(path), 1.0)


def unrolled_estimate(sass: dict[str, float] | None, h: HotLoop | None, others=()):
    """Per-thread SASS counts without unrolling (``sass``) corrected for unrolling at the hot
    loop ``h`` and the ``others`` (``other_loops``): each one's unrolled minus its no-unroll
    counts per source iteration, times its iterations per thread (``sass`` itself without a
    hot loop: straight-line code)."""
    if sass is None or h is None:
        return sass
    out = {
        c: max(v + sum((x.unrolled[c] - x.nounroll[c]) * x.iters_per_thread
                       for x in (h, *others)), 0.0)
        for c, v in sass.items()
        if c != "total"
    }
    out["total"] = sum(out.values())
    return {c: out[c] for c in SUMMARY}


def whole_unrolled(unrolled: SassKernel, model: dict[str, float]) -> dict[str, float]:
    """What the GPU runs of a kernel whose every loop ptxas unrolled whole (blind conv1d's 17
    taps: no loop left to correct at): the unrolled build's straight-line code, its paths
    weighed to the C's global loads and stores per thread (``sass_paths.weighted_outside``)."""
    target = [model["ld_global"], model["st_global"]]
    return summary(sass_paths.weighted_outside(unrolled, [], target) or unrolled.outside)


@dataclass
class KernelCheck:
    """One kernel (launch name) of one port and pointer model: SASS and cgpredict classes.
    ``sass`` is what the comparison is against: the unrolled estimate (what the measured
    binaries run) when the hot loop was measured unrolled, else the counts without
    unrolling; ``sass1`` the counts without unrolling (every loop ``#pragma unroll 1``)."""

    file: str
    launch: str
    port: str
    model: dict[str, float]
    sass: dict[str, float] | None
    sass_widths: dict[str, float] = field(default_factory=dict)  # without unrolling
    structure: str = ""
    hot: HotLoop | None = None
    others: list[HotLoop] = field(default_factory=list)  # other_loops: corrected as well
    model_comp_insts: float = 0.0  # kr.profile.comp_insts (the report's first launch)
    model_split_sum: float = 0.0  # FP32 + integer + branch + other of that launch
    sass1: dict[str, float] | None = None

    def ratio(self, cls: str) -> float | None:
        """cgpredict / SASS for class ``cls`` (None without a SASS count; inf for 0 SASS)."""
        if self.sass is None:
            return None
        s, m = self.sass[cls], self.model[cls]
        if s == 0:
            return 1.0 if abs(m) < 1e-9 else float("inf")
        return m / s

    def within(self, cls: str, tol: float = TOL) -> bool:
        """The model's count of ``cls`` within ``tol`` of the SASS count."""
        r = self.ratio(cls)
        return r is not None and abs(r - 1.0) <= tol + 1e-9

    def without_unrolling(self) -> "KernelCheck":
        """The same kernel compared with the SASS without unrolling (``sass1``)."""
        return KernelCheck(self.file, self.launch, self.port, self.model, self.sass1)


def check_file(name: str, port: str, out_dir: Path, *, unrolled: bool = True) -> list[KernelCheck]:
    """Compare every kernel of port ``name`` for ``port`` (cubins built into ``out_dir``;
    ``unrolled``: also build with the compiler's unrolling, for the hot-loop comparison)."""
    plain = sass_counts.port_kernels(name, port, out_dir)
    unr = sass_counts.port_kernels(name, port, out_dir, unroll=True) if unrolled else {}
    mk = model_kernels(name, port)
    out = []
    for launch in dict.fromkeys(launch for launch, _ in ptx_counts.launches(name)):
        if launch not in mk:
            continue
        k, m = plain[launch], mk[launch]
        total, why = sass_per_thread(k, m.loops, m.outside)
        kc = KernelCheck(name, launch, port, m.classes, None, structure=why)
        kc.model_comp_insts, kc.model_split_sum = m.comp_insts, m.split_sum
        if total is not None:
            kc.sass1 = summary(total)
            kc.sass_widths = {c: v for c, v in total.counts.items() if "shared" in c and v}
            h0 = _hot(k)
            if h0 is not None and launch in unr and not is_staging(h0):
                ml = m.loops[[lp for lp in k.loops if not is_staging(lp)].index(h0)]
                kc.hot = hot_loop(k, unr[launch], ml)
                kc.others = other_loops(k, unr[launch], m.loops)
                st = staging_correction(k, unr[launch], m.loops)
                kc.others += [st] if st is not None else []
            kc.sass = unrolled_estimate(kc.sass1, kc.hot, kc.others)
            if k.loops and launch in unr and not unr[launch].loops:  # unrolled whole
                kc.sass = whole_unrolled(unr[launch], m.classes)
        out.append(kc)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="port names (default: all)")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--keep", type=Path, default=None, help="keep cubins and listings here")
    ap.add_argument("--user", action="store_true",
                    help="the ports of the user kernels (validation/cuda/user, examples/user) "
                         f"instead of the corpus; default --out {USER_RESULTS.name}")
    ap.add_argument("--blind", action="store_true",
                    help="the ports of the blind kernels (validation/cuda/blind, "
                         "examples/blind) instead of the corpus; default --out "
                         f"{BLIND_RESULTS.name}")
    a = ap.parse_args(argv)
    if a.blind:
        names = [f"blind/{n}" for n in a.names] or ptx_counts.blind_port_names()
        out = BLIND_RESULTS if a.out == RESULTS else a.out
    elif a.user:
        names = [f"user/{n}" for n in a.names] or ptx_counts.user_port_names()
        out = USER_RESULTS if a.out == RESULTS else a.out
    else:
        names, out = a.names or ptx_counts.port_names(), a.out
    checks = ptx_counts.check_ports(names, check_file, a.keep, "cgp-sass-")
    ptx_counts.write_result(out, render(checks, user=a.user, blind=a.blind))
    return 0



known_gap = sass_gaps.known_gap  # the tests read the reasons through the check


if __name__ == "__main__":
    sys.exit(main())
