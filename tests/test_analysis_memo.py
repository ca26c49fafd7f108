"""Tests of what the analyses of one trace keep for the next (cgpredict.analysis_memo), and of
the advisor's use of it (issue #26: ``advise`` within 2x the time of ``run``).

The restoring stores of a launch (port.restoring_stores: a store that writes back to the same
address in the same pseudo-thread) and the loads that reload them (port.reloading_loads) are
kept once for every block shape. The oracle: the same
function on pseudo-warps formed afresh, with no cache, in every swept shape (a brute-force
re-derivation), and the whole prediction with and without the memo."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from cgpredict.advisor import BLOCKS_2D
from cgpredict.analysis_memo import AnalysisMemo
from cgpredict.block import Block
from cgpredict.devices import load_device
from cgpredict.frontend.port import reloading_loads, restoring_stores
from cgpredict.kernel.layouts import remapped
from cgpredict.kernel.reloads import launch_reloads
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare
from cgpredict.trace_analysis import analyze_trace
from cgpredict.warps import form_warps

pytestmark = pytest.mark.usefixtures("compiler")

POLYBENCH = Path(__file__).resolve().parents[1] / "polybench_c"
GEMM_OPTS = RunOptions(work_sizes={"NI": 64, "NJ": 64, "NK": 64},
                       trace_sizes={"NI": 64, "NJ": 64, "NK": 64})


@pytest.fixture(scope="module")
def gemm_prep():
    with prepare(POLYBENCH / "gemm.c", GEMM_OPTS) as prep:
        yield prep


def _fresh_restores(prep, region: int, block: Block) -> frozenset[int]:
    """restoring_stores of pseudo-warps formed now in ``block``, nothing cached."""
    h = prep.trace.header
    launch = int(np.flatnonzero((prep.trace.launches["region"] == region)
                                & (prep.trace.launches["recorded"] == 1))[0])
    is_store = np.array([m.kind == "store" for m in h.mem])
    wt = form_warps(prep.trace, region, launch, 2, block, is_store, None)
    return restoring_stores(wt.addr, wt.lane, wt.inst_start, wt.inst_warp, wt.inst_sid,
                            is_store)


def test_restores_kept_once_for_every_block_shape(gemm_prep):
    prep = gemm_prep
    for s in BLOCKS_2D:
        prep.analyze(dataclasses.replace(GEMM_OPTS, block=Block.parse(s)))
    region = prep.trace.header.regions[0].index
    kept = {k: v for k, v in prep.memo.restores.items() if k[0] == region}
    assert len(kept) == 1  # one entry for the nine shapes
    (got,) = kept.values()
    # the plain port stores C[i][j] on every k: one restoring store, found in every shape
    stores = [m.id for m in prep.trace.header.mem if m.kind == "store" and m.region == region]
    assert got and got <= set(stores)
    for s in BLOCKS_2D:
        assert _fresh_restores(prep, region, Block.parse(s)) == got, s


@pytest.mark.parametrize("change", [
    {"block": Block(16, 16)}, {"block": Block(128, 2)},
    # C is the accumulator (stored): decided anew; A is only read: kept
    {"transpose": ("C",)}, {"transpose": ("A",)}, {"transpose": ("A", "C"), "block": Block(64, 4)},
    {"tile_exchange": ("C",), "block": Block(32, 32)},
])
def test_memoised_analysis_predicts_as_without_memo(gemm_prep, change):
    prep = gemm_prep
    dev = load_device(GEMM_OPTS.device)
    prep.analyze(GEMM_OPTS)  # the plain warps' restoring stores kept first, as advise does
    opts = dataclasses.replace(GEMM_OPTS, **change)
    kept = prep.analyze(opts)
    alone = analyze_trace(prep.trace, dev, opts, prep.sizes, prep.trace_sizes,
                          prep.work_sizes, None)
    assert [k.total_ms for k in kept.kernels] == [k.total_ms for k in alone.kernels]
    assert [[m.restored for m in k.mem] for k in kept.kernels] == \
        [[m.restored for m in k.mem] for k in alone.kernels]
    assert any(m.restored for k in kept.kernels for m in k.mem)


def test_restoring_stores_decides_each_store_alone():
    """What the memo relies on: the decision of a store depends on its own events only, so
    asking about a subset of the stores gives that subset of the answer."""
    rng = np.random.default_rng(26)
    n_inst, lanes = 400, 32
    sid = rng.integers(0, 4, n_inst)
    # stores 1 and 2 write back to a few addresses per thread (accumulators), 3 to new ones
    addr = np.concatenate([
        (rng.integers(0, 2, lanes) if s in (1, 2) else rng.integers(0, 1 << 20, lanes))
        * 4 + 4096 * np.arange(lanes) + (s << 24) for s in sid]).astype(np.uint64)
    cols = (addr, np.tile(np.arange(lanes, dtype=np.uint8), n_inst),
            np.arange(n_inst, dtype=np.int64) * lanes, np.zeros(n_inst, np.int64), sid)
    every = np.array([False, True, True, True])
    whole = restoring_stores(*cols, every)
    assert whole == {1, 2}
    for subset in ([1], [2], [3], [1, 3], [2, 3]):
        mask = np.zeros(4, bool)
        mask[subset] = True
        assert restoring_stores(*cols, mask) == whole & set(subset)


CORR_OPTS = RunOptions(work_sizes={"M": 128, "N": 128}, trace_sizes={"M": 64, "N": 64})


def test_one_d_kernels_of_a_2d_sweep_analysed_once():
    """corr: three 1-D kernels beside a 2-D one. Under every 2-D block the 1-D kernels run in
    their default 256x1: analysed once, each report equal to the one found without the memo
    (its warning naming the block asked for included, in its place)."""
    dev = load_device(CORR_OPTS.device)
    with prepare(POLYBENCH / "corr.c", CORR_OPTS) as prep:
        prep.analyze(CORR_OPTS)
        for s in BLOCKS_2D:
            opts = dataclasses.replace(CORR_OPTS, block=Block.parse(s))
            kept = prep.analyze(opts)
            alone = analyze_trace(prep.trace, dev, opts, prep.sizes, prep.trace_sizes,
                                  prep.work_sizes, None)
            for k, a in zip(kept.kernels, alone.kernels):
                assert (k.name, k.block, k.total_ms, k.warnings) == \
                    (a.name, a.block, a.total_ms, a.warnings), s
                if k.grid_dims == 1 and s != "32x1":
                    assert f"{k.name} is a 1-D kernel: block {s} replaced by 256x1" in k.warnings
        # one report kept per 1-D kernel for the eight 2-D shapes other than 32x1
        assert sorted(key[0] for key in prep.memo.one_d) == [
            r.index for r in prep.trace.header.regions if r.name != "corr_reduce"]


def _first_launch(prep, region: int) -> int:
    return int(np.flatnonzero((prep.trace.launches["region"] == region)
                              & (prep.trace.launches["recorded"] == 1))[0])


def test_reloads_kept_once_for_every_block_shape(gemm_prep):
    """The plain port reloads C[i][j] on every k: one entry kept for the nine 2-D shapes,
    equal to reloading_loads of pseudo-warps formed afresh in each shape."""
    prep = gemm_prep
    for s in BLOCKS_2D:
        prep.analyze(dataclasses.replace(GEMM_OPTS, block=Block.parse(s)))
    region = prep.trace.header.regions[0].index
    kept = {k: v for k, v in prep.memo.reloads.items() if k[0] == region}
    assert len(kept) == 1
    ((key, got),) = kept.items()
    loads = [m.id for m in prep.trace.header.mem if m.kind == "load" and m.region == region]
    assert got and got <= set(loads)
    h = prep.trace.header
    is_store = np.array([m.kind == "store" for m in h.mem])
    for s in BLOCKS_2D:
        wt = form_warps(prep.trace, region, _first_launch(prep, region), 2, Block.parse(s),
                        is_store, None)
        restores = restoring_stores(wt.addr, wt.lane, wt.inst_start, wt.inst_warp,
                                    wt.inst_sid, is_store)
        assert restores == key[3], s
        assert reloading_loads(wt.addr, wt.lane, wt.inst_start, wt.inst_warp, wt.inst_sid,
                               is_store, restores) == got, s


@pytest.mark.parametrize("change", [
    {"transpose": ("A",)}, {"transpose": ("B",)}, {"transpose": ("C",)},
    {"transpose": ("A", "B")}, {"tile_exchange": ("A",)}, {"tile_exchange": ("C",)},
    {"row_exchange": ("B",)},
])
def test_reloads_under_a_layout_change_equal_a_fresh_derivation(gemm_prep, change):
    """launch_reloads with the memo (the plain warps' answer kept, only the moved loads
    decided again; everything again when the accumulator C moves) equals reloading_loads of
    the remapped warps, in two block shapes."""
    prep = gemm_prep
    h = prep.trace.header
    region = h.regions[0].index
    launch = _first_launch(prep, region)
    is_store = np.array([m.kind == "store" for m in h.mem])
    opts = dataclasses.replace(GEMM_OPTS, **change)
    for block in (Block(32, 8), Block(16, 16)):
        plain = form_warps(prep.trace, region, launch, 2, block, is_store, None)
        restores = restoring_stores(plain.addr, plain.lane, plain.inst_start, plain.inst_warp,
                                    plain.inst_sid, is_store)
        laid_out = remapped(prep.trace, region, plain, opts)
        assert laid_out is not plain
        memo = AnalysisMemo()
        key = (region, launch, 2, restores)
        got = launch_reloads(prep.trace, key, plain, laid_out, laid_out, opts, memo)
        fresh = reloading_loads(laid_out.addr, laid_out.lane, laid_out.inst_start,
                                laid_out.inst_warp, laid_out.inst_sid, is_store, restores)
        assert got == fresh, block
        assert key in memo.reloads or "C" in sum(change.values(), ()), block


def test_reloading_loads_decides_each_load_alone():
    """What the memo relies on: a load's answer depends on its own events and the restoring
    stores' only, so leaving the other loads out (told they are stores) gives that subset of
    the answer."""
    rng = np.random.default_rng(27)
    n_inst, lanes = 600, 32
    # 0: the restoring store, 1 and 2: loads of its pairs, 3: of its addresses in other
    # threads' lanes, 4: of addresses it never touches
    sid = rng.integers(0, 5, n_inst)
    own = 4096 * np.arange(lanes) + rng.integers(0, 2, (n_inst, lanes)) * 4
    other = np.roll(own, 1, axis=1)
    far = rng.integers(0, 1 << 20, (n_inst, lanes)) * 4 + (1 << 30)
    addr = np.where((sid <= 2)[:, None], own, np.where((sid == 3)[:, None], other, far))
    cols = (addr.ravel().astype(np.uint64), np.tile(np.arange(lanes, dtype=np.uint8), n_inst),
            np.arange(n_inst, dtype=np.int64) * lanes, np.zeros(n_inst, np.int64), sid)
    store = np.array([True, False, False, False, False])
    whole = reloading_loads(*cols, store, frozenset({0}))
    assert whole == {1, 2}
    for subset in ([1], [2], [3], [1, 3], [2, 4], [1, 2, 3, 4]):
        loads = np.zeros(5, bool)
        loads[subset] = True
        assert reloading_loads(*cols, store | ~loads, frozenset({0})) == whole & set(subset)


GS_OPTS = RunOptions(work_sizes={"NI": 128, "NJ": 128}, trace_sizes={"NI": 64, "NJ": 64})


def test_launch_counts_kept_across_block_shapes_and_layouts():
    """gramschmidt: three kernels launched once per column. Each launch's LaunchCounts
    (per-thread counts, instructions, folded instructions, ILP/MLP) are found by the first
    analysis and kept: block shapes and transpositions add none, and each analysis with them
    equals the analysis without the memo, launch by launch (every launch's profile)."""
    dev = load_device(GS_OPTS.device)
    with prepare(POLYBENCH / "gramschmidt.c", GS_OPTS) as prep:
        prep.analyze(GS_OPTS)
        found = dict(prep.memo.counts)
        assert len(found) >= 64  # every distinct launch of the three kernels
        for change in ({"block": Block(64, 1)}, {"block": Block(1024, 1)},
                       {"transpose": ("A",)}, {"transpose": ("Q",), "block": Block(32, 1)}):
            opts = dataclasses.replace(GS_OPTS, **change)
            kept = prep.analyze(opts)
            alone = analyze_trace(prep.trace, dev, opts, prep.sizes, prep.trace_sizes,
                                  prep.work_sizes, None)
            assert [(k.total_ms, k.launch_profiles) for k in kept.kernels] == \
                [(k.total_ms, k.launch_profiles) for k in alone.kernels], change
        assert prep.memo.counts.keys() == found.keys()
        assert all(prep.memo.counts[k] is v for k, v in found.items())


def test_launch_counts_kept_per_work_size():
    """A sweep analyses one trace at several work sizes with one memo (sweep/execute.py):
    the kept launch counts grow with each size (GEMM's k loop runs NK times), so each
    analysis equals one without the memo at its own size."""
    dev = load_device("tk1")
    traced = {"NI": 32, "NJ": 32, "NK": 32}
    with prepare(POLYBENCH / "gemm.c", RunOptions(trace_sizes=traced)) as prep:
        for n in (64, 128, 64):
            work = {"NI": n, "NJ": n, "NK": n}
            opts = RunOptions(work_sizes=work, trace_sizes=traced)  # as the sweep's
            kept = analyze_trace(prep.trace, dev, opts, prep.sizes, prep.trace_sizes, work,
                                 prep.memo)
            alone = analyze_trace(prep.trace, dev, opts, prep.sizes, prep.trace_sizes, work,
                                  None)
            assert [k.total_ms for k in kept.kernels] == [k.total_ms for k in alone.kernels], n
