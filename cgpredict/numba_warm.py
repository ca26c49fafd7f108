"""numba's compiled kernels, made before the first run.

Every numba function of cgpredict is ``@njit(cache=True)``: numba compiles it on its first
call (all of them: about 15 s on a 2-core machine, against 1-2 s for a whole warm ``run``)
and keeps the machine code in its cache, keyed by numba's version, the CPU and a hash of the
source file's content. The cache sits where numba puts it: next to the module
(``cgpredict/__pycache__``) when that folder is writable, else ``$NUMBA_CACHE_DIR``, else
numba's user-wide cache (``~/.cache/numba``).

``pip install .`` builds the wheel with ``setup.py``, whose ``build_py`` step runs
``python -m cgpredict.numba_warm CORPUS`` on the built package: the README's first command
(``cgpredict run polybench_c/gemm.c --block 32x32``), a tiled file, ``advise`` on a
stencil and a ``run`` on the H100, with the trace cache off, so that numba writes the
kernels the analysis and the advisor use into ``build/.../__pycache__``, and the wheel
carries them. Installed on the machine that built it (numba's version and the CPU match),
the first run reads them back.
Elsewhere (another CPU, another numba, a read-only install) numba compiles them on the first
run, once; ``numba_cache.cold()`` tells, and ``run`` then says so on its progress line. This
module runs the command line (``warm``), so it sits above it; what the prediction asks about
numba's cache is in ``numba_cache``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .numba_cache import cache_dir

__all__ = ["WARM_RUNS", "warm"]

# (command, file under the corpus folder, its arguments): what the warm-up runs. `run` on
# the README's first command and a tiled file; `advise` on FDTD-2D, a host loop of guarded
# stencils, whose fixes (block sweep, halo tiles, register blocking, warp regrouping, the
# masked warp order) call numba kernels `run` does not: without it the first `advise` after
# an install compiled 13 of them (17 s of CPU). A `run` on the H100: its L1 path (the L1's
# LRU stacks, loads in flight, merged stores: eq. (SM1)) calls 12 kernels the TK1's does
# not, which the first H100 run after an install compiled.
WARM_RUNS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("run", "gemm.c", ("--block", "32x32")),
    ("run", "gemm_tiled.c", ("--block", "32x32", "-D", "NI=256", "-D", "NJ=256", "-D",
                             "NK=256", "--trace-size", "NI=64", "--trace-size", "NJ=64",
                             "--trace-size", "NK=64")),
    ("advise", "fdtd2d.c", ("-D", "NX=256", "-D", "NY=256", "-D", "TMAX=8")),
    ("run", "gemm.c", ("--device", "h100", "--block", "32x8", "-D", "NI=256", "-D", "NJ=256",
                       "-D", "NK=256")),
)


def warm(corpus: Path) -> list[str]:
    """Run the warm-up analyses of ``corpus`` (a ``polybench_c`` folder) in this process,
    with cgpredict's trace cache off; returns the commands run."""
    from click.testing import CliRunner

    from .cli import main

    os.environ["CGPREDICT_NO_CACHE"] = "1"
    done = []
    for command, name, args in WARM_RUNS:
        argv = [command, str(corpus / name), *args]
        r = CliRunner().invoke(main, argv, catch_exceptions=False)
        if r.exit_code != 0:
            raise RuntimeError(f"cgpredict {' '.join(argv)}: exit {r.exit_code}: "
                               f"{r.stderr.strip()[-500:]}")
        done.append("cgpredict " + " ".join(argv))
    _warm_direct()
    return done


def _warm_direct() -> None:
    """Compile the kernels no warm-up file reaches: the warps' makespan on their
    sub-partitions (eq. (B6); the block scheduler's, eq. (B3), is its case of one warp a block
    on one scheduler) and the draws of a block's warps below the trace's lane spacing (eq.
    (B8)), called only for uneven blocks on more blocks than SMs, as the blind
    Mandelbrot's; and the sectors a host loop's recorded launches touch (eq. (CO1)),
    called only where a launch loads an array an earlier launch left partly in the L2 (3MM,
    GRAMSCHMIDT; the warm-up files' arrays fit it whole)."""
    import numpy as np

    from .block import Block
    from .memory.carryover import SECTOR, _sector_tables
    from .smsp_schedule import warp_makespan
    from .warp_spread import spread_work

    warp_makespan(np.array([[3.0, 1.0], [2.0, 1.0]]), 2, 1, 4)
    spread_work(np.array([1.0, 3.0]), (2, 1), (64, 1), Block(32, 1), 32)
    events = np.array([(1 << 48) | 64], np.uint64)
    events.flags.writeable = False  # as a trace's events are (a read-only mapping)
    _sector_tables(events, np.zeros(1 << 16, np.int64), 1, SECTOR)


def main(argv: list[str] | None = None) -> int:
    """``python -m cgpredict.numba_warm CORPUS``: warm numba's cache, one line on stdout."""
    import time

    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or not Path(argv[0], WARM_RUNS[0][1]).is_file():
        print("usage: python -m cgpredict.numba_warm POLYBENCH_C_FOLDER", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    runs = warm(Path(argv[0]))
    n = len(list(cache_dir().glob("*.nbi"))) if cache_dir() else 0
    print(f"cgpredict: numba kernels compiled once and cached in {cache_dir()} "
          f"({n} functions, {time.perf_counter() - t0:.1f} s; {len(runs)} warm-up runs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
