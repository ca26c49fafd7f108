"""Tests of cgpredict.parallelism: ILP and MLP from the dependence structure of a thread's code
(SPEC §4), on hand-built loop bodies and on the corpus GEMM."""

from __future__ import annotations

from pathlib import Path

import pytest
from cgpredict.instrument.loopbody import LoopBody, Op

from cgpredict.compute import OpLatencies, body_op_cycles
from cgpredict.parallelism import (
    LOADS_IN_FLIGHT,
    Parallelism,
    _latencies,
    _weighted,
    body_chain,
    body_parallelism,
    memory_recurrence,
)
from cgpredict.parallelism import _chain as _chain_of
from cgpredict.pipeline import predict_source
from cgpredict.prediction import RunOptions

POLYBENCH = Path(__file__).resolve().parents[1] / "polybench_c"


def _body(*ops: tuple[str, tuple[int, ...]]) -> LoopBody:
    return LoopBody(tuple(Op(k, f"%{k}", c, "float", deps) for k, (c, deps) in enumerate(ops)),
                    frozenset())


def test_two_independent_loads_feed_one_multiply_add():
    # phi; gep a; load a; gep b; load b; fmul; fadd (accumulator); br
    body = _body(("phi", ()), ("gep", (0,)), ("load", (1,)), ("gep", (0,)), ("load", (3,)),
                 ("fmul", (2, 4)), ("fadd", (5, 0)), ("br", ()))
    p = body_parallelism(body)
    # 6 instructions; the longest chain gep -> load -> fmul -> fadd has 4
    assert (p.ilp, p.mlp, p.instructions) == (6 / 4, 2.0, 6.0)


def test_pointer_chase_has_no_memory_parallelism():
    # load p; load *p; load **p: each address is the previous load's value
    body = _body(("load", ()), ("load", (0,)), ("load", (1,)), ("fadd", (2,)))
    p = body_parallelism(body)
    assert (p.ilp, p.mlp) == (1.0, 1.0)


def test_an_operand_later_in_block_order_starts_no_chain():
    # csmith seed 19: a join phi (op 1) whose input is defined by a block laid out after it
    body = _body(("load", ()), ("phi", (0, 3)), ("fadd", (1,)), ("fmul", ()))
    p = body_parallelism(body)
    # chains: load -> phi -> fadd (2 instructions: phi is none), fmul alone
    assert (p.ilp, p.mlp, p.instructions) == (3 / 2, 1.0, 3.0)


def test_no_loads_and_empty_bodies():
    assert body_parallelism(_body(("fadd", ()), ("fmul", ()))).mlp == 1.0
    assert body_parallelism(_body(("fadd", ()), ("fmul", ()))).ilp == 2.0
    assert body_parallelism(_body()) == Parallelism(1.0, 1.0, 0.0)


def test_bodies_weighted_by_executed_instructions():
    a, b = Parallelism(2.0, 4.0, 10.0), Parallelism(1.0, 1.0, 30.0)
    w = _weighted([(a, 3.0), (b, 1.0)])  # 30 and 30 instructions executed
    assert (w.ilp, w.mlp, w.instructions) == (1.5, 2.5, 60.0)
    assert _weighted([(a, 0.0)]) == Parallelism()


@pytest.mark.slow
@pytest.mark.usefixtures("compiler")
def test_gemm_loads_two_independent_values_per_iteration():
    (k,) = predict_source(POLYBENCH / "gemm.c", RunOptions(model="gpuperf")).kernels
    assert k.profile.mlp == 2.0  # A[i][k] and B[k][j]
    assert k.profile.ilp > 1.0


# ---- a thread's own critical path (body_chain), by hand: loads 100 cycles, FP 4, int 1 ----

def _chain(body: LoopBody) -> float:
    return body_chain(body, lambda sid: 100.0, fp_cycles=4.0, int_cycles=1.0)


def _carried(body: LoopBody, phi: int, update: int) -> LoopBody:
    ops = list(body.ops)
    o = ops[phi]
    ops[phi] = Op(o.index, o.name, o.klass, o.type, o.operands, update)
    return LoopBody(tuple(ops), body.induction)


def test_independent_loads_overlap_as_far_as_a_thread_keeps_them_in_flight():
    """sum += a[i] * b[i]: the iteration's chain gep (1) -> load (100) -> fmul (4) -> fadd
    (4) is 109 cycles; two loads an iteration, so 16 / 2 = 8 iterations overlap: 109 / 8;
    the accumulator's own recurrence (one fadd, 4 cycles) is shorter."""
    body = _carried(_body(("phi", ()), ("gep", ()), ("load", (1,)), ("gep", ()),
                          ("load", (3,)), ("fmul", (2, 4)), ("fadd", (5, 0)), ("br", ())), 0, 6)
    assert LOADS_IN_FLIGHT == 16
    assert _chain(body) == pytest.approx(109 / 8)


