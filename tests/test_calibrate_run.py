"""Calibration: a whole ``calibrate`` run with stand-ins for the GPU, its compiler and
programs (synthetic results: calibration_raw.py), and re-analysing a raw file
(``--from-raw``) without losing or cluttering the user's files."""

from __future__ import annotations

import json
import re

import pytest
from calibration_raw import synthetic_raw

from cgpredict.calibration import benchmarks, power, toolchain
from cgpredict.calibration import run as cal
from cgpredict.calibration.energy_fit import integrate_energy_j
from cgpredict.calibration.errors import CalibrationError
from cgpredict.devices import load_device


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
