"""What the advisor hands back: a fix (what to change, the evidence, the predicted time and
why), the GPUPerf benefit metrics, the ranked advice, and its text and chart."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from ..devices import load_device
from ..jsondata import jsonable
from ..models import predict as model_predict
from ..prediction import Report
from .roofline import KernelRoofline, KindFloor, floor_text, roofline_text

TILE = 32
ADVICE_SCHEMA_VERSION = 2  # 2: roofline and floors
#: A fix is worth doing only when it is predicted faster than now by more than this fraction.
TOLERANCE = 1e-3
#: Two fixes are proposed together only when that beats each alone by more than this fraction.
COMBINE = 0.01
#: The block shapes swept, 32 to 1024 threads: the small ones let a small grid reach every SM
#: (a 4096-thread kernel fills 128 SMs only with 32-thread blocks), the large ones give the
#: most warps per block.
BLOCKS_2D = ("32x32", "32x16", "32x8", "64x4", "128x2", "16x16", "32x4", "32x2", "32x1")
BLOCKS_1D = ("32x1", "64x1", "128x1", "256x1", "512x1", "1024x1")


@dataclass(frozen=True)
class Fix:
    """One candidate change, its predicted effect, the evidence for it and why (per kernel
    whose time changes: before -> after, the bound, MWP/CWP, L2 transactions and hit rate)."""

    # "coalescing" | "shared-memory" | "block-shape" | "register-accumulation" |
    # "block-reduction" | "privatisation" | ...
    kind: str
    title: str
    instruction: str
    evidence: tuple[str, ...]
    predicted_ms: float
    speedup: float
    why: tuple[str, ...] = ()
    # the prediction with the fix applied (not in --json: the baseline report's shape)
    report: Report | None = field(default=None, repr=False, compare=False)
    code: str = ""  # the change in CUDA, a snippet (text and HTML show it as written)


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


def explained(fix: Fix, base: Report, rep: Report | None) -> Fix:
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
    roofline: tuple[KernelRoofline, ...] = ()  # each kernel's bounds and how close it is
    floors: tuple[KindFloor, ...] = ()  # the best a fix of each kind can reach

    def to_dict(self) -> dict:
        """What ``cgpredict advise --json`` prints (the baseline report left out)."""
        d = jsonable(dataclasses.replace(
            self, fixes=tuple(dataclasses.replace(f, report=None) for f in self.fixes)))
        d.pop("baseline", None)
        for f in d["fixes"]:
            f.pop("report", None)
        d["schema_version"] = ADVICE_SCHEMA_VERSION
        return d

    def to_json(self) -> str:
        import json

        return json.dumps(self.to_dict(), indent=2, sort_keys=True)


def speedup_of(base: float, new: float) -> float:
    return base / new if new > 0 else float("inf")


def benefits(base: Report, device_name: str) -> tuple[Benefits, ...]:
    """GPUPerf benefit metrics of every kernel's baseline profile."""
    device = load_device(device_name)
    out = []
    for k in base.kernels:
        d = model_predict(k.profile, device, "gpuperf").details
        out.append(
            Benefits(
                kernel=k.name,
                bound=d.bound,
                t_comp=d.t_comp,
                t_mem_exposed=d.t_mem - d.t_overlap,
                b_itilp=d.b_itilp,
                b_memlp=d.b_memlp,
                b_fp=d.b_fp,
                b_serial=d.b_serial,
            )
        )
    return tuple(out)


def render_text(a: Advice) -> str:
    lines = [
        f"{a.source} on {a.device}: {a.baseline_ms:.4g} ms predicted now",
        *(f"roofline: {roofline_text(x)}" for x in a.roofline),
        *(f"  {floor_text(f)}" for f in a.floors),
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
            lines += [f"   | {c}" for c in f.code.splitlines()]
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
    from ..plots import benefit_chart as draw

    points = [(b.kernel, b.t_mem_exposed, b.t_comp) for b in a.benefits]
    return draw(points, f"{a.source} on {a.device}", path)