def test_a_pointer_chase_is_its_recurrence():
    """p = *p: each iteration's load waits for the previous one's: 100 cycles an iteration,
    however many loads a thread could keep in flight."""
    body = _carried(_body(("phi", ()), ("load", (0,)), ("br", ())), 0, 1)
    assert _chain(body) == pytest.approx(100.0)


def test_an_accumulator_through_memory_is_a_recurrence():
    """x = load acc; x += v; the next iteration's load of acc waits for it (a phi carrying
    the stored value, as a reload the compiler cannot forward): load + fadd a trip."""
    body = _carried(_body(("phi", ()), ("load", (0,)), ("fadd", (1,)), ("store", (2,))), 0, 2)
    assert _chain(body) == pytest.approx(104.0)


@pytest.mark.slow
@pytest.mark.usefixtures("compiler")
def test_single_thread_kernel_is_bound_by_its_chain(tmp_path):
    """One thread of 256 sums a 4096-element column on the H100: the loop's trip count is a
    size (a run-time parameter of the port), so nvcc unrolls it 4 times and only 4 loads are
    in flight at a time: the launch takes at least 4096 / 4 x (an L2 latency) cycles, whatever
    the 8 warps of its block; 256 threads summing a column each take no longer."""
    src = tmp_path / "norm.c"
    src.write_text(NORM)
    one = predict_source(src, RunOptions(device="h100"))
    (k,) = one.kernels
    b = k.result.bounds
    dev_l2 = 369.2
    assert k.result.binding == "chain" and k.result.bound == "latency"
    assert b.chain_cycles >= 4096 / 4 * dev_l2
    assert k.result.cycles == pytest.approx(b.chain_cycles)
    many = predict_source(src, RunOptions(device="h100", work_sizes={"ONE": 0}))
    # 256 threads summing a column each take about one thread's time: each warp's own chain
    # (with eq. (Q1)'s queue it binds them too, as the blind colsum measures: 1.92 ms at
    # 1 to 32 warps an SM alike). Their loads fetch 4 sectors where one lane's fetch 1, so
    # they queue more: measured 928 cycles a 4-load trip (colsum) against 762 (gs_k1), 1.22
    assert k.result.cycles < many.kernels[0].result.cycles <= 1.25 * k.result.cycles


NORM = r"""
#ifndef N
#define N 4096
#endif
#ifndef ONE
#define ONE 1
#endif
static float A[N][256];
static float R[256];
int main(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < 256; j++)
      A[i][j] = (float)((i + j) % 7);
#pragma cgp kernel norm grid=1
  for (int t = 0; t < 256; t++) {
    if (!ONE || t == 0) {
      float s = 0.0f;
      for (int i = 0; i < N; i++)
        s += A[i][t] * A[i][t];
      R[t] = s;
    }
  }
  return R[0] > 0.0f ? 0 : 1;
}
"""


def test_straight_line_code_runs_its_chain_once():
    """A thread's body that is not a loop (a stencil point) overlaps no iterations: its one
    load and the add after it take 104 cycles, not 104 / 16."""
    body = _body(("load", ()), ("fadd", (0,)), ("store", (1,)))
    assert body_chain(body, lambda sid: 100.0, 4.0, 1.0, looped=False) == pytest.approx(104.0)
    assert _chain(body) == pytest.approx(104.0 / 16)


# ---- accesses through plain pointers keep their program order (issue 24, item 3) ----

def _mem_body(*ops: tuple[str, tuple[int, ...], int]) -> LoopBody:
    """A body whose ops carry memory ids (the third field; -1 for none)."""
    return LoopBody(
        tuple(Op(k, f"%{k}", c, "float", deps, -1, mid) for k, (c, deps, mid) in enumerate(ops)),
        frozenset(),
    )


#: S[t] += 1; Q[t] += 2 through plain pointers: both reloaded every iteration (the sm_90 SASS
#: of this loop is LDG S, FADD, STG S, LDG Q, FADD, STG Q: the load of Q may not pass the
#: store of S, which waits for its FADD, which waits for the load of S)
TWO_ACCUMULATORS = (("load", (), 1), ("fadd", (0,), -1), ("store", (1,), 2),
                    ("load", (), 3), ("fadd", (3,), -1), ("store", (4,), 4), ("br", (), -1))


