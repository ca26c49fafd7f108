"""GPU vs FPGA: both estimates per kernel, a recommendation and its reasons (SPEC §5), and the
text / JSON renderings of the FPGA report and of the comparison.

The reasons are derived from the two models' own outputs, in plain words:
* GPU: share of uncoalesced memory instructions (naming them), memory- or compute-bound, how
  many threads the grid offers against what the GPU holds at once.
* FPGA: what limits the chosen design (a recurrence, the memory ports, the DSPs, the off-chip
  bandwidth), how much data does not fit in BRAM and streams from DRAM, the parallelism the
  chosen point reaches (unroll x jam / II) and the resources it uses.
* Devices: clock (cycles per second) and DRAM bandwidth of the two.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
import time
import types
from dataclasses import dataclass
from pathlib import Path

from .fpga import (
    FPGADevice,
    FPGAReport,
    KernelEstimate,
    estimate_trace,
    load_fpga_device,
    traced_source,
)
from .fpga.report import SCHEMA_VERSION, _fpga_dict, _mb, _plain, fpga_to_json, fpga_to_text

__all__ = [
    "Comparison",
    "KernelComparison",
    "compare_dict",
    "compare_prepared",
    "compare_reports",
    "compare_source",
    "compare_to_json",
    "compare_to_text",
    "fpga_to_json",
    "fpga_to_text",
]


@dataclass(frozen=True)
class KernelComparison:
    name: str
    gpu_ms: float
    fpga_ms: float
    winner: str  # "GPU" | "FPGA"
    ratio: float  # slower / faster
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class Comparison:
    source: str
    gpu_device: str
    fpga_device: str
    work_sizes: dict[str, int]
    trace_sizes: dict[str, int]
    kernels: tuple[KernelComparison, ...]
    gpu_total_ms: float
    fpga_total_ms: float
    recommendation: str
    reasons: tuple[str, ...]
    gpu: object  # pipeline.Report
    fpga: FPGAReport

    def to_dict(self) -> dict:
        """What ``cgpredict compare --json`` prints, as plain data."""
        return compare_dict(self)

    def to_json(self) -> str:
        return compare_to_json(self)


def _gpu_reasons(k, gdev) -> list[str]:
    out = []
    p = k.profile
    mem = max(p.mem_insts, 1e-12)
    unc = p.uncoal.insts / mem
    if unc >= 0.25:
        names = sorted({m.text for m in k.mem if m.pattern == "uncoalesced"})
        out.append(
            f"GPU: {unc:.0%} of its memory instructions are uncoalesced "
            f"({', '.join(names[:3])}), each costing up to 32 transactions per warp"
        )
    elif p.coal.insts / mem >= 0.5:
        out.append("GPU: memory accesses are mostly coalesced")
    out.append(f"GPU: {k.result.bound}-bound (MWP {k.result.mwp:.1f}, CWP {k.result.cwp:.1f})")
    threads = k.grid_threads[0] * k.grid_threads[1]
    resident = gdev.max_threads_per_sm * gdev.sm_count
    if threads < resident:
        out.append(
            f"GPU: only {threads} threads against {resident} it can keep resident: "
            f"little parallelism to hide latency"
        )
    return out


def _tiled_reasons(k: KernelEstimate, fdev: FPGADevice) -> list[str]:
    t = k.tiled
    lanes = t.unroll / t.ii
    what = {
        "transfers": (
            f"transfers bound it: {_mb(t.transfer_bytes)} of tile fills at "
            f"{t.bytes_per_cycle * fdev.clock_mhz / 1e3:.3g} GB/s (set by the "
            f"{t.transfer_limit}; {fdev.axi_ports} AXI ports x {fdev.axi_port_bytes * 8} bits) "
            f"take {t.transfer_ms:.2f} ms against "
            f"{t.compute_ms:.2f} ms of compute"
        ),
        "recurrence": f"the accumulation's recurrence (MII {t.rec_mii}) sets II {t.ii}",
        "memory ports": f"the buffers' BRAM ports set II {t.ii}",
        "DSP": f"the DSP budget forces operator sharing (II {t.ii})",
        "throughput": f"the pipeline runs at II {t.ii}",
    }[t.bound]
    return [
        f"FPGA: tiled design ({' x '.join(str(x) for x in t.tiles)} tiles in BRAM, "
        f"{'double' if t.double_buffer else 'single'} buffered), {lanes:g} iterations per cycle "
        f"(unroll {t.unroll} / II {t.ii}); {what}"
    ]


def _bound(side: str, g=None, f: KernelEstimate | None = None) -> str:
    if g is not None:
        return f"{g.result.bound}-bound"
    return f"{f.bound}-bound" if f is not None else "?"


def _flip(rec: str, ratio: float, g, f: KernelEstimate, fdev: FPGADevice) -> str:
    """What would have to change for the other side to win, from the two models' bounds."""
    if not math.isfinite(ratio):
        return ""
    r = f"{ratio:.1f}x"
    if rec == "FPGA":
        p = g.profile
        unc = p.uncoal.insts / max(p.mem_insts, 1e-12)
        if unc >= 0.25:
            names = sorted({m.text for m in g.mem if m.pattern == "uncoalesced"})
            return (
                f"what would flip it: the GPU wins if it runs {r} faster; {unc:.0%} of its "
                f"memory instructions are uncoalesced ({', '.join(names[:2])}): the GPU "
                f"likely wins if that array is transposed (see `cgpredict advise`)"
            )
        return (
            f"what would flip it: the GPU would need {r} more "
            f"{'bandwidth' if g.result.bound == 'memory' else 'compute throughput'}"
        )
    if f.design == "tiled" and f.tiled is not None and f.tiled.bound == "transfers":
        return (
            f"what would flip it: the FPGA wins with {r} the DRAM bandwidth (more or wider AXI "
            f"ports, a faster DDR), i.e. a larger part"
        )
    return (
        f"what would flip it: the FPGA wins with {r} more parallel lanes (DSPs, BRAM ports) "
        f"or clock than {fdev.name} offers"
    )


