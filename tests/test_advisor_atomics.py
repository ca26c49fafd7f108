"""The advisor's fixes for reductions and atomics (advisor/atomic_fixes.py, issue 25):
the block reduction of a dot product into one accumulator and the shared-memory
privatisation of a histogram's bins, each re-predicted, with hand-derived atomic counts:

* block reduction: one atomicAdd per block of 256 threads: N / 256 operations, all on one
  address, one a cycle;
* privatisation: each block the GPU holds at once merges its 256 bins once: on the H100 132
  SMs x 8 blocks of 256 threads (2048 threads per SM) x 256 bins operations, a 256th of them
  on each bin.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from cgpredict.advisor import advise_prepared
from cgpredict.advisor.atomic_fixes import atomic_fixes
from cgpredict.devices import load_device
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare

pytestmark = pytest.mark.usefixtures("compiler")

USER = Path(__file__).resolve().parents[1] / "examples" / "user"
N = 1 << 20


def _fixes(name: str):
    opts = RunOptions(device="h100", work_sizes={"N": N}, trace_sizes={"N": 1 << 14})
    with prepare(USER / f"{name}.c", opts) as prep:
        base = prep.analyze(opts)
        return base, atomic_fixes(prep, opts, base)


def test_block_reduction_adds_one_atomic_per_block():
    base, fixes = _fixes("dot_reduce")
    (fix,) = fixes
    assert fix.kind == "block-reduction" and "__shfl_down_sync" in fix.instruction
    (k,) = fix.report.kernels
    b = k.result.bounds
    assert b.atomic_ops == pytest.approx(N / 256)
    dev = load_device("h100")  # one float address: N / 256 adds at the float figure (A1)
    assert b.atomic_cycles == pytest.approx(N / 256 * dev.atomic_float_cycles)
    (k0,) = base.kernels
    assert k0.result.bounds.atomic_ops == pytest.approx(N / 32)  # one per warp before
    assert fix.predicted_ms < base.total_ms and fix.speedup > 1


def test_privatisation_merges_each_resident_blocks_bins_once():
    base, fixes = _fixes("histogram")
    (fix,) = fixes
    assert fix.kind == "privatisation" and "__shared__ int bins" in fix.instruction
    (k,) = fix.report.kernels
    b = k.result.bounds
    assert b.atomic_ops == pytest.approx(132 * 8 * 256)
    # (A1): a 256th on each bin; (A2): 256 ints (1 KB) lie on a pair of slices, their 256 B
    # pieces alternating; each merge instruction's 32 lanes on 32 consecutive bins (one pass of
    # 4 sectors): half the merges' passes on the busiest slice
    dev = load_device("h100")
    assert b.atomic_requests == pytest.approx(132 * 8 * 256 * 4 / 32)
    assert b.atomic_cycles == pytest.approx(max(132 * 8 * dev.atomic_address_cycles,
                                                132 * 8 * 32 / 2 * dev.atomic_slice_cycles))
    assert k.profile.shared.bytes_per_block >= 256 * 4  # the private bins
    assert fix.predicted_ms <= base.total_ms


def test_advise_offers_privatisation_for_the_histogram():
    opts = RunOptions(device="h100", work_sizes={"N": N}, trace_sizes={"N": 1 << 14})
    with prepare(USER / "histogram.c", opts) as prep:
        adv = advise_prepared(prep, USER / "histogram.c", opts, quick=True)
    assert "privatisation" in [f.kind for f in adv.fixes]


def test_no_atomic_fix_without_sites():
    opts = RunOptions(device="h100", work_sizes={"N": N}, trace_sizes={"N": 1 << 14})
    with prepare(USER / "saxpy.c", opts) as prep:
        base = prep.analyze(opts)
        assert atomic_fixes(prep, opts, base) == []
        assert atomic_fixes(prep, dataclasses.replace(opts, reduce="block"), base) == []


def test_roofline_names_the_atomic_bound_of_the_histogram():
    """The histogram's time is its atomic bound: the roofline says so (not '78x the L2 bound'),
    and a block-shape fix, which keeps every atomic, is floored at that bound."""
    from cgpredict.advisor.roofline import kernel_roofline, kind_floors

    base, _ = _fixes("histogram")
    (k,) = base.kernels
    dev = load_device("h100")
    x = kernel_roofline(k, dev)
    assert x.nearest == "atomic"
    assert x.atomic_ms == pytest.approx(dev.cycles_to_ms(k.result.bounds.atomic_cycles))
    assert x.ratio == pytest.approx(1.0, rel=0.05)
    (floor,) = kind_floors((x,), dev.sm_count, ("block-shape",))
    assert floor.floor_ms >= x.atomic_ms and "atomic bound" in floor.why
