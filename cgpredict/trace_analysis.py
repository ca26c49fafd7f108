"""Every kernel of a trace analysed and modelled: the report of one program on one device.

``analyze_trace`` runs ``kernel.analysis.analyze_region`` for each region on a thread per
core (``_map_regions``), once per set of options that matter to the region (``_kernel``: the
advisor re-analyses a program of several kernels with each fix), and adds the program's
warnings and its host synchronisation (``models.program_sync_ms``).
"""

from __future__ import annotations

import dataclasses
import os
import threading

from .analysis_memo import AnalysisMemo
from .block import Block
from .devices import GPUDevice
from .frontend.tracefile import Trace
from .kernel.analysis import analyze_region
from .kernel.checks import quiet_block, replaced_block_warning
from .memory.shared import array_name
from .models import program_sync_ms
from .models.dirty_l2 import launch_figures, writeback_ms
from .models.event_timing import event_timed_ms
from .prediction import KernelReport, Report, RunOptions
from .scaling import SizeModel

__all__ = ["analysis_worker", "analyze_trace", "usable_cores"]


def usable_cores() -> int:
    """Cores this process may run on (its affinity, where the platform tells)."""
    if hasattr(os, "sched_getaffinity"):
        return max(len(os.sched_getaffinity(0)), 1)
    return max(os.cpu_count() or 1, 1)


_worker = threading.local()


def analysis_worker() -> None:
    """Mark the calling thread as one of a pool of analyses (the advisor's fixes, a block
    sweep): it analyses a file's kernels in turn, the pool already keeping every core busy."""
    _worker.serial = True


def _map_regions(analyze, regions) -> list:
    """``analyze`` of every region, in order, on a thread per core: the analysis spends its
    time in numba kernels and numpy calls that release the GIL, and the kernels of one
    program share nothing but the read-only trace. In an ``analysis_worker`` thread, in
    turn: threads within threads would only contend for the cores and their caches."""
    regions = list(regions)
    workers = 1 if getattr(_worker, "serial", False) else min(len(regions), usable_cores())
    if workers <= 1:
        return [analyze(r) for r in regions]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(workers, thread_name_prefix="cgp-kernel") as pool:
        futures = [pool.submit(analyze, r) for r in regions]
        try:
            return [f.result() for f in futures]
        except BaseException:
            for f in futures:  # a kernel failed: the result is an error, its
                f.cancel()  # siblings not yet started need not run
            raise


def _kernel(trace, region, device, opts, sizes, tsz, wsz, memo: AnalysisMemo | None):
    """``analyze_region``, once per set of options that matter to the region: a
    transposition of an array it never touches, or a tile staged in another kernel, leaves
    its analysis as it was (the advisor re-analyses a program of several kernels with
    each fix), so the ``memo`` answers."""
    if memo is None:
        return analyze_region(trace, region.index, device, opts, sizes, tsz, wsz, None)
    h = trace.header
    mine = {array_name(m.base) for m in h.mem if m.region in (region.index, -1)}
    own = dataclasses.replace(
        opts,
        transpose=tuple(a for a in opts.transpose if a in mine),
        soa=tuple(a for a in opts.soa if a in mine),
        tile_exchange=tuple(a for a in opts.tile_exchange if a in mine),
        row_exchange=tuple(a for a in opts.row_exchange if a in mine),
        stage=tuple(s for s in opts.stage if len(s) != 4 or s[0] == region.name),
        halo=tuple(x for x in opts.halo if x[0] == region.name),
        reg_block=tuple(x for x in opts.reg_block if x[0] == region.name),
        row_warp=tuple(x for x in opts.row_warp if x[0] == region.name),
    )
    key = (region.index, device, repr(own))
    if key not in memo.kernels:
        rep = _one_d_alias(memo, region, device, own)
        if rep is None:
            rep = analyze_region(trace, region.index, device, own, sizes, tsz, wsz, memo)
            _keep_one_d(memo, region, device, own, rep)
        memo.kernels[key] = rep
    return memo.kernels[key]


def _one_d_key(region, device, opts: RunOptions):
    """The memo key of a 1-D region whatever 2-D block was asked for (see _keep_one_d)."""
    return (region.index, device, repr(dataclasses.replace(opts, block=None)), "1-D")


