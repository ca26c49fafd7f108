"""The Markdown tables of ``sass_check.py`` (validation/results/sass-check.md and, with
--user, sass-check-user.md): per class the kernels x ports within TOL, each kernel's counts,
the known gaps with their reasons, and the hot loops."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import sass_blind  # noqa: E402
import sass_user  # noqa: E402
from ptx_model import TMAX_TRACE  # noqa: E402
from sass_gaps import known_gap  # noqa: E402
from sass_model import SASS_TRACE_SIZE, SUMMARY  # noqa: E402

if TYPE_CHECKING:
    from sass_check import KernelCheck

TOL = 0.10  # the target: within 10% per class


def _num(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:.0f}" if abs(x - round(x)) < 1e-9 else f"{x:.1f}"


def _ratio(m: float, s: float) -> str:
    if s == 0:
        return "=" if abs(m) < 1e-9 else "+inf"
    return f"{m / s:.2f}x"


def class_summary(checks: list[KernelCheck]) -> list[str]:
    """One Markdown row per class: kernels x ports within TOL, and the summed counts (against
    each check's ``sass``: ``KernelCheck.without_unrolling`` for the counts without
    unrolling)."""
    ok = [k for k in checks if k.sass is not None]
    rows = [
        "| class | within 10% | cgpredict / SASS, summed per thread | worst kernel x port |",
        "|---|---|---|---|",
    ]
    for cls in SUMMARY:
        n = sum(k.within(cls) for k in ok)
        m = sum(k.model[cls] for k in ok)
        s = sum(k.sass[cls] for k in ok)
        worst = max(ok, key=lambda k: abs(_log_ratio(k, cls)), default=None)
        w = (
            f"{worst.launch} ({worst.port}): {_num(worst.model[cls])} vs {_num(worst.sass[cls])}"
            if worst
            else "-"
        )
        rows.append(f"| {cls} | {n} of {len(ok)} | {_num(m)} / {_num(s)} ({_ratio(m, s)}) | {w} |")
    return rows


def _log_ratio(k: KernelCheck, cls: str) -> float:
    """|log| of cgpredict / SASS, large for a class one side lacks (ordering the worst)."""
    import math

    s, m = k.sass[cls], k.model[cls]
    if s == 0 and m == 0:
        return 0.0
    if s == 0 or m == 0:
        return 50.0 + max(s, m)
    return math.log(m / s)


def _kernel_rows(checks: list[KernelCheck]) -> list[str]:
    """One Markdown row per kernel x port: cgpredict/SASS (unrolled estimate) per class, and
    the SASS total and shared widths without unrolling."""
    head = (
        "| file | kernel | port | " + " | ".join(SUMMARY)
        + " | SASS total, no unroll | SASS shared widths, no unroll |"
    )  # fmt: skip
    rows = [head, "|" + "---|" * (len(SUMMARY) + 5)]
    for k in checks:
        if k.sass is None:
            rows.append(f"| {k.file} | {k.launch} | {k.port} | {k.structure} |")
            continue
        cells = []
        for c in SUMMARY:
            cell = f"{_num(k.model[c])}/{_num(k.sass[c])}"
            cells.append(cell if k.within(c) else f"**{cell}**")
        widths = ", ".join(
            f"{c.replace('_shared', '')} {_num(v)}" for c, v in k.sass_widths.items()
        )
        rows.append(
            f"| {k.file} | {k.launch} | {k.port} | " + " | ".join(cells)
            + f" | {_num(k.sass1['total'])} | {widths} |"
        )  # fmt: skip
    return rows


def _hot_rows(checks: list[KernelCheck]) -> list[str]:
    """Per kernel x port: per source iteration of the hot loop, no-unroll vs unrolled SASS."""
    cls = ("ld_global", "st_global", "ld_shared", "fp32", "integer", "branch", "other", "total")
    rows = [
        "| file | kernel | port | iterations per trip | "
        + " | ".join(cls)
        + " | unrolled shared widths | per thread: SASS no unroll -> unrolled estimate "
        "| cgpredict |",
        "|" + "---|" * (len(cls) + 7),
    ]
    for k in checks:
        h = k.hot
        if h is None:
            continue
        est = k.sass
        cells = " | ".join(
            f"{_num(h.nounroll[c])} / {_num(h.unrolled[c])} / {_num(h.model.get(c))}" for c in cls
        )
        widths = ", ".join(f"{c.replace('_shared', '')} {v:.2f}" for c, v in h.widths.items())
        rows.append(
            f"| {k.file} | {k.launch} | {k.port} | {_num(h.factor)} | {cells} | {widths} | "
            f"{_num(k.sass1['total'])} -> {_num(est['total'])} | {_num(k.model['total'])} |"
        )
    return rows


def _failures(k: KernelCheck) -> list[str]:
    """The classes of ``k`` off by more than TOL (memory and barriers: not equal)."""
    exact = ("ld_global", "st_global", "ld_shared", "st_shared", "barrier")
    out = []
    for c in SUMMARY:
        if k.sass is None:
            continue
        if c in exact and abs(k.model[c] - k.sass[c]) > 1e-6 * max(1.0, abs(k.sass[c])):
            out.append(c)
        elif c not in exact and not k.within(c):
            out.append(c)
    return out


def gap_of(k: KernelCheck, cls: str) -> str | None:
    """Why ``cls`` of ``k`` is known to differ: ``sass_user.known_gap`` for a user port
    (their launch names repeat between files), ``known_gap`` for the corpus."""
    if k.file.startswith("user/"):
        return sass_user.known_gap(k.file[5:], k.launch, k.port, cls)
    if k.file.startswith("blind/"):
        return sass_blind.known_gap(k.file[6:], k.launch, k.port, cls)
    return known_gap(k.launch, k.port, cls)


def _gap_rows(checks: list[KernelCheck]) -> list[str]:
    """The differences grouped by their reason (``gap_of``), unexplained ones last."""
    by_reason: dict[str, list[str]] = {}
    for k in checks:
        for c in _failures(k):
            why = gap_of(k, c) or "**Not explained.**"
            by_reason.setdefault(why, []).append(f"{k.launch} ({k.port}) {c}")
    lines = []
    for why, items in sorted(by_reason.items(), key=lambda kv: kv[0].startswith("**")):
        lines.append(f"* {why}: {', '.join(items)}.")
    return lines or ["none"]


def render(checks: list[KernelCheck], user: bool = False, blind: bool = False) -> str:
    """The Markdown of validation/results/sass-check.md (``user``: sass-check-user.md, the
    ports of examples/user, with ``sass_user.INTRO`` and ``sass_user.FINDINGS``; ``blind``:
    those of examples/blind, with ``sass_blind``'s)."""
    ok = [k for k in checks if k.sass is not None]
    all_ok = sum(all(k.within(c) for c in SUMMARY) for k in ok)
    suite = sass_blind if blind else sass_user
    flag = " --blind" if blind else " --user"
    user = user or blind
    head = suite.INTRO if user else [
        "# cgpredict's per-thread instruction counts vs the sm_90 SASS", ""]
    lines = [
        *head,
        "Generated by `python validation/sass_check.py" + (flag if user else "")
        + "` (nvcc `-cubin -O3 -arch=sm_90`, "
        "`nvdisasm -c`, see",
        "`validation/sass_counts.py`). Dynamic instructions per thread by class, traced with "
        + (f"the sizes of `validation/{suite.__name__}.py` TRACE_SIZES" if user else
           f"every size macro = {SASS_TRACE_SIZE}"),
        ("(" if user else f"(TMAX = {TMAX_TRACE}; ")
        + "default blocks). cgpredict = what the model counts: its",
        "compute count (`comp_insts`, of which the affine share of an innermost loop's integer "
        "and branch",
        "instructions is counted once per unrolled trip of a whole tile loop of up to 32, and "
        "in a loop bounded by a size as ptxas's trip keeps it: 16 or 4 iterations a trip "
        "(`compute.runtime_trip_depth`), 2 integer instructions per pointer, the count, its "
        "test, the index and the back edge, and in a re-based trip (GEMM, SYRK: addresses "
        "offset by two different invariants) one induction pointer, two addresses per "
        "unit-stride access and per strided one an IMAD.WIDE and the copy of its uniform row "
        "base (a MOV and an IMAD.U32), and the copies of the pointers a 16-deep trip moves "
        "back into the registers its next trip's loads name (a MOV each: "
        "`runtime_trips.trip_copies`) and those it moves behind its stores (1 or 2 MOV "
        "each: `store_copies`, eq. (12sc)) (`runtime_trips.RuntimeTrip`); "
        "the sizes are run-time kernel parameters in the "
        "measured PolyBench/GPU kernels and in these ports (`validation/cuda/common.cuh`, "
        "\"Sizes\"), so nvcc unrolls such a loop 4 times and ptxas mostly 4 times more; "
        "SYR2K's port, as measured, bounds its loop by the size macro (`bounds=constant`): "
        "nvcc unrolls it by a budget of instructions a trip, at a divisor of the count, "
        "without remainder, index or zero-trip test (eq. (12ct), `constant_trips`); "
        "and the SASS instructions without a PTX counterpart, `cgpredict/machine_code.py`: "
        "prologue constant loads (the guard's sizes among them), loop set-up moves (half "
        "IMAD.MOV: integer), an IMAD.WIDE per pointer a loop advances, staging stores and a "
        "tiled kernel's staging loop code, `cgpredict/memory/staging_code.py`, the entry code "
        "as the SASS has it, `cgpredict/sass_entry.py`, less the address "
        "instructions ptxas folds and the zero-trip tests it merges into the guard) split by "
        "class, its memory",
        "instructions, shared loads and barriers. SASS = what the measured binaries run, "
        "estimated: the",
        "counts with every loop `#pragma unroll 1` (per-loop counts x the C loops' iterations "
        "per thread)",
        "corrected at the hot loop by the unrolled build's counts per source iteration (last "
        "table). See",
        "`sass_check.py` for how each class is counted on either side. Cells: cgpredict/SASS, "
        f"**bold** when more than {TOL:.0%} apart.",
        "",
        f"* kernels x ports compared: {len(ok)} of {len(checks)}; with every class within "
        f"{TOL:.0%}: {all_ok}",
        "",
        "## Per class, against the unrolled SASS (what the GPU runs)",
        "",
        *class_summary(checks),
        "",
        "Against the SASS without unrolling (every loop `#pragma unroll 1`; secondary: the "
        "model counts",
        "unrolled code):",
        "",
        *class_summary([k.without_unrolling() for k in checks]),
        "",
        "## Per kernel and port (cgpredict/unrolled SASS per thread)",
        "",
        *_kernel_rows(checks),
        "",
        "## Differences and why (" + ("sass_blind.known_gap" if blind else
                                      "the strict xfails of tests/test_"
                                      + ("user" if user else "port") + "_sass.py") + ")",
        "",
        *_gap_rows(checks),
        "",
        *(suite.FINDINGS if user else []),
        "## Unrolling: per source iteration of the hot loop",
        "",
        "The measured binaries keep nvcc's and ptxas's unrolling. Per source iteration of each",
        "kernel's hot loop (the loop with the most FP32 instructions; for a tiled kernel the",
        "compute phase between its two barriers, staging excluded on the unrolled side and",
        "amortised on the other), per class: SASS without unrolling / SASS unrolled / cgpredict",
        "(the C loop's own blocks, one iteration, less the model's unrolling fold); and the",
        "per-thread SASS total without unrolling -> corrected by the unrolled difference at the",
        "traced trip counts (the unrolled estimate the tables above compare with).",
        "",
        *_hot_rows(checks),
    ]
    return "\n".join(lines) + "\n"
