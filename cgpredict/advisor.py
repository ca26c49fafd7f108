"""The optimisation advisor (``cgpredict advise``, SPEC §2.6 and §4): candidate fixes ranked by
predicted speedup, each re-predicted from the same trace rather than guessed.

* **coalescing**: every 2-D array with uncoalesced accesses is re-analysed with its layout
  transposed (the recorded addresses remapped, then warps, cache and model run again); when
  that slows some kernels down, a transposed copy read only by the kernels it speeds up;
* **shared memory**: per kernel, the arrays it only reads inside its per-thread loops and does
  not already stage are staged in 32x32 tiles (bank conflicts from the remapped addresses,
  staging loads from what each block touches), or the user's tiled variant is predicted as
  written; a tiling that does not fit the device is not proposed;
* **block shape**: the model swept over legal block shapes, against the block the baseline
  used; "keep" unless a shape is predicted faster;
* **register accumulation**: in a plain port (pointers that may alias) an accumulator such as
  ``C[i][j] += ...`` is stored on every iteration; ``__restrict__`` or a local sum keeps it in
  a register, predicted from a second trace of the restrict port; and that change combined
  with the best coalescing or tiling fix, re-predicted as one kernel (not multiplied);
* **GPUPerf benefits** (B_itilp, B_memlp, B_fp, B_serial) and the bound of every kernel.

A fix predicted slower than now is listed as not worth doing (no instruction); the baseline's
warnings and the fixes that could not be predicted are given as notes.
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from .devices import load_device
from .models import predict as model_predict
from .occupancy import BlockDoesNotFit
from .pipeline import (
    Prepared,
    Report,
    RunOptions,
    analysis_worker,
    predict_source,
    prepare,
    usable_cores,
)
from .prediction import PredictionError
from .regions import read_source
from .shared import array_layouts, array_name
from .tracer import marked_source
from .warps import Block

TILE = 32
ADVICE_SCHEMA_VERSION = 1
#: A fix is worth doing only when it is predicted faster than now by more than this fraction.
TOLERANCE = 1e-3
#: Two fixes are proposed together only when that beats each alone by more than this fraction.
COMBINE = 0.01
BLOCKS_2D = ("32x32", "32x16", "32x8", "64x4", "128x2", "16x16")
BLOCKS_1D = ("128x1", "256x1", "512x1", "1024x1")


@dataclass(frozen=True)
class Fix:
    """One candidate change, its predicted effect, the evidence for it and why (per kernel
    whose time changes: before -> after, the bound, MWP/CWP, L2 transactions and hit rate)."""

    kind: str  # "coalescing" | "shared-memory" | "block-shape" | "register-accumulation" | ...
    title: str
    instruction: str
    evidence: tuple[str, ...]
    predicted_ms: float
    speedup: float
    why: tuple[str, ...] = ()
    # the prediction with the fix applied (not in --json: the baseline report's shape)
    report: Report | None = field(default=None, repr=False, compare=False)


def _state(k) -> str:
    """One kernel's prediction in a phrase: what bounds it and its memory traffic."""
    r = k.result
    what = r.bound if r.binding == "model" else f"{r.bound}, {r.binding} bound"
    p = k.profile
    l2 = sum(c.insts * (1 - c.l1_hit_fraction) * c.l2_trans_per_warp
             for c in (p.coal, p.uncoal, p.const))
    d = r.details
    comp, mem = getattr(d, "comp_cycles", None), getattr(d, "mem_cycles", None)
    cycles = (f", per warp {comp:.4g} computing / {mem:.4g} memory cycles"
              if comp is not None and mem is not None else "")
    return (f"{k.total_ms:.4g} ms ({what}, MWP {r.mwp:.1f} CWP {r.cwp:.1f}{cycles}, "
            f"{l2:.4g} L2 transactions per warp, L2 hit {100 * k.l2_hit_rate:.0f}%)")


def explain_change(base: Report, new: Report) -> tuple[str, ...]:
    """Why a fix changes the time: each kernel whose time moves, before -> after."""
    now = {k.name: k for k in base.kernels}
    out = []
    for k in new.kernels:
        b = now.get(k.name)
        if b is None or abs(k.total_ms - b.total_ms) <= b.total_ms * TOLERANCE:
            continue
        out.append(f"{k.name}: {_state(b)} -> {_state(k)}")
    return tuple(out)


