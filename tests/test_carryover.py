"""Eq. (CO1) (cgpredict/memory/carryover.py, residency.warm_share) from first principles: the
share of a previous launch's sweep a host loop's next launch still finds in the L2, against
an LRU cache simulated line by line, and the trace's footprints and overlap by hand."""

from __future__ import annotations

from collections import OrderedDict

import pytest

from cgpredict.memory.carryover import carried_share, carry_facts, survive_share
from cgpredict.memory.residency import region_arrays, warm_share
from cgpredict.memory.transactions import InstrMemStats, MemoryAnalysis
from cgpredict.prediction import RunOptions
from cgpredict.prepared import prepare


def lru_found(f_prev: int, f_own: int, picks: int, capacity: int) -> float:
    """Brute force: an LRU of ``capacity`` lines after a sweep of lines 0..f_prev-1; the next
    launch sweeps ``f_own`` lines in the same order, ``picks`` of them lines of the previous
    sweep spread evenly over it, the rest new lines between them. The share of the picks
    that hit."""
    lru: OrderedDict[int, None] = OrderedDict()

    def touch(line: int) -> bool:
        hit = line in lru
        lru[line] = None
        lru.move_to_end(line)
        if len(lru) > capacity:
            lru.popitem(last=False)
        return hit

    for line in range(f_prev):
        touch(line)
    new, hits, fresh = f_own - picks, 0, f_prev
    for i in range(picks):  # new lines go in evenly between the picks
        for _ in range(new * (i + 1) // picks - new * i // picks):
            touch(fresh)
            fresh += 1
        hits += touch((i * f_prev) // picks)
    return hits / picks


@pytest.mark.parametrize("f_prev,f_own,picks,capacity", [
    (4000, 50, 50, 1000),  # a small read of a big sweep (gs_k1 after gs_k3): C / F
    (4000, 2000, 100, 1000),  # a larger reader evicts part of what it would find
    (4000, 4000, 4000, 1000),  # the same sweep again: LRU keeps none of it
    (800, 3000, 100, 1000),  # the previous sweep fits: all of it is there
])
def test_co1_against_a_brute_force_lru(f_prev, f_own, picks, capacity):
    """(CO1) against lru_found, within 2 % of the picks (the even spread's rounding)."""
    assert survive_share(f_prev, f_own, capacity) == pytest.approx(
        lru_found(f_prev, f_own, picks, capacity), abs=0.02)


def test_co1_by_hand_for_gramschmidt():
    """gs_k1(1) after gs_k3(0) at N = 8192 with the H100's 25 MB: gs_k3(0) swept columns
    1..8191 of A, 8192 x 8191 x 4 = 268,402,688 B; gs_k1 reads column 1, 8192 sectors of
    32 B = 262,144 B: (26,214,400 - 262,144) / (268,402,688 - 262,144) = 0.096786; nothing
    in between. With 50 MB 0.194550. Nothing is left when the launches in between filled it."""
    f_prev, f_own = 8192 * 8191 * 4, 8192 * 32
    assert survive_share(f_prev, f_own, 26_214_400) == pytest.approx(0.096786, abs=1e-6)
    assert survive_share(f_prev, f_own, 52_428_800) == pytest.approx(0.194550, abs=1e-6)
    assert survive_share(f_prev, f_own, 0.0) == 0.0
    assert survive_share(1e6, 1e3, 2e6) == 1.0


def test_warm_share_turns_part_of_the_first_touch_misses_into_hits():
    """Share 0.25 of 20 cold misses: 5 hits more, 5 DRAM sectors fewer, 15 cold left; the
    fills and rides lose the same part of the misses (40 x (25 - 5) // 25 = 32)."""
    s = InstrMemStats(3, (10, 0, 0), (40, 0, 0), (25, 0, 0), cold=(20, 0, 0),
                      fetched=(40, 0, 0), fill_rides=(5, 0, 0))
    other = InstrMemStats(4, (10, 0, 0), (40, 0, 0), (30, 0, 0), cold=(30, 0, 0))
    mem = MemoryAnalysis((s, other), 80, 25)
    warm = warm_share(mem, {3: 0.25})
    got = warm.by_sid()[3]
    assert got.dram_trans == (20, 0, 0) and got.cold == (15, 0, 0)
    assert got.fetched == (32, 0, 0) and got.fill_rides == (4, 0, 0)
    assert warm.by_sid()[4] == other and warm.l2_hits == 30
    assert warm_share(mem, {}) is mem


HOST_LOOP_C = r"""
#include <stdio.h>
#ifndef N
#define N 64
#endif
#pragma cgp trace N=64
static float A[N][N], r[N];
int main(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) A[i][j] = (float)(i + j);
  for (int k = 0; k < 4; k++) {
#pragma cgp kernel sweep grid=1
    for (int j = 0; j < N; j++)
      for (int i = 0; i < N; i++)
        A[i][j] = A[i][j] * 0.5f + 1.0f;
#pragma cgp kernel col grid=1
    for (int t = 0; t < 32; t++) {
      if (t == 0) {
        float s = 0.0f;
        for (int i = 0; i < N; i++) s += A[i][k];
        r[k] = s;
      }
    }
  }
  printf("%f\n", r[3]);
  return 0;
}
"""


@pytest.fixture(scope="module")
def host_loop(tmp_path_factory, compiler):
    src = tmp_path_factory.mktemp("carryover") / "hostloop.c"
    src.write_text(HOST_LOOP_C)
    with prepare(src, RunOptions(device="h100", work_sizes={"N": 1024})) as prep:
        prep.sizes.launches  # the probes' fit, while the files exist
        yield prep


def test_the_column_finds_the_sweeps_tail(host_loop):
    """At N = 1024: the sweep touches all of A, 1024 x 1024 x 4 = 4 MiB (traced 64 x 64 x 4
    = 16 KiB, all its sectors, grown 256 times); the column 1024 sectors, 32 KiB (64 traced,
    grown 16 times); every sector the column reads the sweep touched (overlap 1). In a
    1 MiB L2: (1 MiB - 32 KiB) / (4 MiB - 32 KiB) = 0.2441, kept in 1/32 steps: 8/32."""
    prep = host_loop
    tr, tsz, wsz = prep.trace, prep.trace_sizes, {"N": 1024}
    touched = region_arrays(tr)
    facts = carry_facts(tr, prep.sizes, tsz, wsz, touched)
    sweep, col = 0, 1
    assert facts.traced[(sweep, "A")][0] == 64 * 64 * 4
    assert facts.traced[(col, "A")][0] == 64 * 32
    assert facts.overlap[(col, "A")] == 1.0
    size = {"A": 1024 * 1024 * 4.0, "r": 4096.0}
    row = next(i for i in range(len(tr.launches)) if int(tr.launches["region"][i]) == col
               and i > 0)
    got = carried_share(tr, row, facts, 1 << 20, touched, frozenset({"A"}), size, {})
    assert got == (("A", 8 / 32),)


def _toy_trace(events: list[int], mem: list[tuple[int, str]]):
    """A trace of one recorded launch: ``events`` (tag << 48 | address) and its memory
    instructions (id, base)."""
    from types import SimpleNamespace

    import numpy as np

    ev = np.array(events, np.uint64)
    header = SimpleNamespace(mem=[SimpleNamespace(id=i, base=b) for i, b in mem])
    return SimpleNamespace(header=header, launch_events=lambda row: ev)


def test_sectors_against_a_set_per_array():
    """carryover._sectors (a table over each array's span, or a sorted list where the span is
    wide) against Python sets of address // 32 per array, on events of three arrays by
    hand: A dense (addresses 0..4095 in steps of 4, twice: 128 sectors), B two far-apart
    sectors (a span of 2**30 sectors: the listed path), C never touched, markers (tag
    0xF001) and a load of no array left out."""
    import random

    import numpy as np

    from cgpredict.memory import carryover
    from cgpredict.memory.shared import array_name

    mem = [(1, "A"), (2, "B"), (3, "C"), (4, "")]
    rnd = random.Random(7)
    addrs_a = [0x1000 + 4 * i for i in range(1024)] * 2
    rnd.shuffle(addrs_a)
    addrs_b = [0x10, 0x10 + 32 * 2**30, 0x18]
    events = ([(1 << 48) | a for a in addrs_a] + [(2 << 48) | a for a in addrs_b]
              + [(0xF001 << 48) | 5, (4 << 48) | 0x99999])
    rnd.shuffle(events)
    got = carryover._sectors(_toy_trace(events, mem), 0)
    want: dict[str, set[int]] = {}
    for e in events:
        tag, addr = e >> 48, e & ((1 << 48) - 1)
        name = dict(mem).get(tag)
        if name and array_name(name):
            want.setdefault(array_name(name), set()).add(addr // 32)
    assert list(got) == sorted(want)  # A, B: C touched nothing
    for a, sec in got.items():
        assert sec.dtype == np.uint64
        assert sec.tolist() == sorted(want[a])
    assert len(got["A"]) == 128 and got["B"].tolist() == [0, 2**30]
