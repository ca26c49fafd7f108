"""Calibration: analysis of synthetic micro-benchmark results, rendering, no-GPU behaviour."""

from __future__ import annotations

import os
import shutil
import stat
import sys

import numpy as np
import pytest

from cgpredict import calibrate as cal
from cgpredict.calibrate_analysis import (
    EnergyRun,
    analyse,
    bank_conflict_cost,
    departure_delay,
    fetch_granularity,
    find_plateaus,
    fit_energy,
    integrate_energy_j,
    linear_fit,
)
from cgpredict.devices import load_device
from cgpredict.errors import CGPredictError

L1_CAP, L2_CAP = 256 << 10, 48 << 20
LAT = {"l1": 30.0, "l2": 260.0, "dram": 480.0}
CLOCK, SMS = 1800.0, 132


def _sizes(lo: int, hi: int) -> list[int]:
    return [int(v) // 128 * 128 for v in lo * 2 ** (np.arange(0, 64) / 4) if v <= hi]


def _chase(sizes: list[int], levels: list[tuple[int, float]]) -> list[float]:
    """Latency of each footprint: the first level whose capacity holds it (last: no limit)."""
    return [next(lat for cap, lat in levels if s <= cap) for s in sizes]


def _stream(dd: float, base: float = 40.0) -> dict:
    sectors = [1, 4, 8, 16, 32]
    warps = [8448 * 1000] * 5
    ms = [w / SMS * (base + dd * s) / (CLOCK * 1e3) for w, s in zip(warps, sectors)]
    return {"sectors_per_warp": sectors, "warp_insts": warps, "ms": ms, "clock_mhz": CLOCK,
            "sm_count": SMS, "pure_insts": 8, "total_insts": 43}


ENERGY_NJ = {"fp32_op": 0.04, "int32_op": 0.05, "sfu_op": 0.16, "fp64_op": 1.0,
             "dram_transaction": 62.9, "l2_transaction": 15.5, "smem_transaction": 4.6}
STATIC_W = 70.0


def _energy_runs() -> list[dict]:
    designs = [("idle", 1.5, {}), ("int32", 1.4, {"int32_op": 4e12}),
               ("fp32", 1.6, {"fp32_op": 6e12}), ("fp64", 1.5, {"fp64_op": 1e11}),
               ("sfu", 1.5, {"sfu_op": 8e11}),
               ("stream_dram", 1.5, {"dram_transaction": 1.4e11, "l2_transaction": 1.4e11,
                                     "int32_op": 2e12}),
               ("stream_l2", 1.5, {"l2_transaction": 5e11, "int32_op": 7e12}),
               ("smem", 1.5, {"smem_transaction": 2e11})]
    return [{"name": n, "seconds": t, "counts": c,
             "energy_j": STATIC_W * t + sum(ENERGY_NJ[k] * v * 1e-9 for k, v in c.items())}
            for n, t, c in designs]


def synthetic_raw() -> dict:
    """Raw results of every micro-benchmark on an imaginary Hopper-like GPU."""
    l1_sizes = _sizes(4096, 2 << 20)
    l2_sizes = _sizes(256 << 10, 200 << 20)
    strides = [8, 16, 32, 64, 128, 256, 512]
    common = {"clock_mhz": CLOCK, "sm_count": SMS, "pure_insts": 16, "total_insts": 19}
    return {
        "props": {"gpu_name": "Synthetic GPU", "sm_count": SMS, "clock_mhz": CLOCK,
                  "compute_capability": "9.0", "warp_size": 32, "max_threads_per_sm": 2048,
                  "max_blocks_per_sm": 32, "max_threads_per_block": 1024,
                  "registers_per_sm": 65536, "registers_per_block_max": 65536,
                  "shared_mem_per_sm_bytes": 233472, "shared_mem_per_block_max_bytes": 232448,
                  "shared_mem_reserved_per_block_bytes": 1024, "l2_bytes": 52428800,
                  "dram_bytes": 85899345920, "free_bytes": 84 << 30},
        "latency_l1": {**common, "stride": 128, "values": l1_sizes,
                       "cycles_per_access": _chase(l1_sizes, [(L1_CAP, LAT["l1"]),
                                                              (1 << 60, LAT["l2"])])},
        "latency_l2": {**common, "stride": 128, "values": l2_sizes,
                       "cycles_per_access": _chase(l2_sizes, [(L2_CAP, LAT["l2"]),
                                                              (1 << 60, LAT["dram"])])},
        "line_l1": {**common, "values": strides,
                    "cycles_per_access": [30 + 230 * min(s / 128, 1) for s in strides]},
        "line_l2": {**common, "values": strides,
                    "cycles_per_access": [260 + 220 * min(s / 32, 1) for s in strides]},
        "smem": {**common, "strides": [0, 1, 2, 4, 8, 16, 32],
                 "conflict_degree": [1, 1, 2, 4, 8, 16, 32],
                 "cycles_per_access": [29, 29, 31, 35, 43, 59, 91]},
        "stream_l2": _stream(1.0),
        "stream_dram": _stream(2.5),
        "bandwidth": {**common, "bytes": 1 << 30, "ms": [0.40, 0.36, 0.37]},
        "inst": {**common, "int32_latency_cycles": 4.5, "fp32_latency_cycles": 4.0,
                 "int32_thread_ops": 2 * CLOCK * 1e3 * SMS * 32, "int32_ms": 1.0,
                 "fp32_thread_ops": 4 * CLOCK * 1e3 * SMS * 32, "fp32_ms": 1.0,
                 "fp64_thread_ops": 2 * CLOCK * 1e3 * SMS * 32, "fp64_ms": 1.0,
                 "sfu_thread_ops": 0.5 * CLOCK * 1e3 * SMS * 32, "sfu_ms": 1.0},
        "barrier": {**common, "threads": [64, 256, 1024], "cycles_per_barrier": [20, 24, 40]},
        "energy": {"runs": _energy_runs()},
    }


# ---- pure analysis -----------------------------------------------------------------------
def test_plateaus_of_pointer_chase_curve():
    sizes = _sizes(4096, 200 << 20)
    cyc = _chase(sizes, [(L1_CAP, 30.0), (L2_CAP, 260.0), (1 << 60, 480.0)])
    got = find_plateaus(sizes, cyc)
    assert [p.latency_cycles for p in got] == [30.0, 260.0, 480.0]
    assert got[0].last_bytes == max(s for s in sizes if s <= L1_CAP)
    assert got[1].last_bytes == max(s for s in sizes if s <= L2_CAP)


def test_plateaus_skip_a_ramp_and_tolerate_noise():
    sizes = list(range(1, 13))
    cyc = [30, 31, 29, 30, 120, 258, 262, 260, 261, 479, 481, 480]
    got = find_plateaus(sizes, cyc)
    assert [round(p.latency_cycles) for p in got] == [30, 260, 480]
    assert [p.last_bytes for p in got] == [4, 9, 12]


def test_fetch_granularity_is_the_knee():
    strides = [8, 16, 32, 64, 128, 256]
    assert fetch_granularity(strides, [260 + 220 * min(s / 32, 1) for s in strides]) == 32
    assert fetch_granularity(strides, [30 + 230 * min(s / 128, 1) for s in strides]) == 128


def test_departure_delay_is_the_slope():
    r = _stream(2.5, base=60.0)
    fit = departure_delay(r["sectors_per_warp"], r["warp_insts"], r["ms"], CLOCK, SMS)
    assert fit.slope == pytest.approx(2.5, rel=1e-9)
    assert fit.intercept == pytest.approx(60.0, rel=1e-9)
    assert fit.r2 == pytest.approx(1.0)


def test_linear_fit_needs_two_x():
    with pytest.raises(ValueError, match="two distinct"):
        linear_fit([1, 1], [2, 3])


def test_bank_conflict_cost():
    lat, replay = bank_conflict_cost([1, 1, 2, 4, 8, 16, 32], [29, 29, 31, 35, 43, 59, 91])
    assert lat == 29
    assert replay == pytest.approx(2.0, rel=1e-6)


def test_energy_regression_recovers_known_energies():
    fit = fit_energy([EnergyRun(**r) for r in _energy_runs()])
    assert fit.static_power_w == pytest.approx(STATIC_W, rel=1e-6)
    for k, v in ENERGY_NJ.items():
        assert fit.nj[k] == pytest.approx(v, rel=1e-5), k
    assert fit.rel_residual < 1e-9


def test_energy_regression_with_noise_and_a_useless_term():
    rng = np.random.default_rng(1)
    runs = [EnergyRun(**{**r, "energy_j": r["energy_j"] * (1 + rng.normal(0, 0.002))})
            for r in _energy_runs()]
    fit = fit_energy(runs)
    assert fit.static_power_w == pytest.approx(STATIC_W, rel=0.02)
    assert fit.nj["dram_transaction"] == pytest.approx(62.9, rel=0.1)


def test_integrate_energy_power_and_counter():
    t = [int(i * 1e7) for i in range(201)]  # 0..2 s every 10 ms
    assert integrate_energy_j(t, [100.0] * len(t), int(0.5e9), int(1.5e9)) == pytest.approx(100.0)
    ramp = [50.0 + 25.0 * i / 100 for i in range(201)]  # 50 W -> 100 W
    assert integrate_energy_j(t, ramp, 0, int(2e9)) == pytest.approx(150.0)
    counter = [1000.0 + 80.0 * ti / 1e6 for ti in t]  # mJ, 80 W
    assert integrate_energy_j(t, [0] * len(t), 5_000_000, 1_005_000_000,
                              counter) == pytest.approx(80.0)


def test_analyse_synthetic_raw():
    a = analyse(synthetic_raw(), 128, 16)
    v = {k: m.value for k, m in a.values.items()}
    assert v["l1_latency_cycles"] == 30.0
    assert v["l2_latency_cycles"] == 260.0
    assert v["dram_latency_cycles"] == 220.0  # additive: 480 - 260
    assert v["l2_sector_bytes"] == 32
    assert v["shared_latency_cycles"] == 29
    assert v["dd_l2_cycles"] == pytest.approx(1.0)
    assert v["dd_dram_cycles"] == pytest.approx(2.5)
    assert v["dram_bandwidth_gbps"] == pytest.approx((1 << 30) / 0.36e-3 / 1e9, rel=1e-3)
    assert v["inst_cycles_per_warp_inst"] == pytest.approx(0.25)
    assert v["inst_latency_cycles"] == 4.5 and v["fp_latency_cycles"] == 4.0
    assert v["clock_mhz"] == CLOCK and v["sm_count"] == SMS and v["max_warps_per_sm"] == 64
    assert v["smem_load_cycles"] == pytest.approx(260 + 220 + 2.5)
    assert a.extra["l1_capacity_bytes"].value == max(s for s in _sizes(4096, 2 << 20)
                                                     if s <= L1_CAP)
    assert a.extra["l2_capacity_bytes"].value == max(s for s in _sizes(256 << 10, 200 << 20)
                                                     if s <= L2_CAP)
    assert a.extra["l1_fetch_bytes"].value == 128
    assert a.extra["barrier_cycles"].value == 24
    assert a.values["l1_latency_cycles"].accuracy == pytest.approx(16 / 19)
    assert a.energy["dram_transaction_nj"].value == pytest.approx(62.9, rel=1e-4)
    assert a.energy["static_power_w"].value == pytest.approx(STATIC_W, rel=1e-4)


def test_analyse_keeps_missing_benchmarks_unmeasured():
    a = analyse({"props": {"sm_count": 4, "l2_bytes": 1000}}, 128, 16)
    assert set(a.values) == {"sm_count"}
    assert any("not a multiple" in n for n in a.notes)


# ---- rendering and files ------------------------------------------------------------------
def test_rendered_device_file_loads(tmp_path):
    raw = {"gpu_name": "Synthetic GPU", "date": "2025-01-02", "benchmarks": synthetic_raw()}
    res = cal.finish_from_raw(raw, tmp_path / "mygpu.toml", base="h100")
    d = load_device(str(tmp_path / "mygpu.toml"))
    assert d.name == "mygpu"
    assert d.l2_latency_cycles == 260.0 and d.dram_latency_cycles == 220.0
    assert d.clock_mhz == CLOCK and d.l2_sector_bytes == 32 and d.dd_dram_cycles == 2.5
    assert isinstance(d.sm_count, int) and isinstance(d.l1_latency_cycles, float)
    assert d.energy is not None and d.energy.sfu_op_nj == pytest.approx(0.16, rel=1e-3)
    assert d.provenance.gpu_name == "Synthetic GPU" and d.provenance.date == "2025-01-02"
    note = d.provenance.note("l1_latency_cycles")
    assert note.startswith("measured 2025-01-02 on Synthetic GPU: pointer chase")
    assert "accuracy 84%" in note
    assert d.provenance.note("l2_ways").startswith("ASSUMPTION")  # base note kept
    assert d.provenance.note("sm_count").startswith("queried 2025-01-02")
    assert d.provenance.note("smem_load_cycles").startswith("derived 2025-01-02")
    assert d.l2_ways == load_device("h100").l2_ways  # datasheet field kept
    assert res.raw_path == tmp_path / "mygpu.raw.json" and res.raw_path.is_file()
    assert res.device.l2_latency_cycles == 260.0
    text = (tmp_path / "mygpu.toml").read_text()
    assert "barrier_cycles = 24" in text  # no schema key yet: kept as a comment
    # the raw file can be analysed again
    again = cal.finish_from_raw(cal.load_raw(res.raw_path), tmp_path / "again.toml", "h100")
    assert again.device.l2_latency_cycles == 260.0


def test_existing_files_are_not_overwritten_without_force(tmp_path):
    raw = {"gpu_name": "Synthetic GPU", "date": "2025-01-02", "benchmarks": synthetic_raw()}
    out = tmp_path / "mine.toml"
    out.write_text("# the user's own device file\n")
    with pytest.raises(cal.CalibrationError, match="mine.toml exists: pass --force"):
        cal.finish_from_raw(raw, out, "h100")
    with pytest.raises(cal.CalibrationError, match="mine.toml exists"):
        cal.calibrate(out, base="h100")  # refused before any GPU is looked for
    assert out.read_text() == "# the user's own device file\n"
    (tmp_path / "other.raw.json").write_text("{}")
    with pytest.raises(cal.CalibrationError, match="other.raw.json exists"):
        cal.finish_from_raw(raw, tmp_path / "other.toml", "h100")
    res = cal.finish_from_raw(raw, out, "h100", force=True)
    assert res.device.l2_latency_cycles == 260.0
    # analysing a raw file again beside itself rewrites only the device file (with --force)
    again = cal.finish_from_raw(cal.load_raw(res.raw_path), out, "h100", force=True)
    assert again.raw_path == res.raw_path


def test_render_rejects_invalid_result(tmp_path):
    raw = {"gpu_name": "X", "benchmarks": {"props": {"max_threads_per_sm": 2048, "warp_size": 32,
                                                     "max_threads_per_block": 4096}}}
    with pytest.raises(cal.CalibrationError, match="does not validate"):
        cal.finish_from_raw(raw, tmp_path / "bad.toml", "h100")
    assert not (tmp_path / "bad.toml").exists()


def test_plan_sizes_follow_the_gpu():
    steps = cal.plan(synthetic_raw()["props"], load_device("h100"))
    assert set(steps) == set(cal.BENCHMARKS) - {"props", "energy"}
    fp = dict(a.split("=") for a in steps["stream_dram"][1])["footprint"]
    assert int(fp) == 512 << 20  # >= 8 x 50 MB L2, a power of two
    vals = [int(x) for x in dict(a.split("=") for a in steps["latency_l2"][1])["values"].split(",")]
    assert vals[0] == 256 << 10 and 4 * 52428800 * 0.8 < vals[-1] <= 4 * 52428800


# ---- no GPU ------------------------------------------------------------------------------
def test_calibrate_without_nvidia_smi(monkeypatch, tmp_path):
    monkeypatch.setattr(cal.shutil, "which", lambda name: None)
    with pytest.raises(cal.NoGPUError, match="no NVIDIA GPU: nvidia-smi not found") as ei:
        cal.calibrate(tmp_path / "x.toml", base="h100")
    assert isinstance(ei.value, CGPredictError) and "\n" not in str(ei.value)
    assert not (tmp_path / "x.toml").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="shell script stand-in")