def _explained(fix: Fix, base: Report, rep: Report | None) -> Fix:
    """``fix`` with its why lines and the report they come from."""
    if rep is None:
        return fix
    return dataclasses.replace(fix, why=explain_change(base, rep), report=rep)


@dataclass(frozen=True)
class Benefits:
    """GPUPerf's view of one kernel (SPEC §4), in cycles."""

    kernel: str
    bound: str
    t_comp: float
    t_mem_exposed: float  # T'_mem = T_mem - T_overlap
    b_itilp: float
    b_memlp: float
    b_fp: float
    b_serial: float


@dataclass(frozen=True)
class Advice:
    source: str
    device: str
    baseline_ms: float
    fixes: tuple[Fix, ...]  # best first
    benefits: tuple[Benefits, ...]
    baseline: Report
    notes: tuple[str, ...] = ()  # fixes that could not be predicted, and why

    def to_dict(self) -> dict:
        """What ``cgpredict advise --json`` prints (the baseline report left out)."""
        from .report import _jsonable

        d = _jsonable(dataclasses.replace(
            self, fixes=tuple(dataclasses.replace(f, report=None) for f in self.fixes)))
        d.pop("baseline", None)
        for f in d["fixes"]:
            f.pop("report", None)
        d["schema_version"] = ADVICE_SCHEMA_VERSION
        return d

    def to_json(self) -> str:
        import json

        return json.dumps(self.to_dict(), indent=2, sort_keys=True)


def _speedup(base: float, new: float) -> float:
    return base / new if new > 0 else float("inf")


def coalescing_fixes(
    prep: Prepared,
    opts: RunOptions,
    base: Report,
    notes: list[str] | None = None,
    pool: ThreadPoolExecutor | None = None,
) -> list[Fix]:
    """Transpose each 2-D array that has uncoalesced accesses, and re-predict (each array a
    task of ``pool``, when given: call it then from outside the pool's threads)."""
    return start_coalescing(prep, opts, base, notes, pool)()


def start_coalescing(
    prep: Prepared,
    opts: RunOptions,
    base: Report,
    notes: list[str] | None = None,
    pool: ThreadPoolExecutor | None = None,
):
    """``coalescing_fixes`` in two steps: the re-analyses are started now (on ``pool``, or
    done at once without one) and the returned function collects the fixes, so that the
    advisor queues the other fixes' analyses behind them before it waits."""
    found = _uncoalesced_arrays(prep, base)
    run = pool.submit if pool is not None else _now
    own = {arr: [] for arr in found}  # notes per array, merged in order
    pending = {
        arr: run(_try_analyze, prep, dataclasses.replace(opts, transpose=(arr,)),
                 f"storing {arr} transposed", own[arr])
        for arr in found
    }  # fmt: skip

    def collect() -> list[Fix]:
        fixes = []
        for arr, evidence in found.items():
            rep = pending[arr].result()
            if notes is not None:
                notes.extend(own[arr])
            if rep is not None:
                fixes += _transposition_fixes(arr, evidence, base, rep)
        return fixes

    return collect


def _uncoalesced_arrays(prep: Prepared, base: Report) -> dict[str, list[tuple[str, str]]]:
    """Per 2-D array with uncoalesced accesses: (kernel, evidence) of each, no repeats."""
    h = prep.trace.header
    layouts = array_layouts(h.ir_text)
    found: dict[str, list[tuple[str, str]]] = {}  # array -> (kernel, evidence), no repeats
    for k in base.kernels:
        for m in k.mem:
            arr = array_name(m.text)
            lay = layouts.get(arr)
            if m.pattern == "uncoalesced" and lay is not None and len(lay.dims) >= 2:
                e = (
                    k.name,
                    f"{m.text} at {m.location} in {k.name}: uncoalesced {m.kind}, "
                    + (f"{m.l2_trans_per_warp:.0f} L2 transactions per warp"
                       if m.l2_trans_per_warp >= 0.5 else
                       "a line per thread, mostly served by the L1 (each line one pass "
                       "of its load/store pipe)")
                    + f", {m.per_thread:.0f} per thread",
                )
                if e not in found.setdefault(arr, []):
                    found[arr].append(e)
    return found


