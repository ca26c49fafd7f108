"""With the cache off, a cold `run` starts the warm-up (numba and the analysis imported beside
the compiler, cgpredict/warmup.py) before the size macros' probe compile, and its main thread
imports no module between that start and its first ``warmup.join()`` (two threads importing
at once can deadlock in Python's import locks), nor numba before it (the tracer needs none of
it: numba's import runs on the warm-up thread, beside the compiler); the prediction is the
same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

WATCH = """
import json, sys, threading
from cgpredict import warmup
from cgpredict.frontend import macros
state = {"joined": False, "started_at_probe": None, "main_imports": [], "numba_on_main": False}
join = warmup.join
def watched_join():
    if threading.current_thread() is threading.main_thread():
        state["joined"] = True
    return join()
warmup.join = watched_join
probe = macros._compile_probe
def watched_probe(*a, **k):
    if state["started_at_probe"] is None:
        state["started_at_probe"] = warmup._thread is not None
    return probe(*a, **k)
macros._compile_probe = watched_probe
def hook(event, args):
    if (event == "import" and args[0] == "numba" and "numba" not in sys.modules
            and threading.current_thread() is threading.main_thread()):
        state["numba_on_main"] = True  # the main thread paid for numba's import itself
    if (event == "import" and warmup._thread is not None and not state["joined"]
            and threading.current_thread() is threading.main_thread()
            and args[0] not in sys.modules):
        state["main_imports"].append(args[0])
sys.addaudithook(hook)
from click.testing import CliRunner
from cgpredict.cli import main
r = CliRunner().invoke(main, ["run", sys.argv[1], "--no-cache", "--json"])
print(json.dumps({**state, "exit": r.exit_code, "out": r.output}))
"""


@pytest.mark.usefixtures("compiler")
@pytest.mark.parametrize("name", ["gemm", "3mm"])
def test_warm_up_starts_before_the_macro_probe_and_the_main_thread_imports_nothing(name):
    src = ROOT / "polybench_c" / f"{name}.c"
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(WATCH), str(src)],
                         capture_output=True, text=True, timeout=600,
                         env={**os.environ, "CGPREDICT_NO_CACHE": "1"})
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["exit"] == 0 and out["joined"]
    assert out["started_at_probe"] is True  # both files have size macros to evaluate
    assert out["main_imports"] == []
    assert out["numba_on_main"] is False
    assert json.loads(out["out"])["kernels"]


FORK_DURING_WARMUP = """
import subprocess, sys, time
from cgpredict import warmup
def imports():
    import logging  # numba's import brings logging in on the warm-up thread
    time.sleep(0.6)
    logging.getLogger("cgp-test")  # and later takes its lock
warmup.start(imports)
time.sleep(0.2)
subprocess.run(["true"], preexec_fn=lambda: None, check=True)  # a fork beside the warm-up
print("done")
"""


def test_a_fork_beside_the_warm_up_does_not_deadlock_on_logging():
    """A fork taken while the warm-up thread takes logging's lock for the first time waits for
    the warm-up (warmup's fork hook runs before logging's, which would hold the lock)."""
    res = subprocess.run([sys.executable, "-c", FORK_DURING_WARMUP], capture_output=True,
                         text=True, timeout=60, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert res.returncode == 0 and res.stdout.strip() == "done", res.stderr[-2000:]


NO_BLAS_PROBE = """
import importlib.util, sys
from cgpredict import warmup
if importlib.util.find_spec("scipy") is None:
    print("no scipy"); raise SystemExit(0)
with warmup.no_blas_probe():
    try:
        import scipy.linalg.cython_blas  # what numba's arraymath asks at import
        print("imported")
    except ImportError:
        print("refused")
import scipy.linalg.cython_blas  # afterwards as usual
print("after", "scipy.linalg" in sys.modules)
with warmup.no_blas_probe():  # already imported: nothing hidden
    import scipy.linalg
    print("kept", sys.modules["scipy.linalg"] is scipy.linalg)
"""


def test_the_blas_probe_is_refused_only_while_numba_sets_up():
    """numba's import-time BLAS check fails at once inside ``no_blas_probe`` (no 0.2-0.35 s
    import of scipy's linear algebra), scipy.linalg imports as usual after it, and a
    scipy.linalg already imported is left alone."""
    res = subprocess.run([sys.executable, "-c", NO_BLAS_PROBE], capture_output=True,
                         text=True, timeout=120, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert res.returncode == 0, res.stderr[-2000:]
    out = res.stdout.split()
    if out != ["no", "scipy"]:
        assert res.stdout.splitlines() == ["refused", "after True", "kept True"]
