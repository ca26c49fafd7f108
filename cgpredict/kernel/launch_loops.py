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

from ..compute import UNROLL_WHOLE, loop_unroll
from ..frontend.tracefile import Trace
from ..memory.shared import StagedAccess
from ..runtime_trips import RuntimeTrip, data_exit, loop_iterations, loop_trip_at
from ..scaling import TripModel

__all__ = ["RegionLoops", "loop_unroll_at", "region_loops", "sized_loops", "strip_unroll", "trip",
           "unrolled_whole"]


def trip(model: TripModel, sizes: dict[str, int]) -> float:
    """A loop's trips at ``sizes`` (0 at the least), or the model's constant when ``sizes``
    lack one of its macros."""
    try:
        return max(model(sizes), 0.0)
    except KeyError:
        return model.alpha


def sized_loops(trips: Mapping[int, TripModel]) -> frozenset[int]:
    """The loops whose trip count grows with a size macro (TripModel.sized): run-time trips in
    the port whatever their count at the work size (eq. (12sz))."""
    return frozenset(lid for lid, m in trips.items() if m.sized)


def loop_unroll_at(trace: Trace, loop: int, ratio: float = 1.0, sized: bool = False) -> int:
    """How many source iterations the SASS of loop ``loop`` of ``trace`` runs a trip, its
    iterations an entry grown by ``ratio`` to the work size: a loop of at most UNROLL_WHOLE
    iterations an entry (a strip-mined tile loop) is one of constant trip count in the port's
    code, unrolled whole (compute.loop_unroll); a longer one is bounded by a size, a run-time
    parameter of the port, and unrolled 16 or 4 times (loop_trip_at). 1 for straight-line
    code (loop -1) and a loop with a data-dependent exit (loop_exits, eq. (12x)). ``sized``:
    the loop's trip count grows with a size macro, a run-time trip however short (12sz)."""
    if loop < 0 or data_exit(trace, loop):
        return 1
    return _unroll(trace, loop, ratio, loop_trip_at(trace, loop, ratio, sized))


def _unroll(trace: Trace, loop: int, ratio: float, bounded: RuntimeTrip | None) -> int:
    """loop_unroll_at of a loop without a data exit whose loop_trip_at is ``bounded``."""
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


def unrolled_whole(trace: Trace, loop: int, ratio: float = 1.0, sized: bool = False) -> bool:
    """Whether nvcc unrolls loop ``loop`` whole (eq. (12wu)): a constant trip count (not
    ``sized``, no loaded bound, no data exit) of at most UNROLL_WHOLE iterations an entry,
    the same at every entry (a whole number on average): its copies name the induction as
    an immediate, so the SASS keeps no control and no index arithmetic of it."""
    if loop < 0 or sized or data_exit(trace, loop):
        return False
    return _whole(trace, loop, ratio, loop_trip_at(trace, loop, ratio))


def _whole(trace: Trace, loop: int, ratio: float, bounded: RuntimeTrip | None) -> bool:
    """unrolled_whole of a loop, not sized and without a data exit, whose loop_trip_at is
    ``bounded``: none, and a whole number of at most UNROLL_WHOLE iterations an entry."""
    if bounded is not None:
        return False
    n = loop_iterations(trace, loop, ratio)
    return 1 <= n <= UNROLL_WHOLE and abs(n - round(n)) < 1e-9


@dataclass(frozen=True)
class RegionLoops:
    """The loops a region's thread bodies run: each one's unroll (``unrolls``; 1 where
    absent) and its trip at the work size (``trips``; None: not bounded by a run-time size,
    or a strip-mined tile loop, a constant one)."""

    unrolls: Mapping[int, int]
    trips: Mapping[int, RuntimeTrip | None]
    whole: frozenset[int] = frozenset()  # loops unrolled whole (unrolled_whole, (12wu))

    def unroll(self, loop: int) -> int:
        """How many iterations nvcc unrolls loop ``loop`` into one trip (loop_unroll_at)."""
        return self.unrolls.get(loop, 1)

    def kept(self, loop: int, cls: str = "all") -> float | None:
        """Instructions of class ``cls`` per source iteration the SASS keeps of loop
        ``loop``'s control and addresses (runtime_trips.RuntimeTrip), None when the loop is
        not bounded by a run-time size (its affine share is folded per unrolled trip); 0 for
        a loop unrolled whole, whose control and index the SASS does not keep (12wu)."""
        if loop in self.whole:
            return 0.0
        bounded = self.trips.get(loop)
        return None if bounded is None else bounded.per_iteration(cls)


def region_loops(trace: Trace, loop_ids: Iterable[int], ratio: Callable[[int], float],
                 strips: Mapping[int, int], sized: frozenset[int] = frozenset()) -> RegionLoops:
    """The RegionLoops of the loops ``loop_ids`` (-1, straight-line code, skipped), each grown
    by ``ratio(loop)`` to the work size; ``strips``: the strip-mined loops' unrolls
    (strip_unroll), which replace theirs; ``sized``: the loops bounded by a size (sized_loops,
    eq. (12sz))."""
    ids = [lid for lid in loop_ids if lid >= 0]
    exits = {lid for lid in ids if data_exit(trace, lid)}
    # each loop's trip found once (loop_trip_at: None for a data exit), its unroll and
    # whether it is unrolled whole (12wu) read from it
    bounded = {lid: loop_trip_at(trace, lid, ratio(lid), lid in sized) for lid in ids}
    unrolls = {lid: 1 if lid in exits else _unroll(trace, lid, ratio(lid), bounded[lid])
               for lid in ids}
    trips = {lid: None if lid in strips else bounded[lid] for lid in ids}
    whole = frozenset(lid for lid in ids if lid not in strips and lid not in sized
                      and lid not in exits and _whole(trace, lid, ratio(lid), bounded[lid]))
    return RegionLoops(unrolls | dict(strips), trips, whole)