def _transposition_fixes(
    arr: str, evidence: list[tuple[str, str]], base: Report, rep: Report
) -> list[Fix]:
    """The fixes of storing ``arr`` transposed (``rep``: that prediction): the whole change,
    and a transposed copy for the kernels it helps when it slows others down."""
    fixes = []
    # evidence of the kernels the transposition makes faster (all, when none is)
    now = {k.name: k.total_ms for k in base.kernels}
    faster = {k.name for k in rep.kernels if k.total_ms < now[k.name] * (1 - TOLERANCE)}
    shown = [e for kname, e in evidence if kname in faster] or [e for _, e in evidence]
    texts = sorted({m.text for k in base.kernels for m in k.mem if array_name(m.text) == arr})
    swapped = ", ".join(f"{t} -> {_swap(t)}" for t in texts if _swap(t) != t)
    fixes.append(_explained(
        Fix(
            "coalescing",
            f"store {arr} transposed",
            f"keep {arr} in transposed layout ({arr}T[c][r] = {arr}[r][c]) and index it the "
            f"other way round ({swapped}), so that consecutive threads read consecutive "
            f"addresses",
            tuple(shown),
            rep.total_ms,
            _speedup(base.total_ms, rep.total_ms),
        ), base, rep)
    )
    # a kernel the transposition slows down keeps the original layout: the others read a
    # transposed copy (the copy kernel itself is not counted)
    after = {k.name: k.total_ms for k in rep.kernels}
    slower = [n for n in now if after.get(n, now[n]) > now[n] * (1 + TOLERANCE)]
    if faster and slower:
        mixed = sum(min(now[n], after.get(n, now[n])) for n in now)
        users = [n for n in now if n in faster]
        texts = sorted(
            {
                m.text
                for k in base.kernels
                if k.name in faster
                for m in k.mem
                if array_name(m.text) == arr and _swap(m.text) != m.text
            }
        )
        fixes.append(
            Fix(
                "coalescing",
                f"transposed copy of {arr} for {', '.join(users)}",
                f"make {arr}T[c][r] = {arr}[r][c] once and read it in {', '.join(users)} "
                f"({', '.join(f'{t} -> {arr}T{_swap(t)[len(arr) :]}' for t in texts)}); "
                f"{', '.join(slower)} keep reading {arr} (the copy's own cost is not "
                f"counted)",
                tuple(shown)
                + tuple(f"{n}: {now[n]:.4g} ms now, {after[n]:.4g} ms transposed" for n in now),
                mixed,
                _speedup(base.total_ms, mixed),
                tuple(w for w in explain_change(base, rep) if w.split(":")[0] in users),
            )
        )
    return fixes


def _swap(text: str) -> str:
    """``A[j][k]`` -> ``A[k][j]`` (the last two subscripts exchanged)."""
    import re

    subs = re.findall(r"\[([^\]]*)\]", text)
    if len(subs) < 2:
        return text
    subs[-1], subs[-2] = subs[-2], subs[-1]
    return array_name(text) + "".join(f"[{s}]" for s in subs)


def shared_candidates_by_kernel(prep: Prepared, base: Report) -> dict[str, list[str]]:
    """Per kernel, the 2-D arrays it only reads, inside its per-thread loops (deeper than the
    loops mapped to threads): each element is reused by many threads of a block across
    iterations. An array the kernel writes, or already stages (``#pragma cgp shared``), is
    not a candidate there."""
    h = prep.trace.header
    layouts = array_layouts(h.ir_text)
    out: dict[str, list[str]] = {}
    for k in base.kernels:
        info = h.region(k.name)
        region, dims = info.index, k.grid_dims
        written = {array_name(m.base) for m in h.mem if m.kind == "store" and m.region == region}
        staged = {x[0] for x in info.shared}
        inner = {b for lp in h.loops if lp.region == region and lp.depth > dims for b in lp.blocks}
        mine: list[str] = []
        for m in h.mem:
            arr = array_name(m.base)
            lay = layouts.get(arr)
            if (
                m.region == region
                and arr not in written
                and arr not in staged
                and lay is not None
                and len(lay.dims) >= 2
                and m.block in inner
                and arr not in mine
            ):
                mine.append(arr)
        if mine:
            out[k.name] = mine
    return out


