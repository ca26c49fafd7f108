"""The CGPredict form of the MWP-CWP model (SPEC §2.3 eqs. 1-8, §2.5 eqs. 12-18, §2.6 19-23).

Batch reading (eq. 16). SPEC eq. (16) as printed multiplies only its second term by `batch`:

    paper:  exec = mem_cycles * N / MWP + comp_cycles / no_mem_insts * MWP * batch
    whole:  exec = (mem_cycles * N / MWP + comp_cycles / no_mem_insts * MWP) * batch

The default is ``batch_mode="whole"``, as the original MWP-CWP model multiplies by #Rep (§3
eq. 21-24). From first principles: only B blocks (N warps) are resident on an SM at a time.
Each of those warps issues its no_mem_insts memory instructions, MWP of them in flight at once,
so one batch of N warps needs mem_cycles * N / MWP cycles of memory time. The next batch's warps
start from scratch and issue their own memory instructions: nothing of the first batch's memory
time is shared with the second. With batch = no_blocks / B, the memory term must therefore be
paid once per batch like the computation term. Under the printed reading the memory time of a
memory-bound kernel would not grow with the number of blocks at all (doubling the work size
would leave a memory-bound kernel's predicted time almost unchanged), which no GPU does. The
printed reading stays selectable (``batch_mode="paper"``) to reproduce the paper's numbers.
Eq. (17) follows the same choice: "whole" is (mem_l + comp_cycles * N) * batch, as §3 eq. (24);
"paper" is mem_l + comp_cycles * N * batch as printed.

Too few warps (``whole`` reading): when MWP and CWP are both capped at N, every warp's memory
requests overlap with all the others', and a warp's own timeline (its memory periods and its
computation, one after the other) is the critical path. Eq. (16) would charge only one memory
period's computation (comp_cycles / no_mem_insts * MWP), so a single warp that computes for
10000 cycles between 10 loads would be predicted at a fraction of its serial time. That case
uses §3 eq. (22), which Hong & Kim introduced for it: exec = (mem_cycles + comp_cycles +
comp_cycles / no_mem_insts * (MWP - 1)) * batch. The ``paper`` reading keeps (16) as printed.

Multi-SM devices: blocks spread over the active SMs (min(sm_count, blocks)), so batch is the
number of waves, blocks / (B * active_SMs), at least 1 (see `launch_geometry`); on the 1-SM TK1
this is eq. (15) exactly.

DRAM bandwidth bound (§3 eqs. 5-7): on by default (``bandwidth_bound=True``): MWP = min(MWP_(13),
N, MWP_peak_BW). Every device file gives dram_bandwidth_gbps, and the bound is a physical limit
(no more warps' requests can be in flight than the DRAM serves); it only binds when the
departure delays understate the bandwidth (e.g. uncalibrated literature estimates). On the TK1
with SPEC §2.7 figures it rarely binds. ``bandwidth_bound=False`` gives the paper's MWP.
Load_bytes_per_warp is the DRAM traffic of an average warp memory instruction (DRAM
transactions * l2_sector_bytes); with no DRAM traffic the bound is infinite.

Shared memory (§2.6): applied when the profile has shared-memory use. Two readings differ from
the printed equations (the ``smem_cost="latency"`` reading keeps them): (22) takes the slower of
the issue time and the load/store pipe's time (shared and L1 accesses), which are separate units
working at once, instead of their sum (on a device whose dispatch does not issue while its
shared path serves, ``smem_overlaps_issue = false``, the sum: eq. (22s), the Kepler TK1),
after the issue of the tiles' staging, which runs apart
between barriers (``staging_cycles``); and with two or more blocks resident the sync cost (23)
is the staging latency exposed once a strip for the whole SM (``lockstep_staging_cycles``:
resident blocks run in step, so they wait for their tiles at the same time), not a per-block
departure-delay product, in the compute-bound case (17) and for a tiled kernel in (16) too, so
that the barriers cost the same on both sides of CWP = MWP. Of the staging, the share of the
issue slots a staging block leaves (1 - its warps a scheduler x the staging code's issue
rate) hides under the other resident blocks' shared loads (``drift_cycles``, eq. (22d)).
no_smem_load_inst staging loads cost eq. (19) and are memory instructions for the no_mem_insts
of eq. (16); mem_l and departure_delay (7)-(8) average over the global pattern instructions
only. Otherwise the sync cost (23) is added whenever the profile has sync instructions.

Limits (no division by zero): with no memory instructions mem_l = departure_delay = 0, MWP = N,
and eq. (17) applies (there is no memory period to overlap: the N warps' computation
serialises). With no instructions at all comp_cycles = 0 and CWP = N. A zero departure delay
gives MWP = N. In (23), MWP - 1 is taken as 0 when MWP < 1 (a cost cannot be negative).

`profile.launches` launches of the kernel each cost the per-launch cycles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from cgpredict.devices import GPUDevice
from cgpredict.models.alone import alone_cycles
from cgpredict.models.base import Bound, LaunchGeometry, launch_geometry
from cgpredict.models.memlat import MemoryLatency, dram_share, memory_latency
from cgpredict.models.retire import retire_cycles
from cgpredict.models.staging_pipe import hidden_staging_pipe_cycles
from cgpredict.pipes import pipe_cycles
from cgpredict.profile import KernelProfile

__all__ = ["BatchMode", "CGPredictResult", "own_overlap", "predict_cgpredict"]

BatchMode = Literal["whole", "paper"]


@dataclass(frozen=True)
class CGPredictResult:
    """Every intermediate of the CGPredict model; cycles and time include all launches."""

    latency: MemoryLatency
    geometry: LaunchGeometry
    batch_mode: BatchMode
    bandwidth_bound: bool
    # §2.6
    smem_load_cycles: float
    smem_cycles: float
    l1_cycles: float  # L1-served global loads through the same load/store path as shared
    sync_cost: float
    # §2.4-2.5
    comp_cycles: float
    own_comp_cycles: float  # a warp's own computing in eq. (22c): max(issue, its dependences)
    mem_cycles: float
    mem_l: float
    departure_delay: float
    no_mem_insts: float
    mwp_full: float
    bw_per_warp_gbps: float
    mwp_peak_bw: float
    mwp: float
    cwp_full: float
    cwp: float
    n_warps: int
    b_blocks: int
    batch: float
    case: str
    exec_cycles: float
    cycles_per_launch: float
    launches: int
    cycles: float
    time_ms: float
    bound: Bound
    own_overlap: float = 1.0  # a warp's own memory periods in flight in (22): eq. (22m)
    lockstep_cycles: float = 0.0  # (17)'s exposed misses of warps in step, eq. (17l); 0: mem_l
    retire_cycles: float = 0.0  # a wave's blocks past their mean warp, eqs. (R1), (R1w)


def _lines(profile: KernelProfile, device: GPUDevice) -> tuple[tuple[object, float], ...]:
    """(pattern, L1 lines one of its warp instructions reads) for the coalesced, uncoalesced
    and constant patterns: a coalesced access packs its sectors into lines, an uncoalesced
    one reads a line per sector, a constant one a single line."""
    sectors_per_line = max(device.l1_line_bytes // max(device.l2_sector_bytes, 1), 1)
    coal_s, uncoal_s = (p.sectors_per_warp or p.l2_trans_per_warp
                        for p in (profile.coal, profile.uncoal))
    # the transactions are averages scaled from the trace: 4.000000000000003 sectors is 1 line
    coal_lines = math.ceil(coal_s / sectors_per_line - 1e-9)
    return (
        (profile.coal, max(coal_lines, 1)),
        (profile.uncoal, max(uncoal_s, 1.0)),
        (profile.const, 1.0),
    )


def _l1_cycles(profile: KernelProfile, device: GPUDevice) -> float:
    """Issue cycles of the warp loads an L1 serves (devices whose L1 caches global loads).

    L1 and shared memory are one SRAM behind one load/store path: an L1-served warp load costs
    ``smem_issue_cycles`` per L1 line it reads, as a shared access costs per conflict way; its
    latency overlaps across warps like any other (memlat blends in the L1 latency). Lines per
    warp: the loads' traced data-stage wavefronts (memory/wavefronts.py, eq. (B2w)), else
    _lines. The sectors are those the served instructions read (``sectors_per_warp``),
    not the misses of the others: a row walk whose few reaching instructions miss 30 of their
    32 rows still reads 32 lines when it hits. Zero when nothing is L1-served (e.g. Kepler)."""
    loads = profile.loads_only()
    return device.smem_issue_cycles * sum(
        p.insts * p.l1_hit_fraction * (p.lines_per_warp if p.lines_per_warp > 0 else n)
        for p, n in _lines(loads, device) if p.l1_hit_fraction > 0
    )  # a load's traced wavefronts, eq. (B2w), where known


def global_lines(profile: KernelProfile, device: GPUDevice) -> float:
    """L1 passes one warp's global accesses (loads, stores; L1-served or not) take on the SM's
    load/store path: each pattern's traced passes ((B2w), (B2t)) where known, else _lines."""
    return sum(p.insts * (p.lines_per_warp or n) for p, n in _lines(profile, device))


