"""The SASS check on the blind kernels (examples/blind/*.c, ports validation/cuda/blind/*.cu):
the held-back-like set of issue 24, checked as the user kernels are (``sass_user.py``).

``python validation/sass_check.py --blind --out /tmp/x.md`` writes the corpus check's columns
and method (``sass_check.py``'s docstring) for these ports; this module holds what is the blind
kernels' own: the sizes each C file is traced at, the known gaps (``known_gap``, by file,
launch, port and class) and the findings written into the results.
"""

from __future__ import annotations

from pathlib import Path

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

#: (file, launch) -> {class: reason} for both ports; ("file", "launch", "port") keys for one
_GAPS: dict[tuple[str, ...], dict[str, str]] = {}

#: what reading the SASS of the misses found, written into the results after the gaps
FINDINGS: list[str] = []


def known_gap(file: str, launch: str, port: str, cls: str) -> str | None:
    """Why cgpredict's count of ``cls`` for ``launch`` of blind file ``file`` is known to
    differ from the unrolled SASS (None when it is expected to hold)."""
    for key in ((file, launch, port), (file, launch)):
        why = _GAPS.get(key, {}).get(cls)
        if why is not None:
            return why
    return None