def test_calibrate_when_nvidia_smi_lists_no_gpu(monkeypatch, tmp_path):
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    with pytest.raises(cal.NoGPUError, match="lists no GPU"):
        cal.calibrate(tmp_path / "x.toml", base="h100")


def test_calibrate_without_nvcc(monkeypatch, tmp_path):
    monkeypatch.setattr(cal, "query_gpu", lambda: cal.GPUInfo("Fake GPU", "9.0"))
    monkeypatch.setattr(cal.shutil, "which", lambda name: None)
    monkeypatch.delenv("NVCC", raising=False)
    monkeypatch.setattr(cal, "DEFAULT_NVCC", str(tmp_path / "no-nvcc"))
    with pytest.raises(cal.NoGPUError, match="nvcc not found"):
        cal.calibrate(tmp_path / "x.toml", base="h100")


def test_unknown_benchmark_name(tmp_path):
    with pytest.raises(cal.CalibrationError, match="unknown micro-benchmark"):
        cal.calibrate(tmp_path / "x.toml", only=["latency_l3"])


# ---- the CUDA sources compile --------------------------------------------------------------
@pytest.mark.skipif(not (shutil.which("nvcc") or os.environ.get("NVCC")), reason="no nvcc")
def test_every_microbenchmark_compiles(tmp_path):
    sources = sorted(p.name for p in cal.microbench_dir().glob("*.cu"))
    assert set(sources) == {s for s in cal.BENCHMARKS.values() if s}
    exes = cal.build(cal.find_nvcc(), "sm_90", sources, tmp_path)
    assert all(exes[s].is_file() for s in sources)
