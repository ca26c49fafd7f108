"""Detection of reductions and atomic sites (atomics.py) on small kernels, and their report
lines in text, JSON and HTML:

* an accumulator carried in a register by the mapped loop and combined by one add: a
  reduction; the same accumulator also stored every iteration (a prefix sum): none;
* an accumulator behind a pointer (``*out += x[i]``, a read-modify-write of one location):
  a reduction, its load and store shown as atomics;
* a histogram: an atomic site with its bins' count and busiest share (brute force over the
  generated data is the oracle); the unit counts of _address_stats on a hand-made warp.
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest

from cgpredict.atomics import PortShape, _address_stats, _reduction_counts, reduction_code
from cgpredict.devices import load_device
from cgpredict.l2_slices import SliceMap
from cgpredict.pipeline import predict_source
from cgpredict.prediction import RunOptions
from cgpredict.render.html import _kernel_section
from cgpredict.report import to_json, to_text

pytestmark = pytest.mark.usefixtures("compiler")

HEAD = "#include <stdio.h>\n#define N 8192\nstatic float x[N], y[N];\n"
FILL = "for (int i = 0; i < N; i++) x[i] = (float)(i % 7);\n"


def _kernel(tmp_path, name: str, decls: str, body: str, after: str = ""):
    src = tmp_path / f"{name}.c"
    src.write_text(HEAD + decls + "int main(void) {\n" + FILL
                   + f"#pragma cgp kernel {name} grid=1\n" + body + after
                   + "  return 0;\n}\n")
    (k,) = predict_source(src, RunOptions(device="h100")).kernels
    return k


def test_register_reduction_is_found(tmp_path):
    k = _kernel(tmp_path, "sum", "static float s;\n",
                "for (int i = 0; i < N; i++) s += x[i];\n", 'printf("%f\\n", s);\n')
    assert any("s (" in w and "reduction over the threads" in w for w in k.warnings)
    assert k.profile.atomics.ops == pytest.approx(1 / 32)


def test_register_reduction_port_has_no_load_or_store_of_the_accumulator(tmp_path):
    """The C loads ``s`` before the mapped loop and stores it after (once a launch); the
    port's atomics update ``s``: neither access is in the memory model (eq. (A3))."""
    k = _kernel(tmp_path, "sum2", "static float s;\n",
                "for (int i = 0; i < N; i++) s += x[i];\n", 'printf("%f\\n", s);\n')
    outside = [m for m in k.mem if m.text.startswith("s")]
    assert outside and all(m.pattern == "atomic" for m in outside)
    assert k.profile.atomics.insts == pytest.approx(1.0)  # one RED a warp, per thread 1/32 x 32


def test_warp_reduction_code_is_the_dot_reduce_sass():
    """Hand count of the sm_90 SASS of validation/cuda/user/dot_reduce.cu per thread: 5
    SHFL.DOWN and 5 FADD (log2 32), BSSY + BSYNC + HFMA2.MMA (the zero partial), LOP3 (the
    lane test) and its predicated EXIT: 15 besides the RED."""
    code = reduction_code(32)
    assert (code.shuffles, code.adds, code.reconverge, code.lane_test, code.lane_exit) == (
        5, 5, 3, 1, 1)
    assert code.total == 15
    assert reduction_code(4).total == 2 + 2 + 5  # log2 of a 4-lane warp
    shape = PortShape(threads_per_block=256, resident_blocks=1, blocks=1, warp_size=32,
                      sector_bytes=32)
    _, extra, bars = _reduction_counts(None, shape)
    assert (extra, bars) == (15, 0)
    _, extra, bars = _reduction_counts(None, PortShape(256, 1, 1, 32, 32, level="block"))
    assert (extra, bars) == (15 + 2 + 10 / 8, 1)  # partial store and load, warp 0's steps


def test_prefix_sum_is_no_reduction(tmp_path):
    k = _kernel(tmp_path, "scan", "static float s;\n",
                "for (int i = 0; i < N; i++) { s += x[i]; y[i] = s; }\n",
                'printf("%f\\n", y[N - 1]);\n')
    assert not any("reduction" in w for w in k.warnings)
    assert k.profile.atomics.ops == 0


