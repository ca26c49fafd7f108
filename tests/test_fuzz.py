"""The csmith fuzz harness (validation/fuzz.py): a CI-sized sample of 20 programs must give no
traceback and no hang; its pure helpers are checked by hand."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parent.parent / "validation" / "fuzz.py"
spec = importlib.util.spec_from_file_location("cgp_fuzz", HARNESS)
fuzz = importlib.util.module_from_spec(spec)
sys.modules["cgp_fuzz"] = fuzz  # dataclasses look their module up while the class is made
spec.loader.exec_module(fuzz)

PROGRAM = """static int g;
static int func_1(void);
static int func_1(void)
{
    int i;
    if (g) { g = 2; }
    for (i = 0; i < 4; i++) { g += i; }
    for (;;) break;
    return g;
}
int main(void) { return func_1(); }
"""


def test_the_pragma_goes_on_its_own_line_before_func_1s_first_for():
    out = fuzz.insert_pragma(PROGRAM)
    lines = out.split("\n")
    k = lines.index("#pragma cgp kernel")
    assert lines[k + 1].startswith("for (i = 0; i < 4; i++)") and out.count("#pragma") == 1
    assert out.replace("\n#pragma cgp kernel\n", "") == PROGRAM


def test_no_pragma_without_a_loop_in_func_1():
    assert fuzz.insert_pragma(PROGRAM.replace("for (i = 0; i < 4; i++)", "if (1)")
                              .replace("for (;;) break;", "")) is None


def test_error_lines_are_grouped_without_seeds_and_numbers():
    a = fuzz.normalise("cgpredict: error: s12_k.c:40: kernel func_1: 11 top-level loops")
    b = fuzz.normalise("cgpredict: error: s7_k.c:3: kernel func_1: 2 top-level loops")
    assert a == b == "cgpredict: error: PROG.c:#: kernel func_1: # top-level loops"


def test_the_error_line_is_the_error_not_the_progress_printed_before_it():
    err = ("[   1 s] tracing ...\n[   3 s] analysing ...\n"
           "cgpredict: error: s5.c: --function func_1: it never runs\n")
    assert fuzz.error_line(err) == "cgpredict: error: s5.c: --function func_1: it never runs"
    assert fuzz.error_line("[   2 s] tracing ...\nsomething else\n") == "something else"
    assert fuzz.error_line("") == ""


def test_summary_counts_every_run_and_lists_tracebacks_and_hangs():
    runs = [fuzz.Outcome(1, fuzz.COMMANDS[0], 0, "", 1.0),
            fuzz.Outcome(1, fuzz.COMMANDS[1], 2, "cgpredict: error: s1.c: bad", 1.0),
            fuzz.Outcome(2, fuzz.COMMANDS[1], 70, "Traceback (most recent call last): boom", 1.0),
            fuzz.Outcome(2, fuzz.COMMANDS[2], -1, "no answer within 130 s", 130.0)]
    text = fuzz.summary(runs, [1, 2], 10.0, 60.0)
    assert "| `run --function func_1` | 2 | 0 | 0 | 1 | 1 |" in text
    assert "## Tracebacks and hangs: 2" in text and "seed 2, `run with pragma`, exit -1" in text
    assert "| `run --function func_1` | 1 | 1 | cgpredict: error: PROG.c: bad |" in text


@pytest.mark.slow
@pytest.mark.skipif(fuzz.csmith_include() is None, reason="csmith and libcsmith-dev not installed")
def test_twenty_csmith_programs_give_no_traceback_and_no_hang(tmp_path):
    out = tmp_path / "fuzz.md"
    assert fuzz.main(["--n", "20", "--start", "1001", "--jobs", "2", "--out", str(out)]) == 0
    text = out.read_text()
    assert "## Tracebacks and hangs: 0" in text
    runs = re.findall(r"^\| `[^`]+` \| (\d+) \|", text, re.M)
    assert int(runs[0]) == int(runs[1]) == 20


# --------------------------------------------------------------------------- traces and the cache

INPUTS = Path(__file__).resolve().parent.parent / "validation" / "fuzz_inputs.py"
ispec = importlib.util.spec_from_file_location("cgp_fuzz_inputs", INPUTS)
fuzz_inputs = importlib.util.module_from_spec(ispec)
sys.modules["cgp_fuzz_inputs"] = fuzz_inputs
ispec.loader.exec_module(fuzz_inputs)


@pytest.mark.slow
@pytest.mark.usefixtures("compiler")
def test_a_fixed_seed_set_of_mutated_traces_and_tampered_caches_breaks_no_rule(
        tmp_path, monkeypatch):
    """CI's short run of validation/fuzz_inputs.py (make fuzz runs it at length): 24 mutated
    traces and three tamperings of the cache, none giving another answer, a traceback or
    running planted code."""
    monkeypatch.setenv("CGPREDICT_CACHE_DIR", str(tmp_path / "cache"))
    trace = fuzz_inputs.small_trace(tmp_path)
    results = fuzz_inputs.fuzz_traces(trace, 24, 29, tmp_path)
    results += fuzz_inputs.fuzz_cache(tmp_path, ("planted pickle", "foreign type",
                                                 "resealed bad trace"))
    assert len(results) == 27
    assert [r for r in results if r.bad] == []
    assert {r.kind for r in results} >= {"flip", "cache"}


def test_mutants_are_judged_by_the_rules():
    assert fuzz_inputs.judge(0, "a", "", "a", False) == ""
    assert fuzz_inputs.judge(0, "b", "", "a", False) == "exit 0 with another answer"
    assert fuzz_inputs.judge(0, "b", "", "a", True) == ""  # resealed: a valid trace
    assert fuzz_inputs.judge(4, "", "cgpredict: error: x: corrupt trace\n", "a", False) == ""
    assert fuzz_inputs.judge(70, "", "boom", "a", False).startswith("internal error")