def _fpga_reasons(k: KernelEstimate, fdev: FPGADevice) -> list[str]:
    if k.design == "tiled" and k.tiled is not None:
        return _tiled_reasons(k, fdev) + [f"FPGA: warning: {w}" for w in k.warnings]
    out = []
    if k.tiling_note:
        out.append(f"FPGA: {k.tiling_note}")
    off = [a for a in k.arrays if not a.on_chip]
    if off:
        tot = sum(a.bytes for a in off)
        out.append(
            f"FPGA: {_mb(tot)} of arrays ({', '.join(a.name for a in off)}) do not fit in "
            f"the {_mb(fdev.bram36 * fdev.bram36_bytes)} of BRAM and stream from DRAM"
        )
    if k.loops:
        lp = max(k.loops, key=lambda e: e.time_ms)
        par = lp.point.unroll * lp.point.jam
        what = {
            "recurrence": f"a loop-carried dependence (recurrence MII {lp.rec_mii} cycles) sets II",
            "memory ports": (
                f"memory ports set II to {lp.ii}: each {fdev.axi_port_bytes}-byte "
                f"AXI port or {fdev.bram_ports}-port BRAM bank delivers few words per cycle"
            ),
            "DSP": f"the DSP budget forces operator sharing (II {lp.ii})",
            "bandwidth": (
                f"off-chip bandwidth: {_mb(lp.stream_bytes)} at "
                f"{fdev.dram_bandwidth_gbps:g} GB/s take {lp.stream_ms:.2f} ms, more "
                f"than the {lp.compute_ms:.2f} ms of compute"
            ),
            "latency": "the loop is not pipelined: each iteration pays the full latency",
            "throughput": f"the pipeline runs at II {lp.ii}",
        }[lp.bound]
        out.append(
            f"FPGA: {what}; best design unroll {lp.point.unroll} x jam {lp.point.jam} "
            f"= {par} iterations per {lp.ii} cycle(s)"
            f"{', partition ' + str(lp.point.partition) if lp.point.partition > 1 else ''}"
        )
    if k.bound == "transfers":
        out.append(
            f"FPGA: copying {_mb(k.transfer_bytes)} in and out takes "
            f"{k.transfer_ms:.2f} ms, more than the computation"
        )
    share = k.resources.share(fdev.budget())
    if share >= fdev.utilisation * 0.9:
        out.append(f"FPGA: resource limits: the design uses {share:.0%} of the scarcest resource")
    if not k.fits:
        out.append("FPGA: no explored design fits the device")
    out += [f"FPGA: warning: {w}" for w in k.warnings]
    return out


