"""The optimisation advisor (``cgpredict advise``, SPEC §2.6 and §4): candidate fixes ranked by
predicted speedup, each re-predicted from the same trace rather than guessed.

* **coalescing**: every 2-D array with uncoalesced accesses is re-analysed with its layout
  transposed (the recorded addresses remapped, then warps, cache and model run again);
* **shared memory**: arrays a kernel only reads inside its per-thread loops are staged in 32x32
  tiles (bank conflicts computed from the remapped addresses), or the user's tiled variant is
  predicted as written;
* **block shape**: the model swept over legal block shapes;
* **GPUPerf benefits** (B_itilp, B_memlp, B_fp, B_serial) and the bound of every kernel.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from .devices import load_device
from .models import predict as model_predict
from .pipeline import Prepared, Report, RunOptions, predict_source, prepare
from .shared import array_layouts, array_name
from .warps import Block

TILE = 32
BLOCKS_2D = ("32x32", "32x16", "32x8", "64x4", "128x2", "16x16")
BLOCKS_1D = ("128x1", "256x1", "512x1", "1024x1")


@dataclass(frozen=True)
class Fix:
    """One candidate change, its predicted effect and the evidence for it."""

    kind: str  # "coalescing" | "shared-memory" | "block-shape"
    title: str
    instruction: str
    evidence: tuple[str, ...]
    predicted_ms: float
    speedup: float


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


def _speedup(base: float, new: float) -> float:
    return base / new if new > 0 else float("inf")


def coalescing_fixes(prep: Prepared, opts: RunOptions, base: Report) -> list[Fix]:
    """Transpose each 2-D array that has uncoalesced accesses, and re-predict."""
    h = prep.trace.header
    layouts = array_layouts(h.ir_text)
    found: dict[str, list[str]] = {}
    for k in base.kernels:
        for m in k.mem:
            arr = array_name(m.text)
            lay = layouts.get(arr)
            if m.pattern == "uncoalesced" and lay is not None and len(lay.dims) >= 2:
                found.setdefault(arr, []).append(
                    f"{m.text} at {m.location} in {k.name}: uncoalesced, "
                    f"{m.l2_trans_per_warp:.0f} transactions per warp, "
                    f"{m.per_thread:.0f} per thread"
                )
    fixes = []
    for arr, evidence in found.items():
        rep = prep.analyze(dataclasses.replace(opts, transpose=(arr,)))
        texts = sorted({m.text for k in base.kernels for m in k.mem if array_name(m.text) == arr})
        swapped = ", ".join(f"{t} -> {_swap(t)}" for t in texts)
        fixes.append(
            Fix(
                "coalescing",
                f"store {arr} transposed",
                f"keep {arr} in transposed layout ({arr}T[c][r] = {arr}[r][c]) and index it the "
                f"other way round ({swapped}), so that consecutive threads read consecutive "
                f"addresses",
                tuple(evidence),
                rep.total_ms,
                _speedup(base.total_ms, rep.total_ms),
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


def shared_candidates(prep: Prepared, base: Report) -> list[str]:
    """2-D arrays a kernel only reads, inside its per-thread loops (deeper than the loops
    mapped to threads): each element is reused by many threads of a block across iterations."""
    h = prep.trace.header
    layouts = array_layouts(h.ir_text)
    grid = {h.region(k.name).index: k.grid_dims for k in base.kernels}
    out = []
    for region, dims in grid.items():
        written = {array_name(m.base) for m in h.mem if m.kind == "store" and m.region == region}
        inner = {b for lp in h.loops if lp.region == region and lp.depth > dims for b in lp.blocks}
        for m in h.mem:
            arr = array_name(m.base)
            lay = layouts.get(arr)
            if (m.region == region and arr not in written and lay is not None
                    and len(lay.dims) >= 2 and m.block in inner and arr not in out):
                out.append(arr)
    return out


def shared_fix(prep: Prepared, opts: RunOptions, base: Report, tiled: Path | None) -> Fix | None:
    """Tile the read-only reused arrays into shared memory (or predict the user's tiled file)."""
    if tiled is not None:
        rep = predict_source(tiled, dataclasses.replace(opts, transpose=(), stage=()))
        return Fix(
            "shared-memory",
            f"use the tiled variant {tiled.name}",
            f"replace the kernel by {tiled.name}",
            (f"{tiled.name} predicts {rep.total_ms:.4g} ms",),
            rep.total_ms,
            _speedup(base.total_ms, rep.total_ms),
        )
    cands = shared_candidates(prep, base)
    if not cands:
        return None
    stage = tuple((a, TILE, TILE) for a in cands)
    rep = prep.analyze(dataclasses.replace(opts, stage=stage))
    evidence = []
    for k in rep.kernels:
        sh = k.profile.shared
        if sh.bytes_per_block:
            worst = max((x for x, _ in sh.insts_by_conflict), default=1)
            evidence.append(
                f"{k.name}: {sh.bytes_per_block} B of shared memory per block, "
                f"{sh.load_insts:.0f} staging loads and {k.profile.sync_insts:.0f} "
                f"barriers per thread, worst bank conflict {worst:.0f}-way"
            )
    names = ", ".join(cands)
    return Fix(
        "shared-memory",
        f"tile {names} in shared memory ({TILE}x{TILE})",
        f"strip-mine the innermost loop by {TILE}, load {TILE}x{TILE} tiles of {names} "
        f"into __shared__ arrays per block (one element per thread, __syncthreads() "
        f"before and after use), and read the tiles instead of global memory; mark it "
        f"with '#pragma cgp shared ARRAY tile {TILE}x{TILE}' to predict your version",
        tuple(evidence),
        rep.total_ms,
        _speedup(base.total_ms, rep.total_ms),
    )


def block_fix(prep: Prepared, opts: RunOptions, base: Report) -> Fix | None:
    """The best legal block shape for the file's kernels."""
    two_d = any(k.grid_dims == 2 for k in base.kernels)
    shapes = BLOCKS_2D if two_d else BLOCKS_1D
    device = load_device(opts.device)
    results = []
    for s in shapes:
        b = Block.parse(s)
        if b.threads > device.max_threads_per_block:
            continue
        rep = prep.analyze(dataclasses.replace(opts, block=b), device)
        results.append((rep.total_ms, s))
    if not results:
        return None
    best_ms, best = min(results)
    current = opts.block or Block.parse(shapes[0] if two_d else "256x1")
    evidence = tuple(f"{s}: {ms:.4g} ms" for ms, s in sorted(results))
    return (
        Fix(
            "block-shape",
            f"launch with blocks of {best}",
            f"use --block {best} (blockDim = dim3({best.replace('x', ', ')}))",
            evidence,
            best_ms,
            _speedup(base.total_ms, best_ms),
        )
        if best != str(current)
        else Fix(
            "block-shape",
            f"keep blocks of {best}",
            "the current block shape is the best swept",
            evidence,
            best_ms,
            _speedup(base.total_ms, best_ms),
        )
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
        base = prep.analyze(opts)
        fixes: list[Fix] = []
        fixes += coalescing_fixes(prep, opts, base)
        sh = shared_fix(prep, opts, base, tiled)
        if sh:
            fixes.append(sh)
        bl = block_fix(prep, opts, base)
        if bl:
            fixes.append(bl)
    fixes.sort(key=lambda f: -f.speedup)
    return Advice(
        base.source, base.device, base.total_ms, tuple(fixes), benefits(base, opts.device), base
    )


def render_text(a: Advice) -> str:
    lines = [
        f"{a.source} on {a.device}: {a.baseline_ms:.4g} ms predicted now",
        "",
        f"{'#':<3}{'speedup':>8}  {'predicted ms':>12}  fix",
    ]
    for i, f in enumerate(a.fixes, 1):
        lines.append(f"{i:<3}{f.speedup:>7.2f}x  {f.predicted_ms:>12.4g}  [{f.kind}] {f.title}")
    for i, f in enumerate(a.fixes, 1):
        lines += ["", f"{i}. {f.title} ({f.speedup:.2f}x)", f"   do: {f.instruction}"]
        lines += [f"   evidence: {e}" for e in f.evidence]
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
    matplotlib, the ``plot`` extra)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 5))
    top = max([max(b.t_comp, b.t_mem_exposed) for b in a.benefits] + [1.0]) * 1.1
    ax.plot([0, top], [0, top], "k--", lw=1, label="compute = memory")
    for b in a.benefits:
        ax.scatter(b.t_mem_exposed, b.t_comp)
        ax.annotate(b.kernel, (b.t_mem_exposed, b.t_comp))
    ax.set_xlabel("T'_mem (exposed memory cycles)")
    ax.set_ylabel("T_comp (cycles)")
    ax.set_title(f"{a.source} on {a.device}")
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
