"""The SASS check on the user kernels (examples/user/*.c, ports validation/cuda/user/*.cu):
kernels nobody tuned the model for, held-back proxies of issue 24.

``python validation/sass_check.py --user`` writes ``results/sass-check-user.md`` with the
corpus check's columns and method (``sass_check.py``'s docstring); this module holds what is
the user kernels' own: the sizes each C file is traced at, the known gaps
(``known_gap``: the strict xfails of ``tests/test_user_sass.py``, by file, launch, port and
class, as the user files repeat launch names) and the findings written into the results.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
USER_C_DIR = ROOT / "examples" / "user"

#: the sizes each user C file is traced at by the check: every sequential loop a thread runs
#: over more than compute.UNROLL_WHOLE (32) iterations when a size bounds it (so that the model
#: takes it for the run-time loop it is in the port), traces of a few thousand threads
TRACE_SIZES: dict[str, dict[str, int]] = {
    "dot_gridstride": {"N": 16384, "NT": 256},  # 64 iterations a thread
    "dot_reduce": {"N": 4096},
    "histogram": {"N": 4096},
    "index_decomp": {"NE": 4096, "W": 64},
    "jacobi2d": {"N": 64, "TSTEPS": 2},
    "nbody": {"NP": 64},
    "nbody_f64": {"N": 64},
    "particles": {"NP": 4096},
    "saxpy": {"N": 4096},
    "sfu_heavy": {"N": 4096},
    "softmax": {"R": 256, "C": 64},
    "spmv_csr": {"NR": 1024, "NC": 1024},  # NNZ_ROW = 16 entries a row (a #define)
    "transpose": {"N": 64},
}

INTRO = [
    "# cgpredict's per-thread instruction counts vs the sm_90 SASS: the user kernels",
    "",
    "The kernels of `examples/user/` (nobody tuned the model on them: held-back proxies of "
    "issue 24), ported as the corpus is (`validation/cuda/user/*.cu`), checked with the "
    "corpus check's method and columns (`results/sass-check.md`). Sizes: "
    "`validation/sass_user.py` TRACE_SIZES. Atomics (REDG) and warp shuffles (SHFL) are "
    "class other on both sides; FP64 instructions (DADD, DFMA, DMUL, MUFU.RSQ64H) are other "
    "on both sides too (the fp32 column is FP32 only).",
    "",
]

#: what reading the SASS of the misses found (filled in by hand from the listings)
FINDINGS: list[str] = []


def known_gap(file: str, launch: str, port: str, cls: str) -> str | None:
    """Why cgpredict's count of ``cls`` for ``launch`` of user file ``file`` is known to
    differ from the unrolled SASS (None when it is expected to hold)."""
    return None
