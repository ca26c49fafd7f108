"""Tests of cgpredict.parallelism: ILP and MLP from the dependence structure of a thread's code
(SPEC §4), on hand-built loop bodies and on the corpus GEMM."""

from __future__ import annotations

from pathlib import Path

import pytest

from cgpredict.fpga.dddg import LoopBody, Op
from cgpredict.parallelism import Parallelism, _weighted, body_parallelism
from cgpredict.pipeline import RunOptions, predict_source

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


@pytest.mark.usefixtures("compiler")
def test_gemm_loads_two_independent_values_per_iteration():
    (k,) = predict_source(POLYBENCH / "gemm.c", RunOptions(model="gpuperf")).kernels
    assert k.profile.mlp == 2.0  # A[i][k] and B[k][j]
    assert k.profile.ilp > 1.0
