"""Tests of cgpredict.frontend.port: the plain port's opaque array pointers, derived by hand."""

from __future__ import annotations

import pytest

from cgpredict.frontend.port import check_port, indexed_arrays, plain_port_brackets
from cgpredict.frontend.regions import mark_regions

SRC = """#define N 8
static float A[N][N], x[N], y[N];
int main(void) {
#pragma cgp kernel mv
  for (int i = 0; i < N; i++) {
    float tmp[2]; /* B[i] in a comment */
    for (int j = 0; j < N; j++)
      y[i] += A[i][j] * x[j] + tmp[0] + s.v[j];
  }
  return 0;
}
"""


def test_indexed_arrays_in_order_without_locals_members_or_comments():
    loop = SRC[SRC.index("  for") :]
    assert indexed_arrays(loop, SRC) == ("y", "A", "x")


def test_macros_are_not_arrays():
    assert indexed_arrays("for (;;) T[i] = M[i];", "#define M(i) m[i]\n") == ("T",)


def test_brackets_shadow_each_array_with_an_opaque_pointer():
    opening, closing = plain_port_brackets(("A", "x"), 3)
    assert opening == (
        '{ __typeof__(&A[0]) __cgp_p3_A = A; __asm__("" : "+r"(__cgp_p3_A)); '
        '__typeof__(&x[0]) __cgp_p3_x = x; __asm__("" : "+r"(__cgp_p3_x)); '
        "{ __typeof__(&A[0]) A = __cgp_p3_A; __typeof__(&x[0]) x = __cgp_p3_x; "
    )
    assert closing == " } }"
    assert plain_port_brackets((), 0) == ("", "")


def test_plain_marking_keeps_lines_and_balances_braces():
    plain = mark_regions(SRC, "plain").text
    restrict = mark_regions(SRC, "restrict").text
    assert plain.count("\n") == restrict.count("\n") == SRC.count("\n")
    assert plain.count("{") == plain.count("}")
    line = plain.split("\n")[3]
    assert line.startswith("__cgp_region_begin(0); { __typeof__(&y[0])")
    assert plain.split("\n")[8].endswith("} } } __cgp_region_end(0);")
    assert "__typeof__" not in restrict


def test_check_port():
    assert check_port("plain") == "plain"
    with pytest.raises(ValueError, match="plain or restrict"):
        check_port("const")


def _columns(threads: list[list[int]], sid: int):
    """WarpTrace columns of one warp whose lanes store to ``threads[k][lane]`` at step k."""
    import numpy as np

    addr = np.array([a for step in threads for a in step], np.uint64)
    lane = np.array([i for step in threads for i in range(len(step))], np.uint8)
    starts = np.cumsum([0] + [len(s) for s in threads[:-1]]).astype(np.int64)
    n = len(threads)
    return addr, lane, starts, np.zeros(n, np.int64), np.full(n, sid, np.int64)


def test_an_accumulator_restores_its_address():
    """C[i][j] += ... over k: every lane stores the same address at each of 4 steps."""
    import numpy as np

    from cgpredict.frontend.port import restoring_stores

    acc = _columns([[0, 4, 8, 12]] * 4, 1)
    assert restoring_stores(*acc, np.array([False, True])) == {1}
    # out[i][j] = ... over j: each lane writes a new address at every step, however near
    # the last one (the same sector, not the same address): not an accumulator
    row = _columns([[4096 * lane + 4 * j for lane in range(4)] for j in range(4)], 1)
    assert restoring_stores(*row, np.array([False, True])) == frozenset()
    # a load of one address is no store
    assert restoring_stores(*acc, np.array([False, False])) == frozenset()


def test_a_load_of_what_the_thread_stored_is_a_reload():
    """S[t] += ...; Q[t] += ... through plain pointers: the load of S reads back, on every
    step, the address the thread's restoring store of S writes; a load of A[i][t] (a new
    address each step) does not."""
    import numpy as np

    from cgpredict.frontend.port import reloading_loads, restoring_stores

    lanes = range(4)
    steps = [[4 * lane for lane in lanes]] * 4  # S: one address per lane
    moving = [[4096 * j + 4 * lane for lane in lanes] for j in range(4)]  # A[j][lane]
    store_s, load_s = _columns(steps, 1), _columns(steps, 0)
    load_a = _columns(moving, 2)
    cols = [np.concatenate([a, b, c]) for a, b, c in zip(load_s, store_s, load_a)]
    # the concatenated instruction starts index the concatenated events
    n_s = len(load_s[0])
    cols[2] = np.concatenate([load_s[2], store_s[2] + n_s, load_a[2] + 2 * n_s])
    is_store = np.array([False, True, False])
    restores = restoring_stores(*cols, is_store)
    assert restores == {1}
    assert reloading_loads(*cols, is_store, restores) == {0}
    assert reloading_loads(*cols, is_store, frozenset()) == frozenset()