def test_two_accumulators_through_plain_pointers_serialise_both_round_trips():
    """Each iteration: load S (100) -> fadd (4) -> store S -> load Q (100) -> fadd (4) ->
    store Q, and the next iteration's load of S waits for that store: 208 cycles."""
    body = _mem_body(*TWO_ACCUMULATORS)
    ordered = frozenset({1, 2, 3, 4})
    assert body_chain(body, lambda sid: 100.0, 4.0, 1.0, ordered=ordered) == pytest.approx(208.0)
    assert memory_recurrence(body, [100.0, 4.0, 0.0, 100.0, 4.0, 0.0, 0.0], ordered) == 208.0


def test_without_plain_pointers_the_same_loads_overlap():
    """__restrict__ (nothing ordered): the two load-to-add chains (104 each) are independent
    and 16 / 2 = 8 iterations' loads are in flight: 104 / 8."""
    body = _mem_body(*TWO_ACCUMULATORS)
    assert body_chain(body, lambda sid: 100.0, 4.0, 1.0) == pytest.approx(104.0 / 8)


def test_a_forwarded_accumulator_still_orders_the_next_loads():
    """C[i][j] += A[i][k] * B[k][j] through plain pointers, C forwarded in a register (a phi)
    but stored every iteration: the next iteration's loads of A and B may not pass that
    store, so the loads of successive iterations do not overlap: 100 + fmul 4 + fadd 4."""
    body = _mem_body(("phi", (), -1), ("load", (), 1), ("load", (), 2), ("fmul", (1, 2), -1),
                     ("fadd", (3, 0), -1), ("store", (4,), 3), ("br", (), -1))
    ops = list(body.ops)
    ops[0] = Op(0, "%0", "phi", "float", (), 4)
    body = LoopBody(tuple(ops), frozenset())
    chain = body_chain(body, lambda sid: 100.0, 4.0, 1.0, ordered=frozenset({1, 2, 3}))
    assert chain == pytest.approx(108.0)
    assert body_chain(body, lambda sid: 100.0, 4.0, 1.0) == pytest.approx(108.0 / 8)


def test_a_store_no_load_reaches_recurs_nothing():
    """out[i] = 1 (a constant) then load in[i]: the store waits for no load, so the only
    chain is one iteration's load (100 + 4), overlapped 16 ways; the load after the store
    in the same iteration starts when the store issues (at once)."""
    body = _mem_body(("store", (), 1), ("load", (), 2), ("fadd", (1,), -1), ("br", (), -1))
    ordered = frozenset({1, 2})
    assert memory_recurrence(body, [0.0, 100.0, 4.0, 0.0], ordered) == 0.0
    assert body_chain(body, lambda sid: 100.0, 4.0, 1.0, ordered=ordered) == pytest.approx(
        104.0 / 16)


@pytest.mark.slow
@pytest.mark.usefixtures("compiler")
def test_two_plain_accumulators_bind_a_single_thread_kernel(tmp_path):
    """One thread adds to S[t] and Q[t] N = 4096 times on the H100. Plain port: both are
    reloaded every iteration behind the other's store, each reload an L1 hit (the
    write-through L1 keeps the stored line, 38.9 cycles: ncu counts GESUMMV's reloads as
    L1 hits): 4096 x 2 x (38.9 + FADD 4) cycles exactly, the chain bound setting the time.
    __restrict__: both live in registers, 4096 x 4 (the two adds' recurrences run side by
    side). Eq. (LT), a trip of U = 4 (nvcc's run-time unroll): the plain chain + 8.5 / 4 an
    iteration (the back branch), the restrict one at the trip's floor 29.06 / 4 (> 4 + 8.5 /
    4)."""
    src = tmp_path / "acc2.c"
    src.write_text(ACC2)
    (k,) = predict_source(src, RunOptions(device="h100", port="plain")).kernels
    assert k.result.binding == "chain" and k.result.bound == "latency"
    exact = 4096 * (2 * (38.9 + 4.0) + 8.5 / 4)
    # (LTq2) queues the sub-partition's second warp as if it ran the busiest thread's path
    # (here it exits at once): 7 cycles more, 2e-5 of the chain
    assert exact <= k.result.bounds.chain_cycles == pytest.approx(exact, rel=1e-4)
    assert k.result.cycles == pytest.approx(k.result.bounds.chain_cycles)
    (r,) = predict_source(src, RunOptions(device="h100", port="restrict")).kernels
    floor = 4096 * 29.06 / 4  # the same second warp: 0.3 % more here
    assert floor <= r.result.bounds.chain_cycles == pytest.approx(floor, rel=5e-3)


