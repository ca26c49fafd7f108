"""What a GPU device file holds (SPEC §2.7, §6): the frozen ``GPUDevice`` with its energy table
and provenance, and ``FIELD_SCHEMA``, the file's keys by table with their kinds. One table
read two ways (the typed fields, and the file's keys with their kinds, units and ranges):
kept in one module so that a field is never added to one and not the other (``devices``
loads a file into the one from the other). The schema is documented in ``devices/SCHEMA.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from cgpredict.compute import OpLatencies
from cgpredict.l2_slices import SliceMap
from cgpredict.pipes import PipeRates


@dataclass(frozen=True)
class EnergyTable:
    """Energy per instruction class and per memory transaction, in nanojoules (SPEC §6)."""

    fp32_op_nj: float | None = None
    int32_op_nj: float | None = None
    sfu_op_nj: float | None = None
    fp64_op_nj: float | None = None
    dram_transaction_nj: float | None = None
    l2_transaction_nj: float | None = None
    smem_transaction_nj: float | None = None
    static_power_w: float | None = None  # board power not attributed to operations, W


@dataclass(frozen=True)
class Provenance:
    """Where the figures of a device file come from; `notes` maps a field name to a remark."""

    source: str
    date: str = ""
    gpu_name: str = ""
    notes: tuple[tuple[str, str], ...] = ()

    def note(self, key: str) -> str:
        """The note attached to field `key` ('' when there is none)."""
        return dict(self.notes).get(key, "")


def _ieee_keys(dev: "GPUDevice") -> tuple[tuple[str, float | None], ...]:
    """The measured IEEE chains of ``dev`` by compute.SASS_CHAIN key (eq. (IE))."""
    return (("fdiv_f32", dev.fdiv_chain_cycles), ("sqrt_f32", dev.fsqrt_chain_cycles),
            ("fdiv_f64", dev.ddiv_chain_cycles), ("sqrt_f64", dev.dsqrt_chain_cycles))


@dataclass(frozen=True)
class GPUDevice:
    """One GPU, as read from its device file. Field units are in the names; see SCHEMA.md."""

    name: str
    source_path: str
    # [sm]
    sm_count: int
    clock_mhz: float
    warp_size: int
    max_threads_per_sm: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    max_threads_per_block: int
    registers_per_sm: int
    register_alloc_unit: int
    shared_mem_per_sm_bytes: int
    shared_mem_per_block_max_bytes: int
    sfu_per_sm: int
    simd_width: int
    schedulers_per_sm: int
    # [memory]
    l2_bytes: int
    l2_line_bytes: int
    l2_ways: int
    l2_sector_bytes: int
    l1_caches_global_loads: bool
    l1_bytes: int
    l1_line_bytes: int
    smem_banks: int
    smem_bank_bytes: int
    dram_bandwidth_gbps: float
    # [timing]
    l1_latency_cycles: float
    l2_latency_cycles: float
    dram_latency_cycles: float
    shared_latency_cycles: float
    dd_l2_cycles: float
    dd_dram_cycles: float
    inst_cycles_per_warp_inst: float
    smem_load_cycles: float
    inst_latency_cycles: float
    fp_latency_cycles: float
    # optional keys
    description: str = ""
    compute_capability: str = ""
    max_registers_per_thread: int = 255
    smem_issue_cycles: float = 1.0
    # cycles the SM's L1 takes per 128-byte line (wavefront) a global warp access reads,
    # sustained over many warps: the floor of eq. (22m) (models/cgpredict_model.lsu_cycles)
    l1_line_cycles: float = 1.0
    # cycles the SM's L1 takes per global warp request, however few lines it reads, sustained
    # over many warps: the L1 path is the slower of its requests and its lines, eq. (B2r); 0: none
    l1_request_cycles: float = 0.0
    # 128-byte lines the L1's tag stage looks up a cycle: a global warp load holds the L1 for
    # at least ceil(lines / this) cycles, eq. (B2t) (memory/wavefronts.py); 0: no limit
    l1_tag_lines: int = 0
    # missed sectors the L1 writes into the SRAM a pass as their fills arrive, in the slots of
    # the lines (B2t) looks up: ceil(missed sectors / this) slots more, eq. (B2f); 0: none
    l1_fill_sectors: int = 0
    # relative standard deviation of one warp's DRAM round trip under load: the spread of
    # warp timelines a block's retirement waits for (models/retire.py, eq. (R1)); 0: none
    dram_latency_cv: float = 0.0
    # a one-pass warp's life (launch to exit, one DRAM line) when every SM's warps stream:
    # each wave of blocks lasts at least this, eq. (LW) (models/loaded_wave.py); 0: none,
    # the DRAM bound then charges one unloaded round trip a wave
    dram_loaded_latency_cycles: float = 0.0
    # the same life when the launch's stores stay in the L2 (the program's one launch, its written
    # bytes within l2_persist_bytes: the DRAM takes its reads alone), eq. (LWl)
    # (models/loaded_wave.py); 0: dram_loaded_latency_cycles always
    dram_light_life_cycles: float = 0.0
    # cycles an SM's memory path is busy per L2 transaction of a warp *store* (stores are
    # not waited for: they cost issue and path occupancy, not a latency; a partly written
    # sector costs twice, read-modify-write); None: dd_l2_cycles
    dd_store_cycles: float | None = None
    # cycles an SM's L1 takes per line a global warp *store* writes (write-through: the
    # look-up and the data passed on to the L2), the store side of the L1 path, eq. (B2);
    # None: the store cost dd_store_cycles (its L2 side)
    l1_store_line_cycles: float | None = None
    # the launch stream (models/launches.py): one launch followed by the host's
    # synchronisation (a round trip, the kernel's work excluded), and the least interval
    # between the starts of launches queued back to back, microseconds
    launch_sync_us: float = 0.0
    launch_gap_us: float = 0.0
    # SM cycles the GPU takes to start one thread block, chip-wide (its block dispatcher): a
    # launch of many small blocks lasts at least blocks x this, eq. (BD) (models/bounds.py);
    # 0: no such bound
    block_dispatch_cycles: float = 0.0
    first_launch_us: float = 0.0  # extra cost of a program's first launch (its module's loading)
    # what a cudaEvent pair around a launch counts of the host (models/event_timing.py, eq.
    # (E1)-(E3)): the host's launch call, which the GPU waits for when it is idle; the first
    # call's extra after a pageable upload of at least upload_launch_min_bytes; microseconds
    launch_call_us: float = 0.0
    # the host's period of one iteration of an event-timed host loop (event, launch, event;
    # eq. (E3)); 0: a loop's launches come every launch_gap_us (the host never the slower)
    loop_launch_us: float = 0.0
    # the least and largest host period loop_launch_us stands for, as measured on the hosts
    # of different leases (loop_probe D; eq. (E4s)): the spread of a host-paced prediction;
    # 0: not measured (no range is given)
    loop_launch_lo_us: float = 0.0
    loop_launch_hi_us: float = 0.0
    upload_launch_us: float = 0.0
    upload_launch_min_bytes: int = 0
    # the part of that late first call a cudaMemset after the copies leaves (the ports'
    # re-upload: copies, then memsets), microseconds, eq. (E6); 0: none modelled
    upload_memset_launch_us: float = 0.0
    # the dirty lines a cudaMemset (or a kernel's stores) leaves in the L2 and the next launch
    # writes back (models/dirty_l2.py, eq. (E5)): the most dirty bytes the L2 keeps (0: none
    # modelled), the share of a launch's DRAM read bytes that writes them back, and the DRAM's
    # rate for those bytes on top of a stream, GB/s (0: dram_bandwidth_gbps)
    l2_dirty_max_bytes: int = 0
    l2_dirty_evict_share: float = 0.0
    l2_writeback_gbps: float = 0.0
    # L2 bytes whose data a launch still finds from earlier launches; None: l2_bytes (an L2 of
    # one partition keeps whatever it holds). Data read by SMs on both sides of a two-partition
    # L2 (A100, H100) is cached in each partition, so there it is one partition's bytes.
    l2_persist_bytes: int | None = None
    # partitions of the L2 that each cache what their own SMs read (A100, H100: 2): a line
    # picked at random by any SM (a gather) hits only in the requester's partition, one
    # partition's capacity (memory/reuse.py, eq. (LP1)); 1: one L2
    l2_partitions: int = 1
    # bytes an L2 miss fetches from DRAM: the aligned block of sectors around the missed one
    # (memory/dram_fill.py, eq. (F1)); 0: the sector alone
    dram_fill_bytes: int = 0
    # nanoseconds (the L2's own clock, not the SM's) one L2 slice's miss path takes per slot:
    # a load request that misses the L2, or a dram_fill_bytes block crossing between the
    # partitions (models/bounds.py, eq. (LM)); None: no such bound
    l2_miss_slot_ns: float | None = None
    l1_ways: int = 4
    # the unit the L1's data store allocates (H100: a 32-B sector): its LRU holds
    # l1_bytes / this units, a line's unfetched sectors take no room (eq. (L1a)); 0: the line
    l1_alloc_bytes: int = 0
    # the shared-memory capacities (KB) the driver can split the combined L1/shared array
    # (l1_bytes) into; a launch's L1 is the array less the one it picks (carveout.py, eq.
    # (SC1)-(SC3)). Empty: l1_bytes is the L1 whatever the launch
    shared_carveouts_kb: tuple[int, ...] = ()
    # a launch with no shared memory of its own gets the 1 KB reservations of this many times
    # the blocks the warp limit admits (at most max_blocks_per_sm), eq. (SC1); 0: the blocks
    # of its occupancy, as a launch with shared memory
    carveout_blocks_factor: int = 0
    # SM cycles the L2 takes per read request (one warp instruction's sectors of one line)
    # of every SM, chip-wide: the L2 path's request stage, eq. (B2q); 0: none
    l2_request_cycles: float = 0.0
    # cycles the L2 takes per atomic operation on one address: updates of one address are
    # applied one after another (models/bounds.py, the atomic bound, eq. (A1)); the float
    # add's figure where it differs (None: the same)
    atomic_address_cycles: float = 1.0
    atomic_address_float_cycles: float | None = None
    # cycles one L2 slice takes per atomic sector pass (a warp instruction's update of one
    # sector, lanes on one address in passes of their own), the slices and their address
    # interleave (l2_slices.py, eq. (A2)); None: no slice bound
    atomic_slice_cycles: float | None = None
    l2_slices: int | None = None
    l2_slice_interleave_bytes: int | None = None
    barrier_cycles: float | None = None
    # instructions one warp issues a cycle in a tiled kernel's staging code, bound by the fixed
    # stall counts ptxas writes into its control words (eq. (22d), models/cgpredict_model.
    # drift_cycles); None: 1.0, one a cycle (a staging block then takes every issue slot and
    # nothing of its staging hides under other blocks' shared loads)
    staging_issue_rate: float | None = None
    smem_conflict_replay_cycles: float | None = None
    # dependent-issue latency of an FP64 instruction (DFMA) and of an SFU one (MUFU), cycles
    # (compute.OpLatencies, a thread's critical path); None: fp_latency_cycles
    fp64_latency_cycles: float | None = None
    sfu_latency_cycles: float | None = None
    # measured chain cycles of an IEEE division / square root, float and double (eq. (IE));
    # None: its SASS_CHAIN expansion at the latencies above
    fdiv_chain_cycles: float | None = None
    fsqrt_chain_cycles: float | None = None
    ddiv_chain_cycles: float | None = None
    dsqrt_chain_cycles: float | None = None
    # one warp's loop trip (eq. (LT)): its control recurrence's floor and the taken back
    # branch's cost on a chain through the trip, cycles; None: 0
    loop_trip_cycles: float | None = None
    loop_branch_cycles: float | None = None
    # how far apart one warp's DRAM loads in flight together come back, cycles (eq. (Q1));
    # None: 0, all at once
    dram_sector_gap_cycles: float | None = None
    # eq. (Q1r): one warp's round of DRAM loads waits for the latest of its returns: their
    # spread (sigma), a loop load's one-load trip over the L2 + DRAM latency (lift) and each
    # later load's slot in the round (issue), cycles; None: (Q1) instead
    dram_round_sigma_cycles: float | None = None
    dram_round_lift_cycles: float | None = None
    dram_round_issue_cycles: float | None = None
    # eq. (Q1w): the lift with many warps walking DRAM rounds at once, cycles, and the DRAM's
    # memory controllers the other walkers' rounds land on; None: the lone lift always
    dram_round_loaded_lift_cycles: float | None = None
    dram_memory_controllers: int | None = None
    registers_per_block_max: int | None = None
    shared_mem_alloc_unit_bytes: int = 256
    shared_mem_reserved_per_block_bytes: int = 0
    dram_bytes: int | None = None
    energy: EnergyTable | None = None
    # operations per clock per SM of each instruction class (pipes.py, eq. (12p)); None:
    # dispatch only
    pipes: PipeRates | None = None
    provenance: Provenance | None = None
    # whether the SM's dispatch issues other instructions while its shared-memory path serves
    # a warp's shared accesses (eq. (22): the slower of the two) or not (eq. (22s): their
    # sum, as the SPEC prints (22)); models/cgpredict_model.lsu_issue_cycles
    smem_overlaps_issue: bool = True
    # bytes of lane data one pass of a wide shared load serves: an LDS.128 of 32 lanes is
    # served in 32 x 16 / this phases of lanes, bank conflicts counted within a phase and
    # the phases' passes added (eq. (20w), memory/shared_phases.py); 0: one phase a warp
    smem_phase_bytes: int = 0
    # each l2_slice_interleave_bytes granule on a pair of slices, its pieces of this many bytes
    # alternating between the two (l2_slices.py); None: one slice a granule
    l2_slice_alternate_bytes: int | None = None

    # ---- derived properties ------------------------------------------------------------
    @property
    def threads_per_sm(self) -> int:
        """Pseudo-threads processed per batch (SPEC §2.2): the resident-thread limit of an SM."""
        return self.max_threads_per_sm

    @property
    def op_latencies(self) -> OpLatencies:
        """The dependent-issue latencies of a thread's instructions by kind (compute.py)."""
        fp = self.fp_latency_cycles
        return OpLatencies(
            fp32=fp, integer=self.inst_latency_cycles,
            fp64=fp if self.fp64_latency_cycles is None else self.fp64_latency_cycles,
            sfu=fp if self.sfu_latency_cycles is None else self.sfu_latency_cycles,
            measured=tuple((k, v) for k, v in _ieee_keys(self) if v is not None),
            loop_trip=self.loop_trip_cycles or 0.0, loop_branch=self.loop_branch_cycles or 0.0,
            dram_gap=self.dram_sector_gap_cycles or 0.0,
            dram_sigma=self.dram_round_sigma_cycles or 0.0,
            dram_lift=self.dram_round_lift_cycles or 0.0,
            dram_issue=self.dram_round_issue_cycles or 0.0,
            dram_lift_loaded=self.dram_round_loaded_lift_cycles or 0.0,
            dram_channels=float(self.dram_memory_controllers or 0),
        )  # fmt: skip

    @property
    def freq_hz(self) -> float:
        return self.clock_mhz * 1e6

    @property
    def l2_sets(self) -> int:
        """K of the cache analysis: l2_bytes / (l2_line_bytes * l2_ways)."""
        return self.l2_bytes // (self.l2_line_bytes * self.l2_ways)

    @property
    def l2_lines(self) -> int:
        return self.l2_bytes // self.l2_line_bytes

    @property
    def dram_bandwidth_bytes_per_s(self) -> float:
        return self.dram_bandwidth_gbps * 1e9

    @property
    def dram_bytes_per_cycle(self) -> float:
        """Whole-GPU DRAM bandwidth in bytes per core clock cycle."""
        return self.dram_bandwidth_bytes_per_s / self.freq_hz

    @property
    def store_cycles(self) -> float:
        """Cycles an SM's store path is busy per store sector: dd_store_cycles, else the
        L2's departure delay (a file that does not tell stores from loads)."""
        return self.dd_l2_cycles if self.dd_store_cycles is None else self.dd_store_cycles

    @property
    def l1_store_cycles(self) -> float:
        """Cycles an SM's L1 takes per line a warp stores (eq. (B2)): l1_store_line_cycles,
        else the store cost of the L2 path (``store_cycles``)."""
        f = self.l1_store_line_cycles
        return self.store_cycles if f is None else f

    @property
    def atomic_float_cycles(self) -> float:
        """Cycles per floating-point atomic add on one address (eq. (A1))."""
        f = self.atomic_address_float_cycles
        return self.atomic_address_cycles if f is None else f

    @property
    def slice_map(self) -> SliceMap | None:
        """How addresses map to L2 slices for the per-slice atomic bound; None unless the
        file gives the slices, their interleave and the cost per sector pass."""
        if not (self.l2_slices and self.l2_slice_interleave_bytes and self.atomic_slice_cycles):
            return None
        return SliceMap(slices=self.l2_slices, interleave_bytes=self.l2_slice_interleave_bytes,
                        alternate_bytes=self.l2_slice_alternate_bytes or 0)

    @property
    def persist_bytes(self) -> int:
        """L2 bytes that keep their data from one launch to the next (l2_persist_bytes)."""
        return self.l2_bytes if self.l2_persist_bytes is None else self.l2_persist_bytes

    @property
    def registers_per_block(self) -> int:
        return self.registers_per_block_max or self.registers_per_sm

    @property
    def dram_miss_latency_cycles(self) -> float:
        """Latency of a load served by DRAM: L2 lookup plus DRAM (SPEC eq. (2) adds the two)."""
        return self.l2_latency_cycles + self.dram_latency_cycles

    def cycles_to_ms(self, cycles: float) -> float:
        return cycles / self.freq_hz * 1e3


