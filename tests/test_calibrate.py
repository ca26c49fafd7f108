"""Calibration: analysis of synthetic micro-benchmark results, rendering, no-GPU behaviour."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from cgpredict.calibration import benchmarks, power, toolchain
from cgpredict.calibration import run as cal
from cgpredict.calibration.analysis import analyse
from cgpredict.calibration.curves import (
    bank_conflict_cost,
    departure_delay,
    fetch_granularity,
    find_plateaus,
    linear_fit,
    sectors_per_warp,
)
from cgpredict.calibration.energy_fit import EnergyRun, fit_energy, integrate_energy_j
from cgpredict.calibration.errors import CalibrationError, NoGPUError
from cgpredict.calibration.sanity import value_problem
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
    with pytest.raises(CalibrationError, match="mine.toml exists: pass --force"):
        cal.finish_from_raw(raw, out, "h100")
    with pytest.raises(CalibrationError, match="mine.toml exists"):
        cal.calibrate(out, base="h100")  # refused before any GPU is looked for
    assert out.read_text() == "# the user's own device file\n"
    (tmp_path / "other.raw.json").write_text("{}")
    with pytest.raises(CalibrationError, match="other.raw.json exists"):
        cal.finish_from_raw(raw, tmp_path / "other.toml", "h100")
    res = cal.finish_from_raw(raw, out, "h100", force=True)
    assert res.device.l2_latency_cycles == 260.0
    # analysing a raw file again beside itself rewrites only the device file (with --force)
    again = cal.finish_from_raw(cal.load_raw(res.raw_path), out, "h100", force=True)
    assert again.raw_path == res.raw_path


def test_invalid_measured_value_falls_back_to_the_base(tmp_path):
    # B2/W4: a value the device file cannot take costs that field, not the run
    raw = {"gpu_name": "X", "benchmarks": {"props": {"max_threads_per_sm": 2048, "warp_size": 32,
                                                     "max_threads_per_block": 4096}}}
    res = cal.finish_from_raw(raw, tmp_path / "bad.toml", "h100")
    assert res.device.max_threads_per_block == load_device("h100").max_threads_per_block
    assert res.device.max_threads_per_sm == 2048
    assert any(n.startswith("max_threads_per_block: the measured value fails validation")
               for n in res.notes)
    assert "max_threads_per_block" not in res.analysis.values
    assert not (tmp_path / "bad.toml.tmp").exists()


def test_validation_failure_without_a_measured_culprit_keeps_the_raw_file(tmp_path, monkeypatch):
    real = cal.load_device_file

    def picky(path):
        if str(path).endswith(".tmp"):
            raise CalibrationError(f"{path}: something the calibration did not measure")
        return real(path)

    monkeypatch.setattr(cal, "load_device_file", picky)
    raw = {"gpu_name": "X", "benchmarks": synthetic_raw()}
    with pytest.raises(CalibrationError, match="does not validate.*raw results saved in"):
        cal.finish_from_raw(raw, tmp_path / "bad.toml", "h100")
    assert not (tmp_path / "bad.toml").exists() and not (tmp_path / "bad.toml.tmp").exists()
    saved = cal.load_raw(tmp_path / "bad.raw.json")
    assert saved["benchmarks"]["bandwidth"]["ms"] == [0.40, 0.36, 0.37]


def test_plan_sizes_follow_the_gpu():
    steps = benchmarks.plan(synthetic_raw()["props"], load_device("h100"))
    assert set(steps) == set(benchmarks.BENCHMARKS) - {"props", "energy"}
    fp = dict(a.split("=") for a in steps["stream_dram"][1])["footprint"]
    assert int(fp) == 512 << 20  # >= 8 x 50 MB L2, a power of two
    vals = [int(x) for x in dict(a.split("=") for a in steps["latency_l2"][1])["values"].split(",")]
    assert vals[0] == 256 << 10 and 8 * 52428800 * 0.8 < vals[-1] <= 8 * 52428800


# ---- no GPU ------------------------------------------------------------------------------
def test_calibrate_without_nvidia_smi(monkeypatch, tmp_path):
    monkeypatch.setattr(toolchain.shutil, "which", lambda name: None)
    with pytest.raises(NoGPUError, match="no NVIDIA GPU: nvidia-smi not found") as ei:
        cal.calibrate(tmp_path / "x.toml", base="h100")
    assert isinstance(ei.value, CGPredictError) and "\n" not in str(ei.value)
    assert not (tmp_path / "x.toml").exists()


@pytest.mark.skipif(sys.platform == "win32", reason="shell script stand-in")
def test_calibrate_when_nvidia_smi_lists_no_gpu(monkeypatch, tmp_path):
    fake = tmp_path / "nvidia-smi"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    with pytest.raises(NoGPUError, match="lists no GPU"):
        cal.calibrate(tmp_path / "x.toml", base="h100")


def test_calibrate_without_nvcc(monkeypatch, tmp_path):
    monkeypatch.setattr(cal, "query_gpu", lambda **kw: toolchain.GPUInfo("Fake GPU", "9.0"))
    monkeypatch.setattr(toolchain.shutil, "which", lambda name: None)
    monkeypatch.delenv("NVCC", raising=False)
    monkeypatch.setattr(toolchain, "DEFAULT_NVCC", str(tmp_path / "no-nvcc"))
    with pytest.raises(NoGPUError, match="nvcc not found"):
        cal.calibrate(tmp_path / "x.toml", base="h100")


def test_unknown_benchmark_name(tmp_path):
    with pytest.raises(CalibrationError, match="unknown micro-benchmark"):
        cal.calibrate(tmp_path / "x.toml", only=["latency_l3"])


# ---- the CUDA sources compile --------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.skipif(not (shutil.which("nvcc") or os.environ.get("NVCC")), reason="no nvcc")
def test_every_microbenchmark_compiles(tmp_path):
    sources = sorted(p.name for p in toolchain.microbench_dir().glob("*.cu"))
    assert set(sources) == {s for s in benchmarks.BENCHMARKS.values() if s}
    exes = toolchain.build(toolchain.find_nvcc(), "sm_90", sources, tmp_path)
    assert all(exes[s].is_file() for s in sources)


# ---- micro-benchmark launch resources (B1) --------------------------------------------------
# Kernel name -> the most threads per block its program launches it with.
LAUNCH_THREADS = {"stream": 1024, "read_stream": 512, "smem_chase": 1024, "k_barrier": 1024,
                  "k_inst": 256, "k_idle": 256, "init_chain": 256, "flush_l2": 256, "chase": 1,
                  "cgp_spin_kernel": 32}


def _assert_launches_fit_the_register_file(logs: dict[str, str]) -> None:
    """``logs``: what ``nvcc -Xptxas -v`` said for each micro-benchmark source. Every kernel
    spills nothing and its registers x launch threads <= 65536 (registers a block may use
    since Kepler); every kernel of LAUNCH_THREADS is met."""
    seen = set()
    for cu, log in logs.items():
        for fn, body in re.findall(r"Compiling entry function '(\w+)'(.*?)(?=Compiling entry|$)",
                                   log, re.S):
            name = next(k for k in sorted(LAUNCH_THREADS, key=len, reverse=True)
                        if re.match(rf"_Z\d+{k}", fn))
            regs = int(re.search(r"Used (\d+) registers", body).group(1))
            assert "0 bytes spill stores" in body, (cu, fn)
            assert regs * LAUNCH_THREADS[name] <= 65536, (cu, fn, regs)
            seen.add(name)
    assert seen == set(LAUNCH_THREADS)


@pytest.mark.slow
@pytest.mark.skipif(not (shutil.which("nvcc") or os.environ.get("NVCC")), reason="no nvcc")
def test_every_kernel_launch_fits_the_register_file(tmp_path):
    nvcc = toolchain.find_nvcc()
    src = toolchain.microbench_dir()

    def ptxas_log(cu):
        # -cubin: the device code only, as ptxas compiles it for the executable (the host
        # side, a quarter of the time, is built by test_every_microbenchmark_compiles)
        r = subprocess.run([nvcc, "-O3", "-arch=sm_90", "-std=c++17", "-Xptxas", "-v", "-I",
                            str(src), "-cubin", str(cu), "-o",
                            str(tmp_path / f"{cu.stem}.cubin")],
                           capture_output=True, text=True, check=True, timeout=600)
        return r.stdout + r.stderr

    sources = sorted(src.glob("*.cu"))
    with ThreadPoolExecutor(8) as pool:
        logs = dict(zip((cu.name for cu in sources), pool.map(ptxas_log, sources)))
    _assert_launches_fit_the_register_file(logs)


# ---- the CPU twins of the two nvcc tests above: what nvcc said, recorded (tests/data/nvcc) --
RECORDED = Path(__file__).resolve().parent / "data" / "nvcc"


def _recorded_ptxas_logs() -> dict[str, str]:
    """The recorded ``-Xptxas -v`` logs, by source name, checked to be of the sources as they
    are now (else: run tests/data/nvcc/record.py where nvcc is)."""
    manifest = json.loads((RECORDED / "manifest.json").read_text())
    root = RECORDED.parents[2]
    for rel, digest in manifest["ptxas"].items():
        got = hashlib.sha256((root / rel).read_bytes()).hexdigest()
        assert got == digest, f"{rel} changed since its ptxas log was recorded"
    assert {Path(r).name for r in manifest["ptxas"]} == {
        p.name for p in toolchain.microbench_dir().iterdir() if p.suffix in (".cu", ".cuh", ".h")}
    return {p.stem + ".cu": p.read_text() for p in (RECORDED / "ptxas").glob("*.log")}


def test_every_microbenchmark_compiled_when_recorded():
    """Twin of test_every_microbenchmark_compiles: each benchmark source has a ptxas log of
    its current text, and each log compiled at least one kernel without an error."""
    logs = _recorded_ptxas_logs()
    assert set(logs) == {s for s in benchmarks.BENCHMARKS.values() if s}
    for cu, log in logs.items():
        assert "Compiling entry function" in log and "error" not in log.lower(), cu


def test_every_kernel_launch_fits_the_register_file_recorded():
    _assert_launches_fit_the_register_file(_recorded_ptxas_logs())


def test_register_check_catches_a_spill_and_a_big_block():
    """The register check can fail: the recorded logs with the stream kernels at 65
    registers (x 1024 threads > 65536), or with a spill."""
    logs = _recorded_ptxas_logs()
    for bad in (re.sub(r"Used \d+ registers", "Used 65 registers", logs["stream.cu"]),
                logs["stream.cu"].replace("0 bytes spill stores", "8 bytes spill stores")):
        assert bad != logs["stream.cu"]
        with pytest.raises(AssertionError):
            _assert_launches_fit_the_register_file({**logs, "stream.cu": bad})


# ---- B2: the L2 fetch granularity and the transaction the model counts ----------------------
def test_dram_row_rise_is_not_a_sector_size():
    strides = [8, 16, 32, 64, 128, 256, 512]
    # the reviewer's curve: on all strides the knee is at 64 (490 >= 0.9 x median(505,540,560))
    cyc = [316, 370, 478, 490, 505, 540, 560]
    assert fetch_granularity(strides, cyc) == 64
    # strides <= 2 lines: top = median(490, 505, 540) = 505, 478 >= 454.5 -> 32
    a = analyse({"line_l2": {"values": strides, "cycles_per_access": cyc}}, 128, 16)
    assert a.extra["l2_dram_fetch_bytes"].value == 32
    assert a.values["l2_sector_bytes"].value == 32


def test_fetch_granularity_other_than_the_model_sector_keeps_the_base(tmp_path):
    strides = [8, 16, 32, 64, 128, 256, 512]
    line64 = {"values": strides, "cycles_per_access": [260 + 220 * min(s / 64, 1) for s in strides]}
    a = analyse({"line_l2": line64}, 128, 16)
    assert "l2_sector_bytes" not in a.values
    assert a.extra["l2_dram_fetch_bytes"].value == 64
    assert any("fetch granularity 64 B differs from l2_sector_bytes 32 B" in n for n in a.notes)
    # the reviewer's run that was lost: top rises >= 11 % at 256 B; file still written
    raw = {"gpu_name": "X", "benchmarks": {**synthetic_raw(), "line_l2": {
        "values": strides, "cycles_per_access": [316, 370, 478, 490, 505, 600, 620]}}}
    res = cal.finish_from_raw(raw, tmp_path / "g.toml", "h100")
    assert res.device.l2_sector_bytes == 32  # the base's
    assert res.analysis.extra["l2_dram_fetch_bytes"].value == 256  # 600 is the top at <= 256
    assert "l2_dram_fetch_bytes = 256" in (tmp_path / "g.toml").read_text()  # a comment


def test_sectors_per_warp_for_other_transaction_sizes():
    assert [sectors_per_warp(s) for s in (0, 1, 2, 4, 8)] == [1, 4, 8, 16, 32]  # stream.cu
    assert [sectors_per_warp(s, 64) for s in (0, 1, 2, 4, 8)] == [1, 2, 4, 8, 16]
    assert [sectors_per_warp(s, 128) for s in (0, 1, 2, 4, 8)] == [1, 1, 2, 4, 8]


def test_departure_delay_is_per_the_model_transaction():
    # a GPU whose 64-B transactions cost 5 cycles each; stream.cu reports 32-B sector counts
    strides, per64 = [0, 1, 2, 4, 8], [1, 2, 4, 8, 16]
    warps = [8448 * 1000] * 5
    ms = [w / SMS * (40.0 + 5.0 * n) / (CLOCK * 1e3) for w, n in zip(warps, per64)]
    r = {"strides": strides, "sectors_per_warp": [1, 4, 8, 16, 32], "warp_insts": warps,
         "ms": ms, "clock_mhz": CLOCK, "sm_count": SMS}
    a = analyse({"stream_l2": r}, 128, 16, l2_sector_bytes=64)
    assert a.values["dd_l2_cycles"].value == pytest.approx(5.0)
    assert "64-B transactions" in a.values["dd_l2_cycles"].method
    # without strides there is nothing to recount: the field keeps the base value
    del r["strides"]
    a = analyse({"stream_l2": r}, 128, 16, l2_sector_bytes=64)
    assert "dd_l2_cycles" not in a.values and any("recount" in n for n in a.notes)


# ---- W2 / m5: latency levels ---------------------------------------------------------------
L2_RT = 52428800  # the synthetic props' L2


def test_dram_latency_from_the_footprints_past_the_ramp():
    sizes = _sizes(256 << 10, 8 * L2_RT)
    far = [s for s in sizes if s >= 4 * L2_RT]
    assert len(far) == 4
    tail = [470.0, 474.0, 479.0, 477.0]  # the last three: median 477
    cyc = [262.0 if s <= L2_RT else 430.0 + 10.0 * (s / L2_RT) if s < 4 * L2_RT else 0.0
           for s in sizes]
    cyc[-4:] = tail
    raw = {"props": {"l2_bytes": L2_RT},
           "latency_l2": {"stride": 128, "values": sizes, "cycles_per_access": cyc}}
    a = analyse(raw, 128, 16)
    assert a.values["l2_latency_cycles"].value == 262.0
    assert a.values["dram_latency_cycles"].value == 477.0 - 262.0
    assert "3 largest footprints" in a.values["dram_latency_cycles"].method


def test_no_dram_latency_from_a_plateau_inside_the_l2():
    # sweep to 2 x L2 whose last level (the far L2 partition) starts at 32 MiB < L2
    sizes = _sizes(256 << 10, 2 * L2_RT)
    cyc = [262.0 if s < 32 << 20 else 330.0 if s <= L2_RT else 340.0 for s in sizes]
    a = analyse({"props": {"l2_bytes": L2_RT},
                 "latency_l2": {"stride": 128, "values": sizes, "cycles_per_access": cyc}},
                128, 16)
    assert a.values["l2_latency_cycles"].value == 262.0
    assert "dram_latency_cycles" not in a.values
    assert any("inside the 52428800-B L2" in n for n in a.notes)


def test_l1_latency_needs_a_level_below_the_l2():
    raw = synthetic_raw()
    sizes = raw["latency_l1"]["values"]
    raw["latency_l1"]["cycles_per_access"] = [258.0] * len(sizes)  # every load went to L2
    a = analyse(raw, 128, 16)
    assert "l1_latency_cycles" not in a.values
    assert any("not cached in L1" in n for n in a.notes)


# ---- W3: bandwidth passes ------------------------------------------------------------------
def test_bandwidth_counts_every_pass():
    r = {"bytes": 1 << 30, "passes": 4, "ms": [1.3, 1.2]}
    a = analyse({"bandwidth": r}, 128, 16)
    assert a.values["dram_bandwidth_gbps"].value == round(4 * 2**30 / 1.2e-3 / 1e9, 1)  # 3579.1


def test_plan_limits_and_sizes():
    steps = benchmarks.plan(synthetic_raw()["props"], load_device("h100"))
    line = dict(a.split("=") for a in steps["line_l2"][1])
    assert line["values"] == "8,16,32,64,128,256"  # <= 2 x 128-B lines
    assert int(line["flush"]) == 4 * 52428800
    bw = dict(a.split("=") for a in steps["bandwidth"][1])
    assert int(bw["bytes"]) * int(bw["passes"]) == 4 << 30  # 512 MiB x 8


# ---- W4: value checks ----------------------------------------------------------------------
def test_value_problems():
    assert value_problem("l2_sector_bytes", 48) == "not a power of two"
    assert value_problem("dd_l2_cycles", float("nan")) == "not a finite number"
    assert value_problem("dd_l2_cycles", 0.0) == "not a positive number"
    assert value_problem("sm_count", -4) == "not a positive number"
    assert value_problem("clock_mhz", 1e6).startswith("outside the plausible range")
    assert value_problem("shared_mem_reserved_per_block_bytes", 0) is None
    assert value_problem("compute_capability", "9.0") is None
    assert value_problem("l2_latency_cycles", 262.0) is None


def test_findings_written_as_fields_are_checked(tmp_path):
    raw = synthetic_raw()
    raw["smem"]["cycles_per_access"] = [29] * 7  # no conflict cost: slope 0
    raw["barrier"]["cycles_per_barrier"] = [20, float("inf"), 40]
    raw["inst"]["fp32_latency_cycles"] = -1.0
    res = cal.finish_from_raw({"gpu_name": "X", "benchmarks": raw}, tmp_path / "w.toml", "h100")
    assert "smem_conflict_replay_cycles" not in res.analysis.extra
    assert "barrier_cycles" not in res.analysis.extra
    assert res.device.fp_latency_cycles == load_device("h100").fp_latency_cycles
    assert any(n.startswith("smem_conflict_replay_cycles: measured ") and  # 0.0 or -0.0
               n.endswith("is not a positive number; left out") for n in res.notes)
    assert res.device.shared_latency_cycles == 29.0


def test_unreadable_raw_results_cost_only_their_benchmark():
    raw = synthetic_raw()
    raw["stream_dram"]["ms"] = raw["stream_dram"]["ms"][:1]  # fewer points than strides
    raw["barrier"] = {"threads": []}  # no cycles at all
    a = analyse(raw, 128, 16)
    assert "dd_dram_cycles" not in a.values and "smem_load_cycles" not in a.values
    assert "barrier_cycles" not in a.extra
    assert a.values["dd_l2_cycles"].value == pytest.approx(1.0)
    assert any(n.startswith("barrier: cannot analyse the raw results") for n in a.notes)


# ---- B5: energy and program output errors --------------------------------------------------
def test_energy_run_without_power_samples_is_recorded_not_raised():
    def no_samples(t0, t1):
        return integrate_energy_j([], [], t0, t1)  # ValueError: too few samples

    inst = {"idle_energy_t0_ns": 1_000_000_000, "idle_energy_t1_ns": 2_500_000_000,
            "idle_energy_kernel_ms": 1400.0}
    runs = power._energy_runs(inst, {}, {}, {}, no_samples)
    assert len(runs) == 1 and runs[0]["energy_j"] is None and "samples" in runs[0]["error"]
    assert runs[0]["seconds"] == 1.5  # the window, not the 1.4-s kernel (m3)
    a = analyse({"energy": {"runs": runs}}, 128, 16)
    assert a.energy == {}


@pytest.mark.skipif(sys.platform == "win32", reason="shell script stand-in")
def test_program_printing_nan_is_a_calibration_error(tmp_path):
    exe = tmp_path / "clock"
    exe.write_text('#!/bin/sh\necho \'{"clock_mhz": nan}\'\n')
    exe.chmod(exe.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(CalibrationError, match="unreadable result"):
        toolchain.run_program(exe, [], 10)


# ---- a whole calibrate run with stand-ins for the GPU (B3, B4, B5, W1) ---------------------
class _NoSamples:
    """PowerSampler stand-in whose NVML never delivered a power sample."""

    made: list[str] = []

    def __init__(self, pci: str = "") -> None:
        _NoSamples.made.append(pci)
        self.interval_s, self.t_ns, self.energy_mj = 0.0, [], []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def energy_j(self, t0, t1):
        return integrate_energy_j(self.t_ns, [], t0, t1)


def _fake_gpu(monkeypatch, tmp_path, smi_names=None, fail=()):
    """calibrate's GPU, compiler and programs replaced by synthetic results."""
    raw = synthetic_raw()
    raw["props"]["pci_bus_id"] = "0000:3B:00.0"
    steps = benchmarks.plan(raw["props"], load_device("h100"))
    by_args = {tuple(args): name for name, (_, args) in steps.items()}
    queried = []

    def query_gpu(nvidia_smi=None, gpu_id=""):
        queried.append(gpu_id)
        names = smi_names or {}
        return toolchain.GPUInfo(names.get(gpu_id, "NVIDIA H100 80GB HBM3"), "9.0",
                                 "00000000:18:00.0")

    def run_program(exe, args, timeout_s):
        if exe.name == "props":
            return raw["props"]
        if any(a.startswith("duration_ms=") for a in args):
            t0 = 1_000_000_000
            window = {"energy_t0_ns": t0, "energy_t1_ns": t0 + 1_500_000_000,
                      "energy_kernel_ms": 1500.0}
            if exe.name == "stream":
                if "stream" in fail:
                    raise CalibrationError("stream: too many resources requested for launch")
                return {**window, "energy_sectors": 1e9, "energy_warp_insts": 1e8}
            if exe.name == "smem":
                return {**window, "smem_transactions": 1e10}
            return {f"idle_{k}": v for k, v in window.items()}
        name = by_args[tuple(args)]
        if name in fail:
            raise CalibrationError(f"{exe.name}: exit status 2")
        return raw[name]

    _NoSamples.made = []
    monkeypatch.setattr(cal, "query_gpu", query_gpu)
    monkeypatch.setattr(cal, "find_nvcc", lambda explicit=None: "nvcc")
    monkeypatch.setattr(cal, "pick_arch", lambda nvcc, gpu, work: "sm_90")
    monkeypatch.setattr(cal, "build", lambda nvcc, arch, sources, out: {
        s: out / s.removesuffix(".cu") for s in sources})
    monkeypatch.setattr(cal, "run_program", run_program)
    monkeypatch.setattr(power, "PowerSampler", _NoSamples)
    monkeypatch.chdir(tmp_path)
    return queried


