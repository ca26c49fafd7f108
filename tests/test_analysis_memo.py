"""Tests of what the analyses of one trace keep for the next (cgpredict.analysis_memo), and of
the advisor's use of it (issue #26: ``advise`` within 2x the time of ``run``).

The restoring stores of a launch (port.restoring_stores: a store that writes back to the same
address in the same pseudo-thread) are kept once for every block shape. The oracle: the same
function on pseudo-warps formed afresh, with no cache, in every swept shape (a brute-force
re-derivation), and the whole prediction with and without the memo."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from cgpredict.advisor import BLOCKS_2D
from cgpredict.block import Block
from cgpredict.devices import load_device
from cgpredict.port import restoring_stores
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


def test_memoised_sweep_predicts_as_without_memo(gemm_prep):
    prep = gemm_prep
    dev = load_device(GEMM_OPTS.device)
    for s in ("16x16", "128x2"):
        opts = dataclasses.replace(GEMM_OPTS, block=Block.parse(s))
        kept = prep.analyze(opts)
        alone = analyze_trace(prep.trace, dev, opts, prep.sizes, prep.trace_sizes,
                              prep.work_sizes, None)
        assert [k.total_ms for k in kept.kernels] == [k.total_ms for k in alone.kernels]
        assert [[m.restored for m in k.mem] for k in kept.kernels] == \
            [[m.restored for m in k.mem] for k in alone.kernels]
        assert any(m.restored for k in kept.kernels for m in k.mem)
