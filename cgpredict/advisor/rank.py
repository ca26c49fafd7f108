"""``advise``: the baseline predicted, every fix re-predicted on a pool of a thread per core,
the restrict port traced beside them, and the fixes ranked by predicted speedup."""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..devices import load_device
from ..prediction import Report, RunOptions
from ..prepared import Prepared, prepare
from ..trace_analysis import analysis_worker, usable_cores
from .advice import Advice, Fix, benefits
from .blocks import start_block_fix
from .fixes import (
    register_fix,
    restored_stores,
    shared_fix,
    start_coalescing,
    start_combined,
)
from .registry import FIX_KINDS, KEEP_INSTRUCTIONS
from .roofline import kind_floors, roofline


def advise(source: Path, opts: RunOptions, tiled: Path | None = None, progress=None) -> Advice:
    """Rank the candidate fixes of ``source`` by predicted speedup."""
    with prepare(source, opts, progress) as prep:
        return advise_prepared(prep, source, opts, tiled, progress)


def _restrict_base(
    source: Path, ropts: RunOptions, plain: Prepared
) -> tuple[Prepared, Report]:
    """The restrict port traced and predicted (the register fix's report, and the baseline
    every combined fix is re-predicted from); the ``plain`` port's probe runs stand in for
    its own when the loops are the same (prepared.prepare)."""
    prep_r = prepare(source, ropts, probes_of=plain)
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
    """Close a background trace nobody will read (its temporary files go with it)."""
    try:
        pending.result()[0].close()
    except Exception:  # noqa: BLE001 - the error that stopped the caller is the one to show
        pass


def _start_trace_fixes(prep: Prepared, opts: RunOptions, base: Report, tiled: Path | None,
                       quick: bool, pool):
    """The fixes re-predicted from the plain trace, each a task of ``pool``, started now;
    the returned function adds them to ``fixes`` in a fixed order with their notes."""
    own = [[], [], []] + [[] for _ in FIX_KINDS]  # notes per fix, in a fixed order
    # the tiling first (the longest analysis), then each transposition, the
    # registry's kinds, each shape
    sh = pool.submit(shared_fix, prep, opts, base, tiled, own[1])
    coal = start_coalescing(prep, opts, base, own[0], pool)
    more = [pool.submit(k.propose, prep, opts, base, own[3 + i])
            for i, k in enumerate(FIX_KINDS)]
    shapes = None if quick else start_block_fix(prep, opts, base, own[2], pool)

    def collect(fixes: list[Fix], notes: list[str]) -> None:
        fixes += coal()
        if sh.result():
            fixes.append(sh.result())
        for m in more:
            fixes += m.result()
        bl = shapes() if shapes is not None else None
        if bl:
            fixes.append(bl)
        for n in own:
            notes += n

    return collect


def _start_restrict(pending, opts: RunOptions, tiled: Path | None, pool):
    """The combined fix's re-analyses of the restrict port queued once its baseline is
    predicted (``pending``: the restrict port traced and predicted in the background), or
    None (a tiled file of the user's; or the restrict port failed: its error is raised
    where its fixes are collected, _restrict_fixes)."""
    if tiled is not None:
        return None
    try:
        prep_r, rbase = pending.result()
    except Exception:  # noqa: BLE001 - raised again, in its place, by _restrict_fixes
        return None
    return start_combined(prep_r, opts, tiled, rbase, pool)


def _restrict_fixes(pending, early, opts: RunOptions, base: Report, tiled: Path | None, pool,
                    fixes: list[Fix], notes: list[str]) -> None:
    """The fixes predicted on the restrict port's trace (``pending``): the register fix,
    and all fixes combined (``early``: its re-analyses, started by _start_restrict)."""
    prep_r, rbase = pending.result()
    with prep_r:
        reg = register_fix(prep_r, opts, base, rbase)
        if reg:
            fixes.append(reg)
        # a tiled file of the user's is predicted as written: its accumulation is
        # its own
        both = None if tiled or early is None else early(base, fixes, notes)
        if both:
            fixes.append(both)


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
        pending = None
        if base is None and not quick and opts.port == "plain" and may_keep_in_register(prep):
            pending = tracer.submit(_restrict_base, source, ropts, prep)
        try:
            base = base if base is not None else prep.analyze(opts)
        except BaseException:
            if pending is not None:
                _discard(pending)
            raise
        restrict = not quick and opts.port == "plain" and bool(restored_stores(base))
        if restrict and progress is not None:
            progress("tracing the restrict port")
        if restrict and pending is None:
            pending = tracer.submit(_restrict_base, source, ropts, prep)
        elif not restrict and pending is not None:
            tracer.submit(_discard, pending)  # traced for nothing: closed when done
            pending = None
        try:
            collect = _start_trace_fixes(prep, opts, base, tiled, quick, pool)
            # the restrict port's re-analyses queued as soon as its baseline is known, so
            # that they run beside the plain port's last ones, not after them
            early = None if pending is None else _start_restrict(pending, opts, tiled, pool)
            collect(fixes, notes)
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
            _restrict_fixes(pending, early, opts, base, tiled, pool, fixes, notes)
    # the baseline's own warnings (unsafe port, block replaced, staging dropped, ...)
    for w in (w for k in base.kernels for w in k.warnings):
        if f"baseline: {w}" not in notes:
            notes.append(f"baseline: {w}")
    fixes.sort(key=lambda f: (f.predicted_ms, f.kind, f.title))  # fastest first, stable
    device = load_device(opts.device)
    lines = roofline(base, device)
    return Advice(
        source=base.source,
        device=base.device,
        baseline_ms=base.total_ms,
        fixes=tuple(fixes),
        benefits=benefits(base, opts.device),
        baseline=base,
        notes=tuple(notes),
        roofline=lines,
        floors=kind_floors(lines, device.sm_count,
                           tuple(k for k in KEEP_INSTRUCTIONS if any(f.kind == k for f in fixes))),
    )
