"""What a measurement's timer sees of a prediction (issue 24): the host clock around the
launches and the last synchronisation sees the whole run; a cudaEvent pair around each launch
(the project's ports, validation/cuda/common.cuh) sees each launch's work, its queued start and
the host's calls the idle GPU waited for (eqs. (E1)-(E4), models/event_timing.py), and the
first launches' write-back of the dirty L2 lines the port's reset left (eq. (E5),
models/dirty_l2.py). ``cgpredict validate`` compares each measured row with this view."""

from __future__ import annotations

from collections.abc import Sequence

from cgpredict.devices import GPUDevice

from .dirty_l2 import launch_figures, writeback_ms
from .event_timing import EventWaits, event_timed_ms, host_paced_range, host_paced_share


def timed_ms(report, timer: str, device: GPUDevice | None = None,
             late_us: float = 0.0, dirty_bytes: float = 0.0,
             memset_bytes: int | None = None) -> float:
    """What a timer of kind ``timer`` sees of a prediction (event_timed's time)."""
    return event_timed(report, timer, device, late_us, dirty_bytes, memset_bytes)[0]


def event_timed(report, timer: str, device: GPUDevice | None = None,
                late_us: float = 0.0, dirty_bytes: float = 0.0,
                memset_bytes: int | None = None) -> tuple[float, EventWaits | None]:
    """What a timer of kind ``timer`` sees of a prediction: everything the host waits for,
    or (a cudaEvent pair around each launch, validation/cuda/common.cuh) each launch's work,
    the GPU's own start of a queued launch (``launch_gap_us``) and the host's launch calls
    the GPU waited for (models/event_timing.py, eq. (E1)-(E3); ``late_us``: what the first
    call takes more after the reset's pageable upload, eq. (E6)), and the first launches'
    write-back of the ``dirty_bytes`` the reset's memset of ``memset_bytes`` left in the L2
    (models/dirty_l2.py, eq. (E5)): no host round trip, no module load. Without a device,
    the work alone. With it, the event pairs' host waits (None for a host timer or no
    device), which host_note reads rather than timing the launches again."""
    if timer == "host":
        return report.total_ms, None
    if device is None:
        return sum(k.kernel_ms for k in report.kernels), None
    kernels = [(k.kernel_ms, k.launches) for k in report.kernels]
    total, waits = event_timed_ms(kernels, device, late_us)
    if dirty_bytes > 0:  # eq. (E5)
        total += writeback_ms(launch_figures(report.kernels), device, dirty_bytes,
                              memset_bytes)
    return total, waits


#: an event-timed row whose later launches wait this share of its time or more for the host's
#: loop period (eq. (E4): the loop's mean launch is shorter than the period, so the pairs
#: tile at the host's pace) is noted: that share is the host's, not the GPU's
HOST_PACED_NOTE = 0.01


def host_note(timed: float, waits: EventWaits | None, device: GPUDevice,
              kernels: Sequence[tuple[float, int]] = (), late_us: float = 0.0) -> str:
    """The note of an event-timed row the host's loop period sets (``host pace N % (E4)``,
    N the share of its predicted time, and the run's time at the least and largest host
    period measured, eq. (E4s)), else ""; from the row's predicted time and host waits as
    event_timed gave them (``waits`` None: host-timed, never noted) and its ``kernels``
    ((kernel ms, launches) pairs) for the range."""
    if waits is None:
        return ""
    share = host_paced_share(timed, waits, device)
    if share < HOST_PACED_NOTE:
        return ""
    span = host_paced_range(kernels, device, late_us) if kernels else None  # (E4s)
    if span is None:
        return f"host pace {100 * share:.0f} % (E4)"
    return (f"host pace {100 * share:.0f} % (E4), {_fig(span[0])}-{_fig(span[1])} ms at "
            f"the leases' hosts (E4s)")


def _fig(x: float) -> str:
    """A range end, 3 significant digits (the spread is tens of per cent)."""
    return f"{x:.3g}"