def _keep_one_d(memo: AnalysisMemo, region, device, opts: RunOptions, rep: KernelReport):
    """Keep the report of a 1-D region analysed under a 2-D ``--block`` for every other 2-D
    block (a sweep's shapes): such a region runs in its 1-D default whatever the 2-D block
    (its grid is chosen from its loops and their dependences, not the block), so only the
    warning naming the block asked for differs; kept without it, and where it stood."""
    if (rep.grid_dims != 1 or opts.block is None or opts.block.y == 1
            or not quiet_block(opts.block, device)):
        return
    said = replaced_block_warning(region.name, opts.block, Block.parse(rep.block))
    if said in rep.warnings:
        at = rep.warnings.index(said)
        memo.one_d.setdefault(_one_d_key(region, device, opts), (
            dataclasses.replace(rep, warnings=rep.warnings[:at] + rep.warnings[at + 1:]), at))


def _one_d_alias(memo: AnalysisMemo, region, device, opts: RunOptions) -> KernelReport | None:
    """The report _keep_one_d kept for this region under another 2-D block, with the
    warning naming this one put back where it stood; None when none is kept."""
    if opts.block is None or opts.block.y == 1 or not quiet_block(opts.block, device):
        return None
    kept = memo.one_d.get(_one_d_key(region, device, opts))
    if kept is None:
        return None
    rep, at = kept
    said = replaced_block_warning(region.name, opts.block, Block.parse(rep.block))
    return dataclasses.replace(rep, warnings=rep.warnings[:at] + (said,) + rep.warnings[at:])


def analyze_trace(
    trace: Trace,
    device: GPUDevice,
    opts: RunOptions,
    sizes: SizeModel | None = None,
    trace_sizes: dict[str, int] | None = None,
    work_sizes: dict[str, int] | None = None,
    memo: AnalysisMemo | None = None,
) -> Report:
    """Predict every region of a trace (work size = trace size unless a SizeModel says);
    ``memo``: what earlier analyses of the trace kept (a Prepared's)."""
    sizes = sizes or SizeModel.constant(trace)
    tsz = trace_sizes or {}
    wsz = work_sizes or tsz
    # kernels first: they need the trip counts (which may still be being fitted, see
    # PendingSizes) only after forming their pseudo-warps
    kernels = _map_regions(
        lambda r: _kernel(trace, r, device, opts, sizes, tsz, wsz, memo),
        trace.header.regions,
    )
    warnings = []
    if sizes.inexact():
        lines = sorted({lp.line for lp in trace.header.loops if lp.id in sizes.inexact()})
        warnings.append(
            f"loops at lines {lines} have trip counts that the probe runs do not confirm "
            f"(not affine in one size macro or a ratio of two, or folded away at the probe "
            f"sizes); their work-size counts are approximate: trace at the work size "
            f"(--trace-size equal to -D) for exact ones"
        )
    if opts.port != trace.header.port:
        warnings.append(
            f"the {opts.port} port was asked for, but the trace is of the "
            f"{trace.header.port} port (its arrays could not be reached through pointers); "
            f"predicted as the {trace.header.port} port"
        )
    if sizes.folded:
        lines = sorted({line for _, line, _ in sizes.folded})
        warnings.append(
            f"loops at lines {lines} run at other sizes but were folded away by "
            f"the compiler at the trace size (a single iteration): counts inside "
            f"them are underestimated; trace a size where every loop iterates "
            f"at least twice"
        )
    kernels = _module_loaded_once(kernels)
    launched = sum(k.launches for k in kernels)
    return Report(
        source=trace.header.source_name,
        device=device.name,
        model=opts.model,
        work_sizes=wsz,
        trace_sizes=tsz,
        kernels=tuple(kernels),
        warnings=tuple(warnings),
        seconds={},
        port=trace.header.port,
        sync=opts.sync,
        sync_ms=program_sync_ms(device, opts.sync, launched),
        event_wait_ms=event_timed_ms([(k.kernel_ms, k.launches) for k in kernels],
                                     device)[1].host_ms,
        upload_launch_ms=device.upload_launch_us * 1e-3,
        dirty_writeback_ms=writeback_ms(launch_figures(kernels),
                                        device, float(device.l2_dirty_max_bytes)),
    )


def _module_loaded_once(kernels: list) -> list:
    """The program's kernels with one module load (``once_ms``, models/launches.py) left on
    the first one launched: they share one module, which CUDA's lazy loading loads at the
    first launch of any of them; the others pay none."""
    out, loaded = [], False
    for k in kernels:
        if loaded and k.once_ms:
            k = dataclasses.replace(k, once_ms=0.0, total_ms=k.total_ms - k.once_ms)
        loaded = loaded or bool(k.once_ms)
        out.append(k)
    return out
