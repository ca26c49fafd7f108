"""Every C type the compiler accepts is sized and traced: bit-fields (arbitrary-width IR
integers), packed and nested structs, unions, long double, complex, vectors, atomics. The
expected sizes and strides are the C ABI's (x86-64), derived by hand in the comments."""

from __future__ import annotations

import numpy as np
import pytest

from cgpredict.frontend.tracefile import ADDRESS_MASK, TAG_MARKERS
from cgpredict.frontend.tracer import trace_program
from instrument.memtrace import _layout

TYPES_C = r"""
#include <stdio.h>
#include <complex.h>
#include <stdatomic.h>
#include <stdint.h>
#define N 64
struct bits { unsigned a : 3; signed b : 29; unsigned long long c : 40; } __attribute__((packed));
struct inner { char c; double d; };
struct outer { int k; struct inner in[2]; };
union u { float f; int32_t i; char bytes[6]; };
typedef float v4f __attribute__((vector_size(16)));
static struct bits B[N];
static struct outer O[N];
static union u U[N];
static long double L[N];
static double complex Z[N];
static v4f V[N];
static _Atomic int AT[N];
static atomic_long ACC;
static __int128 I128[N];
static _Bool BO[N];
int main(void) {
  for (int i = 0; i < N; i++) { B[i].a = i; B[i].c = i * 3ull; O[i].k = i; U[i].i = i;
    L[i] = i; Z[i] = i; V[i] = (v4f){i, 1, 2, 3}; AT[i] = i; I128[i] = i; BO[i] = i & 1; }
#pragma cgp kernel k
  for (int i = 0; i < N; i++) {
    B[i].c += B[i].a;
    O[i].in[1].d += O[i].k;
    U[i].f += U[i].bytes[2];
    L[i] = L[i] * 1.5L;
    Z[i] = Z[i] * Z[i];
    V[i] = V[i] * V[i];
    atomic_fetch_add(&AT[i], 1);
    atomic_fetch_add(&ACC, 2);
    I128[i] *= 3;
    BO[i] = !BO[i];
  }
  long double s = 0;
  for (int i = 0; i < N; i++)
    s += B[i].c + O[i].in[1].d + U[i].f + L[i] + creal(Z[i]) + V[i][0] + AT[i] + (double)I128[i]
         + BO[i];
  printf("%Lf %ld\n", s, (long)ACC);
  return 0;
}
"""

# (access, kind) -> (bytes per access, stride between threads: sizeof the element)
EXPECTED = {
    ("B[i].a", "load"): (4, 9),  # packed 3 + 29 + 40 bits = 9 bytes; a, b share an i32
    ("B[i].c", "load"): (8, 9),  # a 40-bit field: IR i40, 5 bytes stored, 8 allocated
    ("B[i].c", "store"): (8, 9),
    ("O[i].k", "load"): (4, 40),  # int, pad 4, 2 x {char, pad 7, double} = 4 + 4 + 32
    ("O[i].in[1].d", "load"): (8, 40),
    ("O[i].in[1].d", "store"): (8, 40),
    ("U[i].bytes[2]", "load"): (1, 8),  # 6 chars rounded to the float's alignment
    ("U[i].f", "load"): (4, 8),
    ("U[i].f", "store"): (4, 8),
    ("L[i]", "load"): (16, 16),  # x86 80-bit long double in 16 bytes
    ("L[i]", "store"): (16, 16),
    ("V[i]", "load"): (16, 16),
    ("V[i]", "store"): (16, 16),
    ("I128[i]", "load"): (16, 16),
    ("I128[i]", "store"): (16, 16),
    ("BO[i]", "load"): (1, 1),
    ("BO[i]", "store"): (1, 1),
}


@pytest.fixture(scope="module")
def types_trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("types")
    (d / "types.c").write_text(TYPES_C)
    return trace_program(d / "types.c", d / "types.cgptrace")


def _strides(trace) -> dict[int, set[int]]:
    ev = np.asarray(trace.launch_events(0))
    mem = ev[(ev >> 48) < TAG_MARKERS]
    out = {}
    for sid in np.unique(mem >> 48):
        addr = (mem[(mem >> 48) == sid] & ADDRESS_MASK).astype(np.int64)
        out[int(sid)] = set(np.diff(addr).tolist())
    return out


def test_every_type_is_sized_and_traced_with_the_abi_stride(types_trace):
    h = types_trace.header
    strides = _strides(types_trace)
    got = {(m.base, m.kind): (m.bytes, strides[m.id]) for m in h.mem if m.region == 0}
    for key, (size, stride) in EXPECTED.items():
        assert got[key] == (size, {stride}), key
    # complex: real and imaginary parts, 8 bytes each, 16 apart from thread to thread
    z = [(m.kind, m.bytes, strides[m.id]) for m in h.mem if m.base == "Z[i]"]
    assert sorted(z) == [("load", 8, {16})] * 2 + [("store", 8, {16})] * 2


def test_atomic_read_modify_writes_are_traced_as_writing_accesses(types_trace):
    h = types_trace.header
    strides = _strides(types_trace)
    lines = [n + 1 for n, x in enumerate(TYPES_C.split("\n")) if "atomic_fetch_add" in x]
    atomics = [m for m in h.mem if m.region == 0 and m.line in lines]
    got = sorted((m.kind, m.bytes, tuple(strides[m.id])) for m in atomics)
    # AT[i]: one int per thread, 4 apart; ACC: one long, the same location for every thread
    assert got == [("store", 4, (4,)), ("store", 8, (0,))]


@pytest.mark.parametrize("ty, layout", [
    ("i1", (1, 1)), ("i24", (4, 4)), ("i40", (8, 8)), ("i72", (16, 16)), ("i200", (32, 16)),
    ("<{ i8, i40 }>", (9, 1)), ("{ i8, i40 }", (16, 8)), ("[3 x i24]", (12, 4)),
])
def test_arbitrary_width_integers_follow_the_x86_64_data_layout(ty, layout):
    assert _layout(ty) == layout
