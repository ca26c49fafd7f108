"""The block-shape fix: the model swept over block shapes of 32 to 1024 threads (the small
ones let a small grid reach every SM), against the block the baseline used; "keep" unless a
shape is predicted faster, and every statement consistent with the times beside it."""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor

from ..block import Block
from ..devices import load_device
from ..prediction import Report, RunOptions
from ..prepared import Prepared
from ..trace_analysis import analysis_worker, usable_cores
from .advice import BLOCKS_1D, BLOCKS_2D, TOLERANCE, Fix, explained, speedup_of
from .fixes import _try_analyze


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
    return start_block_fix(prep, opts, base, notes, pool)()


def start_block_fix(
    prep: Prepared,
    opts: RunOptions,
    base: Report,
    notes: list[str] | None = None,
    pool: ThreadPoolExecutor | None = None,
):
    """``block_fix`` in two steps: each shape's re-analysis started now (a task of ``pool``,
    or of a pool of its own) and the returned function waits for them and chooses, so that
    the advisor queues other analyses behind them before it waits."""
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
    own = pool or ThreadPoolExecutor(
        max(1, min(len(todo), usable_cores())), initializer=analysis_worker
    )
    futures = [own.submit(one, s) for s in todo]

    def finish() -> Fix | None:
        reports: dict[str, Report] = {}
        try:
            for f in futures:
                s, rep, mine = f.result()
                if notes is not None:
                    notes.extend(mine)
                if rep is not None:
                    results[s] = rep.total_ms
                    reports[s] = rep
        finally:
            for f in futures:  # a shape failed: the result is an error (as Executor.map)
                f.cancel()
            if pool is None:
                own.shutdown()
        if not results:
            return None
        blocks = {s: _fewest_blocks(r, two_d) for s, r in reports.items()}
        blocks[current] = _fewest_blocks(base, two_d)
        return _block_choice(results, current, base, blocks, device.sm_count, reports)

    return finish


def _fewest_blocks(rep: Report, two_d: bool) -> int:
    """The fewest blocks any swept kernel of ``rep`` launches (the one likeliest to leave SMs
    idle)."""
    return min((k.blocks for k in rep.kernels if k.grid_dims == (2 if two_d else 1)), default=0)


def _launch_code(shape: str) -> str:
    """The launch with blocks of ``shape`` (a 2-D grid when it has rows), in CUDA."""
    b = Block.parse(shape)
    if b.y == 1:
        return f"kernel<<<(n + {b.x - 1}) / {b.x}, {b.x}>>>(...);  // n: the threads mapped"
    return "\n".join([f"dim3 block({b.x}, {b.y});",
                      f"dim3 grid((nx + {b.x - 1}) / {b.x}, (ny + {b.y - 1}) / {b.y});",
                      "kernel<<<grid, block>>>(...);"])


def _block_choice(
    results: dict[str, float], current: str, base: Report, blocks: dict[str, int], sms: int,
    reports: dict[str, Report],
) -> Fix:
    """The block-shape fix from the swept times: the fastest shape, or "keep" when none beats
    the current one by more than TOLERANCE (said so, with the fastest one named)."""
    best = min(results, key=lambda s: (results[s], s != current))
    now = results.get(current, base.total_ms)

    def busy(s: str) -> str:
        n = blocks.get(s, 0)
        return (" (every SM busy)" if n >= sms else f" ({n} blocks: {n} of {sms} SMs busy)"
                if n else "")

    evidence = tuple(
        f"{s}: {ms:.4g} ms" + (" (current)" if s == current else "") + busy(s)
        for s, ms in sorted(results.items(), key=lambda x: (x[1], x[0] != current))
    )
    if results[best] < now * (1 - TOLERANCE):
        return explained(Fix(
            "block-shape",
            f"launch with blocks of {best}",
            f"use --block {best} (blockDim = dim3({best.replace('x', ', ')}))",
            evidence,
            results[best],
            speedup_of(base.total_ms, results[best]),
            code=_launch_code(best),
        ), base, reports.get(best))
    said = (f"the current block shape {current} is the fastest swept" if best == current else
            f"no swept shape beats the current {current} by more than {TOLERANCE:.1%} "
            f"(the fastest, {best}, is predicted {results[best]:.4g} ms against {now:.4g} ms)")
    return Fix(
        "block-shape",
        f"keep blocks of {current}",
        said,
        evidence,
        now,
        speedup_of(base.total_ms, now),
    )