def _times(ratio: float) -> str:
    """'4.0x', or 'n/a' when one side takes no time (a zero-trip kernel) or cannot run."""
    return f"{ratio:.1f}x" if math.isfinite(ratio) else "n/a"


def compare_reports(gpu, fpga: FPGAReport, gdev, fdev: FPGADevice) -> Comparison:
    """Pair the kernels of a GPU report and an FPGA report of the same trace."""
    by_name = {k.name: k for k in fpga.kernels}
    rows = []
    for g in gpu.kernels:
        f = by_name.get(g.name)
        if f is None:
            continue
        lo, hi = sorted((g.time_ms, f.time_ms))
        ratio = hi / lo if lo > 0 else math.inf
        if not f.fits:  # an infeasible design's time is no FPGA time at all
            win, ratio = "GPU", math.inf
            reasons = [f"GPU: no explored FPGA design of {g.name} fits {fdev.name}"]
        else:
            win = "GPU" if g.time_ms <= f.time_ms else "FPGA"
            reasons = [
                f"{win} faster by {_times(ratio)} ({g.time_ms:.3f} ms GPU, "
                f"{_bound('GPU', g=g)}, vs {f.time_ms:.3f} ms FPGA, {_bound('FPGA', f=f)})"
            ]
            flip = _flip(win, ratio, g, f, fdev)
            if flip:
                reasons.append(flip)
        reasons += _gpu_reasons(g, gdev) + _fpga_reasons(f, fdev)
        rows.append(KernelComparison(g.name, g.time_ms, f.time_ms, win, ratio, tuple(reasons)))
    gt, ft = gpu.total_ms, fpga.total_ms
    lo, hi = sorted((gt, ft))
    misfits = [r.name for r in rows if not by_name[r.name].fits]
    if misfits:
        rec = "GPU"
        reasons = [
            f"GPU: the FPGA cannot hold the program (no explored design of "
            f"{', '.join(misfits)} fits {fdev.name})"
        ]
    else:
        rec = "GPU" if gt <= ft else "FPGA"
        reasons = [
            f"{rec}: {_times(hi / lo if lo else math.inf)} faster in total "
            f"({gt:.3f} ms on {gdev.name} vs {ft:.3f} ms on {fdev.name})"
        ]
        heavy = max(rows, key=lambda r: max(r.gpu_ms, r.fpga_ms), default=None)
        if heavy is not None:
            reasons += [x for x in heavy.reasons[1:2] if x.startswith("what would flip")]
            reasons.append(
                f"bounds of the heaviest kernel {heavy.name}: GPU "
                f"{_bound('GPU', g=next(g for g in gpu.kernels if g.name == heavy.name))}, "
                f"FPGA {_bound('FPGA', f=by_name[heavy.name])}"
            )
    doubtful = [
        f
        for f in fpga.kernels
        if any(r.name == f.name for r in rows) and (f.warnings or not f.fits)
    ]
    if doubtful:
        why = [w for f in doubtful for w in f.warnings] + [
            f"{f.name}: no explored design fits the device" for f in doubtful if not f.fits
        ]
        reasons.append("caution, the FPGA estimate is unreliable: " + "; ".join(why))
    wins = [r for r in rows if r.winner == rec]
    if len(wins) < len(rows):
        other = [r.name for r in rows if r.winner != rec]
        reasons.append(
            f"{', '.join(other)} would run faster on the "
            f"{'FPGA' if rec == 'GPU' else 'GPU'}: a split design could use both"
        )
    reasons.append(
        f"clock: {gdev.clock_mhz:g} MHz GPU vs {fdev.clock_mhz:g} MHz FPGA "
        f"({gdev.clock_mhz / fdev.clock_mhz:.1f}x more cycles per second on the GPU); "
        f"the FPGA must win back the difference with a deep, wide pipeline"
    )
    reasons.append(
        f"bandwidth: {gdev.dram_bandwidth_gbps:g} GB/s GPU vs "
        f"{fdev.dram_bandwidth_gbps:g} GB/s FPGA to DRAM"
    )
    top = max(rows, key=lambda r: r.gpu_ms if rec == "FPGA" else r.fpga_ms, default=None)
    if top is not None:
        side = "FPGA" if rec == "GPU" else "GPU"
        reasons += [r for r in top.reasons[1:] if r.startswith(side)][:2]
    return Comparison(
        gpu.source,
        gdev.name,
        fdev.name,
        fpga.work_sizes,
        fpga.trace_sizes,
        tuple(rows),
        gt,
        ft,
        rec,
        tuple(reasons),
        gpu,
        fpga,
    )