def shared_candidates(prep: Prepared, base: Report) -> list[str]:
    """The arrays of shared_candidates_by_kernel, over all kernels, first seen first."""
    out: list[str] = []
    for arrs in shared_candidates_by_kernel(prep, base).values():
        out += [a for a in arrs if a not in out]
    return out


def _try_analyze(prep: Prepared, opts: RunOptions, what: str, notes: list[str] | None):
    """prep.analyze, or None (with a note) when the changed launch cannot run on the device."""
    try:
        return prep.analyze(opts)
    except (PredictionError, BlockDoesNotFit) as exc:
        if notes is not None:
            notes.append(f"{what}: not predicted ({exc})")
        return None


def _same_kernel(tiled_name: str, names: set[str]) -> bool:
    """``gemm_tiled`` is the tiled ``gemm``; a tiled file may also keep the names."""
    return tiled_name in names or tiled_name.removesuffix("_tiled") in names


def check_tiled(tiled: Path, base: Report, block: Block | None) -> None:
    """A --tiled file must tile the kernels of the source (names equal, or with ``_tiled``)
    in tiles that the block divides or that divide the block: one-line errors otherwise."""
    regions = marked_source(tiled, read_source(tiled)).regions
    names = {k.name for k in base.kernels}
    if not any(_same_kernel(r.name, names) for r in regions):
        raise PredictionError(
            f"--tiled {tiled}: none of its kernels ({', '.join(r.name for r in regions) or 'none'})"
            f" is a kernel of {base.source} ({', '.join(sorted(names))}), by name or name_tiled"
        )
    if block is None:
        return
    for r in regions:
        for h in r.shared:
            for tile, edge, axis in ((h.tile_cols, block.x, "x"), (h.tile_rows, block.y, "y")):
                if tile % edge and edge % tile:
                    raise PredictionError(
                        f"--tiled {tiled}:{r.line}: tile {h.tile_rows}x{h.tile_cols} of "
                        f"{h.array} and block {block} do not divide each other along {axis} "
                        f"({tile} vs {edge})"
                    )


def shared_fix(
    prep: Prepared,
    opts: RunOptions,
    base: Report,
    tiled: Path | None,
    notes: list[str] | None = None,
) -> Fix | None:
    """Tile the read-only reused arrays into shared memory, each kernel its own (or predict the
    user's tiled file). A tiling that does not fit the device is not proposed."""
    if tiled is not None:
        check_tiled(tiled, base, opts.block)
        rep = predict_source(tiled, dataclasses.replace(opts, transpose=(), stage=()))
        return _explained(Fix(
            "shared-memory",
            f"use the tiled variant {tiled.name}",
            f"replace the kernel by {tiled.name}",
            (f"{tiled.name} predicts {rep.total_ms:.4g} ms",),
            rep.total_ms,
            _speedup(base.total_ms, rep.total_ms),
        ), base, rep)
    by_kernel = shared_candidates_by_kernel(prep, base)
    if not by_kernel:
        return None
    stage = tuple((k, a, TILE, TILE) for k, arrs in by_kernel.items() for a in arrs)
    names = ", ".join(shared_candidates(prep, base))
    rep = _try_analyze(
        prep, dataclasses.replace(opts, stage=stage), f"tiling {names} in shared memory", notes
    )
    if rep is None:
        return None
    evidence = []
    for k in rep.kernels:
        if k.name not in by_kernel:
            continue
        sh = k.profile.shared
        if sh.bytes_per_block:
            worst = max((x for x, n in sh.insts_by_conflict if n > 0), default=1)
            evidence.append(
                f"{k.name} (tiles {', '.join(by_kernel[k.name])}): {sh.bytes_per_block} B of "
                f"shared memory per block, {sh.load_insts:.0f} staging loads and "
                f"{k.profile.sync_insts:.0f} barriers per thread, worst bank conflict "
                f"{worst:.0f}-way"
            )
    where = "; ".join(f"{', '.join(arrs)} in {k}" for k, arrs in by_kernel.items())
    return _explained(Fix(
        "shared-memory",
        f"tile {names} in shared memory ({TILE}x{TILE})",
        f"strip-mine the innermost loop by {TILE}, load {TILE}x{TILE} tiles ({where}) "
        f"into __shared__ arrays per block (__syncthreads() before and after use), and read "
        f"the tiles instead of global memory; mark it with '#pragma cgp shared ARRAY tile "
        f"{TILE}x{TILE}' to predict your version",
        tuple(evidence),
        rep.total_ms,
        _speedup(base.total_ms, rep.total_ms),
    ), base, rep)