ACC2 = r"""
#ifndef N
#define N 4096
#endif
static float S[256];
static float Q[256];
int main(void) {
#pragma cgp kernel acc2 grid=1
  for (int t = 0; t < 256; t++) {
    if (t == 0) {
      for (int i = 0; i < N; i++) {
        S[t] += 1.0f;
        Q[t] += 2.0f;
      }
    }
  }
  return S[0] > 0.0f ? 0 : 1;
}
"""


@pytest.mark.slow
@pytest.mark.usefixtures("compiler")
def test_the_chain_bound_is_named_in_text_json_and_html(tmp_path):
    """The two-accumulator kernel's binding chain is named by every report: the text's bound
    line, the JSON's ``binding`` and the HTML page's bound table."""
    import json

    from click.testing import CliRunner

    from cgpredict.cli import main

    src = tmp_path / "acc2.c"
    src.write_text(ACC2)
    args = [str(src), "--device", "h100", "--port", "plain"]
    text = CliRunner().invoke(main, ["run", *args], catch_exceptions=False).stdout
    assert "latency-bound (the chain bound sets the time)" in text
    assert "time set by the chain bound" in text
    out = CliRunner().invoke(main, ["run", *args, "--json"], catch_exceptions=False).stdout
    (k,) = json.loads(out)["kernels"]
    assert k["result"]["binding"] == "chain" and k["result"]["bound"] == "latency"
    page = tmp_path / "acc2.html"
    report = ["report", *args, "-o", str(page), "--no-advice"]
    r = CliRunner().invoke(main, report, catch_exceptions=False)
    assert r.exit_code == 0, r.stderr
    assert "physical chain bound" in page.read_text(encoding="ascii")


ACC2_CU = r"""
__global__ void acc2(float* S, float* Q, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  for (int i = 0; i < n; i++) { S[t] += 1.0f; Q[t] += 2.0f; }
}
"""