def global_requests(profile: KernelProfile) -> float:
    """Warp instructions (requests) of one warp's global loads and stores."""
    return sum(p.insts for p in (profile.coal, profile.uncoal, profile.const))


def lsu_cycles(profile: KernelProfile, device: GPUDevice) -> float:
    """Cycles one warp's accesses hold the SM's load/store path (eq. (B2r)): every global
    access, served by the L1 or not, ``l1_line_cycles`` per line it reads (_lines), plus
    ``l1_request_cycles`` per global warp instruction, and the shared accesses
    ``smem_issue_cycles`` per conflict way (they are not charged the request). The floor of
    eq. (22m): with a warp's memory periods overlapped, the N warps still take their turns
    on this path."""
    shared = device.smem_issue_cycles * profile.shared.transactions
    lines = device.l1_line_cycles * global_lines(profile, device)
    return lines + device.l1_request_cycles * global_requests(profile) + shared  # (22m), (B2r)


def lockstep_staging_cycles(profile: KernelProfile, device: GPUDevice) -> float:
    """Cycles a batch of resident blocks of a compute-bound tiled kernel waits for its tiles:
    the blocks an SM holds run the same code from the same start, so they reach each strip's
    staging together; its loads' latency (``smem_load_cycles``, eq. (19)'s) is then exposed
    once a strip (two barriers) for the whole SM, the pipes idle, instead of being hidden
    behind another block's work. The issue and shared pipes already count every warp's work."""
    strips = profile.sync_insts / 2.0
    return strips * device.smem_load_cycles if profile.shared.load_insts > 0 else 0.0