def block_fix(
    prep: Prepared,
    opts: RunOptions,
    base: Report,
    notes: list[str] | None = None,
    pool: ThreadPoolExecutor | None = None,
) -> Fix | None:
    """The best legal block shape for the file's kernels, against the block the baseline
    actually used (a 1-D kernel replaces a 2-D --block by its default); a change is
    recommended only when it is predicted faster than the current shape, otherwise "keep"."""
    two_d = any(k.grid_dims == 2 for k in base.kernels)
    shapes = list(BLOCKS_2D if two_d else BLOCKS_1D)
    used = [k.block for k in base.kernels if k.grid_dims == (2 if two_d else 1)]
    current = used[0] if used else str(opts.block or Block.parse(shapes[0]))
    if current not in shapes:
        shapes.append(current)
    device = load_device(opts.device)
    results: dict[str, float] = {current: base.total_ms} if current in shapes else {}
    todo = [s for s in shapes if s != current
            and Block.parse(s).threads <= device.max_threads_per_block]

    def one(s: str) -> tuple[str, Report | None, list[str]]:
        mine: list[str] = []  # notes per shape, merged in sweep order below
        opts_s = dataclasses.replace(opts, block=Block.parse(s))
        return s, _try_analyze(prep, opts_s, f"blocks of {s}", mine), mine

    # the shapes are independent re-analyses of one trace whose heavy kernels release the
    # GIL (numba nogil, numpy): threads sweep them side by side on the machine's cores
    reports: dict[str, Report] = {}
    own = pool or ThreadPoolExecutor(
        max(1, min(len(todo), usable_cores())), initializer=analysis_worker
    )
    try:
        for s, rep, mine in own.map(one, todo):
            if notes is not None:
                notes.extend(mine)
            if rep is not None:
                results[s] = rep.total_ms
                reports[s] = rep
    finally:
        if pool is None:
            own.shutdown()
    if not results:
        return None
    best = min(results, key=lambda s: (results[s], s != current))
    now = results.get(current, base.total_ms)
    evidence = tuple(
        f"{s}: {ms:.4g} ms" + (" (current)" if s == current else "")
        for s, ms in sorted(results.items(), key=lambda x: x[1])
    )
    if results[best] < now * (1 - TOLERANCE):
        return _explained(Fix(
            "block-shape",
            f"launch with blocks of {best}",
            f"use --block {best} (blockDim = dim3({best.replace('x', ', ')}))",
            evidence,
            results[best],
            _speedup(base.total_ms, results[best]),
        ), base, reports.get(best))
    return Fix(
        "block-shape",
        f"keep blocks of {current}",
        f"the current block shape {current} is the best swept",
        evidence,
        now,
        _speedup(base.total_ms, now),
    )


def restored_stores(base: Report) -> list[tuple[str, str, str, float, float]]:
    """(kernel, access, location, stores per thread, transactions per warp) of every store
    the plain port repeats on each iteration of a per-thread loop (an accumulator)."""
    return [
        (k.name, m.text, m.location, m.per_thread, m.l2_trans_per_warp)
        for k in base.kernels
        for m in k.mem
        if m.restored
    ]


