"""Synthetic raw results of the calibration micro-benchmarks on an imaginary Hopper-like GPU
(known latencies, capacities, costs and energies), for test_calibrate and test_calibrate_run
to recover by the analysis."""

from __future__ import annotations

import numpy as np

L1_CAP, L2_CAP = 256 << 10, 48 << 20
LAT = {"l1": 30.0, "l2": 260.0, "dram": 480.0}
CLOCK, SMS = 1800.0, 132


def footprints(lo: int, hi: int) -> list[int]:
    """Pointer-chase footprints from ``lo`` to ``hi`` bytes, four a doubling, in 128-B steps."""
    return [int(v) // 128 * 128 for v in lo * 2 ** (np.arange(0, 64) / 4) if v <= hi]


def chase(sizes: list[int], levels: list[tuple[int, float]]) -> list[float]:
    """Latency of each footprint: the first level whose capacity holds it (last: no limit)."""
    return [next(lat for cap, lat in levels if s <= cap) for s in sizes]


def stream_results(dd: float, base: float = 40.0) -> dict:
    """A stream benchmark's results: ``base`` + ``dd`` cycles a sector per warp instruction."""
    sectors = [1, 4, 8, 16, 32]
    warps = [8448 * 1000] * 5
    ms = [w / SMS * (base + dd * s) / (CLOCK * 1e3) for w, s in zip(warps, sectors)]
    return {"sectors_per_warp": sectors, "warp_insts": warps, "ms": ms, "clock_mhz": CLOCK,
            "sm_count": SMS, "pure_insts": 8, "total_insts": 43}


ENERGY_NJ = {"fp32_op": 0.04, "int32_op": 0.05, "sfu_op": 0.16, "fp64_op": 1.0,
             "dram_transaction": 62.9, "l2_transaction": 15.5, "smem_transaction": 4.6}
STATIC_W = 70.0


def energy_runs() -> list[dict]:
    """The energy benchmark's runs: STATIC_W over each run plus ENERGY_NJ per operation."""
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
    l1_sizes = footprints(4096, 2 << 20)
    l2_sizes = footprints(256 << 10, 200 << 20)
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
                       "cycles_per_access": chase(l1_sizes, [(L1_CAP, LAT["l1"]),
                                                              (1 << 60, LAT["l2"])])},
        "latency_l2": {**common, "stride": 128, "values": l2_sizes,
                       "cycles_per_access": chase(l2_sizes, [(L2_CAP, LAT["l2"]),
                                                              (1 << 60, LAT["dram"])])},
        "line_l1": {**common, "values": strides,
                    "cycles_per_access": [30 + 230 * min(s / 128, 1) for s in strides]},
        "line_l2": {**common, "values": strides,
                    "cycles_per_access": [260 + 220 * min(s / 32, 1) for s in strides]},
        "smem": {**common, "strides": [0, 1, 2, 4, 8, 16, 32],
                 "conflict_degree": [1, 1, 2, 4, 8, 16, 32],
                 "cycles_per_access": [29, 29, 31, 35, 43, 59, 91]},
        "stream_l2": stream_results(1.0),
        "stream_dram": stream_results(2.5),
        "bandwidth": {**common, "bytes": 1 << 30, "ms": [0.40, 0.36, 0.37]},
        "inst": {**common, "int32_latency_cycles": 4.5, "fp32_latency_cycles": 4.0,
                 "int32_thread_ops": 2 * CLOCK * 1e3 * SMS * 32, "int32_ms": 1.0,
                 "fp32_thread_ops": 4 * CLOCK * 1e3 * SMS * 32, "fp32_ms": 1.0,
                 "fp64_thread_ops": 2 * CLOCK * 1e3 * SMS * 32, "fp64_ms": 1.0,
                 "sfu_thread_ops": 0.5 * CLOCK * 1e3 * SMS * 32, "sfu_ms": 1.0},
        "barrier": {**common, "threads": [64, 256, 1024], "cycles_per_barrier": [20, 24, 40]},
        "energy": {"runs": energy_runs()},
    }
