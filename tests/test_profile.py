"""profile.KernelProfile: its loads-only view (stores taken out of the memory patterns) built
by ``_replaced`` is the profile ``dataclasses.replace`` builds, field for field."""

from __future__ import annotations

import dataclasses

from cgpredict.profile import KernelProfile, PatternCounts, StoreCounts


def test_replaced_is_dataclasses_replace():
    p = KernelProfile(name="k", threads_per_block=128, blocks=4, comp_insts=5.0,
                      coal=PatternCounts(3.0, 2.0), uncoal=PatternCounts(1.0, 8.0),
                      stores=StoreCounts(coal=PatternCounts(1.0, 1.0)))
    got = p._replaced(comp_insts=6.0, stores=StoreCounts())
    want = dataclasses.replace(p, comp_insts=6.0, stores=StoreCounts())
    assert got == want and got.__dict__ == want.__dict__ and hash(got) == hash(want)
    assert got is not p and p.comp_insts == 5.0  # the profile itself untouched


def test_loads_only_takes_the_stores_out_once():
    p = KernelProfile(name="k", threads_per_block=32, blocks=1, comp_insts=2.0,
                      coal=PatternCounts(3.0, 2.0),
                      stores=StoreCounts(coal=PatternCounts(1.0, 1.0)))
    lo = p.loads_only()
    assert lo.stores == StoreCounts() and lo.comp_insts == 3.0  # the store still issues
    assert lo.coal.insts == 2.0 and p.loads_only() is lo
    assert "_loads_only" not in lo.__dict__  # a fresh profile, not a copy of the cache
