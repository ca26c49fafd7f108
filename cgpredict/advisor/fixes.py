"""The candidate fixes, each re-predicted from the trace: transposition of uncoalesced arrays,
shared-memory tiling, block shape, register accumulation (the restrict port), and that
combined with another fix as one kernel (see the package docstring)."""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..block import Block
from ..frontend.regions import read_source
from ..frontend.tracer import marked_source
from ..memory.shared import array_layouts, array_name
from ..occupancy import BlockDoesNotFit
from ..pipeline import predict_source
from ..prediction import PredictionError, Report, RunOptions
from ..prepared import Prepared
from .advice import (
    COMBINE,
    TILE,
    TOLERANCE,
    Fix,
    explain_change,
    explained,
    speedup_of,
)
from .legality import LayoutVerdict, copy_allowed, layout_verdict
from .tile_code import shared_fix_code


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
    verdicts = {arr: layout_verdict(prep, base, arr, _swap) for arr in found}
    for arr, v in verdicts.items():
        if not v.offered:
            del found[arr]
            if notes is not None:
                notes.append(v.reason)
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
                fixes += _transposition_fixes(arr, evidence, base, rep, verdicts[arr])
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
    arr: str, evidence: list[tuple[str, str]], base: Report, rep: Report,
    verdict: LayoutVerdict,
) -> list[Fix]:
    """The fixes of storing ``arr`` transposed (``rep``: that prediction): the whole change,
    applied everywhere ``arr`` is used (``verdict``), and a transposed copy for the kernels it
    helps when it slows others down and no kernel writes ``arr``."""
    fixes = []
    # evidence of the kernels the transposition makes faster (all, when none is)
    now = {k.name: k.total_ms for k in base.kernels}
    faster = {k.name for k in rep.kernels if k.total_ms < now[k.name] * (1 - TOLERANCE)}
    shown = [e for kname, e in evidence if kname in faster] or [e for _, e in evidence]
    texts = sorted({m.text for k in base.kernels for m in k.mem if array_name(m.text) == arr})
    swapped = ", ".join(f"{t} -> {_swap(t)}" for t in texts if _swap(t) != t)
    fixes.append(explained(
        Fix(
            "coalescing",
            f"store {arr} transposed",
            f"keep {arr} in transposed layout ({arr}T[c][r] = {arr}[r][c]) and index it the "
            f"other way round ({swapped}), so that consecutive threads read consecutive "
            f"addresses; {verdict.reason}",
            tuple(shown),
            rep.total_ms,
            speedup_of(base.total_ms, rep.total_ms),
            code="\n".join([f"// {arr} stored transposed: every access, kernels and host"]
                            + [f"{t}  ->  {_swap(t)}" for t in texts if _swap(t) != t]),
        ), base, rep)
    )
    # a kernel the transposition slows down keeps the original layout: the others read a
    # transposed copy (the copy kernel itself is not counted)
    after = {k.name: k.total_ms for k in rep.kernels}
    slower = [n for n in now if after.get(n, now[n]) > now[n] * (1 + TOLERANCE)]
    if faster and slower and copy_allowed(verdict):
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
                speedup_of(base.total_ms, mixed),
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
        return explained(Fix(
            "shared-memory",
            f"use the tiled variant {tiled.name}",
            f"replace the kernel by {tiled.name}",
            (f"{tiled.name} predicts {rep.total_ms:.4g} ms",),
            rep.total_ms,
            speedup_of(base.total_ms, rep.total_ms),
        ), base, rep)
    by_kernel = shared_candidates_by_kernel(prep, base)
    if not by_kernel:
        return None
    stage = tuple((k, a, TILE, TILE) for k, arrs in by_kernel.items() for a in arrs)
    names = ", ".join(shared_candidates(prep, base))
    rep = _try_analyze(  # the copy the snippet shows (tile_code): the textbook one if it fits
        prep, dataclasses.replace(opts, stage=stage, stage_copy="thread"),
        f"tiling {names} in shared memory", notes,
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
    square = all(k.block == f"{TILE}x{TILE}" for k in base.kernels if k.name in by_kernel)
    copy = ("each thread copying one element of each tile a strip (the textbook kernel: "
            "the block is the tile)" if square else "the block copying each tile in a loop")
    return explained(Fix(
        "shared-memory",
        f"tile {names} in shared memory ({TILE}x{TILE})",
        f"strip-mine the innermost loop by {TILE}, load {TILE}x{TILE} tiles ({where}) "
        f"into __shared__ arrays per block, {copy} (__syncthreads() before and after use), "
        f"and read the tiles instead of global memory; mark it with '#pragma cgp shared "
        f"ARRAY tile {TILE}x{TILE}' to predict your own version",
        tuple(evidence),
        rep.total_ms,
        speedup_of(base.total_ms, rep.total_ms),
        code=shared_fix_code(prep, base, by_kernel, register=opts.port == "restrict"),
    ), base, rep)


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
    return explained(Fix(
        "register-accumulation",
        f"keep {', '.join(texts)} in a register",
        f"declare the kernel's array parameters __restrict__ (float * __restrict__ "
        f"{array_name(example)}), or accumulate in a local variable: "
        f"`float sum = {example}; for (...) sum += ...; {example} = sum;`",
        evidence,
        rep.total_ms,
        speedup_of(base.total_ms, rep.total_ms),
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
    if not any(f.kind in ("coalescing", "shared-memory") for f in fixes):
        return None
    kinds = {f.kind for f in fixes}
    return start_combined(prep_restrict, opts, tiled, rbase, pool, kinds)(base, fixes, notes)


def start_combined(
    prep_restrict: Prepared,
    opts: RunOptions,
    tiled: Path | None,
    rbase: Report | None = None,
    pool: ThreadPoolExecutor | None = None,
    kinds: set[str] | None = None,
):
    """``combined_fix`` in two steps, so that the advisor queues the restrict port's
    re-analyses as soon as its baseline is predicted, beside the plain port's fixes: they
    are started now (the tiling and the transpositions, of ``kinds`` when given, else of
    both, to be used or not once the plain fixes are known) and the returned function,
    given the plain fixes, finishes the combined fix."""
    ropts = dataclasses.replace(opts, port="restrict")
    # the restrict port's own prediction: the register fix's report when it has one
    rbase = rbase if rbase is not None else prep_restrict.analyze(ropts)
    own: list[list[str]] = [[], []]  # notes of the re-analyses, merged in order
    run = pool.submit if pool is not None else _now
    sh = (  # the tiling first: the longest analysis, the transpositions beside it
        run(shared_fix, prep_restrict, ropts, rbase, tiled, own[1])
        if kinds is None or "shared-memory" in kinds else None
    )
    coal = (  # each array's transposition a task of its own
        start_coalescing(prep_restrict, ropts, rbase, own[0], pool)
        if kinds is None or "coalescing" in kinds else None
    )

    def finish(base: Report, fixes: list[Fix], notes: list[str]) -> Fix | None:
        others = [f for f in fixes if f.kind in ("coalescing", "shared-memory")]
        used = {f.kind for f in others}
        restrict_coal = {f.title: f for f in _settled(coal, "coalescing" in used) or ()}
        restrict_shared = _settled(sh.result if sh is not None else None,
                                   "shared-memory" in used)
        if not others:
            return None
        # the notes of the kinds the plain port has fixes of (as if only those had run)
        for n, kind in zip(own, ("coalescing", "shared-memory")):
            if kind in used:
                notes += n
        tried = []
        for other in others:
            again = restrict_shared if other.kind == "shared-memory" else restrict_coal.get(
                other.title
            )
            if again is not None:
                tried.append((again, other))
        return _combined(base, fixes, tried)

    return finish


def _settled(get, used: bool):
    """``get()`` (a started re-analysis' result; None when none was started); for one the
    plain fixes do not use, its end waited for and its error, if any, not raised (it was
    started on speculation, and would not have run)."""
    if get is None:
        return None
    if used:
        return get()
    try:
        get()
    except Exception:  # noqa: BLE001 - not needed: its error is not the advice's
        pass
    return None


def _combined(base: Report, fixes: list[Fix], tried: list[tuple[Fix, Fix]]) -> Fix | None:
    """The combined fix from (restrict port's re-prediction, plain fix) pairs: the fastest,
    when it beats every fix alone by COMBINE."""
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
        speedup_of(base.total_ms, again.predicted_ms),
        explain_change(base, again.report) if again.report is not None else (),
        again.report,
        code=again.code,  # the restrict port's fix: its snippet keeps the sum in a register
    )
