"""The user-style kernels of examples/user, written as a new user would (SAXPY, CSR SpMV, a
256-bin histogram, a naive transpose, Jacobi-2D with swapped grids, a row-wise softmax, AoS
vs SoA particles, n-body, a grid-stride dot product), predicted with physical checks:

* no prediction beats its DRAM, issue, L2-path or atomic bound (models/bounds.py), on the
  TK1 and the H100;
* a streaming kernel whose data exceed the L2 moves exactly its compulsory DRAM bytes: what
  it reads once and the sectors it dirties, written back once (on the TK1, 128 KB of L2, so
  small work sizes already overflow it);
* a grid-stride loop runs N / NT times per thread at every NT;
* arithmetic the GPU expands or throttles (double precision, division, sqrt, exp): the
  per-thread SFU and pipe counts derived by hand from the sm_90 SASS expansions
  (compute.SASS_EXPANSION), and the pipe bound at the published rates (pipes.py).

Reductions and atomics (a dot product into one accumulator, a histogram's bins) are
predicted as their ports (atomics.py): named, with an atomic bound. Work sizes are small,
the traces smaller: the whole file runs in well under a minute."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from cgpredict.devices import load_device
from cgpredict.kernel.region import blocks_per_sm
from cgpredict.models import launch_bounds, launch_geometry, predict
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare

pytestmark = pytest.mark.usefixtures("compiler")

USER = Path(__file__).resolve().parents[1] / "examples" / "user"

# file -> (work sizes, trace sizes): every working set over the TK1's 128 KB L2
SIZES = {
    "saxpy": ({"N": 1 << 20}, {"N": 1 << 14}),
    "dot_gridstride": ({"N": 1 << 20, "NT": 1 << 12}, {"N": 1 << 16, "NT": 1 << 10}),
    "transpose": ({"N": 1024}, {"N": 256}),
    "jacobi2d": ({"N": 1024, "TSTEPS": 4}, {"N": 128, "TSTEPS": 2}),
    "particles": ({"NP": 1 << 20}, {"NP": 1 << 14}),
    "softmax": ({"R": 4096, "C": 256}, {"R": 1024, "C": 64}),
    "spmv_csr": ({"NR": 1 << 16, "NC": 1 << 16}, {"NR": 4096, "NC": 4096}),
    "histogram": ({"N": 1 << 20}, {"N": 1 << 14}),
    "nbody": ({"NP": 4096}, {"NP": 512}),
    "dot_reduce": ({"N": 1 << 20}, {"N": 1 << 14}),
    "nbody_f64": ({"N": 1024}, {"N": 256}),
    "index_decomp": ({"NE": 1 << 20}, {"NE": 1 << 14}),
    "sfu_heavy": ({"N": 1 << 20}, {"N": 1 << 14}),
}


@pytest.fixture(scope="module")
def reports():
    """(file, device) -> the report at SIZES, each file traced once for both devices."""
    out = {}
    for name, (work, trace) in SIZES.items():
        opts = RunOptions(work_sizes=work, trace_sizes=trace)
        with prepare(USER / f"{name}.c", opts) as prep:
            for dev in ("tk1", "h100"):
                out[name, dev] = prep.analyze(dataclasses.replace(opts, device=dev))
    return out


@pytest.mark.parametrize("device", ["tk1", "h100"])
@pytest.mark.parametrize("name", sorted(SIZES))
def test_no_prediction_beats_a_bound(reports, name, device):
    dev = load_device(device)
    for k in reports[name, device].kernels:
        assert k.launch_profiles, k.name
        for prof, _ in k.launch_profiles:
            r = predict(prof, dev)
            b = launch_bounds(prof, dev, launch_geometry(prof, dev))
            for what, bound in (("DRAM", b.dram_cycles), ("issue", b.issue_cycles),
                                ("L2", b.l2_cycles), ("atomic", b.atomic_cycles),
                                ("pipe", b.pipe_cycles)):
                assert r.cycles >= bound * (1 - 1e-9), (k.name, what)


def _dram(reports, name: str, kernel: str | None = None) -> float:
    """DRAM bytes of one launch of ``kernel`` (the file's only kernel when None) on the TK1."""
    ks = [k for k in reports[name, "tk1"].kernels if kernel in (None, k.name)]
    assert len(ks) == 1, [k.name for k in reports[name, "tk1"].kernels]
    return ks[0].result.bounds.dram_bytes


# (file, kernel, compulsory DRAM bytes of one launch at SIZES, the excess allowed): what a
# streaming kernel reads once and the sectors it dirties, written back once
COMPULSORY = [
    ("saxpy", None, 3 * 4 * (1 << 20), 0.01),  # x, y read; y written back
    ("dot_gridstride", None, 2 * 8 * (1 << 20) + 8 * (1 << 12), 0.01),  # x, y; part
    ("transpose", None, 2 * 4 * 1024 * 1024, 0.01),  # A read, B written
    # one sweep: the source grid read whole, the other's interior written; a 32-row block's
    # two halo rows may be read again (a row of blocks fills the 128 KB L2): up to 2/32 of
    # the reads
    ("jacobi2d", None, 4 * (1024 * 1024 - 4) + 4 * 1022 * 1022, 2 / 32 / 2),
    ("particles", "step_soa", 9 * 4 * (1 << 20), 0.01),  # six arrays read, three written
    # 24-byte structs read whole; x, y, z dirty every 64-byte sector: all written back
    ("particles", "step_aos", 2 * 24 * (1 << 20), 0.01),
]


@pytest.mark.parametrize("name, kernel, compulsory, excess", COMPULSORY,
                         ids=[f"{n}-{k or ''}" for n, k, _, _ in COMPULSORY])
def test_streaming_kernels_move_their_compulsory_bytes(reports, name, kernel, compulsory,
                                                       excess):
    dram = _dram(reports, name, kernel)
    assert compulsory * (1 - 1e-3) <= dram <= compulsory * (1 + excess)


def test_histogram_moves_its_compulsory_bytes(reports):
    """The data read once; the 256 bins, updated by atomics at the L2, read and written
    back once (two 64-byte sectors of 1 KB each way: within the 1%)."""
    assert _dram(reports, "histogram") == pytest.approx(4 * (1 << 20) + 4 * 256, rel=0.01)


def test_grid_stride_trips_at_every_nt(reports):
    work = SIZES["dot_gridstride"][0]
    (k,) = reports["dot_gridstride", "h100"].kernels
    per = {m.text: m.per_thread for m in k.mem}
    assert per["x[k]"] == pytest.approx(work["N"] / work["NT"])
    assert not reports["dot_gridstride", "h100"].warnings


def test_softmax_output_is_no_accumulator(reports):
    (k,) = reports["softmax", "h100"].kernels
    assert not any(m.restored for m in k.mem)
    assert not any("stored on every iteration" in w for w in k.warnings)


def test_labels_agree_with_their_figures(reports):
    """The bound label names the larger of an SM's compute and memory figures it prints."""
    from cgpredict.models import bound_text
    from cgpredict.models.cgpredict_model import sm_figures

    for (name, _), rep in sorted(reports.items()):
        for k in rep.kernels:
            r = k.result
            if r.binding != "model":
                continue
            comp, mem = sm_figures(r.details.comp_cycles, r.details.mem_cycles,
                                   r.details.n_warps, r.details.mwp)
            assert r.bound == ("memory" if mem >= comp else "compute"), (name, k.name)
            assert bound_text(r).split(" (")[0].endswith("-bound")


def test_histogram_is_predicted_with_atomics(reports):
    (k,) = reports["histogram", "h100"].kernels
    assert any("atomic" in w for w in k.warnings)
    assert not any("inter-thread dependence" in w for w in k.warnings)
    b = k.result.bounds
    n = SIZES["histogram"][0]["N"]
    assert b.atomic_ops == pytest.approx(n)  # one atomicAdd per element
    # 256 bins, the busiest at least a 256th of the updates, each at least a cycle of the L2
    assert b.atomic_cycles >= n / 256
    assert math.isfinite(k.total_ms) and k.result.cycles >= b.atomic_cycles


@pytest.mark.parametrize("device", ["tk1", "h100"])
def test_reduction_is_predicted_with_one_atomic_per_warp(reports, device):
    """s += x[i] * y[i] over the thread loop: named, and predicted as shuffles within each
    warp and one atomicAdd per warp to one address: N / 32 float adds of it, each at the
    device's float figure (eq. (A1); one a clock on the TK1, 3.48 cycles measured on the H100)."""
    (k,) = reports["dot_reduce", device].kernels
    assert any("reduction over the threads" in w for w in k.warnings), k.warnings
    n = SIZES["dot_reduce"][0]["N"]
    b = k.result.bounds
    assert b.atomic_ops == pytest.approx(n / 32)
    assert b.atomic_cycles == pytest.approx(n / 32 * load_device(device).atomic_float_cycles)
    assert k.result.cycles >= b.atomic_cycles


@pytest.mark.parametrize("name", ["spmv_csr", "dot_gridstride", "saxpy", "softmax"])
def test_no_reduction_where_each_thread_owns_its_sum(reports, name):
    """A per-thread accumulator (a row's sum, a thread's partial) is no reduction."""
    for k in reports[name, "h100"].kernels:
        assert not k.profile.atomics.ops, k.name
        assert not any("reduction" in w or "atomic" in w for w in k.warnings), k.warnings


def _only(reports, name: str, device: str):
    (k,) = reports[name, device].kernels
    return k


def _pipe_bound(k, device: str, insts: float, rate: float) -> float:
    """warps x insts x warp_size / rate / SMs used (eq. (12p) over the launch), on the
    busiest SM's whole blocks (eq. (B1g): 4096 blocks on 132 SMs, 32 of 31.03)."""
    dev = load_device(device)
    geo = launch_geometry(k.profile, dev)
    sms = max(geo.active_sms, 1)
    whole = math.ceil(k.profile.blocks / sms - 1e-9) / (k.profile.blocks / sms)
    return geo.total_warps * insts * dev.warp_size / rate / sms * whole


@pytest.mark.parametrize("device", ["tk1", "h100"])
def test_double_nbody_pairs_each_run_two_fp64_newton_sequences(reports, device):
    """Per pair one double division and one double sqrt: a MUFU.RCP64H and a MUFU.RSQ64H (2
    SFU) and 8 + 8 DFMA, so per thread 2 N SFU and at least 16 N FP64 instructions."""
    n = SIZES["nbody_f64"][0]["N"]
    p = _only(reports, "nbody_f64", device).profile
    assert p.sfu_insts == pytest.approx(2 * n, rel=1e-6)
    assert p.pipes.sfu == pytest.approx(2 * n, rel=1e-6)
    assert p.pipes.fp64 >= 16 * n


def test_double_nbody_on_the_tk1_is_bound_by_its_fp64_pipe(reports):
    """8 FP64 operations a clock on the GK20A: 4 clocks a warp instruction, 8 times its
    dispatch (0.5), so the FP64 pipe is the busiest and no prediction beats it."""
    k = _only(reports, "nbody_f64", "tk1")
    b = k.result.bounds
    assert b.pipe == "fp64"
    assert b.pipe_cycles == pytest.approx(_pipe_bound(k, "tk1", k.profile.pipes.fp64, 8))
    assert b.pipe_cycles > b.issue_cycles
    assert k.result.cycles >= b.pipe_cycles * (1 - 1e-9)
    from cgpredict.models import bound_text

    assert "fp64 pipe" in bound_text(k.result)  # the label names the pipe (eq. (12p))


@pytest.mark.parametrize("device", ["tk1", "h100"])
def test_index_decomposition_by_hand(reports, device):
    """idx / width and idx % width by a run-time width: nvcc computes the remainder from the
    quotient (idx - r * width: compute.SASS_EXPANSION srem_quotient_i32), so one MUFU.RCP
    (1 SFU a thread, as the port's sm_90 SASS: validation/results/sass-check-user.md);
    integer multiplies: 4 IMAD(.HI) in the division, the remainder's IMAD, c * rows, and the
    two addresses' IMAD.WIDE: 8 a thread."""
    p = _only(reports, "index_decomp", device).profile
    assert p.sfu_insts == pytest.approx(1)
    assert p.pipes.int_mul == pytest.approx(8)


def test_index_decomposition_on_the_tk1_names_the_integer_multiply_pipe(reports):
    """Kepler multiplies 32-bit integers at 32 a clock (a fifth of its adds): 8 a thread
    is the busiest pipe, one clock a warp instruction on the one SMX."""
    k = _only(reports, "index_decomp", "tk1")
    b = k.result.bounds
    assert b.pipe == "int_mul"
    assert b.pipe_cycles == pytest.approx(_pipe_bound(k, "tk1", 8, 32))


@pytest.mark.parametrize("device, rate", [("tk1", 32), ("h100", 16)])
def test_sfu_heavy_pipe_bound_by_hand(reports, device, rate):
    """exp(x) / sqrt(x + 1): MUFU.EX2, MUFU.RSQ, MUFU.RCP and the division's FCHK, 4 SFU
    (XU) instructions a thread, as ncu's smsp__inst_executed_pipe_xu on the H100 (524288
    for 131072 warps); FP32: 5 (expf) + 4 (sqrtf: 2 FMUL, 2 FFMA) + 5 (division) + the add
    = 15 at 4 to 8 times the SFU's rate, so the SFU pipe is the busiest: warps x 4 x 32 /
    rate / SMs."""
    k = _only(reports, "sfu_heavy", device)
    assert k.profile.sfu_insts == pytest.approx(4)
    assert k.profile.pipes.fp32 == pytest.approx(15)
    b = k.result.bounds
    assert b.pipe == "sfu"
    assert b.pipe_cycles == pytest.approx(_pipe_bound(k, device, 4, rate))


@pytest.mark.parametrize("rows, per_sm", [(1 << 20, 8), (1 << 16, 2), (1 << 10, 1)])
def test_blocks_sharing_an_l1_at_the_work_size(rows, per_sm):
    """One thread a row, 256-thread blocks on the H100: 8 resident a SM (64 warps, the batch
    8 x 8 warps x 132 SMs). 2^20 rows are 4096 blocks, ceil(4096 / 132) = 32 > 8: 8 an SM;
    2^16 rows, 256 blocks: ceil(256 / 132) = 2; 2^10 rows, 4 blocks: one an SM."""
    assert blocks_per_sm(rows, 256, 8 * 8 * 132, 132) == per_sm


@pytest.mark.parametrize("rows", [1 << 20, 1 << 16])
def test_spmv_rows_stay_in_the_l1_as_sectors(rows):
    """CSR SpMV, 16 floats a row, one thread a row: a warp's load of val[k] touches 32
    sectors (64 B apart), each holding 8 of its lane's floats, and col[k] as many. The H100's
    L1 holds 32-B sectors (eq. (L1a)): a warp's row sectors are 2 KB, 64 warps' (8 blocks an
    SM at 2^20 rows) 128 KB of the 224 KB the launch's 32 KB shared carve-out leaves (eq.
    (SC3); ncu launch__shared_mem_config_size 32 KB), beside x's gathered sectors, so the L1
    keeps them
    at both sizes and one load in 8 reaches the L2: 4 sectors a warp instruction, and one in
    16 more re-reads its sector across the warp's wait on the gather (eq. (GW): a run a pass
    of 16), 6 in all (ncu at
    2^20 rows, 256x1: 53.5 % of the load sectors hit the L1). Held as 128-B lines they
    were 256 KB at 2^20 rows and left the L1 (32 sectors). Traced at 4096 rows (16 blocks),
    the same L1 pressure needs the trace's blocks on 16 / 8 = 2 and 16 / 2 = 8 L1s."""
    l2_per_warp = 4.0 + 32 / 16  # (L1a)'s 2 misses in 16 executions a lane, + (GW)'s 1
    opts = RunOptions(work_sizes={"NR": rows, "NC": rows}, trace_sizes={"NR": 4096, "NC": 4096},
                      device="h100")
    with prepare(USER / "spmv_csr.c", opts) as prep:
        (k,) = prep.analyze(opts).kernels
    (val,) = [m for m in k.mem if m.text == "val[k]"]
    assert val.l2_trans_per_warp == pytest.approx(l2_per_warp, rel=0.05)