def test_calibrate_with_stand_ins_saves_raw_and_survives_energy_failures(monkeypatch, tmp_path):
    queried = _fake_gpu(monkeypatch, tmp_path, fail=("stream",))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    res = cal.calibrate(None, base="h100")
    # W1: nvidia-smi asked for CUDA's device 0, then for the props benchmark's bus id
    assert queried == ["3", "0000:3B:00.0"]
    assert _NoSamples.made == ["0000:3B:00.0"]
    # default output in the current directory, raw results beside it
    assert res.output == tmp_path.joinpath("nvidia_h100_80gb_hbm3.toml").relative_to(tmp_path)
    raw = cal.load_raw(tmp_path / "nvidia_h100_80gb_hbm3.raw.json")
    assert raw["pci_bus_id"] == "0000:3B:00.0"
    # B5: no power samples and a failing energy program leave notes, never a traceback
    energy = raw["benchmarks"]["energy"]
    assert [r["name"] for r in energy["runs"]] == ["idle", "smem"]
    assert all(r["energy_j"] is None for r in energy["runs"])
    assert any(n.startswith("energy run failed: stream_dram") for n in res.notes)
    assert any("no energy for run(s) idle, smem" in n for n in res.notes)
    assert res.device.l2_latency_cycles == 260.0 and res.analysis.energy == {}


