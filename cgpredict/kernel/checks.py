"""What the analysis of one kernel says besides its time, and what it refuses: warnings on the
pseudo-threads' mapping, their number, a plain port's stored accumulators and the data found in
the L2; a block or a ``#pragma cgp shared`` tile the device cannot hold (SPEC §2.2, §2.6).
"""

from __future__ import annotations

from ..block import Block, MappingError, check_block_size
from ..devices import GPUDevice
from ..frontend.tracefile import Trace
from ..memory.shared import array_name
from ..prediction import MemInstrReport
from ..warps import WarpTrace


def tile_problem(h, info, device) -> str | None:
    """Why a ``#pragma cgp shared`` tile cannot fit the device's shared memory per block
    (its elements sized as the kernel accesses the array), or None."""
    for array, rows, cols in info.shared:
        sizes = [m.bytes for m in h.mem if m.region == info.index and array_name(m.base) == array]
        nbytes = rows * cols * max(sizes or [4])
        if nbytes > device.shared_mem_per_block_max_bytes:
            return (
                f"'#pragma cgp shared {array} tile {rows}x{cols}' needs {nbytes} bytes of "
                f"shared memory per block; {device.name} allows "
                f"{device.shared_mem_per_block_max_bytes}"
            )
    return None


def check_block(block: Block, device: GPUDevice, warnings: list[str]) -> None:
    check_block_size(block, device.max_threads_per_block, device.name)
    if block.x % 32 and block.threads % 32:
        warnings.append(
            f"block {block}: {block.threads} threads is not a multiple of the warp "
            f"size; the last warp of each block is partly idle"
        )


def thread_warnings(wt: WarpTrace, name: str, device: GPUDevice) -> list[str]:
    """Too few pseudo-threads at the trace size for representative cache behaviour."""
    if wt.n_threads == 0:
        return [
            f"{name}: no pseudo-thread made a memory access at the trace size "
            f"(zero iterations?); its prediction is empty"
        ]
    if wt.n_threads < 2 * device.max_threads_per_sm:
        return [
            f"{name}: only {wt.n_threads} pseudo-threads traced, fewer than "
            f"2 x threads_per_SM = {2 * device.max_threads_per_sm}; trace a larger "
            f"size for representative cache behaviour"
        ]
    return []


def mapping_warnings(trace: Trace, wt: WarpTrace, name: str) -> list[str]:
    out = []
    h = trace.header

    if wt.unmapped_events:
        out.append(
            f"{name}: {wt.unmapped_events} memory events lie outside the mapped loops "
            f"(loop invariants hoisted by the compiler, or an imperfect nest); they are "
            f"not assigned to threads"
        )
    if wt.divergent_insts:
        out.append(
            f"{name}: {wt.divergent_insts} of {wt.n_insts} warp instructions diverge "
            f"(lanes masked off by branches or by trip counts that differ between threads)"
        )
    if wt.dependence and wt.dependence.forwarded:
        out.append(
            f"{name}: inter-thread dependence: a loop mapped to threads carries a value "
            f"stored by one pseudo-thread to the next (the compiler forwards it in a "
            f"register); the GPU port needs another mapping or synchronisation"
        )
    elif wt.dependence:
        d = wt.dependence
        names = ", ".join(sorted({h.mem[s].base for s in d.store_ids + d.other_ids}))
        out.append(
            f"{name}: inter-thread dependence: {d.addresses} locations written by one "
            f"pseudo-thread are used by another ({names}); the GPU port needs "
            f"synchronisation or another mapping"
        )
    return out


def port_warnings(mem: tuple[MemInstrReport, ...], port: str, name: str) -> list[str]:
    """Name the accumulators a plain port stores on every iteration (port.py)."""
    kept = sorted({f"{m.text} ({m.location})" for m in mem if m.restored})
    if port != "plain" or not kept:
        return []
    return [
        f"{name}: {', '.join(kept)} stored on every iteration: in a plain port the array "
        f"pointers may alias, so nvcc keeps the accumulator in memory; __restrict__ "
        f"pointers or a local accumulator keep it in a register (--port restrict)"
    ]


def resident_notes(resident, device: GPUDevice, name: str) -> list[str]:
    """Say which arrays the kernel finds in the L2 from earlier launches (residency.py)."""
    # scalars (a coefficient in a global) count in the model, not in the note
    items = sorted((r for r in resident if r.bytes >= device.l2_line_bytes), key=lambda r: r.array)
    if not items:
        return []
    what = ", ".join(
        f"{r.array} ({_mb(r.bytes)}, {_mb(r.since_bytes)} touched since)" for r in items
    )
    return [
        f"{name}: {what} still in the L2 from an earlier launch (up to "
        f"{_mb(device.persist_bytes)} persist): their first reads hit"
    ]


def _mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.1f} KB"


def replaced_block_warning(name: str, asked: Block, used: Block) -> str:
    """What a 1-D kernel's report says of a 2-D block asked for (it runs in ``used``)."""
    return f"{name} is a 1-D kernel: block {asked} replaced by {used}"


def quiet_block(block: Block, device: GPUDevice) -> bool:
    """Whether ``block`` fits the device and is whole warps: ``check_block`` says nothing."""
    said: list[str] = []
    try:
        check_block(block, device, said)
    except MappingError:
        return False
    return not said
