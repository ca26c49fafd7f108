"""Energy of a calibration (SPEC §6): the GPU's power sampled through NVML (`pynvml` from the
optional `nvidia-ml-py`, group `[gpu]`) around runs of the micro-benchmarks, integrated per
run."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from cgpredict.calibration.energy_fit import integrate_energy_j
from cgpredict.calibration.errors import CalibrationError
from cgpredict.calibration.toolchain import run_program

__all__ = ["PowerSampler", "measure_energy"]


class PowerSampler:
    """Samples board power (and the energy counter when there is one) through NVML."""

    def __init__(self, pci_bus_id: str = "", interval_s: float = 0.005) -> None:
        import pynvml  # optional dependency (nvidia-ml-py): ImportError when missing

        self._nvml = pynvml
        pynvml.nvmlInit()
        try:
            self._h = (
                pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id)
                if pci_bus_id
                else pynvml.nvmlDeviceGetHandleByIndex(0)
            )
        except Exception:
            pynvml.nvmlShutdown()
            raise
        try:
            pynvml.nvmlDeviceGetTotalEnergyConsumption(self._h)
            self._counter = True
        except pynvml.NVMLError:
            self._counter = False
        self.interval_s = interval_s
        self.t_ns: list[int] = []
        self.power_w: list[float] = []
        self.energy_mj: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        nv = self._nvml
        while not self._stop.is_set():
            t = time.time_ns()
            try:
                p = nv.nvmlDeviceGetPowerUsage(self._h) / 1e3
                e = (
                    float(nv.nvmlDeviceGetTotalEnergyConsumption(self._h))
                    if self._counter
                    else None
                )
            except nv.NVMLError:
                p, e = None, None
            if p is not None:
                self.t_ns.append(t)
                self.power_w.append(p)
                if e is not None:
                    self.energy_mj.append(e)
            self._stop.wait(self.interval_s)

    def __enter__(self) -> PowerSampler:  # noqa: PYI034
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._nvml.nvmlShutdown()

    def energy_j(self, t0_ns: int, t1_ns: int) -> float:
        same = self._counter and len(self.energy_mj) == len(self.t_ns)
        counter = self.energy_mj if same else None
        return integrate_energy_j(self.t_ns, self.power_w, t0_ns, t1_ns, counter)


def _energy_runs(
    r_inst: Mapping[str, Any],
    r_dram: Mapping[str, Any],
    r_l2: Mapping[str, Any],
    r_smem: Mapping[str, Any],
    energy_j: Callable[[int, int], float],
) -> list[dict[str, Any]]:
    """One record per energy run that reported its time window; `energy_j(t0_ns, t1_ns)` is
    the sampler's energy in a window (a run whose energy cannot be had keeps energy_j None)."""
    runs = []

    def add(name: str, res: Mapping[str, Any], prefix: str, counts: dict[str, float]) -> None:
        t0, t1 = res.get(f"{prefix}energy_t0_ns"), res.get(f"{prefix}energy_t1_ns")
        if t0 is None or t1 is None:
            return
        run: dict[str, Any] = {
            "name": name,
            # the static power acts over the whole window the energy is integrated over
            "seconds": (t1 - t0) / 1e9,
            "kernel_s": res.get(f"{prefix}energy_kernel_ms", 0.0) / 1e3,
            "window_ns": [t0, t1],
            "counts": counts,
        }
        try:
            run["energy_j"] = energy_j(t0, t1)
        except ValueError as exc:  # e.g. fewer than two power samples
            run["energy_j"] = None
            run["error"] = str(exc)
        runs.append(run)

    add("idle", r_inst, "idle_", {})
    for c in ("int32", "fp32", "fp64", "sfu"):
        if f"{c}_energy_thread_ops" in r_inst:
            add(c, r_inst, f"{c}_", {f"{c}_op": r_inst[f"{c}_energy_thread_ops"]})
    for name, res, dram in (("stream_dram", r_dram, True), ("stream_l2", r_l2, False)):
        if "energy_sectors" in res:
            n = res["energy_sectors"]
            counts = {"l2_transaction": n, "int32_op": res["energy_warp_insts"] * 32 * 4}
            if dram:
                counts["dram_transaction"] = n
            add(name, res, "", counts)
    if "smem_transactions" in r_smem:
        add("smem", r_smem, "", {"smem_transaction": r_smem["smem_transactions"]})
    return runs


def measure_energy(
    exe: Mapping[str, Path],
    steps: Mapping[str, tuple[str, list[str]]],
    pci: str,
    duration_ms: float,
    timeout_s: float,
    run: Callable[[Path, list[str], float], dict[str, Any]] = run_program,
) -> dict[str, Any]:
    """Energy runs under the NVML sampler; a failing program drops only its own runs.
    ``run``: how a program is run (the calibration's own ``run_program``)."""
    try:
        sampler = PowerSampler(pci)
    except ImportError:
        return {"skipped": "pynvml not installed (pip install 'cgpredict[gpu]', i.e. nvidia-ml-py)"}
    except Exception as exc:  # noqa: BLE001 - any NVML failure only skips energy
        return {"skipped": f"NVML unavailable: {exc}"}
    d = f"duration_ms={duration_ms:g}"
    programs = {
        "inst": ("inst.cu", ["classes=idle,int32,fp32,fp64,sfu", "iters=1024", d]),
        "stream_dram": (
            "stream.cu",
            [*steps["stream_dram"][1][:1], "strides=1", "bytes_per_point=1073741824", d],
        ),
        "stream_l2": (
            "stream.cu",
            [*steps["stream_l2"][1][:1], "strides=1", "bytes_per_point=4294967296", d],
        ),
        "smem": ("smem.cu", ["strides=1", "iters=256", d]),
    }
    res: dict[str, dict[str, Any]] = {}
    errors: list[str] = []
    with sampler:
        for name, (src, args) in programs.items():
            try:
                res[name] = run(exe[src], args, timeout_s)
            except CalibrationError as exc:
                res[name] = {}
                errors.append(f"{name}: {exc}")
        time.sleep(2 * sampler.interval_s)
    out = {
        "runs": _energy_runs(
            res["inst"], res["stream_dram"], res["stream_l2"], res["smem"], sampler.energy_j
        ),
        "samples": len(sampler.t_ns),
        "energy_counter": bool(sampler.energy_mj),
        "pci_bus_id": pci,
    }
    if errors:
        out["errors"] = errors
    return out
