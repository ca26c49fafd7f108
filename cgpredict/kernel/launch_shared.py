"""The shared memory of a tiled launch (SPEC §2.6): its shared loads by bank conflict, its
tile phases, barriers and staging code per thread, from the launch's per-thread counts and
the region's staging (``LaunchContext.staged``, ``shared_spec``: staging.staging_setup) or
its halo tile (halo.py).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..halo import halo_counts
from ..memory.staging_code import phase_sectors, staging_code
from ..profile import SharedMemoryCounts, StagingCounts

__all__ = ["shared_counts", "tile_phases", "tiled_staging_code"]


def shared_counts(ctx, row: int, per_thread: Mapping[int, float], threads: float
                  ) -> tuple[SharedMemoryCounts, float]:
    """SharedMemoryCounts and barriers per thread of trace row ``row`` of ``ctx``
    (launch.LaunchContext): a halo tile's (halo_counts), else a staged tiling's: per staged
    load its elements read a thread split by its bank conflicts (each shared load reads
    ``vector`` elements), the tile phases' staging loads, L2 and DRAM sectors, and two
    barriers a phase; none untiled."""
    if ctx.halo is not None:
        h = ctx.trace.header
        return halo_counts(ctx.halo, per_thread, lambda sid: h.mem[sid].block)
    if not ctx.staged or ctx.shared_spec is None:
        return SharedMemoryCounts(), 0.0
    _, loads_per_phase, nbytes = ctx.shared_spec[:3]
    phases = tile_phases(ctx, row, threads)
    by_x: dict[float, float] = {}
    h = ctx.trace.header
    waves = 0.0
    for a in ctx.staged:
        count = per_thread.get(h.mem[a.sid].block, 0.0)  # elements read per thread
        total = sum(c for _, c in a.conflicts)
        for x, c in a.conflicts:  # shared loads (vectors of a.vector elements)
            by_x[float(x)] = by_x.get(float(x), 0.0) + count * c / total / a.vector
        waves += count * a.wavefronts
    sectors = phases * phase_sectors(ctx.shared_spec[4])
    counts = SharedMemoryCounts(
        load_insts=phases * loads_per_phase,
        insts_by_conflict=tuple(sorted(by_x.items())),
        bytes_per_block=nbytes,
        wavefronts=waves,
        load_l2_trans=sectors,
        load_dram_trans=min(ctx.shared_spec[5], sectors),
    )
    return counts, 2.0 * phases


def tile_phases(ctx, row: int, threads: float) -> float:
    """Tile phases per thread of trace row ``row`` of a tiled ``ctx`` at the work size: the
    tile loop's iterations a thread, grown to the work size, over the iterations a phase."""
    tile_loop, _, _, divisor = ctx.shared_spec[:4]
    iters = float(ctx.trace.loop_iters[row, tile_loop])
    return (iters / threads if threads else 0.0) * ctx.ratio(tile_loop) / divisor


def tiled_staging_code(ctx, row: int, threads: float) -> StagingCounts:
    """The staging code per thread of trace row ``row`` of a staged tiling
    (memory.staging_code); none for a halo tile or an untiled launch."""
    if ctx.halo is not None or not ctx.staged or ctx.shared_spec is None:
        return StagingCounts()
    return staging_code(ctx.shared_spec[4], tile_phases(ctx, row, threads))
