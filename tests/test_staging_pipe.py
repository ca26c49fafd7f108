"""Eq. (22e): the hidden staging's own loads and stores on the shared pipe, counted by hand."""

from __future__ import annotations

import dataclasses

import pytest

from cgpredict.devices import load_device
from cgpredict.models.cgpredict_model import drift_cycles, predict_cgpredict
from cgpredict.models.staging_pipe import hidden_staging_pipe_cycles, staging_passes
from cgpredict.profile import KernelProfile, PatternCounts, SharedMemoryCounts


def _tiled(load_l2_trans: float, threads: int = 256) -> KernelProfile:
    """8 strips of 2 staging loads a thread (16) and 40 conflict-free shared loads (320)."""
    return KernelProfile(
        name="tiled", threads_per_block=threads, blocks=4096,
        coal=PatternCounts(insts=2, l2_trans_per_warp=2, dram_trans_per_warp=0.5),
        comp_insts=200, sync_insts=16,
        shared=SharedMemoryCounts(load_insts=16, insts_by_conflict=((1, 320),),
                                  bytes_per_block=8192, load_l2_trans=load_l2_trans),
    )


def test_staging_passes_are_a_line_a_load_and_a_store_a_load() -> None:
    """A warp's 16 staging loads of 32 floats (4 sectors, one 128-B line) and their 16
    stores: 16 x (1 + 1) = 32 passes; 8 sectors a load (two lines): 16 x (2 + 1) = 48; 1
    sector (a 32-B row): still one line, 32; no staging: 0. The measured gemm_tiled 32x8
    (ncu): 5.3 global-load and 5.2 shared-store passes a warp a strip for 5 staging loads."""
    assert staging_passes(_tiled(64.0)) == pytest.approx(32.0)
    assert staging_passes(_tiled(128.0)) == pytest.approx(48.0)
    assert staging_passes(_tiled(16.0)) == pytest.approx(32.0)
    none = dataclasses.replace(_tiled(64.0), shared=SharedMemoryCounts())
    assert staging_passes(none) == 0.0


def test_hidden_share_of_the_passes_joins_the_pipe() -> None:
    """(22e): of 76 staging cycles 33 hide, so 33/76 of the 32 passes (13.89 cycles at one
    pass a cycle) join the other blocks' shared loads on the pipe; nothing hidden, nothing
    added; a pass of 2 cycles doubles it."""
    h100 = load_device("h100")
    p = _tiled(64.0)
    assert hidden_staging_pipe_cycles(p, h100, 76.0, 33.0) == pytest.approx(33 / 76 * 32)
    assert hidden_staging_pipe_cycles(p, h100, 76.0, 0.0) == 0.0
    assert hidden_staging_pipe_cycles(p, h100, 0.0, 0.0) == 0.0
    slow = dataclasses.replace(h100, smem_issue_cycles=2.0)
    assert hidden_staging_pipe_cycles(p, slow, 76.0, 33.0) == pytest.approx(2 * 33 / 76 * 32)


def test_the_model_adds_the_passes_only_where_staging_hides() -> None:
    """Through predict_cgpredict on the H100 file: a warp's computing cycles grow by exactly
    (22e) between staging loads of one line and of two (16 passes more, times the hidden
    share eq. (22d) gives); a 1024-thread block (8 warps a scheduler: nothing hides) and the
    TK1 (no overlap of issue and shared path) do not move."""
    h100 = load_device("h100")
    one, two = _tiled(64.0), _tiled(128.0)
    r1, r2 = predict_cgpredict(one, h100), predict_cgpredict(two, h100)
    assert r1.b_blocks >= 2
    ipc = h100.inst_cycles_per_warp_inst
    staging = ipc * (one.staging_code.total + 2 * 16)
    rest = ipc * (one.total_insts - one.staging_code.total - 16)
    lsu = 320.0 * h100.smem_issue_cycles
    hidden = drift_cycles(one, h100, staging, max(rest, 0.0), lsu, r1.b_blocks)
    assert hidden > 0
    assert r2.comp_cycles - r1.comp_cycles == pytest.approx(hidden / staging * 16)
    big1, big2 = _tiled(64.0, 1024), _tiled(128.0, 1024)
    assert predict_cgpredict(big1, h100).comp_cycles == pytest.approx(
        predict_cgpredict(big2, h100).comp_cycles)
    tk1 = load_device("tk1")
    assert predict_cgpredict(one, tk1).comp_cycles == pytest.approx(
        predict_cgpredict(two, tk1).comp_cycles)