def register_fix(
    prep_restrict: Prepared, opts: RunOptions, base: Report, rep: Report | None = None
) -> Fix | None:
    """Keep each repeatedly stored accumulator in a register (``__restrict__`` pointers or a
    local sum), re-predicted from a trace of the restrict port (``rep``: that prediction,
    when it was made already)."""
    found = restored_stores(base)
    if not found:
        return None
    if rep is None:
        rep = prep_restrict.analyze(dataclasses.replace(opts, port="restrict"))
    texts = sorted({t for _, t, _, _, _ in found})
    example = texts[0]
    evidence = tuple(
        f"{t} at {loc} in {k}: stored {n:.0f} times per thread, {tr:.0f} transactions per "
        f"warp each; the restrict port stores it once"
        for k, t, loc, n, tr in found
    )
    return _explained(Fix(
        "register-accumulation",
        f"keep {', '.join(texts)} in a register",
        f"declare the kernel's array parameters __restrict__ (float * __restrict__ "
        f"{array_name(example)}), or accumulate in a local variable: "
        f"`float sum = {example}; for (...) sum += ...; {example} = sum;`",
        evidence,
        rep.total_ms,
        _speedup(base.total_ms, rep.total_ms),
    ), base, rep)


class _now:
    """A finished future: ``combined_fix`` without a pool runs its parts in turn."""

    def __init__(self, fn, *args) -> None:
        self._value = fn(*args)

    def result(self):
        return self._value


def combined_fix(
    prep_restrict: Prepared,
    opts: RunOptions,
    base: Report,
    fixes: list[Fix],
    tiled: Path | None,
    notes: list[str],
    rbase: Report | None = None,
    pool: ThreadPoolExecutor | None = None,
) -> Fix | None:
    """Register accumulation together with another fix, re-predicted as one change (the
    effects do not multiply: tiling already keeps the sum in a register). Every coalescing
    and tiling fix is tried, even one that gains nothing alone: when the stores bound the
    kernel, removing loads pays only once the stores are gone too."""
    others = [f for f in fixes if f.kind in ("coalescing", "shared-memory")]
    if not others:
        return None
    ropts = dataclasses.replace(opts, port="restrict")
    # the restrict port's own prediction: the register fix's report when it has one
    rbase = rbase if rbase is not None else prep_restrict.analyze(ropts)
    own: list[list[str]] = [[], []]  # notes of the re-analyses, merged in order
    run = pool.submit if pool is not None else _now
    sh = (  # the tiling first: the longest analysis, the transpositions beside it
        run(shared_fix, prep_restrict, ropts, rbase, tiled, own[1])
        if any(f.kind == "shared-memory" for f in others) else None
    )
    coal = (  # each array's transposition a task of its own
        start_coalescing(prep_restrict, ropts, rbase, own[0], pool)
        if any(f.kind == "coalescing" for f in others) else None
    )
    restrict_coal = {f.title: f for f in coal()} if coal is not None else {}
    restrict_shared = sh.result() if sh is not None else None
    for n in own:
        notes += n
    tried = []
    for other in others:
        again = restrict_shared if other.kind == "shared-memory" else restrict_coal.get(
            other.title
        )
        if again is not None:
            tried.append((again, other))
    if not tried:
        return None
    again, best = min(tried, key=lambda t: t[0].predicted_ms)
    if again.predicted_ms > min(f.predicted_ms for f in fixes) * (1 - COMBINE):
        return None  # no better than one of the fixes alone: nothing to combine
    return Fix(
        "combined",
        f"keep accumulators in registers and {best.title}",
        "both changes, as one kernel (what the textbook version of this kernel does)",
        (f"re-predicted from the restrict port's trace: {again.predicted_ms:.4g} ms",),
        again.predicted_ms,
        _speedup(base.total_ms, again.predicted_ms),
        explain_change(base, again.report) if again.report is not None else (),
        again.report,
    )


def benefits(base: Report, device_name: str) -> tuple[Benefits, ...]:
    """GPUPerf benefit metrics of every kernel's baseline profile."""
    device = load_device(device_name)
    out = []
    for k in base.kernels:
        d = model_predict(k.profile, device, "gpuperf").details
        out.append(
            Benefits(
                k.name,
                d.bound,
                d.t_comp,
                d.t_mem - d.t_overlap,
                d.b_itilp,
                d.b_memlp,
                d.b_fp,
                d.b_serial,
            )
        )
    return tuple(out)