def _sync_cycles(profile: KernelProfile, device: GPUDevice, case: str, lockstep: bool,
                 wait: float, b: int, batch: float) -> float:
    """Sync cost of a launch: eq. (23), ``wait`` (departure delay x (MWP - 1)) per barrier of
    each of the B resident blocks; in the ``lockstep`` reading, with two or more blocks
    resident, the tiles' staging latency once a strip for the SM (lockstep_staging_cycles),
    whichever side of CWP = MWP the kernel lies (eq. (16) or (17)): a tiled kernel whose CWP
    crosses MWP keeps the barriers it had (gemm_tiled 32x8 on the H100, CWP 45.3 against MWP
    43.3, was charged (23) x 8 blocks, 3x its 32x32 time, 10 % measured)."""
    tiled = profile.shared.load_insts > 0
    if lockstep and b >= 2 and (case == "eq17" or (case == "eq16" and tiled)):
        return lockstep_staging_cycles(profile, device) * batch
    return wait * profile.sync_insts * b * batch  # (23)


def issue_cycles_per_warp(profile: KernelProfile, device: GPUDevice) -> float:
    """A warp's issue cycles: the dispatch, one slot per instruction (eq. (12)), or its
    busiest pipe, instructions of a class x warp_size / that class's published rate per SM,
    whichever is larger (eq. (12p), docs/models.md; pipes.py)."""
    return max(_issue_parts(profile, device))


def _issue_parts(profile: KernelProfile, device: GPUDevice) -> tuple[float, float]:
    """(a warp's dispatch cycles, eq. (12); its busiest pipe's cycles, eq. (12p))."""
    dispatch = device.inst_cycles_per_warp_inst * profile.total_insts  # (12)
    pipe, _ = pipe_cycles(profile.pipes, device.pipes, device.warp_size)  # (12p)
    return dispatch, pipe