def test_calibrate_saves_raw_before_the_analysis(monkeypatch, tmp_path):
    _fake_gpu(monkeypatch, tmp_path)

    def broken(*a, **k):
        raise ValueError("analysis bug")

    monkeypatch.setattr(cal, "analyse", broken)
    with pytest.raises(CalibrationError, match="analysis bug.*saved in"):
        cal.calibrate(tmp_path / "out.toml", base="h100")
    raw = cal.load_raw(tmp_path / "out.raw.json")
    assert raw["benchmarks"]["latency_l2"]["values"] == synthetic_raw()["latency_l2"]["values"]
    assert not (tmp_path / "out.toml").exists()
    # --from-raw recovers the run once the analysis works again
    monkeypatch.undo()
    res = cal.finish_from_raw(cal.load_raw(tmp_path / "out.raw.json"), tmp_path / "out.toml")
    assert res.device.l2_latency_cycles == 260.0


def test_default_output_is_checked_before_the_benchmarks(monkeypatch, tmp_path):
    _fake_gpu(monkeypatch, tmp_path)
    (tmp_path / "nvidia_h100_80gb_hbm3.toml").write_text("# mine\n")

    def no_build(*a, **k):
        raise AssertionError("built although the output exists")

    monkeypatch.setattr(cal, "find_nvcc", no_build)
    with pytest.raises(CalibrationError, match="nvidia_h100_80gb_hbm3.toml exists"):
        cal.calibrate(None, base="h100")