@pytest.mark.slow
def test_sass_of_two_plain_accumulators_reloads_each_behind_the_other_store(tmp_path):
    """The ordering memory_recurrence assumes, checked on nvcc's sm_90 SASS of the same loop
    through plain pointers: every load is preceded by the previous accumulator's store, each
    add waits for its load (LDG, FADD, STG, over and over, unrolled or not), so no two loads
    are ever in flight together. Skips without nvcc or nvdisasm."""
    import re
    import shutil
    import subprocess
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "validation"))
    import sass_counts

    nvdisasm = sass_counts.find_nvdisasm()
    if shutil.which("nvcc") is None or nvdisasm is None:
        pytest.skip(f"nvcc or nvdisasm not found ({sass_counts.INSTALL_HINT})")
    src, cubin = tmp_path / "acc2.cu", tmp_path / "acc2.cubin"
    src.write_text(ACC2_CU)
    subprocess.run(["nvcc", "-cubin", "-O3", "-arch=sm_90", "-o", str(cubin), str(src)],
                   check=True, capture_output=True, timeout=300)
    sass = subprocess.run([nvdisasm, "-c", str(cubin)], check=True, capture_output=True,
                          text=True, timeout=120).stdout
    ops = re.findall(r"\b(LDG|STG|FADD)\b", sass)
    assert len(ops) >= 12 and len(ops) % 3 == 0
    assert ops == ["LDG", "FADD", "STG"] * (len(ops) // 3)


# ---- latencies by kind (compute.OpLatencies) and IEEE slow-path bodies, by hand ----------

_LAT = OpLatencies(fp32=4.0, integer=1.0, fp64=8.0, sfu=17.0)


def test_op_latencies_price_an_ieee_division_and_square_root_as_their_sass_chains():
    # fdiv: MUFU.RCP then five dependent FFMA; sqrtf: MUFU.RSQ, FMUL, FFMA, FFMA;
    # double division: MUFU.RCP64H, eight DFMA and two ALU steps (compute.SASS_CHAIN)
    assert body_op_cycles("fdiv", _LAT) == 17 + 5 * 4
    assert body_op_cycles("fsqrt", _LAT) == 17 + 3 * 4
    assert body_op_cycles("ddiv", _LAT) == 17 + 8 * 8 + 2 * 4
    assert body_op_cycles("dadd", _LAT) == 8.0 and body_op_cycles("fmul", _LAT) == 4.0
    assert body_op_cycles("iadd", _LAT) == 1.0


def test_a_body_with_a_division_does_not_overlap_its_iterations():
    # load; fsub; fdiv; fadd into the accumulator (phi 0 carries op 4)
    ops = (Op(0, "%0", "phi", "float", (), 4), Op(1, "%1", "load", "float", ()),
           Op(2, "%2", "fadd", "float", (1,)), Op(3, "%3", "fdiv", "float", (2,)),
           Op(4, "%4", "fadd", "float", (0, 3)))
    body = LoopBody(ops, frozenset())
    within = 100 + 4 + (17 + 5 * 4) + 4  # load -> fsub -> fdiv -> fadd
    got = body_chain(body, lambda sid: 100.0, 4.0, 1.0, unroll=4)
    # without op latencies: fdiv is one FP step, but still no overlap (the slow-path test)
    assert got == pytest.approx(100 + 3 * 4)
    lat = tuple(_latencies(body, lambda sid: 100.0, 4.0, 1.0, _LAT))
    assert _chain_of(body, lat, True, 4) == pytest.approx(within)
    # the same body with an fmul in place of the fdiv overlaps its 4 unrolled iterations
    plain = LoopBody(ops[:3] + (Op(3, "%3", "fmul", "float", (2,)),) + ops[4:], frozenset())
    lat = tuple(_latencies(plain, lambda sid: 100.0, 4.0, 1.0, _LAT))
    assert _chain_of(plain, lat, True, 4) == pytest.approx((100 + 3 * 4) / 4)


# ---- a thread's own loads in flight: the serial reference of eq. (22m) ----------------------

def test_without_loads_in_flight_each_iteration_waits_its_own_chain():
    """sum += a[i] * b[i] (__restrict__): an iteration on its own waits its memory period
    and its uses, load 100, fmul 4, fadd 4 = 108 (the address gep issues ahead); with an
    unrolled trip's loads in flight the chain is 109 / 8 (gep 1 + 108, 8 iterations), so
    the thread keeps 108 x 8 / 109 of its memory periods in flight: eq. (22m)'s ratio."""
    body = _carried(_body(("phi", ()), ("gep", ()), ("load", (1,)), ("gep", ()),
                          ("load", (3,)), ("fmul", (2, 4)), ("fadd", (5, 0)), ("br", ())), 0, 6)
    serial = body_chain(body, lambda sid: 100.0, 4.0, 1.0, in_flight=False)
    assert serial == pytest.approx(108.0)
    assert serial / _chain(body) == pytest.approx(108.0 * 8 / 109)


def test_a_plain_store_keeps_one_round_trip_in_flight():
    """C += A * B stored every iteration through plain pointers: the store orders the next
    iteration's loads (108 cycles a trip either way), so the thread keeps one memory period in
    flight (ratio 1) and (22) stays serial; __restrict__ (nothing ordered) keeps 8."""
    body = _mem_body(("phi", (), -1), ("load", (), 1), ("load", (), 2), ("fmul", (1, 2), -1),
                     ("fadd", (3, 0), -1), ("store", (4,), 3), ("br", (), -1))
    ops = list(body.ops)
    ops[0] = Op(0, "%0", "phi", "float", (), 4)
    body = LoopBody(tuple(ops), frozenset())
    plain = frozenset({1, 2, 3})

    def chain(ordered, in_flight):
        return body_chain(body, lambda sid: 100.0, 4.0, 1.0, ordered=ordered,
                          in_flight=in_flight)

    assert chain(plain, False) == chain(plain, True) == pytest.approx(108.0)
    assert chain(frozenset(), False) / chain(frozenset(), True) == pytest.approx(8.0)
    # the address of each load one integer step ahead: still one round trip in flight
    addressed = LoopBody((Op(0, "%0", "phi", "float", (), 5), Op(1, "%1", "gep", "ptr", ()),
                          Op(2, "%2", "load", "float", (1,), -1, 1),
                          Op(3, "%3", "load", "float", (1,), -1, 2)) + tuple(
        Op(o.index + 1, o.name, o.klass, o.type, tuple(k + 1 if k else 0 for k in o.operands),
           o.carried, o.mem_id) for o in body.ops[3:]), frozenset())
    serial = body_chain(addressed, lambda sid: 100.0, 4.0, 1.0, ordered=plain, in_flight=False)
    assert serial == body_chain(addressed, lambda sid: 100.0, 4.0, 1.0, ordered=plain) == 108.0


def test_a_pointer_chase_keeps_one_load_in_flight():
    """p = *p: the recurrence is the whole chain with or without an unrolled trip."""
    body = _carried(_body(("phi", ()), ("load", (0,)), ("br", ())), 0, 1)
    assert body_chain(body, lambda sid: 100.0, 4.0, 1.0, in_flight=False) == _chain(body)


def test_nothing_in_flight_keeps_its_chain_as_the_serial_reference():
    """Straight-line code (gep 1 + load 100 + fadd 4 = 105, run once), a loop without loads
    (an fadd recurrence, 4) and a loop of 17 loads an iteration (16 // 17: no iteration
    overlaps, gep 1 + load 100 + 17 fadds = 169) keep their own chain without an unrolled
    trip in flight: ratio 1, never below it (the address step is not waited for only where
    iterations overlap)."""
    line = _body(("gep", ()), ("load", (0,)), ("fadd", (1,)))
    acc = _carried(_body(("phi", ()), ("fadd", (0,)), ("br", ())), 0, 1)
    ops = [("gep", ())] + [("load", (0,))] * 17
    ops += [("fadd", (1,))] + [("fadd", (18 + k, 2 + k)) for k in range(16)]
    wide = _body(*ops)

    def ratio(body, looped=True):
        serial = body_chain(body, lambda sid: 100.0, 4.0, 1.0, looped=looped, in_flight=False)
        return serial / body_chain(body, lambda sid: 100.0, 4.0, 1.0, looped=looped)

    assert body_chain(line, lambda sid: 100.0, 4.0, 1.0, looped=False) == pytest.approx(105.0)
    assert ratio(line, looped=False) == 1.0
    assert ratio(acc) == 1.0 and _chain(acc) == pytest.approx(4.0)
    assert _chain(wide) == pytest.approx(1 + 100 + 4 * 17)
    assert ratio(wide) == 1.0


def test_a_carried_value_stored_first_closes_a_recurrence_through_memory():
    """Deriche's backward column pass in miniature: ``Y[i] = a * tp1; tp1 = in[i]`` through
    plain pointers. The store comes first and takes the previous iteration's load (a phi);
    the load may not pass the store, so each iteration waits fmul 4 + load 100 = 104. With
    __restrict__ nothing orders them: the load's 100 overlaps 16 ways, the fmul chain 4."""
    body = _mem_body(("phi", (), -1), ("fmul", (0,), -1), ("store", (1,), 1),
                     ("load", (), 2), ("br", (), -1))
    ops = list(body.ops)
    ops[0] = Op(0, "%0", "phi", "float", (), 3)  # tp1 carries the load
    body = LoopBody(tuple(ops), frozenset())
    plain = body_chain(body, lambda sid: 100.0, 4.0, 1.0, ordered=frozenset({1, 2}))
    assert plain == pytest.approx(104.0)
    assert body_chain(body, lambda sid: 100.0, 4.0, 1.0) == pytest.approx(100.0 / 16)


#: GESUMMV's plain iteration: LDG A, LDG x, LDG tmp, FFMA, STG tmp, LDG B, LDG x, LDG y,
#: FFMA, STG y (memory ids A 1, x 2, tmp 3, B 4, y 5)
GESUMMV = (("load", (), 1), ("load", (), 2), ("load", (), 3), ("fmul", (0, 1), -1),
           ("fadd", (2, 3), -1), ("store", (4,), 3), ("load", (), 4), ("load", (), 2),
           ("load", (), 5), ("fmul", (6, 7), -1), ("fadd", (8, 9), -1), ("store", (10,), 5),
           ("br", (), -1))


def test_plain_stores_split_an_iterations_loads_into_memory_periods():
    """(P1) by hand: through plain pointers the loads of B, x and y wait for the store of tmp,
    which waits for the loads of A, x and tmp: 2 loads on the longest chain, 6 / 2 = 3 in
    flight (the SASS's two periods of 3); with nothing ordered (restrict) every chain holds
    one load, 6 / 1; a body whose store comes after all its loads (ATAX's row walk) keeps
    its MLP either way."""
    body = _mem_body(*GESUMMV)
    ordered = frozenset({1, 2, 3, 4, 5})
    assert body_parallelism(body, ordered).mlp == pytest.approx(3.0)
    assert body_parallelism(body).mlp == pytest.approx(6.0)
    atax = _mem_body(("load", (), 1), ("load", (), 2), ("fmul", (0, 1), -1), ("phi", (), -1),
                     ("fadd", (2, 3), -1), ("store", (4,), 3), ("br", (), -1))
    assert body_parallelism(atax, frozenset({1, 2, 3})).mlp == body_parallelism(atax).mlp == 2.0


# ---- measured IEEE chains (eq. (IE)) and one warp's loop trip (eq. (LT)), by hand --------

def test_a_measured_ieee_chain_replaces_its_expansion_and_the_rest_keep_theirs():
    lat = OpLatencies(fp32=4.0, integer=1.0, fp64=8.0, sfu=17.0,
                      measured=(("fdiv_f32", 44.25), ("sqrt_f64", 77.59)))
    assert body_op_cycles("fdiv", lat) == 44.25 and body_op_cycles("dsqrt", lat) == 77.59
    assert body_op_cycles("fsqrt", lat) == 17 + 3 * 4  # not measured: SASS_CHAIN
    assert body_op_cycles("ddiv", lat) == 17 + 8 * 8 + 2 * 4


def _ffma_loop() -> LoopBody:
    # x = x * a + b carried by phi 0 (the dep_chain.cu probe's FFMA chain)
    return LoopBody((Op(0, "%0", "phi", "float", (), 1), Op(1, "%1", "fmul", "float", (0,))),
                    ())


def test_a_loop_trip_is_the_control_floor_or_the_chain_plus_the_back_branch():
    """dep_chain.cu, one warp: a trip of one FFMA 29.06 cycles (the control's floor), a trip of
    8 FFMAs 8 x 4 + 8.5 = 40.5 (probes-2/dep_chain.json: 8 x 5.062)."""
    lat = OpLatencies(fp32=4.0, integer=4.0, fp64=8.0, sfu=17.0, loop_trip=29.06,
                      loop_branch=8.5)
    body = _ffma_loop()
    ops_lat = (0.0, 4.0)
    assert _chain_of(body, ops_lat, True, 1, op_lat=lat) == pytest.approx(29.06)
    assert 8 * _chain_of(body, ops_lat, True, 8, op_lat=lat) == pytest.approx(40.5)
    assert _chain_of(body, ops_lat, False, 1, op_lat=lat) == 4.0  # straight-line: no trip
    assert _chain_of(body, ops_lat, True, 8) == 4.0  # a device without the fields


# ---- a warp's DRAM loads in flight queue (eq. (Q1)), by hand ------------------------------

def _colsum_loop() -> LoopBody:
    """``acc += A[i][j]``: phi acc (carried by the fadd), load A, fadd, br (blind colsum)."""
    return LoopBody((Op(0, "%0", "phi", "float", (), 2), Op(1, "%1", "load", "float", (), -1, 1),
                     Op(2, "%2", "fadd", "float", (0, 1)), Op(3, "", "br", "float")), frozenset())


def test_a_trips_dram_loads_in_flight_return_a_gap_apart():
    """(Q1) by hand: ptxas unrolls colsum's loop 4 times and issues the trip's 4 loads back
    to back; each a coalesced row of 4 sectors at L = 685.1 and a gap g = 15.25 a sector,
    the trip waits L + 3 x 4 g + 4 (the fadd) instead of L + 4; one lane's loads (1 sector,
    GRAMSCHMIDT's gs_k1) wait 3 g; a load the L1 serves (share 0) or a device without the
    field queues nothing; the serial reference (in_flight False) waits each load on its own."""
    body, g = _colsum_loop(), 15.25
    lat = OpLatencies(fp32=4.0, integer=4.0, fp64=8.0, sfu=17.0, dram_gap=g)
    ops_lat = (0.0, 685.1, 4.0, 0.0)
    none = (0.0, 1.0)
    dram = (none, (1.0, 4.0), none, none)
    trip = 4 * _chain_of(body, ops_lat, True, 4, op_lat=lat, dram=dram)
    assert trip == pytest.approx(685.1 + 4.0 + 3 * 4 * g)
    assert 4 * _chain_of(body, ops_lat, True, 4, op_lat=lat) == pytest.approx(689.1)
    lane = 4 * _chain_of(body, ops_lat, True, 4, op_lat=lat, dram=(none, (1.0, 1.0), none, none))
    assert lane == pytest.approx(689.1 + 3 * g)
    half = 4 * _chain_of(body, ops_lat, True, 4, op_lat=lat, dram=(none, (0.5, 4.0), none, none))
    assert half == pytest.approx(689.1 + 1 * 4 * g)  # 2 of the 4 loads go to DRAM
    no_gap = OpLatencies(fp32=4.0, integer=4.0, fp64=8.0, sfu=17.0)
    assert 4 * _chain_of(body, ops_lat, True, 4, op_lat=no_gap, dram=dram) == pytest.approx(689.1)
    serial = _chain_of(body, ops_lat, True, 4, in_flight=False, op_lat=lat, dram=dram)
    assert serial == pytest.approx(689.1)  # one load at a time: nothing queues
    assert _chain_of(body, ops_lat, False, 4, op_lat=lat, dram=dram) == pytest.approx(689.1)


def test_a_gather_keeps_its_index_not_a_share_of_the_back_edge() -> None:
    """Eq. (AF2) on CSR's loop by hand: integer instructions (3 gep, iadd, icmp) 5; the
    gather's sext is no instruction (eq. (AF2w): it only carries the taint), its gep is
    tainted by the load of col[k]: 4/5 affine, so the 5 integer instructions an iteration
    keep 1, the gather's IMAD.WIDE (the sm_90 SASS: user spmv_csr's 16-deep trip); the one
    branch follows the counter only: 1/1; one share over both (6 instructions) 5/6."""
    from cgpredict.instrument import loopbody
    from cgpredict.instrument.irtext import parse_module
    from test_loop_exits import CSR

    from cgpredict.parallelism import affine_share

    fn = parse_module(CSR).functions["csr"]
    body = loopbody.loop_body(fn, ["loop"], {})
    assert affine_share(body, False) == pytest.approx(4 / 5)
    assert affine_share(body, True) == 1.0
    assert affine_share(body) == pytest.approx(5 / 6)
    kept = (1 - affine_share(body, False)) * 5  # integer_insts less the branch: 5
    assert kept == pytest.approx(1.0)


def test_casts_weigh_nothing_in_the_affine_share() -> None:
    """Eq. (AF2w) by hand: a loop summing a widened loaded value has four integer
    instructions, the load's address, its counter's add and compare (affine) and the sum's
    add (tainted by the load); the sext between the load and the add is no instruction
    (compute.FREE_OPS): 3/4 affine, where counting the cast as an op gave 3/5 and kept 1.6
    of the 4 instructions an iteration instead of the 1 the sum's add is."""
    from cgpredict.instrument import loopbody
    from cgpredict.instrument.irtext import parse_module

    from cgpredict.parallelism import affine_share

    ir = """\
define void @widen(ptr %a, i64 %n) {
entry:
  br label %loop
loop:
  %k = phi i64 [ 0, %entry ], [ %k.next, %loop ]
  %s = phi i64 [ 0, %entry ], [ %s.next, %loop ]
  %p = getelementptr inbounds i32, ptr %a, i64 %k
  %v = load i32, ptr %p
  %w = sext i32 %v to i64
  %s.next = add nsw i64 %s, %w
  %k.next = add nsw i64 %k, 1
  %done = icmp eq i64 %k.next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
"""
    body = loopbody.loop_body(parse_module(ir).functions["widen"], ["loop"], {})
    assert [o.klass for o in body.ops].count("cast") == 1
    # integer ops: gep (affine), iadd s (tainted), iadd k, icmp (affine); the sext skipped
    assert affine_share(body, False) == pytest.approx(3 / 4)
    assert affine_share(body, True) == 1.0


def test_the_fold_takes_integer_ops_and_branches_at_their_own_shares() -> None:
    """Eq. (AF2) by hand: a loop body run 10 times a thread, 6 integer and branch
    instructions an execution of which 1 branch, shares 1/2 (integer) and 1 (branch),
    unrolled 4 times: (0.5 x 5 + 1 x 1) x 10 x (1 - 1/4) = 26.25 folded; without the
    branches named, every instruction at the integer share: 0.5 x 6 x 10 x 3/4 = 22.5."""
    from cgpredict.parallelism import ThreadBodies

    tb = ThreadBodies(bodies=((None, (0,)),), loop_ids=(1,), affine=(0.5,),
                      affine_branch=(1.0,))
    saved = tb.unrolled_savings({0: 10.0}, lambda b: 6.0, lambda lid: 4, None, lambda b: 1.0)
    assert saved == pytest.approx(26.25)
    assert tb.unrolled_savings({0: 10.0}, lambda b: 6.0, lambda lid: 4) == pytest.approx(22.5)


def test_straight_line_loads_wait_one_after_another_in_the_serial_reference():
    """(22t) by hand: three independent loads (100 cycles each) summed by two fadds (4 each),
    run once: the chain is 100 + 4 + 4 = 108; one load at a time the thread waits 300, so it
    keeps 300 / 108 of its memory periods in flight. Two chained loads (a pointer chase, 200)
    wait the same either way: ratio 1; one load keeps its chain (the test above)."""
    three = _body(("load", ()), ("load", ()), ("load", ()), ("fadd", (0, 1)), ("fadd", (3, 2)))
    chase = _body(("load", ()), ("load", (0,)), ("fadd", (1,)))

    def both(body):
        return (body_chain(body, lambda sid: 100.0, 4.0, 1.0, looped=False, in_flight=False),
                body_chain(body, lambda sid: 100.0, 4.0, 1.0, looped=False))

    assert both(three) == pytest.approx((300.0, 108.0))
    assert both(chase) == pytest.approx((204.0, 204.0))
