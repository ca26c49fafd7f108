"""The roofline of the advice (issue #26): each kernel's DRAM, L2 and issue bounds over all its
launches (models/bounds.py), how close its prediction is to the nearest, and the best a fix of
each kind can reach given what that kind leaves unchanged."""

from __future__ import annotations

from dataclasses import dataclass

from ..devices import GPUDevice
from ..models import launch_bounds, launch_geometry
from ..prediction import Report

#: Within this fraction of a bound, a kernel is "at" it.
AT_BOUND = 0.10


@dataclass(frozen=True)
class KernelRoofline:
    """One kernel's bounds in ms (every launch at the work size) and its predicted GPU time."""

    kernel: str
    predicted_ms: float  # the GPU's work (launch overheads left out: no fix changes them)
    dram_ms: float
    dram_mb: float
    l2_ms: float
    issue_ms: float
    issue_all_sms_ms: float  # the same instructions spread over every SM of the device
    nearest: str  # "DRAM" | "L2" | "issue" | "atomic": the largest bound, the closest one
    ratio: float  # predicted time over the nearest bound (1.0: at it; 0.0: every bound 0)
    overhead_ms: float = 0.0  # launches and module load: no fix here changes them
    atomic_ms: float = 0.0  # the atomic bound (eqs. (A1), (A2)): 0 without atomics
    # of dram_ms, the bytes at the DRAM bandwidth alone (the rest: the waves' round trips,
    # (LW), which more loads in flight a thread shortens); None: all of it
    dram_stream_ms: float | None = None


@dataclass(frozen=True)
class KindFloor:
    """The least time any fix of one kind can reach, and why (what the kind leaves alone)."""

    kind: str
    floor_ms: float
    why: str


def kernel_roofline(k, device: GPUDevice) -> KernelRoofline:
    """The bounds of every launch of kernel report ``k``, summed over its launches."""
    parts = k.launch_profiles or ((k.profile, float(k.launches)),)
    dram = l2 = issue = issue_all = dram_bytes = atomic = stream = 0.0
    for profile, n in parts:
        geo = launch_geometry(profile, device)
        b = launch_bounds(profile, device, geo)
        dram += n * b.dram_cycles
        stream += n * (b.dram_cycles - b.dram_wave_cycles)
        l2 += n * b.l2_cycles
        # the issue roof: the dispatch, or the busiest pipe when slower (eq. (12p))
        issue_cycles = max(b.issue_cycles, b.pipe_cycles)
        issue += n * issue_cycles
        issue_all += n * issue_cycles * max(geo.active_sms, 1) / device.sm_count
        dram_bytes += n * b.dram_bytes
        atomic += n * b.atomic_cycles
    ms = device.cycles_to_ms
    named = {"DRAM": ms(dram), "L2": ms(l2), "issue": ms(issue)}
    if atomic > 0:  # a kernel with atomics: the L2 applies them one after another
        named["atomic"] = ms(atomic)
    nearest = max(named, key=named.get)
    gpu_ms = k.kernel_ms or k.total_ms
    return KernelRoofline(
        kernel=k.name,
        predicted_ms=gpu_ms,
        dram_ms=named["DRAM"],
        dram_mb=dram_bytes / 1e6,
        l2_ms=named["L2"],
        issue_ms=named["issue"],
        issue_all_sms_ms=ms(issue_all),
        nearest=nearest,
        ratio=gpu_ms / named[nearest] if named[nearest] > 0 else 0.0,  # 0: no bound
        overhead_ms=max(k.total_ms - (k.kernel_ms or k.total_ms), 0.0),
        atomic_ms=ms(atomic),
        dram_stream_ms=ms(stream),
    )


def roofline(base: Report, device: GPUDevice) -> tuple[KernelRoofline, ...]:
    """Every kernel's roofline."""
    return tuple(kernel_roofline(k, device) for k in base.kernels)


def kind_floors(
    lines: tuple[KernelRoofline, ...], sm_count: int, kinds: tuple[str, ...]
) -> tuple[KindFloor, ...]:
    """The best a fix of each of ``kinds`` can reach: each keeps every instruction of every
    thread (a block shape, a layout change), so none beats the issue bound with the work
    spread over all SMs, nor the atomic bound of the atomics it keeps (plus the launches' own
    time, which none changes)."""
    floor = sum(max(x.issue_all_sms_ms, x.atomic_ms) + x.overhead_ms for x in lines)
    sms = f"all {sm_count} SMs" if sm_count > 1 else "the device's one SM"
    why = f"it keeps every instruction: no such fix beats the issue bound on {sms}"
    if any(x.atomic_ms > x.issue_all_sms_ms for x in lines):
        why = (f"it keeps every instruction and atomic: no such fix beats the issue bound on "
               f"{sms} or the atomic bound")
    return tuple(KindFloor(kind=k, floor_ms=floor, why=why) for k in kinds)


def at_dram_bound(x: KernelRoofline) -> bool:
    """Whether a kernel runs at its DRAM bound (within AT_BOUND)."""
    return x.nearest == "DRAM" and x.ratio <= 1 + AT_BOUND


def roofline_text(x: KernelRoofline) -> str:
    """One kernel's roofline in a line."""
    at = ("at" if x.ratio <= 1 + AT_BOUND else f"{x.ratio:.2f}x")
    return (f"{x.kernel}: predicted {x.predicted_ms:.4g} ms; bounds DRAM {x.dram_ms:.4g} ms "
            f"({x.dram_mb:.4g} MB), L2 {x.l2_ms:.4g} ms, issue {x.issue_ms:.4g} ms "
            f"({x.issue_all_sms_ms:.4g} ms on every SM); {at} the nearest, the "
            f"{x.nearest} bound"
            + _dram_clause(x))


def _dram_clause(x: KernelRoofline) -> str:
    """What a kernel at its DRAM bound can still gain: nothing without less traffic when the
    bound is the bytes at the bandwidth; the waves' round trips when those are part of it
    (a copy of one float a thread: 0.35 ms of bytes, 0.55 ms bound), as more loads in flight
    shorten them, never below the bytes at the bandwidth."""
    if not at_dram_bound(x):
        return ""
    stream = x.dram_ms if x.dram_stream_ms is None else x.dram_stream_ms
    if stream >= x.dram_ms * (1 - AT_BOUND):
        return ("; no fix can beat the DRAM bound without reducing DRAM traffic (reuse from "
                "shared memory or registers, fewer passes over the data)")
    return (f"; of it {stream:.4g} ms is the bytes at the DRAM bandwidth, which no fix beats "
            f"without reducing DRAM traffic, the rest the waves' round trips, which more loads "
            f"in flight a thread (several elements each) can shorten")


def floor_text(f: KindFloor) -> str:
    """One kind's floor in a line."""
    return f"best any {f.kind} fix can reach: {f.floor_ms:.4g} ms ({f.why})"
