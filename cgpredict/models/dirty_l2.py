"""What the L2's dirty lines that a port's reset leaves cost its first launches (issue 24).

The own ports (validation/cuda/common.cuh, ``run_bench``) zero their outputs with a
``cudaMemset`` in the reset before every timed repetition. A memset (or a kernel's stores)
leaves up to ``l2_dirty_max_bytes`` of dirty lines in the L2; a pageable ``cudaMemcpy``
leaves none (validation/measured/h100-lease-2026-11-28/README.md, ``dirty/``). The next launch
writes them back as its reads evict them, ``l2_dirty_evict_share`` of a byte a DRAM byte read
(``evict/``), and a launch whose DRAM traffic bounds its time takes longer by the written-back
bytes (eq. (E5), docs/models.md):

    D_0 = min(memset bytes, l2_dirty_max_bytes)                                   (E5a)
    b_i = min(D_{i-1}, s x R_i);  D_i = D_{i-1} - b_i                             (E5b)
          (less the zeroed lines a launch stores before they are evicted: evicted_bytes)
    x_i = max(0, stream_i + b_i x f / r - cycles_i)                               (E5c)

over the launches i of a repetition in issue order, ``R_i`` a launch's DRAM read bytes,
``stream_i`` its DRAM bytes at the stream's bandwidth (its DRAM bound less the waves' latency,
``dram_wave_cycles``) and ``cycles_i`` its predicted cycles (models/bounds.py), ``f`` the SM
clock and ``r`` the DRAM's rate for written-back bytes (``l2_writeback_gbps``; 0: the stream's
``dram_bandwidth_gbps``). A launch whose bytes leave the DRAM's bandwidth idle part of the
time (compute-, latency- or L2-bound) hides them (x = 0); the dirty bytes are shared: only the
first launches pay, until D is spent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cgpredict.devices import GPUDevice

from .event_timing import issue_order

__all__ = ["LaunchDram", "evicted_bytes", "launch_figures", "reset_dirty_bytes", "writeback_ms"]


@dataclass(frozen=True)
class LaunchDram:
    """One launch's figures that its write-back cost needs (models/bounds.py): its predicted
    cycles, its DRAM bytes' cycles at the stream's bandwidth and the bytes it reads."""

    cycles: float
    stream_cycles: float
    read_bytes: float


def reset_dirty_bytes(device: GPUDevice, reset: str, memset_bytes: int | None) -> float:
    """Eq. (E5a): the dirty L2 bytes a repetition's reset leaves, from the bytes its
    ``zero()`` calls set (validation/port_resets.py); a memset reset of unknown size counts
    as large, a reset without memset leaves none."""
    cap = float(device.l2_dirty_max_bytes)
    if memset_bytes is None:
        return cap if reset == "memset" else 0.0
    return min(float(memset_bytes), cap)


def evicted_bytes(read_bytes: float, dirty: float, share: float,
                  memset_bytes: float | None = None) -> float:
    """Eq. (E5b): the dirty bytes a launch reading ``read_bytes`` from DRAM writes back, each
    read byte evicting ``share`` of a dirty byte. With ``memset_bytes`` (the buffers the
    reset zeroed, which the ports' launches then store, in order) the dirty lines are the
    last ``dirty`` of them and a line the launch stores to before it is evicted is its own
    store, written back once: a line at position q (0-1) of the buffer, reached after
    ``q x read_bytes``, was evicted by then with the chance min(1, a q), a = share x read /
    dirty, so wb = S (F(1) - F(1 - dirty / S)), F(x) the integral of min(1, a q) from 0 to x."""
    if dirty <= 0 or read_bytes <= 0:
        return 0.0
    plain = min(dirty, share * read_bytes)
    if memset_bytes is None:
        return plain
    a = share * read_bytes / dirty

    def integral(x: float) -> float:
        return a * x * x / 2 if a * x <= 1 else 1 / (2 * a) + x - 1 / a

    size = max(float(memset_bytes), dirty)
    return min(plain, size * (integral(1.0) - integral(1.0 - dirty / size)))


def writeback_ms(launches: Sequence[LaunchDram], device: GPUDevice, dirty: float,
                 memset_bytes: float | None = None) -> float:
    """What the launches (in issue order) take longer writing back ``dirty`` L2 bytes, in
    ms: eqs. (E5b)-(E5c) summed (``memset_bytes``: the zeroed buffers the launches store
    in order, see ``evicted_bytes``; None: buffers they never store)."""
    share = device.l2_dirty_evict_share
    if dirty <= 0 or share <= 0 or device.freq_hz <= 0:
        return 0.0
    rate = (device.l2_writeback_gbps or device.dram_bandwidth_gbps) * 1e9
    left, extra = float(dirty), 0.0
    for launch in launches:
        if left <= 0:
            break
        wrote = evicted_bytes(launch.read_bytes, left, share, memset_bytes)  # (E5b)
        left -= wrote
        grown = launch.stream_cycles + wrote * device.freq_hz / rate
        extra += max(0.0, grown - launch.cycles)  # (E5c)
    return extra / device.freq_hz * 1e3


def launch_figures(kernels: Sequence) -> list[LaunchDram]:
    """A prediction's launches (its ``KernelReport``s) in the host's issue order
    (event_timing.issue_order), each with its kernel's first launch's cycles and bounds (a
    model without bounds reads no DRAM bytes here: it pays nothing)."""
    figures = []
    for k in kernels:
        b = getattr(k.result, "bounds", None)
        figures.append(LaunchDram(
            cycles=k.result.cycles,
            stream_cycles=b.dram_cycles - b.dram_wave_cycles if b is not None else 0.0,
            read_bytes=b.dram_read_bytes if b is not None else 0.0))
    order = issue_order([(i, k.launches) for i, k in enumerate(kernels)])
    return [figures[i] for i in order]
