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
    "a loop unrolled whole (conv1d's 17 taps, int_hash's 16 rounds: no loop left in the "
    "SASS) keeps no control and no index arithmetic (the taps' offsets are immediates of "
    "their LDGs: 2 IMAD.WIDE), where cgpredict keeps its affine share once a trip "
    "(parallelism.ThreadBodies.unrolled_savings): integer 12 against 4, branch 3 against 2"
)
_MANDEL = (
    "the escape loop: the IR shares zr * zr and zi * zi between the test and the update, "
    "ptxas contracts each use into its own FFMA (8 FP32 an iteration against 6.9); the two "
    "exit tests (it < MAXIT && |z|^2 <= 4) are one predicate and one BRA an iteration in "
    "the SASS, two conditional branches in the IR (branch 99 against 52); total 559 "
    "against 573, within 3%"
)
_SMALL = "one instruction a thread (not explained)"

#: (file, launch) -> {class: reason} for both ports; ("file", "launch", "port") keys for one
_GAPS: dict[tuple[str, ...], dict[str, str]] = {
    ("bilinear", "bilinear"): {"integer": _ADDRESSES},
    ("blackscholes", "blackscholes"): {"integer": _LIBM_INTEGER},
    ("colsum", "colsum"): {"other": _TRIP_MOVES},
    ("conv1d", "conv1d"): {"integer": _WHOLE_LOOP, "branch": _WHOLE_LOOP, "other": _WHOLE_LOOP,
                           "total": _WHOLE_LOOP},
    ("heat1d", "heat"): {"fp32": _SMALL},
    ("int_hash", "int_hash"): {"branch": _WHOLE_LOOP, "other": _SMALL},
    ("mandelbrot", "mandelbrot"): {"fp32": _MANDEL, "branch": _MANDEL, "other": _MANDEL},
    ("spmv_ell", "spmv_ell"): {"integer": _TRIP_MOVES, "branch": _TRIP_MOVES,
                               "other": _TRIP_MOVES, "total": _TRIP_MOVES},
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
]


def known_gap(file: str, launch: str, port: str, cls: str) -> str | None:
    """Why cgpredict's count of ``cls`` for ``launch`` of blind file ``file`` is known to
    differ from the unrolled SASS (None when it is expected to hold)."""
    return lookup_gap(_GAPS, file, launch, port, cls)
