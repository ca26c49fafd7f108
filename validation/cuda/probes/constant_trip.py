#!/usr/bin/env python3
"""Probes of eq. (12ct) (cgpredict/constant_trips.py): how deep nvcc unrolls a loop of a
compile-time trip count, against the rule.

Writes each body twice, as a CUDA kernel (one thread a ``t``, the ``k`` loop bounded by the
macro ``N``) and as a marked C kernel (``bounds=constant``), compiles the CUDA to PTX (``nvcc
-ptx -O3 -arch=sm_90``), reads the depth off the PTX (its global loads over the body's), and
traces the C with cgpredict for the body's model instructions an iteration
(``constant_trips.loop_body_cost``) and the rule's depth. Not a port; needs nvcc.

    python validation/cuda/probes/constant_trip.py [--out DIR] [--trips 1024 1000 96]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

#: name: (distinct loads an iteration, statement of the k loop)
BODIES: dict[str, tuple[int, str]] = {
    **{f"u{n}": (2 * n, "s += " + " + ".join(f"x{a}[t * N + k] * x{a}[k]" for a in range(n)) + ";")
       for n in range(1, 9)},
    "v1": (1, "s += x0[k * N + t];"),
    "v2": (2, "s += x0[k * N + t] * x1[k * N + t];"),
    "w1": (1, "s += x0[t * N + k];"),
    "w2": (1, "s += (x0[t * N + k] * x0[t * N + k] + x0[t * N + k]) * (x0[t * N + k] - 1.0f);"),
    "w3": (2, "s += (x0[t * N + k] * x1[k] + x0[t * N + k]) * (x1[k] - x0[t * N + k]) * x1[k]"
              " + x0[t * N + k] * 0.5f;"),
    "w4": (3, "s += x0[t * N + k] * x1[k] + x2[k * N + t];"),
    "w5": (1, "s += x0[t * N + k] * x0[t * N + k] * x0[t * N + k] * x0[t * N + k]"
              " * x0[t * N + k] * 3.0f + x0[t * N + k] * 2.0f + 1.0f;"),
    "y4": (4, "s += 1.5f * x0[t * N + k] * x1[t2 * N + k]"
              " + 1.5f * x1[t * N + k] * x0[t2 * N + k];"),  # SYR2K's body
    "d1": (2, "sd += (double)x0[t * N + k] * x1[k];"),
    "st": (2, "o[t * N + k] = x0[t * N + k] * 2.0f + x1[k];"),
    "m3": (4, "s += x0[t * N + k] * x1[k] * x2[k] + x0[k];"),
}
ARRAYS = 8
_ARGS = (", ".join(f"const float* x{a}" for a in range(ARRAYS))
         + ", float* o, float* out, double* outd")


def cuda_source(trip: int) -> str:
    """The CUDA probes: one kernel a body, the k loop's count the macro N."""
    out = [f"#define N {trip}"]
    for name, (_, stmt) in BODIES.items():
        out.append(f"__global__ void {name}({_ARGS}) {{\n"
                   "  int t = blockIdx.x * blockDim.x + threadIdx.x; int t2 = (t * 7) % N;\n"
                   "  if (t < N) { float s = 0.0f; double sd = 0.0;\n"
                   f"    for (int k = 0; k < N; k++) {stmt}\n"
                   "    out[t] = s; outd[t] = sd; }\n}")
    return "\n".join(out) + "\n"


def c_source(trip: int) -> str:
    """The same bodies as marked C kernels of 32 threads, bounds=constant."""
    out = ["#include <stdio.h>", f"#define N {trip}", f"#pragma cgp trace N={trip}"]
    out += [f"static float x{a}[N * N];" for a in range(ARRAYS)]
    out += ["static float o[N * N];", "static float out[N];", "static double outd[N];",
            "int main(void) {", "  for (int q = 0; q < N * N; q++) {"]
    out += [f"    x{a}[q] = (float)(q % {7 + a}) / 7.0f;" for a in range(ARRAYS)] + ["  }"]
    for name, (_, stmt) in BODIES.items():
        out += [f"#pragma cgp kernel {name} grid=1 bounds=constant",
                "  for (int t = 0; t < 32; t++) {",
                "    int t2 = (t * 7) % N; float s = 0.0f; double sd = 0.0;",
                f"    for (int k = 0; k < N; k++) {stmt}",
                "    out[t] = s; outd[t] = sd;", "  }"]
    out += ["  float z = 0.0f;",
            "  for (int t = 0; t < N; t++) z += out[t] + (float)outd[t] + o[t];",
            '  printf("%f\\n", z);', "  return 0;", "}"]
    return "\n".join(out) + "\n"


def ptx_depths(ptx: str) -> dict[str, float]:
    """Per probe kernel: its PTX's global loads over the body's distinct loads."""
    out = {}
    for m in re.finditer(r"\.entry _Z\d+(\w+?)PKf.*?\n\}\n", ptx, re.S):
        name = m.group(1)
        out[name] = m.group(0).count("ld.global") / BODIES[name][0]
    return out


def model_depths(c_file: Path, trip: int) -> dict[str, tuple[float, int]]:
    """Per probe kernel: the model's instructions an iteration and eq. (12ct)'s depth."""
    from cgpredict.compute import ptx_cost
    from cgpredict.constant_trips import constant_trip_depth, loop_body_cost
    from cgpredict.prediction import RunOptions
    from cgpredict.prepared import prepare

    out = {}
    with prepare(c_file, RunOptions(port="plain")) as prep:
        h = prep.trace.header
        for r in h.regions:
            lp = next(lp for lp in h.loops if lp.region == r.index and lp.parent >= 0)
            cost = loop_body_cost([h.blocks[b] for b in lp.blocks], ptx_cost)
            out[r.name] = (cost, constant_trip_depth(cost, trip))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None, help="keep the sources and PTX here")
    ap.add_argument("--trips", type=int, nargs="+", default=[1024, 1000, 96])
    args = ap.parse_args(argv)
    out = args.out or Path(tempfile.mkdtemp(prefix="cgp-ct-"))
    out.mkdir(parents=True, exist_ok=True)
    bad = 0
    print("| trip | body | model instructions an iteration | PTX depth | eq. (12ct) |")
    print("|---|---|---|---|---|")
    for trip in args.trips:
        cu, c = out / f"ct{trip}.cu", out / f"ct{trip}.c"
        cu.write_text(cuda_source(trip))
        c.write_text(c_source(trip))
        subprocess.run(["nvcc", "-ptx", "-O3", "-arch=sm_90", "-o", str(cu.with_suffix(".ptx")),
                        str(cu)], check=True, capture_output=True)
        ptx = ptx_depths(cu.with_suffix(".ptx").read_text())
        for name, (cost, depth) in model_depths(c, trip).items():
            mark = "" if ptx.get(name) == depth else " **differs**"
            bad += bool(mark)
            print(f"| {trip} | {name} | {cost:g} | {ptx.get(name, 0):g} | {depth}{mark} |")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
