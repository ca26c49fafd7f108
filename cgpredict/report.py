"""Rendering a prediction report as text or JSON (the CLI prints what these return)."""

from __future__ import annotations

from .models import bound_text
from .prediction import KernelReport, Report


def to_json(report: Report) -> str:
    """The whole report, with a schema version, as deterministic JSON (``Report.to_json``)."""
    return report.to_json()


def report_dict(report: Report) -> dict:
    """The whole report with a schema version as plain data (``Report.to_dict``)."""
    return report.to_dict()


def _atomic_text(b) -> str:
    """The atomic bound's part of the bounds line: empty without atomics (eqs. (A1), (A2))."""
    if not b.atomic_ops:
        return ""
    slices = (f"; busiest L2 slice {b.atomic_slice_cycles:.4g} of {b.atomic_requests:.4g} "
              f"requests" if b.atomic_slice_cycles else "")
    return (f", atomic {b.atomic_cycles:.4g} ({b.atomic_ops:.4g} atomic operations, the "
            f"busiest address's one after another{slices})")


def _bounds_text(r) -> list[str]:
    """The physical bounds of one launch and which one sets the time (models/bounds.py)."""
    b = r.bounds
    if b is None:
        return []
    binding = "the model" if r.binding == "model" else f"the {r.binding} bound"
    if r.binding == "pipe":
        binding = f"the {b.pipe} pipe bound"
    return [
        f"  time set by {binding}: model {r.model_cycles:.4g} cycles; bounds DRAM "
        f"{b.dram_cycles:.4g} ({b.dram_bytes / 1e6:.4g} MB"
        + (f" + {b.dram_wave_cycles:.4g} cycles a wave's latency adds: a round trip, or (LW)"
           if b.dram_wave_cycles else "")
        + f"), issue {b.issue_cycles:.4g}, "
        f"L2 path {b.l2_cycles:.4g} ({b.l2_store_trans:.4g} store transactions), "
        f"critical path {b.chain_cycles:.4g} (the busiest thread's own chain"
        + (", its sub-partition's warps queueing: (LTq2)"
           if b.queue_cycles >= b.chain_cycles > 0 else "") + ")"
        + _atomic_text(b)
        + (f", pipe {b.pipe_cycles:.4g} (the {b.pipe} pipe at its published rate)"
           if b.pipe else "")
        + (f", L1 path {b.l1_cycles:.4g} (every global line through the SM's L1)"
           if b.l1_cycles else "")
        + (f", block dispatch {b.dispatch_cycles:.4g} ({b.blocks:.4g} blocks started one "
           "after another)" if b.dispatch_cycles else "")
        + (f", phases {b.phase_cycles:.4g} (each loop of the thread at its slowest L1 or L2 "
           "path, one after another)" if b.phase_cycles else "")
    ]


def _parts_text(k: KernelReport, sync: str) -> str:
    """The kernel's time in parts (models/launches.py): GPU work, launches, one-off load."""
    how = "a round trip each" if sync == "each" else "queued"
    return (
        f"  time: kernel {k.kernel_ms:.4g} ms + launches {k.launch_ms:.4g} ms ({k.launches} "
        f"launch{'es' if k.launches != 1 else ''}, {how}) + first launch {k.once_ms:.4g} ms "
        f"(module load, once per program)"
    )


