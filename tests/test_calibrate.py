"""Calibration: analysis of synthetic micro-benchmark results, rendering, no-GPU behaviour."""

from __future__ import annotations

import os
import stat
import sys

import numpy as np
import pytest
from calibration_raw import (
    CLOCK,
    ENERGY_NJ,
    L1_CAP,
    L2_CAP,
    SMS,
    STATIC_W,
    chase,
    energy_runs,
    footprints,
    stream_results,
    synthetic_raw,
)

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


# ---- pure analysis -----------------------------------------------------------------------
def test_plateaus_of_pointer_chase_curve():
    sizes = footprints(4096, 200 << 20)
    cyc = chase(sizes, [(L1_CAP, 30.0), (L2_CAP, 260.0), (1 << 60, 480.0)])
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
    r = stream_results(2.5, base=60.0)
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
    fit = fit_energy([EnergyRun(**r) for r in energy_runs()])
    assert fit.static_power_w == pytest.approx(STATIC_W, rel=1e-6)
    for k, v in ENERGY_NJ.items():
        assert fit.nj[k] == pytest.approx(v, rel=1e-5), k
    assert fit.rel_residual < 1e-9


def test_energy_regression_with_noise_and_a_useless_term():
    rng = np.random.default_rng(1)
    runs = [EnergyRun(**{**r, "energy_j": r["energy_j"] * (1 + rng.normal(0, 0.002))})
            for r in energy_runs()]
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
    assert a.extra["l1_capacity_bytes"].value == max(s for s in footprints(4096, 2 << 20)
                                                     if s <= L1_CAP)
    assert a.extra["l2_capacity_bytes"].value == max(s for s in footprints(256 << 10, 200 << 20)
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
    sizes = footprints(256 << 10, 8 * L2_RT)
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
    sizes = footprints(256 << 10, 2 * L2_RT)
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


def test_the_renderer_keeps_the_walkers_lift(tmp_path):
    """A device file rendered on the H100 base keeps eq. (Q1w)'s two fields (the loaded lift
    54.0 and the 10 memory controllers) and gives the same OpLatencies back."""
    from cgpredict.calibration.analysis import Analysis
    from cgpredict.calibration.devicefile import base_doc, render_device_toml
    from cgpredict.devices import load_device_file

    doc, _ = base_doc("h100")
    text = render_device_toml(doc, Analysis(values={}), "X", "2026-11-28", "h100")
    assert "dram_round_loaded_lift_cycles = 54.0" in text
    assert "dram_memory_controllers = 10" in text
    path = tmp_path / "x.toml"
    path.write_text(text)
    assert load_device_file(path).op_latencies == load_device("h100").op_latencies
