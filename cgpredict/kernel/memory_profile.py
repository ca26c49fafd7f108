"""The memory part of one launch's profile (SPEC §2.3): per static memory instruction its
report, and per access pattern the warp instructions and transactions per thread.

A region's hundreds of launches (GRAMSCHMIDT: 514) differ only in how often each
instruction runs; what a row takes from the instruction alone (its shares of the patterns,
its transactions, its report's text) is found once per stats object (``_mem_rows``) and kept
by the launch context, the same arithmetic as before in the same order.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..frontend.tracefile import Trace
from ..memory.transactions import MemoryAnalysis
from ..prediction import MemInstrReport
from ..profile import PatternCounts, StoreCounts

__all__ = ["memory_profile"]


@dataclass(frozen=True)
class _MemRow:
    """What a static memory instruction's report and counts take from it alone (not from
    the launch): its report's fields but the launch's count, and per pattern it issues
    (p, share, L2, DRAM, L1-served, written-back and issued transactions, warp
    instructions, stores to sectors the L2 holds no loaded copy of)."""

    sid: int
    block: int
    store: bool
    report: dict
    patterns: tuple[tuple[int, float, int, int, int, int, int, int, int, float, int, int,
                          int], ...]


def _mem_row(h, s, staged: bool) -> _MemRow:
    """The _MemRow of static instruction ``s`` (staged in shared memory: no global pattern)."""
    m = h.mem[s.sid]
    total = 0 if staged else s.total_warp_insts
    shares = tuple(w / total for w in s.warp_insts) if total else (0.0, 0.0, 0.0)
    return _MemRow(
        sid=s.sid,
        block=m.block,
        store=m.kind == "store",
        report=dict(
            id=s.sid, text=m.base, location=f"{m.file}:{m.line}", kind=m.kind,
            pattern="shared" if staged else s.pattern, shares=shares,
            l2_trans_per_warp=sum(s.l2_trans) / total if total else 0.0,
            l2_hit_rate=0.0 if staged else s.l2_hit_rate,
        ),
        patterns=tuple((p, shares[p], s.l2_trans[p], s.dram_trans[p], s.l1_served[p],
                        s.written[p], s.issued[p], s.warp_insts[p], s.fresh[p], s.fill[p],
                        s.l1_lines[p], s.fetched[p], s.l2_requests[p])
                       for p in range(3) if shares[p]),
    )


def _mem_rows(trace: Trace, mem: MemoryAnalysis, skip, kept: dict | None) -> list[_MemRow]:
    """The _MemRow of every static instruction of ``mem``, kept in ``kept`` by the stats
    object (held there, so that its id is not reused): the launches of a region share most
    of them (warm_start replaces only those an earlier launch left in the L2)."""
    if kept is None:
        return [_mem_row(trace.header, s, s.sid in skip) for s in mem.instrs]
    rows = []
    for s in mem.instrs:
        got = kept.get(id(s))
        if got is None or got[0] is not s:
            got = kept[id(s)] = (s, _mem_row(trace.header, s, s.sid in skip))
        rows.append(got[1])
    return rows


def memory_profile(
    trace: Trace,
    mem: MemoryAnalysis,
    per_thread: dict[int, float],
    region: int,
    skip: set[int] = frozenset(),
    restores: frozenset[int] = frozenset(),
    scale: dict[int, float] | None = None,
    kept: dict | None = None,
):
    """Per-instruction reports and the per-pattern counts of the profile (SPEC §2.3);
    ``scale``: the share of a static instruction's warp instructions a fix left (halo.py);
    ``kept``: the launch-independent part of each instruction's row (_mem_rows), kept
    between the launches of a region with the same ``skip``."""
    scale = scale or {}
    insts, l2, dram, served = [0.0] * 3, [0.0] * 3, [0.0] * 3, [0.0] * 3
    fetched = [0.0] * 3  # DRAM sectors the loads' misses fetch (eq. (F1))
    # L2 requests: a line of a warp instruction's sectors the L1 misses (eqs. (B2q), (LM))
    requests = [0.0] * 3
    issued = [0.0] * 3  # transactions issued to the L1, served there or not
    st_insts, st_l2, st_dram, st_fresh = [0.0] * 3, [0.0] * 3, [0.0] * 3, [0.0] * 3
    lines, st_lines = [0.0] * 3, [0.0] * 3  # distinct L1 lines of the warp instructions
    st_issued = [0.0] * 3  # store sectors issued, merged in the L1 or not (eq. (SM1))
    st_req = [0.0] * 3  # store requests to the L2 (eqs. (B2q), (LM))
    write_back = 0.0
    reports = []
    for row in _mem_rows(trace, mem, skip, kept):
        count = per_thread.get(row.block, 0.0) * scale.get(row.sid, 1.0)
        for (p, share, l2_t, dram_t, served_t, written_t, issued_t, warp_t, fresh_t, fill,
             lines_t, fetched_t, req_t) in row.patterns:
            n = count * share
            insts[p] += n
            l2[p] += n * l2_t / warp_t
            dram[p] += n * dram_t / warp_t
            fetched[p] += n * fetched_t / warp_t
            requests[p] += n * req_t / warp_t
            served[p] += n * served_t / warp_t
            issued[p] += n * issued_t / warp_t
            lines[p] += n * lines_t / warp_t / (fill if row.store else 1.0)  # as st_lines
            if row.store:
                st_insts[p] += n
                # the sectors of full warps: a thread's executions fill the work size's
                # warps, whose lanes the trace's smaller grid masks off more (``fill``:
                # corr_corr's triangle, 80 % of the lanes traced, 97 % at the work size)
                st_l2[p] += n * l2_t / warp_t / fill
                st_dram[p] += n * dram_t / warp_t
                st_fresh[p] += n * fresh_t / warp_t / fill  # sectors without a loaded copy
                st_lines[p] += n * lines_t / warp_t / fill
                st_issued[p] += n * issued_t / warp_t / fill  # as st_l2
                st_req[p] += n * req_t / warp_t
                write_back += n * written_t / warp_t
        reports.append(MemInstrReport(
            **row.report, per_thread=count, restored=row.sid in restores and count > 1.5))
    patterns = []
    for p in range(3):
        reaching = insts[p] - served[p]  # warp instructions that go past the L1
        patterns.append(
            PatternCounts(
                insts[p],
                l2[p] / reaching if reaching > 1e-12 else 0.0,
                dram[p] / reaching if reaching > 1e-12 else 0.0,
                served[p] / insts[p] if insts[p] else 0.0,
                sectors_per_warp=issued[p] / insts[p] if insts[p] else 0.0,
                lines_per_warp=lines[p] / insts[p] if insts[p] else 0.0,
                dram_fetch_per_warp=fetched[p] / reaching if reaching > 1e-12 else 0.0,
                l2_requests_per_warp=requests[p] / reaching if reaching > 1e-12 else 0.0,
            )
        )
    stores = StoreCounts(
        *(
            PatternCounts(n, st_l2[p] / n, st_dram[p] / n, lines_per_warp=st_lines[p] / n,
                          sectors_per_warp=st_issued[p] / n, l2_requests_per_warp=st_req[p] / n)
            if n > 1e-12 else PatternCounts()
            for p, n in enumerate(st_insts)
        ),
        write_back_trans=write_back,
        fresh=tuple(f / t if t > 1e-12 else 1.0 for f, t in zip(st_fresh, st_l2)),
    )
    return reports, patterns, stores