def advise(source: Path, opts: RunOptions, tiled: Path | None = None, progress=None) -> Advice:
    """Rank the candidate fixes of ``source`` by predicted speedup."""
    with prepare(source, opts, progress) as prep:
        return advise_prepared(prep, source, opts, tiled, progress)


def _restrict_base(traced, ropts: RunOptions) -> tuple[Prepared, Report]:
    """The restrict port (``traced``: the future of its ``prepare``, which lends it the
    plain port's probe runs when the loops are the same) predicted: the register fix's
    report, and the baseline every combined fix is re-predicted from."""
    prep_r = traced.result()
    try:
        return prep_r, prep_r.analyze(ropts)
    except BaseException:
        prep_r.close()
        raise


def may_keep_in_register(prep: Prepared) -> bool:
    """Whether a kernel may store inside a loop of its own threads (an accumulator the
    restrict port keeps in a register), from the loop nest alone: a store deeper than the
    loops its grid maps (2 when the region asks for it or is one depth-2 loop in one
    depth-1 loop with no store between them; else 1), or a store in a helper function.
    A guess: it decides only whether the restrict port is traced before the baseline
    says whether it is needed."""
    h = prep.trace.header
    for r in h.regions:
        loops = [lp for lp in h.loops if lp.region == r.index]
        deepest: dict[int, int] = {}
        for lp in loops:
            for b in lp.blocks:
                deepest[b] = max(deepest.get(b, 0), lp.depth)
        depths = [deepest.get(m.block, 0) for m in h.mem
                  if m.kind == "store" and m.region == r.index]  # fmt: skip
        nest = [sum(lp.depth == d for lp in loops) for d in (1, 2)] == [1, 1]
        mapped = r.grid or (2 if nest and 1 not in depths else 1)
        if any(d > mapped for d in depths):
            return True
    return any(m.kind == "store" and m.region < 0 for m in h.mem)


def _discard(pending) -> None:
    """Close a background trace nobody will read (its temporary files go with it):
    ``pending`` gives a Prepared or a (Prepared, Report)."""
    try:
        got = pending.result()
        (got[0] if isinstance(got, tuple) else got).close()
    except Exception:  # noqa: BLE001 - the error that stopped the caller is the one to show
        pass


