"""Size macros evaluated by the compiler (cgpredict.frontend.macros): values derived by hand."""

import pytest

from cgpredict.errors import CompileError, RegionError
from cgpredict.frontend.macros import evaluate_macros
from cgpredict.trace_sizes import resolve_sizes

DEFINES = """
#include <stdio.h>
struct cell { double a; float b; };          /* 16 bytes on x86-64 */
#ifndef NI
#define NI 1024
#endif
#ifndef NJ
# define NJ (512)
#endif
  #define NK 256
#define SHIFT (1 << 24)
#define PROD 4096 * 4
#define TWICE (2 * NI)
#define CELLS (sizeof(struct cell) * NK)
#define NAME "gemm"
#define ALPHA 1.5f
#define OTHER 9
#define OTHER 11
int main(void) { return 0; }
"""


def test_integer_constant_expressions_as_c_evaluates_them():
    got = evaluate_macros(DEFINES, ["NI", "NJ", "NK", "SHIFT", "PROD", "TWICE", "CELLS"])
    assert got == {"NI": 1024, "NJ": 512, "NK": 256, "SHIFT": 16777216, "PROD": 16384,
                   "TWICE": 2048, "CELLS": 4096}


def test_redefinition_takes_the_last_value_and_undefined_names_are_left_out():
    assert evaluate_macros(DEFINES, ["OTHER", "MISSING"]) == {"OTHER": 11}


def test_command_line_values_reach_dependent_macros():
    # NI is guarded by #ifndef, so -D NI=3 replaces it; NK is not, so the file's 256 stays
    assert evaluate_macros(DEFINES, ["TWICE", "CELLS", "NI"], {"NK": 10, "NI": 3}) == {
        "TWICE": 6, "CELLS": 4096, "NI": 3}


@pytest.mark.parametrize("name, text", [("ALPHA", "1.5f"), ("NAME", '"gemm"')])
def test_a_size_that_is_not_an_integer_constant_names_the_macro(name, text):
    with pytest.raises(RegionError, match=rf"size macro {name} = '{text}' is not an integer"):
        evaluate_macros(DEFINES, ["NK", name])


def test_an_optional_size_that_is_not_an_integer_is_no_size():
    assert evaluate_macros(DEFINES, ["NK", "ALPHA", "NAME"], optional={"ALPHA", "NAME"}) == {
        "NK": 256}


def test_a_source_that_does_not_compile_gives_the_diagnostics():
    with pytest.raises(CompileError, match="undeclared"):
        evaluate_macros("#define N 4\nint main(void) { return nope; }\n", ["N"])


EXPR = """#ifndef N
#define N (1 << 24)
#endif
#pragma cgp trace N=65536
float x[N];
int main(void) {
#pragma cgp kernel k
  for (int i = 0; i < N; i++) x[i] = i;
}
"""


def test_work_size_of_an_expression_macro_is_its_value_not_the_trace_size():
    work, trace, auto = resolve_sizes(EXPR, {}, {})
    assert work == {"N": 1 << 24} and trace == {"N": 65536} and not auto
    guarded_float = EXPR.replace("#pragma cgp trace N=65536\n",
                                 "#ifndef SCALE\n#define SCALE 0.5\n#endif\n")
    assert resolve_sizes(guarded_float, {}, {"N": 64})[:2] == ({"N": 1 << 24}, {"N": 64})


def test_a_size_the_file_defines_unconditionally_cannot_be_traced_smaller(tmp_path):
    from cgpredict.frontend.tracer import TraceOptions, trace_program

    src = tmp_path / "fixed.c"
    src.write_text(EXPR.replace("#ifndef N\n", "").replace("#endif\n", "", 1))
    with pytest.raises(RegionError, match=r"-D N=65536 cannot take effect: the file #defines "
                                          r"N as '\(1 << 24\)' unconditionally"):
        trace_program(src, tmp_path / "t.cgptrace", TraceOptions({"N": "65536"}))