def staging_cycles(profile: KernelProfile, device: GPUDevice) -> tuple[float, float]:
    """(issue cycles of a warp's tile staging, the part of them already in its dispatch):
    the staging code (memory.staging_code), its global loads and its shared stores (those
    two one each a staged element). A strip's staging runs between two barriers, while none
    of the block's shared loads is in flight, and the resident blocks run in step
    (lockstep_staging_cycles): its issue adds to the strip's compute phase instead of
    hiding under the shared pipe's time (H100 gemm_tiled 2048, 32x32: the port's 177
    instructions a strip against the textbook kernel's 88, same shared loads: 2.50 against
    1.86 ms measured)."""
    sh = profile.shared
    if sh.load_insts <= 0:
        return 0.0, 0.0
    ipc = device.inst_cycles_per_warp_inst
    in_dispatch = profile.staging_code.total + sh.load_insts  # code and STS: comp_insts
    return ipc * (in_dispatch + sh.load_insts), ipc * in_dispatch


def drift_cycles(profile: KernelProfile, device: GPUDevice, staging: float, rest: float,
                 lsu: float, b: int) -> float:
    """Staging cycles of a warp hidden under other resident blocks' shared loads, eq. (22d).
    The staging block's warps issue at most the device's ``staging_issue_rate`` instructions
    a cycle each (the control words' fixed stalls; none given: one a cycle); with w of them
    on a scheduler they take w x that rate of its issue slots, and the rest issue other
    blocks' shared loads. With w x rate >= 1
    (a 32x32 block: 8 warps a scheduler) the staging takes every slot, the shared pipe waits
    and the blocks stay in step (lockstep_staging_cycles); with fewer (32x8: 2, 0.57) the
    share 1 - w x rate of the staging hides, at most in the shared pipe's slack over the
    rest of the issue (``lsu - rest``). Only with two or more blocks resident and where the
    dispatch overlaps the shared path (``smem_overlaps_issue``)."""
    if b < 2 or staging <= 0 or not device.smem_overlaps_issue:
        return 0.0
    warps = math.ceil(profile.threads_per_block / device.warp_size)
    rate = 1.0 if device.staging_issue_rate is None else device.staging_issue_rate
    free = 1.0 - warps / device.schedulers_per_sm * rate  # (22d)
    return min(max(free, 0.0) * staging, max(lsu - rest, 0.0))


def _comp_cycles(profile: KernelProfile, device: GPUDevice,
                 smem_cost: str, b: int = 1) -> tuple[float, float, float, float]:
    """(staging, shared-access, L1-served, computing cycles) of one warp: eqs. (12), (19),
    (20), (22), read as ``smem_cost`` says; ``b`` resident blocks ((22d), (22e))."""
    dispatch, pipe = _issue_parts(profile, device)
    issue_cycles = max(dispatch, pipe)  # (12), (12p)
    sh = profile.shared
    smem_load_cycles = sh.load_insts * device.smem_load_cycles  # (19)
    per_access = (device.shared_latency_cycles if smem_cost == "latency"
                  else device.smem_issue_cycles)
    smem_cycles = per_access * sh.transactions  # (20)
    l1_cycles = _l1_cycles(profile, device)  # L1 hits occupy the load/store pipe as shared do
    if smem_cost == "latency":
        comp_cycles = issue_cycles + smem_cycles + l1_cycles  # (22) as printed
    else:
        # (22), issue reading: the dispatch units and the load/store pipe are separate units
        # working at once, so a warp's computing time is the slower of the two (a tiled GEMM
        # issues one FMA per two shared loads and is bound by the shared pipe, not by both);
        # a tiled kernel's staging is issued apart, between its barriers (staging_cycles)
        staging, in_issue = staging_cycles(profile, device)
        rest = max(dispatch - in_issue, pipe)  # max(issue - in_issue, pipe) alike
        lsu = smem_cycles + l1_cycles
        comp_cycles = staging + lsu_issue_cycles(rest, lsu, device)
        hidden = drift_cycles(profile, device, staging, rest, lsu, b)  # (22d), then (22e):
        comp_cycles += hidden_staging_pipe_cycles(profile, device, staging, hidden) - hidden
    return smem_load_cycles, smem_cycles, l1_cycles, comp_cycles


def lsu_issue_cycles(issue: float, lsu: float, device: GPUDevice) -> float:
    """A warp's issue (``issue``) and load/store-path (``lsu``: shared accesses and L1-served
    lines) cycles together: the slower of the two where the dispatch issues other
    instructions while the path serves a warp (``smem_overlaps_issue``, eq. (22)), their
    sum where it does not (eq. (22s): (22) as the SPEC prints it, the TK1's reading)."""
    return max(issue, lsu) if device.smem_overlaps_issue else issue + lsu  # (22) / (22s)