# ---- schema: table -> key -> (kind, required) -------------------------------------------
# kind: "int" (positive), "int0" (>= 0), "ints" (an ascending list of int0), "float" (positive,
# finite), "bool", "str", "table"
FIELD_SCHEMA: dict[str, dict[str, tuple[str, bool]]] = {
    "": {
        "schema_version": ("int", True),
        "description": ("str", False),
    },
    "sm": {
        "sm_count": ("int", True),
        "clock_mhz": ("float", True),
        "warp_size": ("int", True),
        "max_threads_per_sm": ("int", True),
        "max_warps_per_sm": ("int", True),
        "max_blocks_per_sm": ("int", True),
        "max_threads_per_block": ("int", True),
        "registers_per_sm": ("int", True),
        "register_alloc_unit": ("int", True),
        "max_registers_per_thread": ("int", False),
        "registers_per_block_max": ("int", False),
        "shared_mem_per_sm_bytes": ("int", True),
        "shared_mem_per_block_max_bytes": ("int", True),
        "shared_mem_alloc_unit_bytes": ("int", False),
        "shared_mem_reserved_per_block_bytes": ("int0", False),
        "sfu_per_sm": ("int", True),
        "simd_width": ("int", True),
        "schedulers_per_sm": ("int", True),
        "compute_capability": ("str", False),
    },
    "memory": {
        "l2_bytes": ("int", True),
        "l2_line_bytes": ("int", True),
        "l2_ways": ("int", True),
        "l2_sector_bytes": ("int", True),
        "l1_caches_global_loads": ("bool", True),
        "l1_bytes": ("int", True),
        "l1_line_bytes": ("int", True),
        "l1_ways": ("int", False),
        "l1_alloc_bytes": ("int0", False),
        "shared_carveouts_kb": ("ints", False),
        "carveout_blocks_factor": ("int0", False),
        "smem_banks": ("int", True),
        "smem_bank_bytes": ("int", True),
        "smem_phase_bytes": ("int0", False),
        "dram_bandwidth_gbps": ("float", True),
        "dram_bytes": ("int", False),
        "l2_persist_bytes": ("int", False),
        "l2_partitions": ("int", False),
        "dram_fill_bytes": ("int0", False),
        "l2_slices": ("int", False),
        "l2_slice_interleave_bytes": ("int", False),
        "l2_slice_alternate_bytes": ("int", False),
    },
    "timing": {
        "l1_latency_cycles": ("float", True),
        "l2_latency_cycles": ("float", True),
        "dram_latency_cycles": ("float", True),
        "shared_latency_cycles": ("float", True),
        "dd_l2_cycles": ("float", True),
        "dd_dram_cycles": ("float", True),
        "inst_cycles_per_warp_inst": ("float", True),
        "smem_load_cycles": ("float", True),
        "smem_issue_cycles": ("float", False),
        "smem_overlaps_issue": ("bool", False),
        "l1_line_cycles": ("float", False),
        "l1_request_cycles": ("float", False),
        "l1_tag_lines": ("int", False),
        "l1_fill_sectors": ("int0", False),
        "l2_request_cycles": ("float", False),
        "dram_latency_cv": ("float", False),
        "dram_loaded_latency_cycles": ("float", False),
        "dram_light_life_cycles": ("float", False),
        "dd_store_cycles": ("float", False),
        "l1_store_line_cycles": ("float", False),
        "launch_sync_us": ("float", False),
        "launch_gap_us": ("float", False),
        "block_dispatch_cycles": ("float", False),
        "launch_overhead_us": ("float", False),  # the old name of launch_sync_us
        "first_launch_us": ("float", False),
        "launch_call_us": ("float", False),
        "loop_launch_us": ("float", False),
        "loop_launch_lo_us": ("float", False),
        "loop_launch_hi_us": ("float", False),
        "upload_launch_us": ("float", False),
        "upload_launch_min_bytes": ("int", False),
        "upload_memset_launch_us": ("float", False),
        "l2_dirty_max_bytes": ("int0", False),
        "l2_dirty_evict_share": ("float", False),
        "l2_writeback_gbps": ("float", False),
        "l2_miss_slot_ns": ("float", False),
        "barrier_cycles": ("float", False),
        "staging_issue_rate": ("float", False),
        "atomic_address_cycles": ("float", False),
        "atomic_address_float_cycles": ("float", False),
        "atomic_slice_cycles": ("float", False),
        "smem_conflict_replay_cycles": ("float", False),
        "inst_latency_cycles": ("float", True),
        "fp_latency_cycles": ("float", True),
        "fp64_latency_cycles": ("float", False),
        "sfu_latency_cycles": ("float", False),
        "fdiv_chain_cycles": ("float", False),
        "fsqrt_chain_cycles": ("float", False),
        "ddiv_chain_cycles": ("float", False),
        "dsqrt_chain_cycles": ("float", False),
        "loop_trip_cycles": ("float", False),
        "loop_branch_cycles": ("float", False),
        "dram_sector_gap_cycles": ("float", False),
        "dram_round_sigma_cycles": ("float", False),
        "dram_round_lift_cycles": ("float", False),
        "dram_round_issue_cycles": ("float", False),
        "dram_round_loaded_lift_cycles": ("float", False),
        "dram_memory_controllers": ("int", False),
    },
    "energy": {f.name: ("float", False) for f in fields(EnergyTable)},
    "pipes": {f.name: ("float", False) for f in fields(PipeRates)},
    "provenance": {
        "source": ("str", True),
        "date": ("str", False),
        "gpu_name": ("str", False),
        "notes": ("table", False),
    },
}
