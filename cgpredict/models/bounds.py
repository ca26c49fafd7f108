"""Physical lower bounds on a kernel's time, which no model's prediction may beat.

Every analytical model estimates how latencies overlap; none of them may predict a kernel
faster than the GPU can move its bytes or issue its instructions. Three throughputs bound a
launch, each from the same profile the models read:

* DRAM: the compulsory traffic (L2 misses of loads, plus every sector the stores dirty,
  written back once) at the device's DRAM bandwidth, plus one DRAM round trip
  (``l2_latency_cycles + dram_latency_cycles``, SPEC eq. (2)) per wave of blocks whose loads
  reach DRAM (``dram_wave_cycles``): a wave's blocks start together, no byte of theirs
  returns before the first request's round trip, and the next wave starts only as its
  blocks retire, so the bandwidth is reached between the round trips, not during them; on a
  device with ``dram_loaded_latency_cycles`` the bytes or, when longer, eq. (LW)
  (loaded_wave.py): every wave a loaded warp life, every handover a block's tail (R1);
* issue: every warp instruction at ``inst_cycles_per_warp_inst`` on the SMs the launch uses;
* L2: the SM-L2 crossbar's two directions, each a separate network: the load data coming
  back (``dd_l2_cycles`` per load transaction) and the store data going out
  (``dd_store_cycles`` per store sector, twice for a sector the warp writes only in part
  and the L2 does not hold, which it must read, merge and write back: an uncoalesced store
  of 4-byte words to 32 missing sectors costs 64 sector times, a coalesced one 4; a partly
  written sector the L2 holds, loaded before as a struct updated in place, merges into its
  valid copy without a read and costs one, memory/transactions._tally). The loads' replies are per
  SM (on the SMs the launch uses); the store side is the L2's, whose slices serve the
  whole chip, so its cycles spread over every SM of the device: a launch on 4 SMs does not
  slow them, and its SMs' own cost per store is in the L1 path. The two
  directions work at once, so the bound is the slower of them, not their sum: on the Jetson
  TK1 the naive GEMM's loads alone take its measured time (the sum predicted it 58% slow).
  A third L2 throughput joins them where the device gives ``l2_miss_slot_ns``: the slices'
  miss path (eq. (LM), ``l2_miss_path_cycles``), one slot a load request that misses the
  L2 and one a fill block crossing between the two partitions, shared by ``l2_slices``
  slices; it binds a random gather (a request and a crossing for nearly every lane).
  A fourth L2 throughput, where the device sets ``l2_request_cycles``, is the slices'
  look-ups of the loads' requests (a warp instruction's sectors of one line that the L1
  misses), hits and misses alike, chip-wide (eq. (B2q)): it binds a sparse kernel whose
  gathers hit the L2 (spmv_csr: ncu puts the look-ups at 90 % of their peak, the miss path
  at 30 %).

A fourth bound is latency, not throughput: the **critical path** of the launch's busiest
thread (``KernelProfile.chain_cycles``: its loop iterations times each one's loop-carried
recurrence or load-to-use chain, overlapped only as far as one thread keeps loads in flight,
parallelism.py). A GPU issues a thread's instructions in order, so however many warps an SM
holds, every wave of blocks lasts at least that long: a single-thread kernel, a small grid or a
thread that does all the work is bound by it (``waves`` x chain).

A seventh is the **L1** path (eq. (B2)), on GPUs whose L1 caches global loads: the SM's L1
takes each line a warp's load reads, an L1 hit as well as a miss, ``l1_line_cycles`` each
(one tag look-up a line a cycle), and each line a store writes ``l1_store_line_cycles``
(write-through: the look-up), whose data then leave the SM for the L2 at
``dd_store_cycles`` a line (eq. (B2s)), so a launch lasts at least as long as its warps'
lines on the SMs it uses plus ``l1_request_cycles`` a warp request (eq. (B2r): ncu's SM
cycles on the H100's restrict GEMM-like and SYRK ports are 0.998 a data-stage wavefront plus
0.231 a request, docs/models.md), or as their store lines' way out: the L1 and the way out
are pipelined, the slower binds. The H100's
row walks (8 warps an SM, each warp instruction one word of 32 rows: 32 lines; event-timed,
1024 iterations) give, at one cycle a load line, 1.67 and 1.74 cycles a store line
(Deriche's forward pass: 64 load and 32 store lines an iteration, 939 cycles; backward: 32
and 32, 702), where corr_corr, 32 store lines and 2 load lines an iteration, takes 2.15 a
store line: its stores' way out binds, the row walks' look-ups.

A sixth is the **pipe** bound (pipes.py, eq. (12p)): every warp instruction of an arithmetic
class occupies its pipe for warp_size / (the class's published operations per clock per SM),
so a launch lasts at least as long as its busiest pipe needs for all its warps on the SMs it
uses: double precision on a GPU with few FP64 units, the SFU's reciprocals, an integer
multiply on Kepler. ``pipe`` names that class; the issue bound is the dispatch alone.

A fifth is the **atomic** bound (atomics.py), the larger of two (eqs. (A1), (A2)): the L2
applies the atomic updates of one address one after another, ``atomic_address_cycles`` each
(``atomic_address_float_cycles`` for a float add), so a launch lasts at least as long as the
updates of its busiest address (a reduction's accumulator); and each L2 slice's atomic unit
applies its sector passes one after another (l2_slices.py: a warp instruction updates each
sector once a pass, lanes on one address in passes of their own), ``atomic_slice_cycles``
each, so a launch lasts at least as long as its busiest slice's passes (a histogram whose
bins fill two slices of 80). The atomics'
request sectors ride the store path of the L2 bound, and the locations they update are read
from DRAM once and written back once.

An eighth is the **block dispatch** bound (eq. (BD)): the GPU starts thread blocks one after
another from one dispatcher, ``block_dispatch_cycles`` each (the H100's, from
validation/ubench/block_rate.cu: blocks of one to eight warps that do nothing take the same
time a block, chip-wide), so a launch lasts at least its blocks times that. It binds a big
grid of small blocks: 2^24 threads in 32-thread blocks, 524288 blocks, take the same ~0.33 ms
whatever the kernel does (SAXPY, Black-Scholes, a hash, a strided copy).

A ninth is the **phases** bound (eq. (PH), phase_cycles): a thread whose mapped loop holds
loops one after another (softmax's maximum, sum and write passes) walks them in order, and so
do all its launch's warps, so a phase that holds the L2's store path does not overlap one that
holds the L1: the launch lasts at least the sum over its phases of each one's slowest L1 or L2
path (``KernelProfile.phases``, kernel/launch_phases.py), never less than the L1 and L2 sums.

The issue, pipe, L1 and L2 (loads' side) bounds are per SM: they spread the launch's warps
evenly over the SMs it uses, times ``KernelProfile.sm_share`` (sm_share.py, eq. (B1)): a
launch of at most one block an SM whose blocks work unequally (a triangular loop's threads)
lasts as long as its busiest SM, not the mean one. Equal blocks that outnumber the SMs leave
the busiest SM ceil(blocks / SMs) whole blocks (eq. (B1g), whole_block_share): that share
multiplies these bounds, and the L2's store side within one wave. Beyond one wave the slots
are out of phase and the store side ends raggedly instead, eq. (B1t) (ragged_end_cycles):
the L2 hands an emptied slot's share to the busy ones, none faster than its path alone.

Stores are the reason the L2 bound matters: a warp does not wait for its stores (write-back
L2 on Kepler, write-through L1 on later GPUs), so the latency models see only the loads, and
the stores cost issue slots (counted as instructions) and memory-path time (here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cgpredict.devices import GPUDevice
from cgpredict.models.base import LaunchGeometry
from cgpredict.models.loaded_wave import loaded_wave_cycles
from cgpredict.models.warp_queue import queued_path_cycles
from cgpredict.pipes import pipe_cycles
from cgpredict.profile import KernelProfile, PhaseCosts

__all__ = ["BOUND_NAMES", "Bounds", "l2_miss_path_cycles", "l2_parts", "launch_bounds",
           "phase_costs", "phase_cycles", "ragged_end_cycles", "whole_block_share"]

BOUND_NAMES = ("dram", "issue", "l2", "chain", "atomic", "pipe", "l1", "dispatch", "phases")


@dataclass(frozen=True)
class Bounds:
    """Lower bounds of one launch, in cycles, with what they count."""

    dram_bytes: float
    dram_cycles: float  # the bytes at the bandwidth plus dram_wave_cycles
    warp_insts: float
    issue_cycles: float
    l2_load_trans: float
    l2_store_trans: float
    l2_cycles: float
    chain_cycles: float = 0.0  # waves x the busiest thread's critical path
    atomic_ops: float = 0.0  # atomic operations at the L2
    atomic_cycles: float = 0.0  # the larger of the address and slice bounds (A1), (A2)
    atomic_requests: float = 0.0  # L2 atomic requests (lanes on one address combined)
    atomic_slice_cycles: float = 0.0  # the busiest L2 slice's requests, one after another
    pipe_cycles: float = 0.0  # the busiest pipe's instructions at its published rate
    pipe: str = ""  # that pipe's class (pipes.PIPE_CLASSES), "" without pipe rates
    dram_wave_cycles: float = 0.0  # of dram_cycles: a round trip a wave, or (LW) past the bytes
    l1_cycles: float = 0.0  # every warp's global lines through its SM's L1, eq. (B2)
    blocks: float = 0.0  # the launch's thread blocks
    dispatch_cycles: float = 0.0  # blocks x block_dispatch_cycles, eq. (BD)
    l2_requests: float = 0.0  # the loads' L2 requests (lines of missed sectors), eq. (B2q)
    queue_cycles: float = 0.0  # of chain_cycles: the warps' closed loop, eq. (LTq2)
    phase_cycles: float = 0.0  # the thread's phases one after another, eq. (PH); 0: one
    dram_read_bytes: float = 0.0  # of dram_bytes: what the launch reads ((E5b) write-back)

    @property
    def cycles(self) -> float:
        return max(self._values)

    @property
    def _values(self) -> tuple[float, ...]:
        """The bounds in BOUND_NAMES order."""
        return (self.dram_cycles, self.issue_cycles, self.l2_cycles, self.chain_cycles,
                self.atomic_cycles, self.pipe_cycles, self.l1_cycles, self.dispatch_cycles,
                self.phase_cycles)

    @property
    def binding(self) -> str:
        """The name of the largest bound."""
        values = self._values
        return BOUND_NAMES[values.index(max(values))]


def _whole_waves(waves: float) -> int:
    """Waves of blocks a launch runs, a partial last one counted whole (at least one)."""
    return max(math.ceil(waves - 1e-9), 1)


def whole_block_share(blocks: float, sms: int) -> float:
    """The busiest SM's blocks over the mean SM's when equal blocks outnumber the SMs, eq.
    (B1g): the block scheduler hands each SM whole blocks, so ``blocks`` over ``sms`` SMs
    leave one SM ceil(blocks / sms) of them (4096 blocks on 132 SMs: 32 against 31.03);
    1 with at most one block an SM (eq. (B1) prices those)."""
    if sms <= 0 or blocks <= sms:
        return 1.0
    mean = blocks / sms
    return math.ceil(mean - 1e-9) / mean


def ragged_end_cycles(fluid: float, alone: float, waves: float) -> float:
    """Cycles the chip-wide store side runs past its fluid time at a launch's ragged end, eq.
    (B1t): beyond one wave the slots' blocks are out of phase, so when the blocks run out
    each slot is a uniform fraction through its last one; the L2 hands the slots that
    empty their share, but a block goes no faster than its own path alone (``alone``, a
    wave's chain), so the end stretches by rho^2 / 2 of a block's loaded life
    (``fluid / waves``), rho = alone / that life (at most 1); 0 within one wave."""
    if waves <= 1.0 or fluid <= 0.0:
        return 0.0
    life = fluid / waves  # a block's life while every slot shares the L2's store side
    rho = min(max(alone, 0.0) / life, 1.0)
    return rho * rho * life / 2.0  # (B1t)


def dram_wave_cycles(device: GPUDevice, waves: float, dram_loads: float) -> float:
    """One DRAM round trip, SPEC eq. (2), per wave whose loads reach DRAM (0 when none do)."""
    if dram_loads <= 0:
        return 0.0
    return _whole_waves(waves) * (device.l2_latency_cycles + device.dram_latency_cycles)


def launch_bounds(profile: KernelProfile, device: GPUDevice, geo: LaunchGeometry) -> Bounds:
    """The nine bounds of one launch of ``profile`` (all its warps, all waves)."""
    warps = float(geo.total_warps)
    blocks = warps / max(geo.warps_per_block, 1)
    sms = max(geo.active_sms, 1)
    loads = profile.loads_only()
    pats = (loads.coal, loads.uncoal, loads.const)
    reaching = [p.insts * (1 - p.l1_hit_fraction) for p in pats]
    l2_loads, store_cycles, requests_warp = l2_parts(profile, device)
    l2_requests = warps * requests_warp
    dram_loads = sum(n * p.dram_trans_per_warp for n, p in zip(reaching, pats))
    fetched = sum(n * p.dram_fetched for n, p in zip(reaching, pats))  # (F1)
    fetched += profile.shared.load_dram_trans
    dram_loads += profile.shared.load_dram_trans  # their L2 misses
    st = profile.stores
    at = profile.atomics
    read_bytes = warps * fetched * device.l2_sector_bytes + at.footprint_bytes
    dram_bytes = read_bytes + warps * st.write_back_trans * device.l2_sector_bytes
    dram_bytes += at.footprint_bytes  # the updated locations: read once, written back once
    stream = dram_bytes / device.dram_bandwidth_bytes_per_s * device.freq_hz
    if device.dram_loaded_latency_cycles > 0:  # (LW): the waves' loaded lives, if longer
        wave_cycles = max(loaded_wave_cycles(profile, device, geo.waves, dram_loads) - stream,
                          0.0)
    else:
        wave_cycles = dram_wave_cycles(device, geo.waves, dram_loads)
    dram_cycles = stream + wave_cycles
    warp_insts = warps * (profile.total_insts + profile.shared.transactions)
    # the busiest SM's work over the mean SM's, eq. (B1), with its whole blocks (B1g)
    whole = whole_block_share(profile.blocks, sms)
    share = profile.sm_share * whole
    issue_cycles = warp_insts * device.inst_cycles_per_warp_inst / sms * share
    pipe_warp, pipe = pipe_cycles(profile.pipes, device.pipes, device.warp_size)  # (12p)
    queue = warp_queue_cycles(profile, device, geo)  # (LTq2)
    # loads' data returns on the reply network, stores' data rides the request network; the
    # two are separate (full duplex), so the slower of the two paths bounds the launch
    atomic_ops = warps * device.warp_size * at.ops
    requests = warps * device.warp_size * at.requests
    per_op = device.atomic_float_cycles if at.hot_float else device.atomic_address_cycles
    address_cycles = atomic_ops * at.hot_share * per_op  # (A1)
    slice_cycles = requests * at.slice_share * (device.atomic_slice_cycles or 0.0)  # (A2)
    # the loads' replies per SM; the stores at the L2, whose slices serve the whole chip: a
    # launch on few SMs does not slow them, its SMs' own store cost is the L1 path's (B2)
    store_side = warps * store_cycles / max(device.sm_count, sms)
    if geo.waves > 1.0:  # out-of-phase slots: the ragged end in place of (B1g), eq. (B1t)
        store_side += ragged_end_cycles(store_side, max(profile.chain_cycles, queue),
                                        geo.waves)
    else:  # one wave: the busiest SM's whole blocks, eq. (B1g)
        store_side *= whole
    l2_cycles = max(warps * l2_loads * device.dd_l2_cycles / sms * share,
                    store_side,  # (B1g), (B1t)
                    warps * l2_miss_path_cycles(profile, device, fetched),  # (LM)
                    l2_requests * device.l2_request_cycles / max(device.sm_count, sms))  # (B2q)
    return Bounds(
        dram_bytes=dram_bytes,
        dram_cycles=dram_cycles,
        warp_insts=warp_insts,
        issue_cycles=issue_cycles,
        l2_load_trans=warps * l2_loads,
        l2_store_trans=warps * (st.l2_trans + at.trans),  # atomics ride the store path
        l2_cycles=l2_cycles,
        chain_cycles=max(profile.chain_cycles, queue) * _whole_waves(geo.waves),
        atomic_ops=atomic_ops,
        atomic_cycles=max(address_cycles, slice_cycles),
        atomic_requests=requests,
        atomic_slice_cycles=slice_cycles,
        pipe_cycles=warps * pipe_warp / sms * share,
        pipe=pipe,
        dram_wave_cycles=wave_cycles,
        l1_cycles=l1_path_cycles(profile, device) * warps / sms * share,
        blocks=blocks,
        dispatch_cycles=blocks * device.block_dispatch_cycles,  # (BD)
        l2_requests=l2_requests,
        queue_cycles=queue * _whole_waves(geo.waves),
        phase_cycles=phase_cycles(profile, device, warps, sms) * whole,  # (PH), (B1g)
        dram_read_bytes=read_bytes,
    )


def l2_parts(profile: KernelProfile, device: GPUDevice) -> tuple[float, float, float]:
    """One warp's L2 traffic, as the L2 bound of launch_bounds reads it: (its loads' L2
    transactions past the L1, a tiled kernel's staging loads included; the cycles its
    stores and atomics take on the store path, ``dd_store_cycles`` a sector, twice for a
    partly written sector the L2 must merge; its loads' L2 requests, eq. (B2q))."""
    loads = profile.loads_only()
    pats = (loads.coal, loads.uncoal, loads.const)
    reaching = [p.insts * (1 - p.l1_hit_fraction) for p in pats]
    l2_loads = sum(n * max(p.l2_trans_per_warp, 1.0) for n, p in zip(reaching, pats) if n > 0)
    l2_loads += profile.shared.load_l2_trans  # a tiled kernel's staging loads (issue 24)
    requests = sum(n * p.l2_requests_per_warp for n, p in zip(reaching, pats))
    st = profile.stores
    partial = st.partial_sectors(device.warp_size * profile.bytes_per_access,
                                 device.l2_sector_bytes)
    store_cycles = (st.l2_trans + partial + profile.atomics.trans) * device.store_cycles
    return l2_loads, store_cycles, requests


def phase_cycles(profile: KernelProfile, device: GPUDevice, warps: float, sms: int) -> float:
    """Eq. (PH): a launch whose threads run phases one after another (loops beside each
    other in the mapped loop's body, ``profile.phases``) lasts at least the sum over its
    phases of the slowest of each phase's L1 path (B2) and L2 paths (the loads' replies per
    SM, the stores and L2 look-ups chip-wide), not the slowest of their sums: the warps
    walk the phases in step, so a phase that waits on the L2's stores does not overlap
    another's L1 lines (softmax's write pass against its two read passes):

        phases = sum_p max(l1_p x W/S x share, l2sm_p x W/S x share, l2chip_p x W/S_chip)  (PH)

    (W the launch's warps, S the SMs it uses, S_chip = max(sm_count, S)); 0 for a thread
    with fewer than two phases."""
    if len(profile.phases) < 2:
        return 0.0
    per_sm = warps / sms * profile.sm_share
    chip = warps / max(device.sm_count, sms)
    return sum(max(p.l1_cycles * per_sm, p.l2_sm_cycles * per_sm, p.l2_chip_cycles * chip)
               for p in profile.phases)


def phase_costs(profile: KernelProfile, device: GPUDevice) -> PhaseCosts:
    """The PhaseCosts of one phase, from a profile that holds its memory instructions alone:
    one warp's L1 path (B2), its loads' replies at ``dd_l2_cycles`` a transaction, and the
    slower of its store path and its L2 look-ups at ``l2_request_cycles`` each (B2q)."""
    l2_loads, store_cycles, requests = l2_parts(profile, device)
    return PhaseCosts(
        l1_cycles=l1_path_cycles(profile, device),
        l2_sm_cycles=l2_loads * device.dd_l2_cycles,
        l2_chip_cycles=max(store_cycles, requests * device.l2_request_cycles),
    )


def warp_queue_cycles(profile: KernelProfile, device: GPUDevice, geo: LaunchGeometry) -> float:
    """One wave's time of the busiest thread's warp among the n warps of its sub-partition,
    eq. (LTq2) (models/warp_queue.py): its path alone (``alone_chain_cycles``) around the
    issue slot (a warp's instructions and shared wavefronts at ``inst_cycles_per_warp_inst``
    x schedulers a cycle each) and each pipe slower than that slot (warp_queue.QUEUED_PIPES:
    a warp's instructions of the class x schedulers x warp_size / rate, eq. (12p)). 0 with
    one warp a sub-partition or without a path."""
    return queued_path_cycles(profile, device, geo.n_warps)  # (LTq2)


def l2_miss_path_cycles(profile: KernelProfile, device: GPUDevice, fetched: float) -> float:
    """SM cycles one warp's share of the L2 slices' miss path takes (eq. (LM)); 0 on a device
    without ``l2_miss_slot_ns``. Each slice's miss path takes one slot for every load
    request (a warp instruction's sectors of one line that the L1 misses,
    ``l2_requests_per_warp``, the count eq. (B2q) reads) that misses the L2, and one for every
    ``dram_fill_bytes`` block that crosses between the partitions: a near miss on a line
    homed in the other partition ((P - 1) / P of the fetched sectors, ``fetched`` per warp,
    eq. (F1)) and a store to it (the same share of the store sectors):

        slots = sum_P reaching_P x misses_P x requests_P / L2 sectors_P
                + (P - 1) / P x (fetched + store sectors) / fill sectors
        cycles = slots x l2_miss_slot_ns x clock / l2_slices                          (LM)

    ``l2_miss_slot_ns`` is in the L2's clock, not the SM's (an L2-bound launch takes the
    same time at 1.59 and 1.98 GHz SM clocks, docs/models.md), so it is turned into SM
    cycles here."""
    if not device.l2_miss_slot_ns or not device.l2_slices:
        return 0.0
    sector = max(device.l2_sector_bytes, 1)
    loads = profile.loads_only()
    missed = profile.shared.load_dram_trans / max(device.l2_line_bytes // sector, 1)
    for p in (loads.coal, loads.uncoal, loads.const):
        if p.insts <= 1e-12 or p.dram_trans_per_warp <= 0:
            continue
        sectors = max(p.l2_trans_per_warp, 1.0)  # both per instruction past the L1
        lines = p.l2_requests_per_warp if p.l2_requests_per_warp > 0 else sectors
        missed += p.insts * (1 - p.l1_hit_fraction) * p.dram_trans_per_warp * min(
            lines / sectors, 1.0)
    far = (device.l2_partitions - 1) / device.l2_partitions
    fill = max(device.dram_fill_bytes, sector) / sector
    crossing = far * (fetched + profile.stores.l2_trans) / fill
    return (missed + crossing) * device.l2_miss_slot_ns * 1e-9 * device.freq_hz / \
        device.l2_slices


def l1_path_cycles(profile: KernelProfile, device: GPUDevice) -> float:
    """Cycles one warp's global accesses hold its SM's L1 (eq. (B2)), on a GPU whose L1
    caches global loads: its data stage takes ``l1_line_cycles`` for every line a load
    reads, an L1 hit or not (cgpredict_model.global_lines), and ``l1_store_cycles`` for
    every line a store writes (the write-through look-up); the store's data then leave
    the SM for the L2, ``dd_store_cycles`` a line (eq. (B2s)); and the request stage takes
    ``l1_request_cycles`` more for every global warp instruction (eq. (B2r)): the lines and
    the requests add (ncu: SM cycles = 0.998 wavefronts + 0.231 requests on the restrict
    GEMM-like and SYRK ports), the L1 and the way out are pipelined, the slower binds; 0
    where the L1 does not cache global loads (Kepler: the loads bypass it)."""
    if not device.l1_caches_global_loads:
        return 0.0
    loads = profile.loads_only()
    per_line = max(device.l1_line_bytes // max(device.l2_sector_bytes, 1), 1)
    load_lines = _lines((loads.coal, loads.uncoal, loads.const), per_line)
    store_lines = _lines(profile.stores.patterns, per_line)
    data = device.l1_line_cycles * load_lines + device.l1_store_cycles * store_lines  # (B2)
    egress = device.store_cycles * store_lines  # (B2s)
    requests = sum(p.insts for p in (loads.coal, loads.uncoal, loads.const,
                                     *profile.stores.patterns))
    return max(data + device.l1_request_cycles * requests, egress)  # (B2r)


def _lines(patterns, per_line: int) -> float:
    """L1 lines of one warp's instructions of the (coalesced, uncoalesced, constant)
    ``patterns``: their distinct lines where traced (``lines_per_warp``), else from their
    sectors (a profile built by hand): a coalesced access's packed ``per_line`` a line, an
    uncoalesced one's a line each, a broadcast one line."""
    total = 0.0
    for kind, p in enumerate(patterns):
        if p.insts <= 1e-12:
            continue
        sectors = max(p.sectors_per_warp or p.l2_trans_per_warp, 1.0)
        guess = (math.ceil(sectors / per_line - 1e-9), sectors, 1.0)[kind]
        total += p.insts * (p.lines_per_warp if p.lines_per_warp > 0 else guess)
    return total