def _kernel_text(k: KernelReport, sync: str = "each") -> list[str]:
    r = k.result
    p = k.profile
    gx, gy = k.grid_threads
    lines = [
        f"kernel {k.name} ({k.location}): {k.time_ms:.4f} ms"
        + (f", {k.energy_mj:.4g} mJ" if k.energy_mj is not None else "")
        + (f" for {k.launches} launches" if k.launches > 1 else ""),
        _parts_text(k, sync),
        f"  grid {k.grid_dims}-D {gx}x{gy} threads, block {k.block}, {k.blocks} blocks; "
        f"B={r.b_blocks} blocks/SM, N={r.n_warps} warps/SM, occupancy {k.occupancy:.0%} "
        f"(limited by {k.occupancy_limit}), {k.batches:.4g} batches, "
        f"{p.registers_per_thread} registers a thread ({k.registers_from})",
        f"  MWP={r.mwp:.2f} CWP={r.cwp:.2f} case={r.case}, {bound_text(r)}, "
        f"{r.cycles:.4g} cycles, L2 hit rate {k.l2_hit_rate:.1%}",
        *_bounds_text(r),
        *(f"  trace size: {line}" for line in k.size_check),
        f"  per thread: {p.comp_insts:.1f} compute ({p.sfu_insts:.1f} SFU), "
        f"{p.mem_insts:.1f} memory (coalesced {p.coal.insts:.1f}, uncoalesced "
        f"{p.uncoal.insts:.1f}, constant {p.const.insts:.1f}), {p.sync_insts:.0f} sync",
        "  memory instructions:",
    ]
    wide = max([18] + [len(m.text) for m in k.mem])  # the whole access, however long
    where = max([16] + [len(m.location) for m in k.mem])
    lines.append(
        f"    {'access':<{wide}} {'where':<{where}} {'kind':<5} {'pattern':<11} "
        f"{'trans/warp':>10} {'L2 hit':>7} {'per thread':>10}"
    )
    for m in k.mem:
        # read from a tile, or an atomic: no global transactions of its own
        shared = m.pattern in ("shared", "atomic")
        trans = f"{'-':>10}" if shared else f"{m.l2_trans_per_warp:>10.2f}"
        lines.append(
            f"    {m.text:<{wide}} {m.location:<{where}} {m.kind:<5} {m.pattern:<11} "
            f"{trans} {m.hit_text():>7} {m.per_thread:>10.1f}"
        )
    sh = p.shared
    if sh.bytes_per_block:
        weights = [(x, n) for x, n in sh.insts_by_conflict if n > 0]
        total = sum(n for _, n in weights)
        mean = sum(x * n for x, n in weights) / total if total else 1.0
        worst = max((x for x, _ in weights), default=1.0)
        lines.append(
            f"  shared: {sh.load_insts:.1f} staging loads and {p.sync_insts:.0f} barriers per "
            f"thread, {total:.1f} shared loads per thread ({sh.transactions:.1f} wavefronts; "
            f"bank conflict mean {mean:.2f}-way, "
            f"worst {worst:.0f}-way), {sh.bytes_per_block} B per block"
        )
    sc = p.staging_code
    if sc.total:
        lines.append(
            f"  staging code: {sc.integer:.1f} integer, {sc.branch:.1f} branch and "
            f"{sc.other:.1f} other instructions per thread (index, bounds, address, loop)"
        )
    lines += [f"  warning: {w}" for w in k.warnings]
    return lines


def to_text(report: Report) -> str:
    sizes = " ".join(f"{k}={v}" for k, v in sorted(report.work_sizes.items()))
    tsizes = " ".join(f"{k}={v}" for k, v in sorted(report.trace_sizes.items()))
    lines = [
        f"{report.source} on {report.device} ({report.model} model, {report.port} port, "
        f"--sync {report.sync})",
        f"work size: {sizes or '(as traced)'}; traced at: {tsizes or '(file defaults)'}",
        "",
    ]
    for k in report.kernels:
        lines += _kernel_text(k, report.sync)
        lines.append("")
    if report.sync_ms:
        lines.append(
            f"host synchronisation after the queued launches (--sync end): "
            f"{report.sync_ms:.4g} ms, once"
        )
    if report.event_wait_ms or report.upload_launch_ms:
        lines.append(
            f"not in the total: a cudaEvent pair around each launch also counts the host's "
            f"launch calls and loop period the GPU waits for, {report.event_wait_ms:.4g} ms "
            f"(eqs. (E2), (E4)), "
            f"and {report.upload_launch_ms:.4g} ms more when the first launch follows a "
            f"large pageable upload"
        )
    if report.dirty_writeback_ms:
        lines.append(
            f"not in the total: after a cudaMemset that leaves the L2 full of dirty lines, "
            f"the first launches take {report.dirty_writeback_ms:.4g} ms longer writing "
            f"them back (eq. (E5))"
        )
    lines.append(
        f"total predicted time: {report.total_ms:.4f} ms"
        + (
            f", energy {report.total_energy_mj:.4g} mJ"
            if report.total_energy_mj is not None
            else ""
        )
    )
    lines += [f"warning: {w}" for w in report.warnings]
    return "\n".join(lines)
