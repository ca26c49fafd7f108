"""What the analyses of one trace keep for the next (``AnalysisMemo``), owned by its
``prepared.Prepared``: the advisor re-analyses a trace with every fix, a sweep with every
block shape and device, and most of the work depends on the trace alone.

Ten kinds of entries, each in a dictionary of its own:

* ``kernels``: a region's whole report, per device and per the options that matter to it
  (``trace_analysis``);
* ``warps``: the pseudo-warps of a launch in its first block shape (``kernel.analysis``; a
  sweep's other shapes are analysed once each and not kept, their events would pile up);
* ``launch_parts``: what ``warps.form_warps`` finds of a launch whatever the block shape (its
  mapped events, threads, inter-thread dependence, (W5) rank shifts and warp order), keyed by
  ``(part, region, launch, grid_dims)``; the dependences go to the on-disk cache too
  (``trace_store``);
* ``restores``: the stores a launch writes back to the same address in the same thread
  (``port.restoring_stores``) with no layout change, keyed by ``(region, launch, grid_dims)``:
  they count distinct (pseudo-thread, address) pairs, and every block shape numbers the same
  pseudo-threads one to one (a lane of a warp each), so the count is the same in every shape;
  a layout change decides anew only the stores of the arrays it moves
  (``kernel_analysis._restores``);
* ``reloads``: the loads of a launch that reload what its restoring stores wrote
  (``port.reloading_loads``), keyed by ``(region, launch, grid_dims, restores)``: decided
  from (pseudo-thread, address) pairs as the restores are, so the same in every block shape;
  a layout change decides anew only the loads it moves (``kernel.reloads``);
* ``counts``: a launch's per-thread counts, instruction counts, folded instructions and
  ILP/MLP (``kernel.launch.LaunchCounts``), keyed by ``LaunchCountsKey`` (region, trace row,
  grid, rows a thread, block scales, strip unrolls, work sizes): a block shape or a layout
  change leaves them as they were (GRAMSCHMIDT: 514 launches in each of a dozen analyses);
* ``rows``: a region's launches in the trace (``kernel.launch_parts.LaunchRow``: each its
  arrays still in the L2 from earlier launches and its counts' key), keyed by ``(region,
  work sizes, L2 bytes kept)``: a function of the trace that every analysis walks
  (GRAMSCHMIDT: 1536 launches);
* ``bodies``: a region's thread bodies on a grid (``parallelism.thread_bodies``, a pure
  function of the trace), keyed by ``(region, grid_dims)``, with the critical paths they
  have found (``ThreadBodies.chains``);
* ``lanes``: a region's trip records as eq. (D1) reads them (``kernel.launch_parts.
  RegionTrips``, keyed by ``("records", region, grid_dims)``) and the lane factors F_L of
  each launch, keyed by ``("launch", region, grid_dims, row, span, traced grid)`` (or
  ``"pooled"`` without the row): a function of the records and the span, which block shapes
  and fixes share (GRAMSCHMIDT's advise: 513 distinct of 5,641 asked);
* ``one_d``: the report of a 1-D region analysed under a 2-D block, for every other 2-D
  block (a block sweep of a program whose other kernels are 2-D), less the warning that
  names the block, with where that warning stood (``trace_analysis._keep_one_d``).

What the memory analysis derives from a pseudo-warp trace (patterns, transactions in issue
order) lives with that trace (``WarpTrace.derived``), so it goes when the trace goes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .block import Block
from .devices import GPUDevice
from .kernel.launch import LaunchCounts, LaunchCountsKey
from .kernel.launch_parts import LaunchRow
from .parallelism import ThreadBodies
from .prediction import KernelReport
from .warps import WarpTrace

__all__ = ["AnalysisMemo", "BodiesKey", "KernelKey", "LaunchPartKey", "OneDKey", "ReloadsKey",
           "RestoresKey", "RowsKey", "WarpsKey"]

#: (region, device, repr of the options that matter to the region)
KernelKey = tuple[int, GPUDevice, str]
#: (region, launch, grid asked for (0: chosen), 2-D block, 1-D block)
WarpsKey = tuple[int, int, int, Block, Block]
#: ("mapped" | "threads" | "dependence" | "remainder" | "ordered", region, launch, grid_dims)
LaunchPartKey = tuple[str, int, int, int]
#: (region, launch, grid_dims)
RestoresKey = tuple[int, int, int]
#: (region, launch, grid_dims, the restoring stores)
ReloadsKey = tuple[int, int, int, frozenset[int]]
#: (region, work sizes, bytes an L2 keeps between launches)
RowsKey = tuple[int, tuple[tuple[str, int], ...], float]
#: (region, grid_dims)
BodiesKey = tuple[int, int]
#: (region, device, repr of the options with no block, "1-D")
OneDKey = tuple[int, GPUDevice, str, str]


@dataclass(eq=False)
class AnalysisMemo:
    """The memo of one trace's analyses (see the module docstring); ``stored``: the
    dependences already in the on-disk cache."""

    kernels: dict[KernelKey, KernelReport] = field(default_factory=dict)
    warps: dict[WarpsKey, WarpTrace] = field(default_factory=dict)
    launch_parts: dict[LaunchPartKey, object] = field(default_factory=dict)
    stored: set[LaunchPartKey] = field(default_factory=set)
    restores: dict[RestoresKey, frozenset[int]] = field(default_factory=dict)
    reloads: dict[ReloadsKey, frozenset[int]] = field(default_factory=dict)
    counts: dict[LaunchCountsKey, LaunchCounts] = field(default_factory=dict)
    rows: dict[RowsKey, tuple[LaunchRow, ...]] = field(default_factory=dict)
    bodies: dict[BodiesKey, ThreadBodies] = field(default_factory=dict)
    one_d: dict[OneDKey, tuple[KernelReport, int]] = field(default_factory=dict)
    lanes: dict[tuple, object] = field(default_factory=dict)

    def has_warps_of(self, region: int, launch: int, grid: int) -> bool:
        """Whether pseudo-warps of this launch and grid are kept, in any block shape."""
        return any(k[:3] == (region, launch, grid) for k in list(self.warps))

    def dependences(self) -> dict[LaunchPartKey, object]:
        """The launches' inter-thread dependences found so far (``warps.Dependence`` or
        None each)."""
        return {k: v for k, v in list(self.launch_parts.items()) if k[0] == "dependence"}