def _mwp_limits(lat, device: GPUDevice, geo: LaunchGeometry) -> tuple[float, float, float]:
    """(MWP without a bandwidth limit, bytes per second one warp asks for, MWP the DRAM
    bandwidth allows): eq. (13) and §3 (6)-(7)."""
    mem_l, dep = lat.mem_l, lat.departure_delay
    mwp_full = mem_l / dep if dep > 0 else math.inf  # (13)
    bw_per_warp = device.freq_hz * lat.load_bytes_per_warp / mem_l if mem_l > 0 else 0.0  # §3 (7)
    mwp_peak = (
        device.dram_bandwidth_bytes_per_s / (bw_per_warp * geo.active_sms)  # §3 (6)
        if bw_per_warp > 0
        else math.inf
    )
    return mwp_full, bw_per_warp, mwp_peak


def l1_period_cycles(profile: KernelProfile, device: GPUDevice) -> float:
    """The part of a warp's memory cycles (6) the L1 serves: each pattern's L1-served warp
    instructions at the L1 latency, as memlat blends them in. Serial in eq. (22m): those
    periods queue on the load/store path the N warps share (lsu_cycles)."""
    pats = (profile.coal, profile.uncoal, profile.const)
    return device.l1_latency_cycles * sum(p.insts * p.l1_hit_fraction for p in pats)


def own_overlap(loads_in_flight: float, mwp_full: float, mwp_peak: float, n: float) -> float:
    """How many of a warp's own memory periods overlap in (22), eq. (22m): the thread's
    loads in flight (profile.loads_in_flight: an unrolled trip's hoisted loads; 1 for a
    plain port whose store orders the next loads), at most the SM's share for each of its N
    warps of the requests it keeps in flight (MWP of (13) and of the bandwidth, §3 (6),
    before the cap at N), at least 1."""
    if n <= 0:
        return 1.0
    return max(min(loads_in_flight, mwp_full / n, mwp_peak / n), 1.0)


def lockstep_cycles(profile: KernelProfile, device: GPUDevice, n: float,
                    comp_cycles: float, no_mem_insts: float) -> float:
    """A warp's exposed latency beyond the L1 in the compute-bound case, eq. (17l): the N
    warps of an SM run one loop in step, so their loads that miss the L1 (a row walk's every
    sector-th iteration) miss in the same iteration; each such load waits its L2 (and DRAM)
    latency less the computing of one memory period (MLP loads) of the other N - 1 warps."""
    if n <= 0 or no_mem_insts <= 0:
        return 0.0
    hidden = (n - 1) * comp_cycles / no_mem_insts * max(profile.mlp, 1.0)
    exposed = 0.0
    for p in (profile.coal, profile.uncoal, profile.const):
        beyond = p.insts * (1 - p.l1_hit_fraction)
        if beyond <= 0 or p.l1_hit_fraction <= 0:
            continue  # no L1 in step: (17)'s one exposed period stands
        miss = min(p.dram_trans_per_warp / max(p.l2_trans_per_warp, 1.0), 1.0)
        latency = device.l2_latency_cycles + miss * device.dram_latency_cycles  # SPEC (2)
        exposed += beyond * max(latency - hidden, 0.0)
    return exposed


