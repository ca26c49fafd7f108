"""Typed results of the FPGA estimate (SPEC §5): design points, per-loop and per-kernel
estimates, the report. Frozen dataclasses handed from stage to stage."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import CGPredictError
from .device import Resources


class FPGAEstimateError(CGPredictError):
    exit_code = 2


# ---- results -----------------------------------------------------------------------------


@dataclass(frozen=True)
class DesignPoint:
    pipeline: bool
    unroll: int
    jam: int
    partition: int

    def pragmas(self, line: int) -> tuple[str, ...]:
        out = []
        if self.pipeline:
            out.append(f"#pragma HLS pipeline II=<ii>  (loop at line {line})")
        if self.unroll > 1:
            out.append(f"#pragma HLS unroll factor={self.unroll}  (loop at line {line})")
        if self.jam > 1:
            out.append(
                f"unroll-and-jam the enclosing loop by {self.jam} "
                f"(#pragma HLS unroll factor={self.jam} on it)"
            )
        if self.partition > 1:
            out.append(
                f"#pragma HLS array_partition cyclic factor={self.partition} "
                f"(arrays of loop {line})"
            )
        return tuple(out)


@dataclass(frozen=True)
class LoopEstimate:
    loop_id: int
    line: int
    point: DesignPoint
    trip_count: float
    entries: float
    ii: int
    rec_mii: int
    port_mii: int
    dsp_mii: int
    depth: int
    compute_cycles: float
    stream_bytes: float
    stream_ms: float
    compute_ms: float
    time_ms: float
    bound: str  # recurrence | memory ports | DSP | bandwidth | latency
    resources: Resources
    pragmas: tuple[str, ...]
    points_explored: int


@dataclass(frozen=True)
class ArrayPlacement:
    name: str
    bytes: int
    on_chip: bool
    read: bool
    written: bool
    partition: int


@dataclass(frozen=True)
class Buffer:
    """The on-chip buffer of one array in a tiled design."""

    array: str
    dims: tuple[int, ...]  # extent per array dimension, outermost first
    bytes: int
    partition: int
    partition_dim: int  # 1-based array dimension partitioned (0: none)
    double: bool
    bram36: int
    lut: int
    fills: float  # times it is (re)filled
    traffic_bytes: float  # DRAM bytes moved for it, burst rounding included
    row_bytes: int  # bytes of one burst (one contiguous row of the tile)
    read: bool
    written: bool
    run_bytes: int = 0  # contiguous bytes per DRAM run (rows spanning the array merge)
    ddr_efficiency: float = 1.0  # share of the DDR peak its runs get (row misses, turnaround)


@dataclass(frozen=True)
class TiledEstimate:
    loop_lines: tuple[int, ...]
    trips: tuple[float, ...]
    tiles: tuple[int, ...]
    unroll: int
    double_buffer: bool
    buffers: tuple[Buffer, ...]
    ii: int
    rec_mii: int
    port_mii: int
    dsp_mii: int
    depth: int
    compute_cycles: float
    transfer_bytes: float
    transfer_cycles: float
    bytes_per_cycle: float  # effective: transfer bytes / transfer cycles (eq. T2)
    compute_ms: float
    transfer_ms: float
    time_ms: float
    bound: str  # transfers | recurrence | memory ports | DSP | throughput
    resources: Resources
    points_evaluated: int
    points_skipped: int
    points_pareto: int
    pragmas: tuple[str, ...]
    structure: tuple[str, ...]
    reduction_tree: bool = False  # the unrolled reduction is summed by an adder tree
    transfer_limit: str = "AXI ports"  # what sets the transfer rate: AXI ports | DDR


@dataclass(frozen=True)
class KernelEstimate:
    name: str
    location: str
    launches: int
    loops: tuple[LoopEstimate, ...]
    arrays: tuple[ArrayPlacement, ...]
    other_cycles: float
    transfer_bytes: float
    transfer_ms: float
    time_ms: float
    resources: Resources
    fits: bool
    bound: str
    warnings: tuple[str, ...]
    design: str = "streamed"  # streamed | tiled
    tiled: TiledEstimate | None = None
    tiling_note: str = ""  # why the tiled design was not chosen


@dataclass(frozen=True)
class FPGAReport:
    source: str
    device: str
    clock_mhz: float
    budget: Resources
    work_sizes: dict[str, int]
    trace_sizes: dict[str, int]
    kernels: tuple[KernelEstimate, ...]
    warnings: tuple[str, ...]
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def total_ms(self) -> float:
        return sum(k.time_ms for k in self.kernels)

