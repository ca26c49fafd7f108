"""What a calibration runs: each micro-benchmark and its arguments, sized from the GPU's
properties (its L2 and free memory) and the base device file."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cgpredict.devices import GPUDevice

__all__ = ["BENCHMARKS", "plan"]

# Micro-benchmark name -> source file (cgpredict/calibration/microbench/); `props` always runs.
BENCHMARKS: dict[str, str] = {
    "props": "props.cu",
    "latency_l1": "pchase.cu",
    "latency_l2": "pchase.cu",
    "line_l1": "pchase.cu",
    "line_l2": "pchase.cu",
    "smem": "smem.cu",
    "stream_l2": "stream.cu",
    "stream_dram": "stream.cu",
    "bandwidth": "bandwidth.cu",
    "inst": "inst.cu",
    "barrier": "barrier.cu",
    "energy": "",
}


def _geom(lo: int, hi: int, per_octave: int = 4, align: int = 128) -> str:
    """Comma list of sizes from lo to hi, `per_octave` per doubling, multiples of `align`."""
    out: list[int] = []
    k = 0
    while True:
        v = round(lo * 2 ** (k / per_octave) / align) * align
        if v > hi:
            break
        if not out or v != out[-1]:
            out.append(v)
        k += 1
    return ",".join(map(str, out))


def _pow2_at_least(n: int) -> int:
    return 1 << max(int(n) - 1, 1).bit_length()


def _pow2_at_most(n: int) -> int:
    return 1 << max(int(n), 2).bit_length() - 1


def plan(props: Mapping[str, Any], base: GPUDevice) -> dict[str, tuple[str, list[str]]]:
    """Benchmark name -> (source, arguments), sized from the GPU's L2 and free memory."""
    l2 = int(props.get("l2_bytes") or base.l2_bytes)
    free = int(props.get("free_bytes") or 8 << 30)
    big = min(_pow2_at_least(8 * l2), _pow2_at_most(free // 4))  # DRAM-sized buffers
    strides = "8,16,32,64,128,256,512"
    # L2<-DRAM strides up to 2 lines: beyond, DRAM rows and the TLB lift the top of the curve
    line_strides = ",".join(
        str(v) for v in (8, 16, 32, 64, 128, 256, 512) if v <= 2 * base.l2_line_bytes
    )
    return {
        "latency_l1": (
            "pchase.cu",
            [
                "sweep=footprint",
                "mode=ca",
                "stride=128",
                "accesses=4096",
                f"values={_geom(4096, 2 << 20)}",
            ],
        ),
        "latency_l2": (
            "pchase.cu",
            [
                "sweep=footprint",
                "mode=cg",
                "stride=128",
                "accesses=8192",
                f"values={_geom(256 << 10, min(8 * l2, big))}",  # DRAM level past the ramp
            ],
        ),
        "line_l1": (
            "pchase.cu",
            [
                "sweep=stride",
                "mode=ca",
                "warm=cg",
                "footprint=0",
                "accesses=2048",
                f"values={strides}",
            ],
        ),
        "line_l2": (
            "pchase.cu",
            [
                "sweep=stride",
                "mode=cg",
                "warm=none",
                "footprint=0",
                "accesses=2048",
                f"flush={4 * l2}",
                f"values={line_strides}",
            ],
        ),
        "smem": ("smem.cu", ["strides=0,1,2,4,8,16,32", "iters=2048"]),
        "stream_l2": (
            "stream.cu",
            [
                f"footprint={max(_pow2_at_most(l2 // 4), 1 << 16)}",
                "strides=0,1,2,4,8",
                f"bytes_per_point={8 << 30}",
            ],
        ),
        "stream_dram": (
            "stream.cu",
            [f"footprint={big}", "strides=0,1,2,4,8", f"bytes_per_point={4 << 30}"],
        ),
        "bandwidth": (
            "bandwidth.cu",
            [f"bytes={big}", "reps=5", f"passes={max(1, (4 << 30) // big)}"],  # >= 4 GiB a run
        ),
        "inst": ("inst.cu", ["classes=int32,fp32,fp64,sfu", "iters=4096"]),
        "barrier": ("barrier.cu", ["threads=64,128,256,512,1024", "iters=4096"]),
    }