def _exec_cycles(whole: bool, no_mem_insts: float, mwp: float, cwp: float, n: float,
                 mem_cycles: float, comp_cycles: float, mem_l: float,
                 batch: float, own_comp: float | None = None,
                 overlap: float = 1.0, lsu: float = 0.0,
                 served: float = 0.0, lockstep: float = 0.0, retire: float = 0.0,
                 hoisted: float = 0.0, alone: float = 0.0) -> tuple[str, float]:
    """(case, execution cycles of the launch): §3 (22) when too few warps hide a warp's own
    timeline, else (16) when CWP >= MWP, else (17); ``whole``: each expression per batch.
    ``own_comp``: a warp's own computing in (22), at least its issue cycles: the dependent
    latencies of its instructions (profile.compute_chain_cycles), which no other warp
    hides when there are too few (eq. (22c), docs/models.md; the caller takes the larger of
    the two); None: ``comp_cycles``. ``overlap``: how many of its memory periods a warp
    keeps in flight in (22) (own_overlap, eq. (22m)) of those beyond its ``served`` cycles
    (L1-served and staging periods, which stay serial), ``lsu`` a warp's turns on the SM's
    load/store path (lsu_cycles): with its N warps' computing the floor of (22m).
    ``lockstep``: (17)'s exposed memory time when the warps miss the L1 in step
    (lockstep_cycles, eq. (17l)), at least (17)'s one period ``mem_l``. ``retire``: how long
    a wave's blocks outlast their mean warp (retire.retire_cycles, eq. (R1)), charged in
    every case of the ``whole`` reading at each of the launch's batch - 1 handovers of its
    SMs' slots to the next wave (eq. (R1w)). ``hoisted``: a warp's memory periods whose
    loads ptxas issues ahead of the stores they follow in the source (eq. (22h)): off (22)'s
    serial timeline, which keeps at least its ``served`` periods, and (22l)'s. ``alone``: (22k)."""
    own = comp_cycles if own_comp is None else own_comp
    # (R1w): whichever case sets a wave's length, the next wave waits at each handover for
    # the slowest warp of each block; the printed (paper) reading has no waves to hand over
    handover = retire * max(batch - 1, 0.0) if whole else 0.0
    if whole and no_mem_insts > 0 and mwp >= n and cwp >= n:
        case = "eq22"  # §3 (22): too few warps to hide a warp's own serial timeline
        rest = own + comp_cycles / no_mem_insts * (mwp - 1)  # (22c)
        if hoisted > 0:  # (22h): the hoisted loads' periods overlap the ordered ones
            mem_cycles = max(mem_cycles - hoisted, min(served, mem_cycles))
            lockstep = max(lockstep - hoisted, 0.0)  # (22l) exposes the same periods
        exec_cycles = (mem_cycles + rest) * batch  # (22)
        if overlap > 1:  # (22m): never below the SM's turns of its N warps, never above (22)
            floor = n * max(comp_cycles, lsu)
            own_mem = served + (mem_cycles - served) / overlap
            exec_cycles = min(exec_cycles, max(own_mem + rest, floor) * batch)
        elif lockstep > 0:  # (22l): one period in flight, warps in step miss the L1
            # together and their computing (the L1's served lines) cannot fill that wait
            exec_cycles = max(exec_cycles, (n * comp_cycles + lockstep) * batch)
        if alone > 0:  # (22k), (22q): its own dependence chain, never above (22)
            exec_cycles = min(exec_cycles, max(alone, n * lsu) * batch)
    elif no_mem_insts > 0 and cwp >= mwp:
        case = "eq16"
        mem_term = mem_cycles * n / mwp
        comp_term = comp_cycles / no_mem_insts * mwp
        if whole:
            exec_cycles = (mem_term + comp_term) * batch  # (16), whole expression per batch
        else:
            exec_cycles = mem_term + comp_term * batch  # (16) as printed
    else:
        case = "eq17"
        if whole:
            exposed = max(mem_l, lockstep)  # (17l): misses in step stay exposed
            exec_cycles = (exposed + comp_cycles * n) * batch  # (17), whole expression per batch
        else:
            exec_cycles = mem_l + comp_cycles * n * batch  # (17) as printed
    return case, exec_cycles + handover  # (R1w)


