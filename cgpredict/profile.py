"""The analysed kernel: what the memory and computation stages hand to the analytical models.

Every count is *per thread* (the average over the kernel's pseudo-threads) unless its name says
otherwise; transaction counts are *per warp instruction*. Models read only this value and a
device, so they can be tested and re-run without the C front end.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from cgpredict.pipes import PipeCounts


@dataclass(frozen=True)
class PatternCounts:
    """One access pattern (coalesced, uncoalesced or constant) of a kernel (SPEC §2.3).

    insts: no_P_insts, memory instructions of this pattern per thread.
    l2_trans_per_warp: no_P_pw, L2 transactions per warp instruction of this pattern that
        reaches L2.
    dram_trans_per_warp: no_dram_trans_P, DRAM transactions (L2 misses) per such instruction.
    l1_hit_fraction: share of this pattern's warp instructions that the L1 serves entirely
        (GPUs whose L1 caches global loads); they never reach L2.
    sectors_per_warp: transactions (32-B sectors) one warp instruction of this pattern
        issues, served by the L1 or not: what an L1-served one reads through the load/store
        path. 0: unknown (l2_trans_per_warp stands in for it).
    lines_per_warp: what one warp instruction of this pattern holds the SM's L1 data stage
        for (models/bounds.py, eq. (B2)): a load's wavefronts (memory/wavefronts.py, eq.
        (B2w)), a store's distinct cache lines. 0: unknown (from the sectors).
    dram_fetch_per_warp: DRAM sectors the misses of such an instruction fetch, a fill block
        each (memory/dram_fill.py, eq. (F1)). 0: unknown (dram_trans_per_warp).
    l2_requests_per_warp: L2 requests per such instruction that goes past the L1: the
        distinct lines of its sectors the L1 does not serve, one request a line (the L2's
        look-ups, eq. (B2q), and its misses' slots, eq. (LM), models/bounds.py). 0: unknown
        (from the sectors).
    """

    insts: float = 0.0
    l2_trans_per_warp: float = 0.0
    dram_trans_per_warp: float = 0.0
    l1_hit_fraction: float = 0.0
    sectors_per_warp: float = 0.0
    lines_per_warp: float = 0.0
    dram_fetch_per_warp: float = 0.0
    l2_requests_per_warp: float = 0.0

    @property
    def dram_fetched(self) -> float:
        """DRAM sectors a reaching warp instruction reads (eq. (F1)): the fetched fill
        blocks' sectors where counted, else its misses."""
        return max(self.dram_fetch_per_warp, self.dram_trans_per_warp)


@dataclass(frozen=True)
class SharedMemoryCounts:
    """Shared-memory use of a tiled kernel (SPEC §2.6), per thread.

    load_insts: no_smem_load_inst, global->shared staging loads per thread.
    insts_by_conflict: (X, n) pairs, n shared accesses per thread with an X-way bank conflict.
    bytes_per_block: shared memory a block allocates.
    load_l2_trans: L2 sectors the staging loads read per warp (per thread of each warp's
    staging loads, times the sectors of each: the tile rows a warp copies, issue 24).
    load_dram_trans: DRAM sectors per warp the staging loads read at least: the staged
    elements' distinct sectors (compulsory misses; staging.fresh_sectors).
    """

    load_insts: float = 0.0
    insts_by_conflict: tuple[tuple[float, float], ...] = ()
    bytes_per_block: int = 0
    # wavefronts through the shared pipe per thread (shared.StagedAccess.wavefronts: the
    # registers each load returns a lane times its conflict degree, packed for broadcasts);
    # 0: one per access and conflict way
    wavefronts: float = 0.0
    load_l2_trans: float = 0.0
    load_dram_trans: float = 0.0

    @property
    def accesses(self) -> float:
        return sum(n for _, n in self.insts_by_conflict)

    @property
    def transactions(self) -> float:
        """Shared-memory transactions (pipe wavefronts) per thread: ``wavefronts`` when
        known, else each access times its conflict degree."""
        return self.wavefronts or sum(x * n for x, n in self.insts_by_conflict)


@dataclass(frozen=True)
class StagingCounts:
    """Per-thread SASS instructions of a tiled kernel's cooperative staging code beyond its
    loads and stores (memory.staging_code): element index, bounds and address arithmetic,
    loop control and convergence barriers, by SASS class."""

    integer: float = 0.0
    branch: float = 0.0
    other: float = 0.0

    @property
    def total(self) -> float:
        return self.integer + self.branch + self.other


@dataclass(frozen=True)
class StoreCounts:
    """The stores among a kernel's global memory instructions, per pattern (a subset of the
    profile's coal/uncoal/const counts), and the DRAM write-back they cause.

    write_back_trans: DRAM write-back transactions (sectors first dirtied) per thread-count
        of warp instructions, i.e. summed over a warp's store instructions.
    fresh: per pattern, the share of its store sectors the L2 holds no loaded copy of (no
        load of the launch brought it in, or it was evicted since): partly written, those
        need a read to merge (1: all of them, as for stores of an array the kernel never
        reads).
    """

    coal: PatternCounts = field(default_factory=PatternCounts)
    uncoal: PatternCounts = field(default_factory=PatternCounts)
    const: PatternCounts = field(default_factory=PatternCounts)
    write_back_trans: float = 0.0
    fresh: tuple[float, float, float] = (1.0, 1.0, 1.0)

    @property
    def insts(self) -> float:
        return self.coal.insts + self.uncoal.insts + self.const.insts

    @property
    def l2_trans(self) -> float:
        """L2 transactions of a warp's stores (stores are never served by the L1)."""
        return sum(p.insts * max(p.l2_trans_per_warp, 1.0) for p in self.patterns if p.insts)

    @property
    def patterns(self) -> tuple[PatternCounts, PatternCounts, PatternCounts]:
        return (self.coal, self.uncoal, self.const)

    def partial_sectors(self, warp_bytes: float, sector_bytes: int) -> float:
        """Sectors a warp's stores only partly write and find absent from the L2 (summed over
        its store instructions): the L2 must read, merge and write those (read-modify-write).
        A partly written sector the L2 holds already (the warp loaded it: a struct's fields
        updated in place) merges into the valid copy without a read, so it costs one sector
        time like a full one. A contiguous (coalesced) warp store of ``warp_bytes`` fills
        warp_bytes / sector_bytes of its sectors and partly writes the rest (misalignment);
        a strided (uncoalesced) or broadcast (constant) one leaves gaps in every sector."""
        full = warp_bytes / max(sector_bytes, 1)
        coal = self.coal.insts * max(max(self.coal.l2_trans_per_warp, 1.0) - full, 0.0)
        gaps = sum(p.insts * max(p.l2_trans_per_warp, 1.0) * f
                   for p, f in zip((self.uncoal, self.const), self.fresh[1:]))
        return coal * self.fresh[0] + gaps


@dataclass(frozen=True)
class AtomicCounts:
    """The atomic updates of a GPU port of a kernel whose threads update shared locations
    (atomics.py: a histogram's bins, a reduction's accumulator), per thread.

    insts: atomic warp instructions (RED) per thread; issued, never waited for.
    ops: L2 atomic operations per thread (one per active lane: the L2 applies each).
    trans: L2 transactions (request sectors) per thread, on the store path.
    hot_share: the share of all operations that fall on the busiest address (which the L2
        applies one after another: contention).
    footprint_bytes: sectors of the updated locations per launch, read from DRAM once and
        written back once.
    requests: L2 atomic sector passes per thread (a warp instruction's update of one 32 B
        sector, lanes on one address in passes of their own, l2_slices.py); slice_share: the
        busiest L2 slice's share of them.
    hot_float: the busiest address takes floating-point adds (slower on one address).
    """

    insts: float = 0.0
    ops: float = 0.0
    trans: float = 0.0
    hot_share: float = 0.0
    footprint_bytes: float = 0.0
    requests: float = 0.0
    slice_share: float = 0.0
    hot_float: bool = False


def _without(all_: PatternCounts, st: PatternCounts) -> PatternCounts:
    """``all_`` less its stores ``st`` (stores reach the L2: none is L1-served)."""
    insts = all_.insts - st.insts
    if insts <= 1e-12:
        return PatternCounts()
    reaching_all = all_.insts * (1 - all_.l1_hit_fraction)
    reaching = max(reaching_all - st.insts, 0.0)
    l2 = all_.l2_trans_per_warp * reaching_all - st.l2_trans_per_warp * st.insts
    dram = all_.dram_trans_per_warp * reaching_all - st.dram_trans_per_warp * st.insts
    fetch = all_.dram_fetch_per_warp * reaching_all - st.dram_fetched * st.insts  # (F1)
    # a store issues the transactions it sends to the L2 and those the L1 merges (SM1)
    sectors = all_.sectors_per_warp * all_.insts - \
        (st.sectors_per_warp or st.l2_trans_per_warp) * st.insts
    lines = all_.lines_per_warp * all_.insts - st.lines_per_warp * st.insts
    req = all_.l2_requests_per_warp * reaching_all - st.l2_requests_per_warp * st.insts
    return PatternCounts(
        insts,
        max(l2, 0.0) / reaching if reaching > 1e-12 else 0.0,
        max(dram, 0.0) / reaching if reaching > 1e-12 else 0.0,
        all_.insts * all_.l1_hit_fraction / insts,
        sectors_per_warp=max(sectors, 0.0) / insts if all_.sectors_per_warp else 0.0,
        lines_per_warp=max(lines, 0.0) / insts if all_.lines_per_warp else 0.0,
        dram_fetch_per_warp=max(fetch, 0.0) / reaching if reaching > 1e-12 else 0.0,
        l2_requests_per_warp=max(req, 0.0) / reaching if reaching > 1e-12 else 0.0,
    )


@dataclass(frozen=True)
class PhaseCosts:
    """One phase of a thread: a loop beside others directly in the body of the thread's
    mapped loop (softmax's max, sum and write passes), and what one warp's memory
    instructions of it cost the SM's L1 and the L2, in SM cycles (models/phases.py, eq. (PH)).

    l1_cycles: the warp's lines and requests through its SM's L1, eq. (B2) (per SM).
    l2_sm_cycles: its loads' replies on the crossbar, ``dd_l2_cycles`` a transaction (per SM).
    l2_chip_cycles: its stores at the L2 (eq. (B2s)) or, when slower, its loads' L2 look-ups
    (eq. (B2q)): the slices serve the whole chip.
    """

    l1_cycles: float = 0.0
    l2_sm_cycles: float = 0.0
    l2_chip_cycles: float = 0.0


@dataclass(frozen=True)
class KernelProfile:
    """Per-thread instruction mix and memory behaviour of one GPU kernel launch.

    comp_insts counts every non-memory PTX-equivalent instruction (SFU ones included);
    sfu_insts and fp_insts are the subsets used by GPUPerf. ilp/mlp are GPUPerf's
    instruction- and memory-level parallelism of one thread (1.0 when unknown).
    """

    name: str
    threads_per_block: int
    blocks: int
    coal: PatternCounts = field(default_factory=PatternCounts)
    uncoal: PatternCounts = field(default_factory=PatternCounts)
    const: PatternCounts = field(default_factory=PatternCounts)
    comp_insts: float = 0.0
    sfu_insts: float = 0.0
    fp_insts: float = 0.0
    sync_insts: float = 0.0
    registers_per_thread: int = 32
    shared: SharedMemoryCounts = field(default_factory=SharedMemoryCounts)
    bytes_per_access: int = 4
    ilp: float = 1.0
    mlp: float = 1.0
    launches: int = 1
    stores: StoreCounts = field(default_factory=StoreCounts)
    # the critical path of the launch's busiest thread, cycles (parallelism.body_chain): its
    # loop iterations times each one's recurrence or shared load-to-use chain
    chain_cycles: float = 0.0
    # the same path of one warp alone on its sub-partition (no (CV) convoy of warps in step):
    # the path L of the closed loop of eq. (LTq2) (models/warp_queue.py); 0: chain_cycles
    alone_chain_cycles: float = 0.0
    # a mean thread's critical path through its non-memory work, cycles: the same chains with
    # every load ready at once (its FP, SFU and integer latencies, compute.OpLatencies); what
    # a warp's own computing takes when too few warps hide it (§3 eq. (22), cgpredict_model)
    compute_chain_cycles: float = 0.0
    # integer and branch instructions per thread that nvcc's unrolling folds away, already
    # taken out of comp_insts (parallelism.ThreadBodies.unrolled_savings)
    folded_insts: float = 0.0
    # SASS instructions with no PTX counterpart (machine_code.MachineExtras: prologue
    # constant loads, loop set-up moves, staging stores), already included in comp_insts
    machine_insts: float = 0.0
    # PTX address instructions of the code a thread runs once that ptxas folds into one base
    # per array (address_offsets.folded_address_insts), already taken out of comp_insts
    address_folded_insts: float = 0.0
    # a tiled kernel's staging code (memory.staging_code), included in machine_insts
    staging_code: StagingCounts = field(default_factory=StagingCounts)
    # atomic updates of shared locations (atomics.py); their instructions are in comp_insts
    atomics: AtomicCounts = field(default_factory=AtomicCounts)
    # comp_insts' arithmetic by pipe class (pipes.py, compute.op_pipes): what eq. (12p) prices
    pipes: PipeCounts = field(default_factory=PipeCounts)
    # how many of its own memory periods a thread keeps in flight (>= 1): its critical path
    # with each iteration's chain on its own over the path with an unrolled trip's loads in
    # flight together (parallelism.ThreadBodies.chain_cycles); 1 where a plain port's store
    # orders the next iteration's loads. What eq. (22m) overlaps (models/cgpredict_model.py)
    loads_in_flight: float = 1.0
    # cycles of a thread's memory periods (6) whose loads ptxas hoists above the unrolled
    # trip's stores of their own array (parallelism.hoisted_loads): off eq. (22)'s serial
    # timeline, eq. (22h) (models/cgpredict_model.py); 0 for a __restrict__ port
    hoisted_load_cycles: float = 0.0
    # the busiest SM's work over the mean SM's (sm_share.py, eq. (B1)): 1 unless a launch of
    # at most one block an SM gives its blocks unequal work (a triangular loop's threads)
    sm_share: float = 1.0
    # the thread's phases (PhaseCosts), when its mapped loop holds two loops or more one
    # after another: eq. (PH) sums their bounds (models/bounds.py); () for one
    phases: tuple[PhaseCosts, ...] = ()
    # the launches of the whole program (every kernel's, in the trace): a program of one
    # launch leaves its stores in the L2 when they fit, eq. (LWl) (models/loaded_wave.py)
    program_launches: int = 1

    def loads_only(self) -> KernelProfile:
        """This profile with its stores taken out of the memory patterns: what a warp waits
        for. (Stores still issue: they stay in the instruction count via comp_insts.)"""
        if self.stores.insts <= 0:
            return self
        kept = self.__dict__.get("_loads_only")  # the model and its bounds both ask
        if kept is not None:
            return kept
        s = self.stores
        kept = self._replaced(
            coal=_without(self.coal, s.coal),
            uncoal=_without(self.uncoal, s.uncoal),
            const=_without(self.const, s.const),
            comp_insts=self.comp_insts + s.insts,
            stores=StoreCounts(),
        )
        object.__setattr__(self, "_loads_only", kept)  # not a field: never compared or saved
        return kept

    def _replaced(self, **changes) -> KernelProfile:
        """``dataclasses.replace(self, **changes)`` without its per-call field walk (every
        launch's model asks for loads_only): the fields set as the frozen ``__init__`` sets
        them (KernelProfile has no ``__post_init__`` and every field is an init field)."""
        new = object.__new__(KernelProfile)
        mine = self.__dict__
        new.__dict__.update({f: mine[f] for f in _PROFILE_FIELDS}, **changes)
        return new

    @property
    def mem_insts(self) -> float:
        """no_mem_insts: global-memory instructions per thread."""
        return self.coal.insts + self.uncoal.insts + self.const.insts

    @property
    def total_insts(self) -> float:
        """no_total_insts: every instruction a thread issues (memory + computation)."""
        return self.mem_insts + self.comp_insts

    @property
    def threads(self) -> int:
        return self.threads_per_block * self.blocks


#: KernelProfile's field names, in order (KernelProfile._replaced)
_PROFILE_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(KernelProfile))
