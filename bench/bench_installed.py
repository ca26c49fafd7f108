"""Cold `run` (and `advise`) of every corpus file as a user runs them: the `cgpredict`
command of an installed environment (the wheel: `.pyc` files and numba's kernels built at
install), started from outside the checkout, the trace cache off; minimum of --repeat wall
and CPU seconds (the process and its children: clang, the traced program). Prints figures,
asserts nothing.

    python -m venv /tmp/v && /tmp/v/bin/pip install . && python bench/bench_installed.py /tmp/v
    python bench/bench_installed.py /tmp/v --advise --repeat 2
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "polybench_c"


def timed(exe: str, args: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one `cgpredict ARGS` run in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run([exe, *args], cwd="/", capture_output=True, text=True,
                       env={**os.environ, "CGPREDICT_NO_CACHE": "1"})
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode:
        print(f"cgpredict {' '.join(args)}: exit {r.returncode}: {r.stderr.strip()[-300:]}",
              file=sys.stderr)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def best(exe: str, args: list[str], repeat: int) -> tuple[float, float]:
    """The minimum wall and the minimum CPU seconds of ``repeat`` runs."""
    runs = [timed(exe, args) for _ in range(repeat)]
    return min(w for w, _ in runs), min(c for _, c in runs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("venv", type=Path, help="an environment with cgpredict installed")
    ap.add_argument("files", nargs="*", help="corpus file stems [default: all]")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--advise", action="store_true", help="also time `advise`, and the ratio")
    a = ap.parse_args()
    exe = str(a.venv / "bin" / "cgpredict")
    files = [CORPUS / f"{s}.c" for s in a.files] or sorted(CORPUS.glob("*.c"))
    head = f"{'file':18} {'run wall':>8} {'run cpu':>8}"
    print(head + (f" {'adv wall':>8} {'adv cpu':>8} {'ratio':>6}" if a.advise else ""))
    for f in files:
        rw, rc = best(exe, ["run", str(f)], a.repeat)
        line = f"{f.stem:18} {rw:8.2f} {rc:8.2f}"
        if a.advise:
            aw, ac = best(exe, ["advise", str(f)], a.repeat)
            line += f" {aw:8.2f} {ac:8.2f} {aw / rw:6.2f}"
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