def predict_cgpredict(
    profile: KernelProfile,
    device: GPUDevice,
    *,
    batch_mode: BatchMode = "whole",
    bandwidth_bound: bool = True,
    geometry: LaunchGeometry | None = None,
    smem_cost: str = "issue",
) -> CGPredictResult:
    """Predict the GPU time of one kernel with SPEC §2.5 (and §2.6 for shared memory).

    smem_cost, one shared access in eq. (20): "issue" (default), ``smem_issue_cycles`` per
    conflict-free way, its latency overlapped; "latency", ``shared_latency_cycles`` serial (kept
    only for comparison: a tiled GEMM ~20x slower than the naive one, against every measurement).
    """
    if batch_mode not in ("whole", "paper"):
        raise ValueError(f"batch_mode must be 'whole' or 'paper', got {batch_mode!r}")
    geo = geometry or launch_geometry(profile, device)
    n, b, batch = geo.n_warps, geo.b_blocks, geo.waves
    lat = memory_latency(profile, dram_share(device, geo.active_sms))  # (3a)
    mem_cycles = lat.mem_cycles  # (6)
    smem_load_cycles, smem_cycles, l1_cycles, comp_cycles = _comp_cycles(
        profile, device, smem_cost, b
    )
    mem_cycles += smem_load_cycles  # (21)
    no_mem_insts = lat.no_mem_insts + profile.shared.load_insts

    mem_l, dep = lat.mem_l, lat.departure_delay
    mwp_full, bw_per_warp, mwp_peak = _mwp_limits(lat, device, geo)
    mwp = min(mwp_full, n, mwp_peak if bandwidth_bound else math.inf)  # (13) <= N, §3 (5)
    cwp_full = (mem_cycles + comp_cycles) / comp_cycles if comp_cycles > 0 else math.inf  # (14)
    cwp = min(cwp_full, n)  # (14) bounded by N

    whole, own_comp = batch_mode == "whole", max(comp_cycles, profile.compute_chain_cycles)
    overlap = own_overlap(profile.loads_in_flight, mwp_full,
                          mwp_peak if bandwidth_bound else math.inf, n)  # (22m)
    case, exec_cycles = _exec_cycles(  # own_comp: (22c)
        whole, no_mem_insts, mwp, cwp, n, mem_cycles, comp_cycles, mem_l, batch, own_comp,
        overlap, lsu_cycles(profile, device),
        l1_period_cycles(profile, device) + smem_load_cycles,  # (22m): serial periods
        lockstep := lockstep_cycles(profile, device, n, comp_cycles, no_mem_insts),  # (17l)
        retire := retire_cycles(profile, device) if whole else 0.0,  # (R1)
        profile.hoisted_load_cycles, alone_cycles(profile, device, n, comp_cycles))  # (22h), (22k)
    sync_cost = _sync_cycles(profile, device, case, whole and smem_cost != "latency",
                             dep * max(mwp - 1, 0.0), b, batch)
    per_launch = exec_cycles + sync_cost
    cycles = per_launch * profile.launches
    return CGPredictResult(
        latency=lat,
        geometry=geo,
        batch_mode=batch_mode,
        bandwidth_bound=bandwidth_bound,
        smem_load_cycles=smem_load_cycles,
        smem_cycles=smem_cycles,
        l1_cycles=l1_cycles,
        sync_cost=sync_cost,
        comp_cycles=comp_cycles,
        own_comp_cycles=own_comp,
        mem_cycles=mem_cycles,
        mem_l=mem_l,
        departure_delay=dep,
        no_mem_insts=no_mem_insts,
        mwp_full=mwp_full,
        bw_per_warp_gbps=bw_per_warp / 1e9,
        mwp_peak_bw=mwp_peak,
        mwp=mwp,
        cwp_full=cwp_full,
        cwp=cwp,
        n_warps=n, b_blocks=b, batch=batch, case=case,
        exec_cycles=exec_cycles,
        cycles_per_launch=per_launch,
        launches=profile.launches,
        cycles=cycles,
        time_ms=device.cycles_to_ms(cycles),  # (18)
        bound=bound_of(comp_cycles, mem_cycles, n, mwp),
        own_overlap=overlap if case == "eq22" else 1.0,
        lockstep_cycles=lockstep if whole and case in ("eq17", "eq22") and lockstep > mem_l
        else 0.0,
        retire_cycles=retire,  # (R1w): charged in every case of the whole reading
    )


def sm_figures(comp_cycles: float, mem_cycles: float, n: float, mwp: float) -> tuple[float, float]:
    """(compute, memory) cycles of an SM's N warps, the figures the bound label compares:
    every warp's computing issued one after another (N x computing cycles), every warp's
    memory periods MWP at a time (N x memory cycles / MWP)."""
    return comp_cycles * n, mem_cycles * n / mwp if mwp > 0 else math.inf


def bound_of(comp_cycles: float, mem_cycles: float, n: float, mwp: float) -> Bound:
    """'memory' when an SM's warps spend longer in memory periods than in computing (the
    figures of sm_figures, which the report prints beside the label), else 'compute'."""
    comp, mem = sm_figures(comp_cycles, mem_cycles, n, mwp)
    return "memory" if mem >= comp else "compute"
