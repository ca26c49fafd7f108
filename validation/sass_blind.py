"""The SASS check on the blind kernels (examples/blind/*.c, ports validation/cuda/blind/*.cu):
the held-back-like set of issue 24, checked as the user kernels are (``sass_user.py``).

``python validation/sass_check.py --blind --out /tmp/x.md`` writes the corpus check's columns
and method (``sass_check.py``'s docstring) for these ports; this module holds what is the blind
kernels' own: the sizes each C file is traced at, the known gaps (``known_gap``, by file,
launch, port and class) and the findings written into the results.
"""

from __future__ import annotations

from pathlib import Path

from sass_user import lookup_gap

ROOT = Path(__file__).resolve().parents[1]
BLIND_C_DIR = ROOT / "examples" / "blind"

#: the sizes each blind C file is traced at by the check: every sequential loop a thread runs
#: over more than compute.UNROLL_WHOLE (32) iterations when a size bounds it (colsum's M,
#: trmv_t's N), traces of a few thousand threads; sizes are powers of two as the ports' are
TRACE_SIZES: dict[str, dict[str, int]] = {
    "bilinear": {"H": 32, "W": 32},  # 64 x 64 output pixels
    "blackscholes": {"N": 4096},
    "colsum": {"M": 64, "N": 4096},  # 64 rows a thread
    "conv1d": {"N": 4096},  # K = 17 taps: a constant loop, unrolled whole
    "gather": {"N": 4096},
    "heat1d": {"N": 4096, "TSTEPS": 2},
    "int_hash": {"N": 4096},
    "mandelbrot": {"W": 64, "H": 64},
    "spmv_ell": {"N": 4096},
    "strided": {"N": 4096},
    "trmv_t": {"N": 256},  # 128 rows a thread on average
    "wavefront": {"N": 64},
}

INTRO = [
    "# cgpredict's per-thread instruction counts vs the sm_90 SASS: the blind kernels",
    "",
    "The kernels of `examples/blind/` (the held-back-like set of issue 24), ported as the "
    "corpus is (`validation/cuda/blind/*.cu`), checked with the corpus check's method and "
    "columns (`results/sass-check.md`). Sizes: `validation/sass_blind.py` TRACE_SIZES.",
    "",
]

_ADDRESSES = (
    "the port's run-time sizes: 2 SHF (2 * h, 2 * w: the guard) and 2 IADD3 (h - 1, w - 1: "
    "the clamps) that the C's folded macros do not show (its clamped rows' addresses, a "
    "LEA and an IMAD.WIDE an access, are eq. (12q)'s: integer 13 -> 19 against 23)"
)
_LIBM_INTEGER = (
    "not explained: logf, expf, sqrtf and the CND polynomial; 12 integer instructions a "
    "thread more in the SASS (LOP3, IADD3, SHF around the MUFU calls), the other class equal"
)
_TRIP_MOVES = (
    "the run-time trip's register copies and base reloads (MOV, LDC: the user kernels' "
    "_POINTER_COPIES and _GATHER_TRIP, runtime_trips.py, which other helpers change)"
)
_WHOLE_LOOP = (
    "a loop unrolled whole (conv1d's 17 taps: no loop left in the SASS): eq. (12wu) keeps no "
    "control, no set-up move and an IMAD.WIDE only for in[i + k]; the one integer "
    "instruction left (5 against 4) is not explained"
)
_ELL = (
    "the run-time trip of K (eq. (12sz): 4 a trip) as the SASS has it but for two things "
    "eq. (12gb) and the rows-only rule leave out: ptxas reloads val's and col's bases every "
    "trip as well as x's (3 LDC.64 a trip, the model 1: a register-allocation choice, as for "
    "the one-row-index reloads), and at the port's N = 2^20 a row is 4 MiB, so the trip's rows "
    "3 and 4 lie past the LDG's 24-bit immediate offset (+-8 MiB): a 64-bit add per pointer a "
    "trip (IADD3 + IMAD.X) that the check's N = 4096 cannot show"
)
_MANDEL = (
    "the escape loop's set-up: eqs. (12fm), (12xb) and (12rv) give fp32, branch and the "
    "BSSY/BSYNC pair; the SASS moves 5 registers before the loop (zr, zi, their squares "
    "precomputed, it: 4 MOV/CS2R and a HFMA2.MMA constant) where the model has 3 set-up "
    "moves, half of them integer"
)
_SMALL = "one instruction a thread (not explained)"

