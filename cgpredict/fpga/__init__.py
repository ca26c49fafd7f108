"""FPGA (HLS) estimate of the marked kernels, Lin-Analyzer style (SPEC §5).

Stages, each a module with typed frozen results (``results.py``):

* ``device``   FPGA device files (TOML in ``devices/``): clock, budget, AXI ports, operators.
* ``dddg``     the innermost loop body as a dynamic data-dependence graph, its scheduling.
* ``loops``    per-loop analysis from the trace (dependences, strides, trips at work size).
* ``explore``  design points of one innermost loop (pipeline, unroll, jam, partition).
* ``tiling``   the tiled design of a perfect loop nest: tiles in BRAM buffers, burst
               transfers through the AXI ports, double buffering.
* ``estimate`` kernel and report: array placement, the best of both designs, totals.
* ``report``   text and JSON renderings.
"""

from __future__ import annotations

from .device import (
    ENV_VAR,
    OP_CLASSES,
    RESOURCES,
    SCHEMA_VERSION,
    FPGADevice,
    FPGADeviceError,
    OperatorCost,
    Resources,
    bundled_fpga_dir,
    list_fpga_devices,
    load_fpga_device,
    parse_fpga_device,
)
from .estimate import estimate_region, estimate_source, estimate_trace, traced_source
from .explore import explore_loop
from .results import (
    ArrayPlacement,
    DesignPoint,
    FPGAEstimateError,
    FPGAReport,
    KernelEstimate,
    LoopEstimate,
)

__all__ = [
    "ENV_VAR",
    "OP_CLASSES",
    "RESOURCES",
    "SCHEMA_VERSION",
    "ArrayPlacement",
    "DesignPoint",
    "FPGADevice",
    "FPGADeviceError",
    "FPGAEstimateError",
    "FPGAReport",
    "KernelEstimate",
    "LoopEstimate",
    "OperatorCost",
    "Resources",
    "bundled_fpga_dir",
    "estimate_region",
    "estimate_source",
    "estimate_trace",
    "explore_loop",
    "list_fpga_devices",
    "load_fpga_device",
    "parse_fpga_device",
    "traced_source",
]
