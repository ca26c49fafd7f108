"""Eq. (SM1): a warp's store sectors that its previous store instruction wrote merge in the
L1's write path (memory/store_merge.py), checked by hand counts and a brute-force reference."""

from __future__ import annotations

import numpy as np
from fake_traces import make_wt

from cgpredict.memory.lru import CacheConfig
from cgpredict.memory.store_merge import merged_stores
from cgpredict.memory.transactions import L1Config, analyze_memory

FOUR = np.array([4, 4, 4, 4])  # access bytes per sid


def _aos(field: int, warp: int = 0) -> list[int]:
    """A warp's addresses of one field of a 24-byte struct, one struct a lane."""
    return [warp * 768 + 24 * lane + 4 * field for lane in range(32)]


def _run(events, is_store, array_of):
    """analyze_memory on a sectored H100-like L2 with an L1 (every warp on one SM)."""
    wt = make_wt(events)
    l1 = L1Config(CacheConfig(128, 64, 4), 32, sms=1, warps_per_block=64)
    return analyze_memory(wt, FOUR, CacheConfig(128, 64, 16), 64, sector_bytes=32, l1=l1,
                          is_store=np.asarray(is_store), array_of=np.asarray(array_of))


def test_aos_xyz_stores_send_the_struct_sectors_once():
    """step_aos by hand: x, y, z of 32 structs of 24 bytes span 768 bytes = 24 sectors; each
    store touches all 24 (lanes 24 bytes apart, fields 4 bytes apart), so x sends 24 and y, z
    merge into them: 24 sectors to the L2 for the warp, not 72."""
    events = [(0, k, k, _aos(k)) for k in range(3)]
    m = _run(events, [True, True, True, False], [0, 0, 0, 0]).by_sid()
    assert [m[s].issued[1] for s in range(3)] == [24, 24, 24]
    assert [m[s].l2_trans[1] for s in range(3)] == [24, 0, 0]
    assert [m[s].written[1] for s in range(3)] == [24, 0, 0]  # DRAM write-back unchanged
    assert all(m[s].l1_served == (0, 0, 0) for s in range(3))  # a store is never L1-served


def test_a_load_of_another_array_between_keeps_the_stores_apart():
    """GEMM's plain port: C stored every iteration with loads of A between (nvcc keeps a
    load that may alias C after the store): both stores reach the L2 (ncu ratio 1.000)."""
    c = [4 * lane for lane in range(32)]
    a = [65536 + 4 * lane for lane in range(32)]
    events = [(0, 0, 0, c), (0, 1, 1, a), (0, 2, 0, c)]
    m = _run(events, [True, False, False, False], [0, 1, 0, 0]).by_sid()
    assert m[0].l2_trans == (8, 0, 0) and m[0].warp_insts == (2, 0, 0)


def test_a_load_of_the_stored_array_between_merges():
    """step_aos in trace order (load vy, y between the x and y stores: ptxas hoists loads of
    the stored struct above its stores), and a second warp that writes the same sectors
    does not merge with the first warp's stores (merging is per warp)."""
    events = [(0, 0, 0, _aos(0)), (0, 1, 1, _aos(4)), (0, 2, 2, _aos(1)),
              (1, 0, 0, _aos(0)), (1, 1, 1, _aos(4)), (1, 2, 2, _aos(1))]
    m = _run(events, [True, False, True, False], [0, 0, 0, 0]).by_sid()
    assert m[0].l2_trans[1] == 48  # each warp's first store: 24 sectors
    assert m[2].l2_trans[1] == 0


def _reference(prog, is_store, array_of):
    """Brute force: per warp its instructions in order, each a list of sectors; a store
    sector merges when the warp's last store instruction before it (with only loads of that
    store's array since) holds the sector."""
    merged = {}
    for w, insts in prog.items():
        last, open_ = None, False
        for k, (sid, secs) in enumerate(insts):
            if not is_store[sid]:
                if last is not None and array_of[sid] != array_of[insts[last][0]]:
                    open_ = False
                continue
            for d in secs:
                merged[(w, k, d)] = bool(open_ and last is not None and d in insts[last][1])
            last, open_ = k, True
    return merged


def test_brute_force_reference():
    """Random programs of 4 warps (stores and loads of 2 arrays on 6 sectors) interleaved in
    an issue order that keeps each warp's program order: the kernel agrees with the
    reference on every store transaction."""
    rng = np.random.default_rng(11)
    is_store = np.array([True, True, False, False])
    array_of = np.array([0, 1, 0, 1])
    for _ in range(200):
        prog = {w: [(int(rng.integers(4)),
                     sorted(set(rng.integers(6, size=int(rng.integers(1, 4))).tolist())))
                     for _ in range(int(rng.integers(1, 8)))] for w in range(4)}
        order = [w for w in range(4) for _ in prog[w]]
        rng.shuffle(order)
        pos = dict.fromkeys(range(4), 0)
        inst, sec, inst_warp, inst_sid, keys = [], [], [], [], []
        for w in order:
            k = pos[w]
            pos[w] += 1
            sid, secs = prog[w][k]
            i = len(inst_warp)
            inst_warp.append(w)
            inst_sid.append(sid)
            for d in secs:
                inst.append(i)
                sec.append(d)
                keys.append((w, k, d))
        got = merged_stores(np.array(inst, np.int64), np.array(sec, np.uint64),
                            np.array(inst_warp), np.array(inst_sid), is_store, array_of)
        ref = _reference(prog, is_store, array_of)
        for t, key in enumerate(keys):
            if is_store[inst_sid[inst[t]]]:
                assert got[t] == ref[key], (prog, order, key)
            else:
                assert not got[t]
