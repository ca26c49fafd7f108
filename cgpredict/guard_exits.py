"""Threads that leave at the guard: what a test merged into the thread's guard saves the
threads that fail it (issue 24, SPEC §2.4, eq. (12g)).

``zero_trip_tests.merged_zero_trip_tests`` finds the tests of a thread's body that ptxas merges
into the guard (one predicate, one predicated ``EXIT``): a test before which the thread
writes nothing and after whose skipping side it writes nothing. The model already counts
such a test's branch as none (``MachineExtras.merged_tests``). Where the test's skipping side
is taken, the thread leaves at the guard's ``EXIT``: Gram-Schmidt k1's ``if (t == 0)``, which
255 of its 256 threads fail (``t < 256 && t == 0`` is one ``ISETP`` and one ``@P0 EXIT`` in its
sm_90 SASS, ``validation/sass_check.py``). Such a thread runs the code before the guard only:
the stack pointer's ``LDC``, the index's special registers, ``IMAD`` and the guard's
``ISETP``, and the ``EXIT``. What the model counts for it beyond that comes after the guard in
the SASS and is not run (per thread that leaves, eq. (12g)):

* its final branch: the mapped loop's latch branch, which the model counts as the thread's
  ``EXIT`` (class branch: 1);
* the constant loads after the guard: the array parameters (an ``LDC.64`` each: the entry's
  arrays), the sizes (``LDC``: gs_k1's guard compares with constants, its loop bound ``ni``
  is read after it), the memory descriptor (``ULDC.64``) and the scalar arguments (class
  other).

```
left = sum over merged test blocks of max(0, executions of the test - executions of its
       successors entering a loop) per thread                                        (12g)
saved = left * (1 branch + arrays + size + descriptor + scalar argument loads)
```

Elsewhere (MVT, GEMVER k3, Deriche's forward passes: a merged zero-trip test ``m < 1``) every
thread enters the loop and nothing changes. gs_k1: branch 2.1 -> 1.1 and other 8.0 -> 4.0 a
thread, the SASS's 1.1 and 4.1.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GuardExits:
    """Per thread, the instructions a thread leaving at the guard does not run, by SASS
    class (eq. (12g))."""

    branch: float = 0.0
    other: float = 0.0

    @property
    def total(self) -> float:
        """The instructions saved per thread."""
        return self.branch + self.other


def left_at_guard(entries: tuple[tuple[int, int], ...], per_thread) -> float:
    """The share of threads that leave at the guard: per merged test block (``entries``: its
    block and its entering successor's for each loop it is found to test,
    ``zero_trip_tests.merged_test_entries``) the executions per thread of the test less those
    of its sides entering a loop (eq. (12g)). A test listed for two loops (softmax's first
    loop header, whose sides enter the first loop or skip to the second) enters by both."""
    enters: dict[int, set[int]] = {}
    for t, e in entries:
        enters.setdefault(t, set()).add(e)
    return float(sum(
        max(per_thread.get(t, 0.0) - sum(per_thread.get(e, 0.0) for e in es), 0.0)
        for t, es in enters.items()
    ))


def guard_exits(entries: tuple[tuple[int, int], ...], per_thread, after_guard_loads: float
                ) -> GuardExits:
    """Eq. (12g): what the threads leaving at the guard save, per thread: their final
    branch and ``after_guard_loads`` constant loads each (``machine_code``: arrays, sizes,
    descriptor and scalar arguments)."""
    left = left_at_guard(entries, per_thread)
    return GuardExits(branch=left, other=left * after_guard_loads)
