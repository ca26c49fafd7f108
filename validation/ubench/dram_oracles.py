#!/usr/bin/env python3
"""The round-16 t4 oracles: dram_random.cu and sm_bandwidth.cu written as cgpredict C kernels.

Writes one C file a mode into OUT (default /tmp/dram_oracles): ``dr_<mode>.c`` (the nine
modes of dram_random.cu but rand512: one thread reads one float of piece perm(i / used))
and ``smbw_T<T>_k<k>.c`` (k blocks of T threads, the grid-stride float4 sum of 512 MiB as
4 floats a step). Predict each with
``python -m cgpredict run OUT/dr_seq.c --device h100 --block 256x1 --no-cache`` (smbw:
``--block <T>x1``) and compare with validation/measured/h100-worst-2026-11-27/ubench/
(docs/validation.md, "The three DRAM micro-benchmarks"). Stdlib only.
"""

from __future__ import annotations

import pathlib
import sys

_DR = """/* dram_random.cu as a cgpredict C kernel: pieces of {words} floats,
 * {used} read of each, {order}. */
#include <stdio.h>
#define P {pieces}
#pragma cgp trace P={trace}
#define PIECES P
#define N (P * {words})
#define NTH (PIECES * {used})
static float x[N];
static float out[1];
static int lg(unsigned v) {{ int b = 0; while ((1u << b) < v) b++; return b; }}
int main(void)
{{
  for (long k = 0; k < N; k++) x[k] = 0.0f;
  unsigned mask = PIECES - 1;
  int bits = lg(PIECES), su = lg({used});
  int s1 = bits / 2 + 1, s2 = bits / 3 + 1;
#pragma cgp kernel gather_pieces grid=1
  for (unsigned i = 0; i < NTH; i++) {{
    unsigned piece = i >> su, off = i & ({used} - 1);
    unsigned c = piece;
    if ({hashed}) {{
      c = (c * 0x9E3779B1u) & mask;
      c ^= c >> s1;
      c = (c * 0x85EBCA77u) & mask;
      c ^= c >> s2;
      c = (c * 0xC2B2AE3Du) & mask;
    }}
    float v = x[(unsigned long)c * {words} + off];
    if (v == -1.0f) out[0] = v;
  }}
  printf("%f\\n", out[0]);
  return 0;
}}
"""

_SMBW = """/* sm_bandwidth.cu's gs_sum as a C kernel: {k} blocks of {t} threads, a grid-stride sum
 * of N4 float4 (4 floats a step), one store a thread. */
#include <stdio.h>
#ifndef N4
#define N4 33554432
#endif
#pragma cgp trace N4=1048576
static float a[N4 * 4];
static float out[{nt}];
int main(void)
{{
  for (long k = 0; k < (long)N4 * 4; k++) a[k] = 0.0f;
#pragma cgp kernel gs_sum grid=1
  for (int t = 0; t < {nt}; t++) {{
    float s = 0.0f;
    for (int i = t; i < N4; i += {nt})
      s += a[4 * i] + a[4 * i + 1] + a[4 * i + 2] + a[4 * i + 3];
    out[t] = s;
  }}
  printf("%f\\n", out[0]);
  return 0;
}}
"""

#: (mode, piece bytes, bytes read of a piece, hashed order)
DR_MODES = (("seq", 4096, 4096, 0), ("rand32", 32, 32, 1), ("rand64", 64, 64, 1),
            ("rand128", 128, 128, 1), ("rand256", 256, 256, 1), ("rand1024", 1024, 1024, 1),
            ("rand4096", 4096, 4096, 1), ("half64", 64, 32, 1), ("half128", 128, 32, 1))


def dram_random_c(piece_bytes: int, read_bytes: int, hashed: int) -> str:
    """One dram_random mode as C (1 GiB of floats at the work size)."""
    words, used = piece_bytes // 4, read_bytes // 4
    trace = {1024: 4096, 256: 16384}.get(words, 131072)  # about 4 M floats traced or fewer
    return _DR.format(words=words, used=used, pieces=(1 << 28) // words, trace=trace,
                      hashed=hashed, order="pieces in hashed order" if hashed else "in order")


def sm_bandwidth_c(threads: int, blocks: int) -> str:
    """One sm_bandwidth configuration as C."""
    return _SMBW.format(k=blocks, t=threads, nt=threads * blocks)


def main(out: str = "/tmp/dram_oracles") -> None:
    """Write every oracle file into ``out``."""
    path = pathlib.Path(out)
    path.mkdir(parents=True, exist_ok=True)
    for name, piece, read, hashed in DR_MODES:
        (path / f"dr_{name}.c").write_text(dram_random_c(piece, read, hashed))
    for threads in (256, 1024):
        for blocks in (1, 8, 32, 64, 132):
            (path / f"smbw_T{threads}_k{blocks}.c").write_text(sm_bandwidth_c(threads, blocks))


if __name__ == "__main__":
    main(*sys.argv[1:2])
