"""How the port's code runs a region's loops, for the launches of a region: how many source
iterations nvcc unrolls into one trip of each loop a thread body runs (eq. (12u),
``compute.loop_unroll``) and the control and address instructions the SASS keeps per
iteration of a loop bounded by a run-time size (``runtime_trips.RuntimeTrip``).

Both read the trace's loop counts over all launches and each loop's growth to the work size,
so a region's launches share them (``LaunchContext.loops``, found once a context).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from ..compute import loop_unroll
from ..frontend.tracefile import Trace
from ..memory.shared import StagedAccess
from ..runtime_trips import RuntimeTrip, data_exit, loop_iterations, loop_trip_at
from ..scaling import TripModel

__all__ = ["RegionLoops", "loop_unroll_at", "region_loops", "strip_unroll", "trip"]


def trip(model: TripModel, sizes: dict[str, int]) -> float:
    """A loop's trips at ``sizes`` (0 at the least), or the model's constant when ``sizes``
    lack one of its macros."""
    try:
        return max(model(sizes), 0.0)
    except KeyError:
        return model.alpha


def loop_unroll_at(trace: Trace, loop: int, ratio: float = 1.0) -> int:
    """How many source iterations the SASS of loop ``loop`` of ``trace`` runs a trip, its
    iterations an entry grown by ``ratio`` to the work size: a loop of at most UNROLL_WHOLE
    iterations an entry (a strip-mined tile loop) is one of constant trip count in the port's
    code, unrolled whole (compute.loop_unroll); a longer one is bounded by a size, a run-time
    parameter of the port, and unrolled 16 or 4 times (loop_trip_at). 1 for straight-line
    code (loop -1) and a loop with a data-dependent exit (loop_exits, eq. (12x))."""
    if loop < 0 or data_exit(trace, loop):
        return 1
    bounded = loop_trip_at(trace, loop, ratio)
    if bounded is not None:
        return bounded.depth
    return loop_unroll(loop_iterations(trace, loop, ratio))


def strip_unroll(shared_spec: tuple | None, staged: tuple[StagedAccess, ...], halo: object
                 ) -> dict[int, int]:
    """The unrolling of a loop the modelled tiling strip-mines (staging on a loop that is
    not strip-mined: a phase every ``divisor`` iterations, staging.staging_setup): the
    strip's iterations are a constant (the tile width), which nvcc unrolls as it does a tiled
    source's strip loop (compute.loop_unroll: whole up to UNROLL_WHOLE). None for a halo
    tile or a launch with nothing staged."""
    if halo is not None or not staged or shared_spec is None:
        return {}
    tile_loop, _, _, divisor = shared_spec[:4]
    return {tile_loop: loop_unroll(divisor)} if divisor > 1 else {}


@dataclass(frozen=True)
class RegionLoops:
    """The loops a region's thread bodies run: each one's unroll (``unrolls``; 1 where
    absent) and its trip at the work size (``trips``; None: not bounded by a run-time size,
    or a strip-mined tile loop, a constant one)."""

    unrolls: Mapping[int, int]
    trips: Mapping[int, RuntimeTrip | None]

    def unroll(self, loop: int) -> int:
        """How many iterations nvcc unrolls loop ``loop`` into one trip (loop_unroll_at)."""
        return self.unrolls.get(loop, 1)

    def kept(self, loop: int, cls: str = "all") -> float | None:
        """Instructions of class ``cls`` per source iteration the SASS keeps of loop
        ``loop``'s control and addresses (runtime_trips.RuntimeTrip), None when the loop is
        not bounded by a run-time size (its affine share is folded per unrolled trip)."""
        bounded = self.trips.get(loop)
        return None if bounded is None else bounded.per_iteration(cls)


def region_loops(trace: Trace, loop_ids: Iterable[int], ratio: Callable[[int], float],
                 strips: Mapping[int, int]) -> RegionLoops:
    """The RegionLoops of the loops ``loop_ids`` (-1, straight-line code, skipped), each grown
    by ``ratio(loop)`` to the work size; ``strips``: the strip-mined loops' unrolls
    (strip_unroll), which replace theirs."""
    ids = [lid for lid in loop_ids if lid >= 0]
    unrolls = {lid: loop_unroll_at(trace, lid, ratio(lid)) for lid in ids}
    trips = {lid: None if lid in strips else loop_trip_at(trace, lid, ratio(lid)) for lid in ids}
    return RegionLoops(unrolls | dict(strips), trips)