def compare_source(
    source: Path,
    gpu: str = "tk1",
    fpga: str = "zc702",
    block=None,
    work: dict[str, int] | None = None,
    trace_sizes: dict[str, int] | None = None,
    functions: tuple[str, ...] = (),
    timeout_s: float = 120.0,
) -> Comparison:
    """``cgpredict compare``: one trace, both estimates, the recommendation."""
    from .devices import load_device
    from .pipeline import RunOptions, analyze_trace

    gdev, fdev = load_device(gpu), load_fpga_device(fpga)
    with traced_source(Path(source), work or {}, trace_sizes or {}, functions, timeout_s) as t:
        t0 = time.perf_counter()
        opts = RunOptions(
            block=block,
            device=gpu,
            work_sizes=t.work_sizes,
            trace_sizes=t.trace_sizes,
            functions=functions,
            timeout_s=timeout_s,
        )
        grep = analyze_trace(t.trace, gdev, opts, t.sizes, t.trace_sizes, t.work_sizes)
        t1 = time.perf_counter()
        frep = estimate_trace(t.trace, fdev, t.sizes, t.trace_sizes, t.work_sizes)
        secs = {**t.seconds, "gpu": t1 - t0, "fpga": time.perf_counter() - t1}
    frep = dataclasses.replace(frep, seconds=secs)
    return compare_reports(grep, frep, gdev, fdev)


# ---- rendering ------------------------------------------------------------------------------


def compare_prepared(prep, gpu_report, gdev, fpga: str = "zc702") -> Comparison:
    """GPU vs FPGA from a trace already prepared and predicted (``pipeline.Prepared`` and its
    Report): only the FPGA estimate is added, nothing is traced again."""
    fdev = load_fpga_device(fpga)
    t0 = time.perf_counter()
    frep = estimate_trace(prep.trace, fdev, prep.sizes, prep.trace_sizes, prep.work_sizes)
    frep = dataclasses.replace(frep, seconds={"fpga": time.perf_counter() - t0})
    return compare_reports(gpu_report, frep, gdev, fdev)


def compare_to_json(c: Comparison) -> str:
    return json.dumps(compare_dict(c), indent=2, sort_keys=True)


def compare_dict(c: Comparison) -> dict:
    """The comparison as plain data with a schema version (what ``compare_to_json`` prints)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "source": c.source,
        "gpu_device": c.gpu_device,
        "fpga_device": c.fpga_device,
        "work_sizes": c.work_sizes,
        "trace_sizes": c.trace_sizes,
        "kernels": _plain(c.kernels),
        "gpu_total_ms": round(c.gpu_total_ms, 6),
        "fpga_total_ms": round(c.fpga_total_ms, 6),
        "recommendation": c.recommendation,
        "reasons": list(c.reasons),
        "fpga": _fpga_dict(c.fpga),
    }


def compare_to_text(c: Comparison) -> str:
    out = [
        f"GPU ({c.gpu_device}) vs FPGA ({c.fpga_device}) for {c.source}",
        "work size: " + " ".join(f"{k}={v}" for k, v in sorted(c.work_sizes.items())),
        "",
        f"{'kernel':<16} {'GPU ms':>12} {'FPGA ms':>12}  faster",
    ]
    for r in c.kernels:
        out.append(
            f"{r.name:<16} {r.gpu_ms:>12.4f} {r.fpga_ms:>12.4f}  {r.winner} ({_times(r.ratio)})"
        )
    out.append(
        f"{'total':<16} {c.gpu_total_ms:>12.4f} {c.fpga_total_ms:>12.4f}  {c.recommendation}"
    )
    out += ["", f"recommendation: {c.recommendation}"]
    out += [f"  - {r}" for r in c.reasons]
    for r in c.kernels:
        out += ["", f"{r.name}:"] + [f"  - {x}" for x in r.reasons]
    return "\n".join(out)


class _CallableModule(types.ModuleType):
    """``cgpredict.compare`` is both this module and the library function ``api.compare``:
    importing the module sets the package attribute to it, so calling it calls the function."""

    def __call__(self, *args, **kwargs) -> Comparison:
        from .api import compare

        return compare(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