#: (file, launch) -> {class: reason} for both ports; ("file", "launch", "port") keys for one
_GAPS: dict[tuple[str, ...], dict[str, str]] = {
    ("bilinear", "bilinear"): {"integer": _ADDRESSES},
    ("blackscholes", "blackscholes"): {"integer": _LIBM_INTEGER},
    ("colsum", "colsum"): {"other": _TRIP_MOVES},
    ("conv1d", "conv1d"): {"integer": _WHOLE_LOOP},
    ("heat1d", "heat"): {"fp32": _SMALL},
    ("mandelbrot", "mandelbrot"): {"other": _MANDEL},
    ("spmv_ell", "spmv_ell"): {"integer": _ELL, "other": _ELL, "total": _ELL},
    ("trmv_t", "trmv_t"): {"other": _SMALL},
}

#: what reading the SASS of the misses found, written into the results after the gaps
FINDINGS: list[str] = [
    "## What the blind kernels show (read from their SASS, sixteenth round, t9)",
    "",
    "* Fixed in the model: a 2-D thread's row work (cgpredict.row_work, eq. (12rw)): the "
    "arithmetic clang hoists into the outer mapped loop's row block (bilinear's y half: "
    "floorf, (float)y, (int)fy, the clamps; mandelbrot's ci) runs in every CUDA thread, "
    "not once per row: bilinear fp32 11.1 -> 16 and other 13 -> 15 (the SASS's 16 and 16), "
    "mandelbrot fp32 +1 and other +1 a thread; the corpus's conv3d integer 15 -> 17 (SASS "
    "16), no other corpus or user kernel moves.",
    "* Fixed in the model: a 2-D thread's rows of unrelated indices (cgpredict.row_forms, "
    "eq. (12q)): bilinear's clamped rows in[y0] and in[y1] are no constant offset of each "
    "other, so the SASS forms every access's address (5 LEA + 5 IMAD.WIDE) where the fold "
    "took in[y0][x0] and in[y1][x0] for one base and one row index a thread: the row is "
    "part of the address base, and each distinct (row, column) form past the first is an "
    "index instruction: integer 13 -> 19 (SASS 23), total 51 -> 57 (62); corpus: fdtd_k1 "
    "+0.03 a thread (its i == 0 row), nothing else.",
    "* Fixed in the check: a kernel whose every loop ptxas unrolls whole has no hot loop to "
    "correct at (conv1d: the estimate was the no-unroll build's 242 a thread, the GPU runs "
    "67): it is compared with the unrolled build's straight-line code "
    "(sass_check.whole_unrolled); and the model side subtracts eq. (12f)'s folds "
    "(cgpredict.loop_fold), which comp_insts has: int_hash 150 -> 75 a thread (SASS 70, "
    "the model's comp_insts 73).",
    "",
    "## Seventeenth round (t7)",
    "",
    "* Fixed in the model, eq. (12sz): spmv_ell's k < K loop (K = 16, a size macro the port "
    "passes as a kernel parameter) was taken for a constant loop unrolled whole; a loop whose "
    "trip model grows with a size is a run-time trip at any count: integer 30.5 -> 54.5 a "
    "thread (SASS 69), branch 4 -> 7 (7), other 12.5 -> 16.5 (27), total 112 -> 143 (168).",
    "* Fixed in the model, eq. (12wu): a loop unrolled whole keeps no control, no set-up "
    "moves and an IMAD.WIDE only per array a thread's value offsets: conv1d integer 12 -> 5 "
    "(4), branch 3 -> 2 (2), other 11 -> 9 (9); int_hash integer 61 -> 58 (58), branch 3 -> 2 "
    "(2), other 9 -> 8 (8).",
    "* Fixed in the model, eqs. (12fm), (12xb), (12rv) for a data exit: mandelbrot fp32 341.7 "
    "-> 389.8 (394), branch 99.2 -> 51.0 (52), other 13.5 -> 15.5 (21). The product zr * zr "
    "is not contracted twice: the SASS computes it once (FMUL) and adds it twice (FADD).",
    "* Not done: blackscholes (logf, expf, sqrtf, the CND polynomial: integer 25 against 30, "
    "other 31 against 38), colsum's trip moves, bilinear's run-time sizes, heat's one FP32.",
    "",
]


def known_gap(file: str, launch: str, port: str, cls: str) -> str | None:
    """Why cgpredict's count of ``cls`` for ``launch`` of blind file ``file`` is known to
    differ from the unrolled SASS (None when it is expected to hold)."""
    return lookup_gap(_GAPS, file, launch, port, cls)