def test_pointer_accumulator_is_a_reduction_of_one_location(tmp_path):
    """``*o += a[i]`` where o may alias a: the compiler keeps the sum in a register but
    stores it to *o on every iteration (one location every thread writes): a reduction,
    its store shown as an atomic, not the racy store of every thread."""
    src = tmp_path / "acc.c"
    src.write_text(HEAD + "static float out[4];\n"
                   "__attribute__((noinline)) void acc(float *o, const float *a, int n) {\n"
                   "  for (int i = 0; i < n; i++) *o += a[i];\n}\n"
                   "int main(void) {\n" + FILL
                   + '  acc(&out[2], x, N);\n  printf("%f\\n", out[2]);\n  return 0;\n}\n')
    (k,) = predict_source(src, RunOptions(device="h100", functions=("acc",))).kernels
    assert any("reduction over the threads" in w for w in k.warnings), k.warnings
    rmw = [m for m in k.mem if m.text.startswith("o") and m.per_thread > 0]
    assert [(m.kind, m.pattern) for m in rmw] == [("store", "atomic")]
    assert not any("inter-thread dependence" in w for w in k.warnings)
    assert k.profile.atomics.ops == pytest.approx(1 / 32)  # one atomic per warp


def test_histogram_site_counts_its_bins(tmp_path):
    src = tmp_path / "hist.c"
    src.write_text(r"""
#include <stdio.h>
#define N 16384
static int data[N], hist[64];
int main(void) {
  unsigned s = 1u;
  for (int i = 0; i < N; i++) { s = s * 1103515245u + 12345u; data[i] = (int)(s >> 16); }
#pragma cgp kernel hist grid=1
  for (int i = 0; i < N; i++) hist[data[i] & 63]++;
  printf("%d\n", hist[3]);
  return 0;
}
""")
    rep = predict_source(src, RunOptions(device="h100"))
    (k,) = rep.kernels
    s, counts, bins = 1, [0] * 64, []  # the same generator, in Python: the busiest bin's share
    for _ in range(16384):
        s = (s * 1103515245 + 12345) % 2**32
        counts[(s >> 16) & 63] += 1
        bins.append((s >> 16) & 63)
    share = max(counts) / 16384
    # sector passes: in each warp instruction, pass k holds each bin's k-th lane and updates
    # each of its 8-int sectors once; 64 ints (256 B) lie in one 256 B piece, so one L2 slice
    # takes them all (eq. (A2))
    requests = 0
    for w in range(0, 16384, 32):
        seen: dict[int, int] = {}
        passes = set()
        for b in bins[w:w + 32]:
            passes.add((seen.get(b, 0), b // 8))
            seen[b] = seen.get(b, 0) + 1
        requests += len(passes)
    dev = load_device("h100")
    (line,) = [w for w in k.warnings if "data-dependent locations" in w]
    assert "(64 at the trace size" in line and f"{share:.1%}" in line
    assert k.profile.atomics.hot_share == pytest.approx(share)
    assert k.result.bounds.atomic_requests == pytest.approx(requests)
    assert k.result.bounds.atomic_cycles == pytest.approx(max(
        max(counts) * dev.atomic_address_cycles, requests * dev.atomic_slice_cycles))
    assert "atomic" in to_text(rep)
    assert json.loads(to_json(rep))["kernels"][0]["result"]["bounds"]["atomic_ops"] == 16384
    html = _kernel_section(k, load_device("h100"), rep.source)
    assert "atomic operations" in html and "Trace size" in html


def test_address_stats_on_a_hand_made_warp():
    """Two warp instructions of 4 lanes: addresses 0,0,0,64 and 128,128,192,256."""
    addr = np.array([0, 0, 0, 64, 128, 128, 192, 256], np.uint64)
    wt = SimpleNamespace(addr=addr, inst_start=np.array([0, 4]), inst_sid=np.array([5, 5]))
    n, hot, sectors, lanes, slices = _address_stats(wt, 5, 64, SliceMap(slices=2,
                                                                        interleave_bytes=128))
    assert n == 5  # 0, 64, 128, 192, 256
    assert hot == pytest.approx(3 / 8)  # address 0: three updates of eight
    assert sectors == pytest.approx((2 + 3) / 2)  # sectors 0,1 | 2,3,4
    assert lanes == pytest.approx((3 + 2) / 2)  # most lanes on one address per instruction
    # sector passes (32 B sectors): 0 three times (passes 0, 1, 2), 64 in pass 0 | 128 twice
    # (passes 0, 1), 192, 256 in pass 0: 4 | 4 = 8; slices of 128 B in turn over 2: sectors 0,
    # 64 -> 0; 128, 192 -> 1; 256 -> 0: slice 0 takes 3 + 1 + 1 = 5 of 8; locations 3 of 5
    assert slices.requests_per_warp == pytest.approx(8 / 2)
    assert slices.busiest_share == pytest.approx(5 / 8)
    assert slices.locations_share == pytest.approx(3 / 5)