def test_default_output_follows_the_gpu_cuda_runs_on(monkeypatch, tmp_path):
    # nvidia-smi lists another GPU first; props names the one CUDA uses, whose file exists
    _fake_gpu(monkeypatch, tmp_path, smi_names={"": "NVIDIA A100-SXM4-80GB"})
    (tmp_path / "nvidia_h100_80gb_hbm3.toml").write_text("# mine\n")
    seen = []
    real_run = cal.run_program
    monkeypatch.setattr(cal, "run_program", lambda exe, a, t: seen.append(exe.name) or
                        real_run(exe, a, t))
    with pytest.raises(CalibrationError, match="nvidia_h100_80gb_hbm3.toml exists"):
        cal.calibrate(None, base="h100")
    assert seen == ["props"]  # refused before any benchmark


# ---- re-analysing a raw file: never lose or clutter the user's files ------------------------
def test_from_raw_refuses_to_write_over_its_own_input(tmp_path):
    raw_file = tmp_path / "c.raw.json"
    raw_file.write_text(json.dumps({"gpu_name": "G", "benchmarks": synthetic_raw()}))
    before = raw_file.read_text()
    for force in (False, True):
        with pytest.raises(CalibrationError, match="is the raw file being read"):
            cal.finish_from_raw(cal.load_raw(raw_file), raw_file, "h100", force=force)
    assert raw_file.read_text() == before


def test_failed_reanalysis_leaves_no_copy(tmp_path):
    raw_file = tmp_path / "a.raw.json"
    raw_file.write_text(json.dumps({"gpu_name": "G", "benchmarks": {}}))
    with pytest.raises(CalibrationError, match="nothing was measured in .*a.raw.json"):
        cal.finish_from_raw(cal.load_raw(raw_file), tmp_path / "gpu.toml", "h100")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.raw.json"]
    # a successful one writes the device file and its raw copy beside it
    raw_file.write_text(json.dumps({"gpu_name": "G", "benchmarks": synthetic_raw()}))
    res = cal.finish_from_raw(cal.load_raw(raw_file), tmp_path / "gpu.toml", "h100")
    assert res.raw_path == tmp_path / "gpu.raw.json" and res.raw_path.is_file()


@pytest.mark.parametrize("body, what", [
    ({"benchmarks": 5}, "'benchmarks' is not a table"),
    ({"benchmarks": {"props": "x"}}, "benchmarks.props is not a table"),
])
def test_malformed_raw_file(tmp_path, body, what):
    p = tmp_path / "b.raw.json"
    p.write_text(json.dumps(body))
    with pytest.raises(CalibrationError, match=re.escape(what)):
        cal.load_raw(p)
