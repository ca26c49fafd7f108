"""What a cudaEvent pair around each launch counts besides the GPU's work (issue 24).

The own ports (validation/cuda/common.cuh, ``run_bench``) re-upload their inputs, synchronise,
then record for every launch an event, the launch, an event, with no synchronisation between
launches. An event is time-stamped when the GPU reaches it in the stream. So:

* when the GPU is idle as the first event of a launch is recorded (the first launch of a
  repetition; a later one when the kernel before it ran shorter than the host's cadence),
  the first event is stamped at once and the GPU then waits for the host's launch call: the
  pair counts the host's launch latency, ``launch_call_us``;
* when the GPU is still busy with the launch before, the first event is stamped as that
  kernel ends and the next kernel is already queued: the pair counts the GPU's own start of a
  queued launch, ``launch_gap_us``, and the work alone;
* the first launch call after a pageable ``cudaMemcpy`` of a large array returns late
  (``upload_launch_us`` more; measured with a host clock around the call). A run whose
  repetition ends its re-upload with such a copy pays it on its first launch; one whose
  re-upload makes such a copy and then a ``cudaMemset`` pays the part the memset leaves,
  ``upload_memset_launch_us`` (eq. (E6), ``first_call_late_us``).

The stream is a recurrence over the launches in issue order (eq. (E1)-(E3), docs/models.md):
with ``h`` the host time at which a launch's first event reaches the GPU, ``d`` the host's
time from that event to the launch (its launch call) and ``g`` the time the GPU finishes the
launch before,

    stamp = max(h, g);  start = max(h + d, g);  end = start + w           (E1)
    pair  = end - stamp = w + max(0, h + d - max(h, g))                    (E2)
    h <- h + d + (P - d');  g <- end                                       (E3)

``d``: for the first launch of a repetition, the host's launch call after a synchronisation
(``launch_call_us``, what an idle GPU's event pair counts over a queued one, plus
``upload_launch_us`` after a large pageable upload, ``upload_memset_launch_us`` when a memset
followed it: eq. (E6)); for a later launch ``d'``, the call in a
running loop. ``P``: the host's period of one iteration of the timed loop (event, launch,
event), ``loop_launch_us``; the host spends ``P - d'`` between a launch call and the next
launch's first event. Without ``loop_launch_us`` a later launch comes every
``launch_gap_us`` (``d' = P = launch_gap_us``): a later launch's ``w``, which holds the gap,
never waits. ``w``: the launch's work on the GPU with its queued start (kernel time +
``launch_gap_us``). The first launch (h = g = 0) counts ``d`` whole.

In a loop of equal launches the pairs settle at (E4): ``w`` when the GPU is the slower
(``w >= P``), the host's period ``P`` when it is the slower but the GPU still busy as the
next first event arrives (``w < P < d' + w``: the pairs tile the time), ``d' + w`` when the
GPU idles between launches (``P >= d' + w``):

    pair = max(w, min(P, d' + w))                                          (E4)

Measured (validation/ubench/loop_probe.cu, docs/models.md (E4m)): the GPU idles 1.3-1.4 us
between a short launch's second event and the next one's first, so the pairs do not tile at
the host's period; a short launch's pair is the host's time from one event record to the
next, D = the period less one record, pair = max(w, min(P, max(D, d' + w))) with a small
``d'``. That sums to the same max(w, D) for a launch below D, so ``loop_launch_us`` is D and
the recurrence is kept.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from cgpredict.devices import GPUDevice

__all__ = [
    "EventWaits",
    "event_timed_ms",
    "event_waits",
    "first_call_late_us",
    "host_paced_range",
    "host_paced_share",
    "issue_order",
    "loop_call_ms",
    "upload_is_large",
]


@dataclass(frozen=True)
class EventWaits:
    """What the event pairs of one run count of the host's launch calls, in ms: the calls
    the GPU waited for (``host_ms``, eq. (E2) summed over the launches) and, of those, the
    first call's extra after the reset's pageable upload (``upload_ms``, eq. (E6))."""

    host_ms: float
    upload_ms: float

    @property
    def total_ms(self) -> float:
        return self.host_ms + self.upload_ms


def issue_order(kernels: Sequence[tuple[float, int]]) -> list[float]:
    """Every launch's work (ms) in the order the host issues them, from (work of one launch
    in ms, launches) per kernel in program order: kernels launched the same number of times
    (more than once) are taken as one host loop, interleaved launch by launch; otherwise
    each kernel's launches follow the previous kernel's."""
    counts = {n for _, n in kernels if n > 0}
    if len(counts) == 1 and counts.pop() > 1:
        n = kernels[0][1]
        return [w for _ in range(n) for w, m in kernels if m > 0]
    return [w for w, n in kernels for _ in range(n)]


def upload_is_large(device: GPUDevice, reset: str, reset_bytes: int | None) -> bool:
    """Whether a repetition's re-upload leaves the first launch call late: it ends with a
    pageable upload (``reset == "upload"``) of at least ``upload_launch_min_bytes`` (a copy
    of unknown size counts as large)."""
    if reset != "upload" or device.upload_launch_us <= 0:
        return False
    return reset_bytes is None or reset_bytes >= device.upload_launch_min_bytes


def first_call_late_us(device: GPUDevice, reset: str, reset_bytes: int | None,
                       upload_bytes: int | None = None) -> float:
    """What a repetition's first launch call takes more after its re-upload, in us, eq. (E6):
    ``upload_launch_us`` when the re-upload ends with a large pageable copy; when it makes
    pageable copies of at least ``upload_launch_min_bytes`` in all (``upload_bytes``) and
    then a ``cudaMemset`` (``reset == "memset"``), the part of that late call the memset
    leaves, ``upload_memset_launch_us``; else nothing."""
    if upload_is_large(device, reset, reset_bytes):
        return device.upload_launch_us
    if reset != "memset" or not upload_bytes:
        return 0.0
    if upload_bytes < device.upload_launch_min_bytes:
        return 0.0
    return device.upload_memset_launch_us  # (E6)


def loop_call_ms(device: GPUDevice) -> tuple[float, float]:
    """(``d'``, ``P``) of eq. (E3) in ms: a running loop's launch call and the host's period
    of one timed iteration (``loop_launch_us``, the call at most that); without it, both
    ``launch_gap_us`` (a loop's launches come at least as fast as the GPU takes them)."""
    if device.loop_launch_us > 0:
        period = device.loop_launch_us * 1e-3
        return min(device.launch_call_us * 1e-3, period), period
    gap = device.launch_gap_us * 1e-3
    return gap, gap


def event_waits(works_ms: Sequence[float], device: GPUDevice,
                late_us: float = 0.0) -> EventWaits:
    """The host launch waits that event pairs count over ``works_ms`` (each launch's work in
    issue order, ``launch_gap_us`` included), eq. (E1)-(E3); ``late_us``: what the first
    launch call takes more after the reset's pageable upload (first_call_late_us, (E6))."""
    if isinstance(late_us, bool):  # the former after_upload flag: refuse, not 1 us
        raise TypeError("late_us is microseconds (first_call_late_us), not a flag")
    extra = late_us * 1e-3
    first = device.launch_call_us * 1e-3 + extra
    later, period = loop_call_ms(device)
    h = g = 0.0
    waited = 0.0
    step = period - later
    for i, w in enumerate(works_ms):  # a launch a step: max() as comparisons (tens of
        d = first if i == 0 else later  # thousands of launches an analysis), same values
        stamp = g if g > h else h  # max(h, g)
        hd = h + d
        start = g if g > hd else hd  # max(h + d, g)
        waited += start - stamp  # eq. (E2): the pair less the work
        h, g = hd + step, start + w  # eq. (E3)
    upload = extra if works_ms else 0.0
    return EventWaits(host_ms=max(waited - upload, 0.0), upload_ms=upload)


def event_timed_ms(kernels: Sequence[tuple[float, int]], device: GPUDevice,
                   late_us: float = 0.0) -> tuple[float, EventWaits]:
    """What the ports' event pairs sum to over one run, from (GPU work of every launch of the
    kernel in ms, launches) per kernel in program order: each launch's work and queued start
    (``launch_gap_us``) plus the host launch waits of eq. (E1)-(E3); and those waits."""
    gap = device.launch_gap_us * 1e-3
    per_launch = [(ms / n + gap, n) for ms, n in kernels if n > 0]
    waits = event_waits(issue_order(per_launch), device, late_us)
    return sum(w * n for w, n in per_launch) + waits.total_ms, waits


def host_paced_share(total_ms: float, waits: EventWaits, device: GPUDevice) -> float:
    """The share (0-1) of an event-timed run that is later launches waiting for the host's
    loop period, eq. (E4) (a launch shorter than ``loop_launch_us``), from the run's time
    ``total_ms`` and ``waits`` as event_timed_ms gave them (so that a row's note and its
    predicted time are one computation): the part set by the host's pace, which varies by a
    third between runs (docs/validation.md, "Host loops split"), not by the GPU. The first
    launch's call (one a run) is not counted."""
    if total_ms <= 0:
        return 0.0
    first = device.launch_call_us * 1e-3  # eq. (E2) for h = g = 0: the whole call
    return max(waits.host_ms - first, 0.0) / total_ms


def host_paced_range(kernels: Sequence[tuple[float, int]], device: GPUDevice,
                     late_us: float = 0.0) -> tuple[float, float] | None:
    """The event-timed run (ms) at the least and largest host period measured over leases'
    hosts (``loop_launch_lo_us``, ``loop_launch_hi_us``), eq. (E4s): the spread a host-paced
    prediction carries, since the host's pace is the run's VM, not the device; None where
    the device gives no range."""
    lo, hi = device.loop_launch_lo_us, device.loop_launch_hi_us
    if not (lo and hi and device.loop_launch_us):
        return None
    at = [event_timed_ms(kernels, dataclasses.replace(device, loop_launch_us=p),
                         late_us)[0] for p in (lo, hi)]  # eq. (E4s)
    return at[0], at[1]