def advise_prepared(
    prep: Prepared,
    source: Path,
    opts: RunOptions,
    tiled: Path | None = None,
    progress=None,
    base: Report | None = None,
    quick: bool = False,
) -> Advice:
    """``advise`` on a trace already prepared (``cgpredict report`` reuses its own): the fixes
    re-predicted from ``prep``; only the register fix traces again (the restrict port).
    ``quick``: no block-shape sweep and no restrict-port trace (the two costly parts; a note
    says they were left out)."""
    notes: list[str] = []
    fixes: list[Fix] = []
    ropts = dataclasses.replace(opts, port="restrict")
    with (
        ThreadPoolExecutor(1) as tracer,
        ThreadPoolExecutor(usable_cores(), initializer=analysis_worker) as pool,
    ):
        # the restrict port is compiled, traced and predicted in the background (the
        # compiler's and the traced program's time, mostly), from the start, beside the
        # baseline's analysis, when the loop nest says a kernel may store in its threads'
        # own loops, else once the baseline says one does; meanwhile the plain trace is
        # re-analysed for the other fixes, each fix (and each block shape) a task of the pool
        early = None
        if base is None and not quick and opts.port == "plain" and may_keep_in_register(prep):
            traced = tracer.submit(prepare, source, ropts, probes_of=prep)
            early = tracer.submit(_restrict_base, traced, ropts)
        try:
            base = base if base is not None else prep.analyze(opts)
        except BaseException:
            if early is not None:
                _discard(early)
            raise
        restrict = not quick and opts.port == "plain" and bool(restored_stores(base))
        if restrict and progress is not None:
            progress("tracing the restrict port")
        pending = early
        if restrict and early is None:
            traced = tracer.submit(prepare, source, ropts, probes_of=prep)
            pending = tracer.submit(_restrict_base, traced, ropts)  # after it, one thread
        elif not restrict and early is not None:
            tracer.submit(_discard, early)  # traced for nothing: closed when done
            pending = None
        try:
            own = [[], [], []]  # notes per fix, merged in a fixed order
            # the tiling first (the longest analysis), then each transposition, each shape
            sh = pool.submit(shared_fix, prep, opts, base, tiled, own[1])
            coal = start_coalescing(prep, opts, base, own[0], pool)
            bl = None if quick else block_fix(prep, opts, base, own[2], pool)
            fixes += coal()
            if sh.result():
                fixes.append(sh.result())
            if bl:
                fixes.append(bl)
            for n in own:
                notes += n
        except BaseException:
            if pending is not None:
                _discard(pending)
            raise
        if quick:
            notes.append(
                "quick advice: the block-shape sweep and the register fix (a trace of the "
                "restrict port) were left out"
            )
        elif pending is not None:
            prep_r, rbase = pending.result()
            with prep_r:
                reg = register_fix(prep_r, opts, base, rbase)
                if reg:
                    fixes.append(reg)
                # a tiled file of the user's is predicted as written: its accumulation is
                # its own
                both = None if tiled else combined_fix(
                    prep_r, opts, base, fixes, tiled, notes, rbase, pool
                )
                if both:
                    fixes.append(both)
    # the baseline's own warnings (unsafe port, block replaced, staging dropped, ...)
    for w in (w for k in base.kernels for w in k.warnings):
        if f"baseline: {w}" not in notes:
            notes.append(f"baseline: {w}")
    fixes.sort(key=lambda f: -f.speedup)
    return Advice(
        base.source,
        base.device,
        base.total_ms,
        tuple(fixes),
        benefits(base, opts.device),
        base,
        tuple(notes),
    )


def render_text(a: Advice) -> str:
    lines = [
        f"{a.source} on {a.device}: {a.baseline_ms:.4g} ms predicted now",
        "",
        f"{'#':<3}{'speedup':>8}  {'predicted ms':>12}  fix",
    ]
    for i, f in enumerate(a.fixes, 1):
        slower = " (not worth doing)" if f.speedup < 1.0 - TOLERANCE else ""
        lines.append(
            f"{i:<3}{f.speedup:>7.2f}x  {f.predicted_ms:>12.4g}  [{f.kind}] {f.title}{slower}"
        )
    for i, f in enumerate(a.fixes, 1):
        if f.speedup < 1.0 - TOLERANCE:
            lines += [
                "",
                f"{i}. {f.title} ({f.speedup:.2f}x): not worth doing, predicted slower than now",
            ]
        else:
            lines += ["", f"{i}. {f.title} ({f.speedup:.2f}x)", f"   do: {f.instruction}"]
        lines += [f"   evidence: {e}" for e in f.evidence]
        lines += [f"   why: {w}" for w in f.why]
    if a.notes:
        lines += [""] + [f"note: {n}" for n in a.notes]
    lines += [
        "",
        "GPUPerf benefits (cycles; larger = more to gain):",
        f"  {'kernel':<16}{'bound':<9}{'T_comp':>12}{'T_mem':>12}{'B_itilp':>12}"
        f"{'B_memlp':>12}{'B_fp':>12}{'B_serial':>12}",
    ]
    for b in a.benefits:
        lines.append(
            f"  {b.kernel:<16}{b.bound:<9}{b.t_comp:>12.4g}{b.t_mem_exposed:>12.4g}"
            f"{b.b_itilp:>12.4g}{b.b_memlp:>12.4g}{b.b_fp:>12.4g}{b.b_serial:>12.4g}"
        )
    return "\n".join(lines)


def benefit_chart(a: Advice, path: Path) -> Path:
    """The benefit chart: each kernel at (T'_mem, T_comp) with the bound diagonal (needs
    matplotlib, the ``plot`` extra; drawn by the shared plotting module, plots.py)."""
    from .plots import benefit_chart as draw

    points = [(b.kernel, b.t_mem_exposed, b.t_comp) for b in a.benefits]
    return draw(points, f"{a.source} on {a.device}", path)
