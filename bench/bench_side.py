"""Two source trees side by side: cold `cgpredict CMD FILE --json` (a fresh process each,
``CGPREDICT_NO_CACHE=1``, cwd /tmp), the trees alternating within every pass so that the
machine's load falls on both alike. Prints per file and command the median wall and CPU
seconds (the process and the compilers and traced programs it waits for) of each tree, their
ratios, and whether the two trees printed the same JSON. Asserts nothing. ``--min``: the
minimum of the runs instead of the median (a machine loaded by others).

    python bench/bench_side.py /tmp/old-tree . --files 3mm,gramschmidt --cmds run,advise
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "polybench_c"


def one(tree: Path, cmd: str, stem: str) -> tuple[float, float, bytes]:
    """(wall s, CPU s, stdout) of one cold `cgpredict CMD FILE --json` of ``tree``."""
    env = dict(os.environ, PYTHONPATH=str(tree), CGPREDICT_NO_CACHE="1")
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "cgpredict", cmd, str(CORPUS / f"{stem}.c"),
                        "--json"], env=env, cwd="/tmp", stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), p.stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--files", default="3mm", help="corpus stems, comma separated")
    ap.add_argument("--cmds", default="run", help="run and/or advise, comma separated")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--min", action="store_true",
                    help="the minimum of the runs, not the median (a loaded machine)")
    a = ap.parse_args(argv)
    stat = min if a.min else statistics.median
    trees = {"old": a.old.resolve(), "new": a.new.resolve()}
    for tree in trees.values():  # each tree's numba cache filled before anything is timed
        one(tree, "run", "gemm")
    got: dict[tuple, list] = {}
    for r in range(a.repeat):
        for stem in a.files.split(","):
            for cmd in a.cmds.split(","):
                for name in ("old", "new") if r % 2 == 0 else ("new", "old"):
                    got.setdefault((stem, cmd, name), []).append(one(trees[name], cmd, stem))
    print(f"load average at the end: {os.getloadavg()}")
    print("| file | cmd | old wall | new wall | new/old | old CPU | new CPU | new/old CPU | JSON |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (stem, cmd, name), runs in got.items():
        if name != "old":
            continue
        o, n = runs, got[(stem, cmd, "new")]
        ow, nw = (stat(x[0] for x in v) for v in (o, n))
        oc, nc = (stat(x[1] for x in v) for v in (o, n))
        same = "identical" if o[0][2] == n[0][2] else "DIFFERENT"
        print(f"| {stem} | {cmd} | {ow:.2f} | {nw:.2f} | {nw / ow:.2f} | {oc:.2f} | {nc:.2f} "
              f"| {nc / oc:.2f} | {same} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
