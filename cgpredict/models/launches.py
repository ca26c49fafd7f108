"""The launch stream: what the host pays around a kernel's launches, apart from the GPU work.

A port launches each kernel from the host, once or in a host loop. What a host timer sees
besides the kernels' own work depends on how the host waits (``--sync``):

* ``each``: the host synchronises after every launch (``cudaDeviceSynchronize``, as 17 of
  the 19 PolyBench/GPU benchmarks do). Every launch is a round trip: the launch call, the
  GPU's start, the completion seen by the host: ``launch_sync_us`` per launch.
* ``end``: launches are queued back to back and the host waits once, after the last one
  (PolyBench/GPU's MVT and 3DCONV). Queued launches follow each other without a round trip,
  but each still costs the GPU its dispatch, ramp-up and drain, since a kernel in a stream
  starts only when the previous one has finished: ``launch_gap_us`` a launch on top of its
  work (the interval between back-to-back launches of empty kernels). The program's first
  launch is a round trip instead (``launch_sync_us``: the host waits once), so a program of
  one launch costs the same under both modes.

Apart from the launches, the first launch of a program loads the module its kernels share
(CUDA lazy loading loads a module at the first use of any kernel in it; a port's kernels are
one ``.cu`` file, one module): ``first_launch_us``, once per program, carried by the
kernel launched first (``module_load_ms``; issue 24: charged once per kernel before, it
over-charged every program of several kernels). The three costs are reported apart from the
kernel's work (``KernelTime``), so a sweep or a comparison can take the work alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cgpredict.devices import GPUDevice

__all__ = [
    "DEFAULT_SYNC",
    "SYNC_MODES",
    "KernelTime",
    "kernel_time",
    "module_load_ms",
    "program_sync_ms",
]

#: how the host waits for its launches (module docstring)
SYNC_MODES = ("each", "end")
#: a first port's choice: synchronise after each launch, as PolyBench/GPU does
DEFAULT_SYNC = "each"


@dataclass(frozen=True)
class KernelTime:
    """One kernel's time at the work size, in parts: the GPU's work over every launch, what
    the launches add (round trips or the queued-launch floor) and the one-off module load."""

    kernel_ms: float
    launch_ms: float
    once_ms: float

    @property
    def total_ms(self) -> float:
        return self.kernel_ms + self.launch_ms + self.once_ms


def check_sync(sync: str) -> str:
    """``sync`` itself when it is a known mode, else ValueError naming the modes."""
    if sync not in SYNC_MODES:
        raise ValueError(f"unknown --sync {sync!r}: want one of {', '.join(SYNC_MODES)}")
    return sync


def kernel_time(
    launches: Sequence[tuple[float, float]], device: GPUDevice, sync: str = DEFAULT_SYNC
) -> KernelTime:
    """The parts of one kernel's time from (work of one launch in ms, launches it stands for)
    pairs: per launch ``launch_sync_us`` (``each``) or ``launch_gap_us`` (``end``), and
    ``first_launch_us`` once when the kernel is launched at all, as if it were launched
    first (the program keeps one: module_load_ms)."""
    check_sync(sync)
    work = sum(w * t for t, w in launches)
    per_launch = device.launch_sync_us if sync == "each" else device.launch_gap_us
    extra = sum(w for _, w in launches) * per_launch * 1e-3
    once = device.first_launch_us * 1e-3 if launches else 0.0
    return KernelTime(kernel_ms=work, launch_ms=extra, once_ms=once)


def program_sync_ms(device: GPUDevice, sync: str, launches: float) -> float:
    """What a program whose launches are queued (``end``) pays once: its first launch is a
    host round trip (``launch_sync_us``), not a queued launch (``launch_gap_us``, already
    counted with the kernel's launches). Nothing under ``each``, or without launches."""
    check_sync(sync)
    if sync != "end" or launches <= 0:
        return 0.0
    return max(device.launch_sync_us - device.launch_gap_us, 0.0) * 1e-3


def module_load_ms(parts: Sequence[KernelTime]) -> float:
    """What a program's kernels pay once together for loading their module: one
    ``first_launch_us``, however many kernels it launches (each part's ``once_ms`` is that
    cost, or 0 for a kernel never launched)."""
    return max((p.once_ms for p in parts), default=0.0)
