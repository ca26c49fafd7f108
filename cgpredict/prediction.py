"""The values a prediction hands back: options in, per-kernel and per-file reports out."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .block import Block
from .errors import CGPredictError
from .jsondata import field_names, jsonable, jsonable_fields

if TYPE_CHECKING:  # annotations only: these import numba and the models, which the
    # tracer does not need (a cold run imports them on a thread beside the C compiler)
    from .halo import HaloFigures
    from .models.base import ModelResult
    from .profile import KernelProfile
    from .register_block import RegisterBlockFigures

# 3: kernel_ms, launch_ms, once_ms, sync, sync_ms; no launch_overhead_ms
# 4: per kernel halo and reg_block (the figures of the advisor's halo tile, register blocking)
# 5: per kernel registers_from (the registers a thread given, or estimated from the C)
#    and event_wait_ms, upload_launch_ms (what a cudaEvent pair per launch adds: event_timing.py)
# 6: per kernel profile.hoisted_load_cycles (loads ptxas hoists above the stores, eq. (22h))
# 7: result.bounds.blocks and dispatch_cycles (the block dispatch bound, eq. (BD)); a load
#    pattern's dram_fetch_per_warp (what its misses fetch, eq. (F1))
# 8: a pattern's l2_requests_per_warp (a warp instruction's distinct lines of the sectors the
#    L1 misses: its L2 requests, eqs. (B2q), (LM)) and result.bounds.l2_requests (B2q)
# 9: per kernel profile.alone_chain_cycles (the path of one warp alone) and
#    result.bounds.queue_cycles (the sub-partition's warps in a closed loop, eq. (LTq2));
#    result.bounds.phase_cycles and profile.phases (a thread's loops one after another, each
#    at its slowest L1 or L2 path: eq. (PH))
# 10: per kernel profile.program_launches (the traced program's launches: eq. (LWl)'s light
#    life holds only for a program's only launch)
# 11: dirty_writeback_ms (what the first launches take longer after a cudaMemset fills the
#    L2's dirty lines: eq. (E5), models/dirty_l2.py) and result.bounds.dram_read_bytes
SCHEMA_VERSION = 11
DEFAULT_BLOCKS = {1: Block(256, 1), 2: Block(32, 32)}
#: a kernel's fields that ``Report.to_dict`` leaves out: each distinct launch's profile again
#: (hundreds of dataclass values for GRAMSCHMIDT's 514 launches), never converted
_NOT_PRINTED = frozenset({"launch_profiles"})


def annotation_namespace() -> dict:
    """The classes this module's annotations name under TYPE_CHECKING, imported on demand: the
    JSON schema reads the annotations (cgpredict/schema.py), a run never does."""
    from .halo import HaloFigures
    from .models.base import ModelResult
    from .profile import KernelProfile
    from .register_block import RegisterBlockFigures
    return {"HaloFigures": HaloFigures, "ModelResult": ModelResult,
            "KernelProfile": KernelProfile, "RegisterBlockFigures": RegisterBlockFigures}


class PredictionError(CGPredictError):
    exit_code = 2


@dataclass(frozen=True)
class RunOptions:
    """What to predict: block shape and grid, device, model, sizes and tracing limits."""

    block: Block | None = None
    grid: int | None = None
    device: str = "tk1"
    model: str = "cgpredict"
    work_sizes: dict[str, int] = field(default_factory=dict)
    trace_sizes: dict[str, int] = field(default_factory=dict)
    functions: tuple[str, ...] = ()
    timeout_s: float = 120.0
    max_events: int = 200_000_000
    # registers a thread for occupancy; None: estimated per kernel from its C (registers.py)
    registers_per_thread: int | None = None
    batch_mode: str = "whole"
    max_launches: int = 2  # launches per kernel whose memory events are recorded and analysed
    port: str = "plain"  # the CUDA port predicted: plain pointers or __restrict__ (port.py)
    sync: str = "each"  # how the host waits for its launches (models/launches.py)
    transpose: tuple[str, ...] = ()  # 2-D arrays to analyse in transposed layout (advisor)
    soa: tuple[str, ...] = ()  # arrays of structs to analyse as structures of arrays (advisor)
    # 2-D arrays whose accesses are exchanged inside 32x32 tiles through shared memory
    # (the advisor's tiled transposition: tile_exchange.py)
    tile_exchange: tuple[str, ...] = ()
    # 2-D arrays whose accesses inside a kernel's per-thread loops are exchanged inside 32x32
    # tiles of rows and columns (the advisor's warp per row: lanes split each row's loop)
    row_exchange: tuple[str, ...] = ()
    # (kernel, lanes): a 1-D kernel run with that many lanes per row (32: a warp), splitting
    # each row's loop (the advisor's warp per CSR row: row_warps.py)
    row_warp: tuple[tuple[str, int], ...] = ()
    # (kernel, array): the array's stencil reads staged in a tile with its halo per block
    # (the advisor's halo tiling: halo.py)
    halo: tuple[tuple[str, str], ...] = ()
    # (kernel, R): each thread of a 2-D kernel computes R outputs along y, reusing its loads
    # in registers (the advisor's register blocking: register_block.py)
    reg_block: tuple[tuple[str, int], ...] = ()
    # extra shared-memory tiles (advisor): (array, rows, cols) for every kernel, or
    # (kernel, array, rows, cols) for one kernel
    stage: tuple[tuple[str, int, int] | tuple[str, str, int, int], ...] = ()
    # how a block copies those extra tiles (memory.staging_code.Copy): "loop" the generic
    # staging loop, "thread" the textbook kernel's one element a thread of a block-shaped tile
    stage_copy: str = "loop"
    # how a block copies the tiles the kernel's own pragmas stage: "loop" the generic staging
    # loop (the corpus ports), "thread" the textbook copy where the tile is the block's shape
    # (a measured entry's "copy", validate.py: the shared H100 textbook tiled GEMM)
    tile_copy: str = "loop"
    # where a reduction's or an atomic site's partial results are combined before the global
    # atomics (atomics.REDUCE_LEVELS): each warp (the plain port) or each block (advisor)
    reduce: str = "warp"


@dataclass(frozen=True)
class MemInstrReport:
    """One static memory instruction of a kernel, as the GPU would see it."""

    id: int
    text: str
    location: str
    kind: str
    pattern: str
    shares: tuple[float, float, float]  # of its warp instructions: coal, uncoal, const
    l2_trans_per_warp: float
    l2_hit_rate: float
    per_thread: float  # executions per thread at the work size
    # a store that writes the same address again and again (an accumulator kept in memory:
    # in a plain port nvcc must store it every iteration)
    restored: bool = False

    def hit_text(self, digits: int = 1) -> str:
        """What the L2-hit column shows: '-' for a shared-memory read, an atomic or a store (a store
        writes into the L2, it has nothing to hit), 'L1' for a load the L1 serves entirely
        (no L2 transaction), else the L2 hit rate."""
        if self.pattern in ("shared", "atomic") or self.kind == "store":
            return "-"
        if self.l2_trans_per_warp == 0 and self.per_thread > 0:
            return "L1"
        return f"{self.l2_hit_rate:.{digits}%}"


@dataclass(frozen=True)
class KernelReport:
    name: str
    location: str
    grid_dims: int
    block: str
    grid_threads: tuple[int, int]  # (x, y) at the work size
    blocks: int
    launches: int
    profile: KernelProfile
    result: ModelResult
    mem: tuple[MemInstrReport, ...]
    l2_hit_rate: float
    warnings: tuple[str, ...]
    total_ms: float  # every launch at the work size: kernel_ms + launch_ms + once_ms
    distinct_launches: int = 1  # launches of the trace that needed their own model evaluation
    energy_mj: float | None = None  # every launch; None when the device has no energy table
    occupancy: float = 0.0  # active warps / max warps per SM
    occupancy_limit: str = ""  # what limits the blocks per SM
    batches: float = 1.0  # waves of resident blocks per SM (eq. (15) with multi-SM spread)
    # each distinct launch's profile and how many work-size launches it stands for: enough
    # to re-predict the kernel on another device file without re-analysing (fit.py)
    launch_profiles: tuple[tuple[KernelProfile, float], ...] = ()
    # the parts of total_ms (models/launches.py): the GPU's work over every launch, what the
    # launches add under the port's --sync, the one-off module load of its first launch
    kernel_ms: float = 0.0
    launch_ms: float = 0.0
    once_ms: float = 0.0
    # the trace-size check (footprint.py): per cache level, the arrays' bytes traced and at
    # the work size, and the reuse scaled for it
    size_check: tuple[str, ...] = ()
    # the halo tile a fix staged (RunOptions.halo: halo.py) and the register blocking of
    # RunOptions.reg_block (register_block.py), as figures; None for a kernel without
    halo: HaloFigures | None = None
    reg_block: RegisterBlockFigures | None = None
    # where the registers a thread (profile.registers_per_thread) came from: "given"
    # (--registers, a measured entry's count) or "estimated" (registers.py, eq. (RG1))
    registers_from: str = "given"

    @property
    def time_ms(self) -> float:
        return self.total_ms


@dataclass(frozen=True)
class Report:
    source: str
    device: str
    model: str
    work_sizes: dict[str, int]
    trace_sizes: dict[str, int]
    kernels: tuple[KernelReport, ...]
    warnings: tuple[str, ...]
    seconds: dict[str, float]
    port: str = "plain"  # the CUDA port predicted (port.py)
    sync: str = "each"  # how the host waits for its launches (models/launches.py)
    sync_ms: float = 0.0  # the host's one synchronisation of queued launches (--sync end)
    # what a cudaEvent pair around each launch counts besides the work and the queued starts
    # (models/event_timing.py, eq. (E1)-(E3)), not in total_ms: the host's launch calls the
    # GPU waits for in a run that starts on an idle GPU, and the first call's extra when it
    # follows a large pageable upload (device field upload_launch_us)
    event_wait_ms: float = 0.0
    upload_launch_ms: float = 0.0
    # nor: what the first launches take longer writing back the dirty L2 lines a cudaMemset
    # of at least l2_dirty_max_bytes left before them (eq. (E5), models/dirty_l2.py)
    dirty_writeback_ms: float = 0.0

    @property
    def total_ms(self) -> float:
        return sum(k.time_ms for k in self.kernels) + self.sync_ms

    @property
    def total_energy_mj(self) -> float | None:
        parts = [k.energy_mj for k in self.kernels]
        return None if not parts or any(p is None for p in parts) else sum(parts)

    def to_dict(self) -> dict:
        """What ``cgpredict run --json`` prints: the whole report with a schema version as
        plain data."""
        kernels = [jsonable_fields(k, _NOT_PRINTED) for k in self.kernels]
        d = {n: kernels if n == "kernels" else jsonable(getattr(self, n))
             for n in field_names(type(self))}
        d["schema_version"] = SCHEMA_VERSION
        d["total_ms"] = round(self.total_ms, 6)
        d["total_energy_mj"] = (
            None if self.total_energy_mj is None else round(self.total_energy_mj, 6)
        )
        for k, kr in zip(d["kernels"], self.kernels):
            k["time_ms"] = round(kr.time_ms, 6)
        return d

    def to_json(self) -> str:
        """The whole report, with a schema version, as deterministic JSON."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)
