"""numba's kernels compiled before the first run (cgpredict/numba_warm.py, setup.py): in a
numba cache of its own, the warm-up leaves every kernel the README's first command and the
advisor's fixes call compiled, so that command and a first `advise` of another file then
compile nothing (numba's own hit and miss counters); a cold cache is seen as cold and said
once on the progress line; the build can run it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from cgpredict import numba_cache, numba_warm, prepared

ROOT = Path(__file__).resolve().parents[1]
POLY = ROOT / "polybench_c"

# In a fresh process: is the cache cold, then the README's first command, then numba's
# counters over every compiled function of cgpredict.
RUN_AND_COUNT = """
import json, sys
from click.testing import CliRunner
from numba.core.registry import CPUDispatcher
import cgpredict, cgpredict.numba_cache as w
from cgpredict.cli import main
cold = w.cold()
r = CliRunner().invoke(main, sys.argv[1:])
hits = misses = 0
missed = []
for name, mod in list(sys.modules.items()):
    if name.startswith("cgpredict"):
        for f in vars(mod).values():
            if isinstance(f, CPUDispatcher):
                hits += sum(f.stats.cache_hits.values())
                misses += sum(f.stats.cache_misses.values())
                if sum(f.stats.cache_misses.values()):
                    missed.append(f"{name}.{f.__name__}")
print(json.dumps({"cold": cold, "exit": r.exit_code, "hits": hits, "misses": misses,
                  "missed": sorted(set(missed)),
                  "dir": str(w.cache_dir())}))
"""


def _python(args: list[str], cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "CGPREDICT_NO_CACHE": "1"}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          cwd=cache.parent, timeout=600)


@pytest.mark.slow
@pytest.mark.usefixtures("compiler")
def test_warm_up_leaves_nothing_for_the_first_run_to_compile(tmp_path):
    cache = tmp_path / "numba-cache"
    cache.mkdir()
    cold = _python(["-c", "import cgpredict.numba_cache as w; print(w.cold(), w.cache_dir())"],
                   cache)
    is_cold, where = cold.stdout.split()
    assert is_cold == "True" and where.startswith(str(cache))  # NUMBA_CACHE_DIR, empty
    warm = _python(["-m", "cgpredict.numba_warm", str(POLY)], cache)
    assert warm.returncode == 0, warm.stderr[-2000:]
    assert warm.stdout.startswith("cgpredict: numba kernels compiled once and cached in ")
    readme = ["run", str(POLY / "gemm.c"), "--block", "32x32", "--no-cache"]
    after = json.loads(_python(["-c", RUN_AND_COUNT, *readme], cache).stdout)
    assert not after["cold"] and after["exit"] == 0
    assert after["misses"] == 0 and after["hits"] >= 10  # every kernel read back
    assert after["dir"].startswith(str(cache))
    # the first `advise` of another stencil (its fixes' kernels) compiles nothing either
    advise = ["advise", str(POLY / "2dconv.c"), "-D", "NI=512", "-D", "NJ=512",
              "--trace-size", "NI=128", "--trace-size", "NJ=128"]
    after = json.loads(_python(["-c", RUN_AND_COUNT, *advise], cache).stdout)
    assert after["exit"] == 0 and after["misses"] == 0 and after["hits"] >= 20, after["missed"]


def test_cold_cache_said_once_on_the_progress_line(monkeypatch):
    said: list[str] = []
    monkeypatch.setattr(prepared, "_numba_checked", False)
    monkeypatch.setattr(numba_cache, "cold", lambda: True)
    prepared._say_if_numba_compiles(said.append)
    prepared._say_if_numba_compiles(said.append)
    assert len(said) == 1 and said[0].startswith("compiling numba's kernels for this machine")
    monkeypatch.setattr(prepared, "_numba_checked", False)
    monkeypatch.setattr(numba_cache, "cold", lambda: False)
    prepared._say_if_numba_compiles(said.append)
    assert len(said) == 1  # a warm cache: nothing said


def test_cache_dir_is_numbas():
    from cgpredict.warps import map_kernel

    assert map_kernel.stats.cache_path == str(numba_cache.cache_dir())


def test_the_build_can_run_the_warm_up():
    """setup.py runs cgpredict in the build environment: every dependency is a build
    requirement, and the warm-up's files are in the corpus."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert set(meta["project"]["dependencies"]) <= set(meta["build-system"]["requires"])
    assert "numba_warm" in (ROOT / "setup.py").read_text()
    assert all((POLY / name).is_file() for _, name, _ in numba_warm.WARM_RUNS)
    assert numba_warm.main(["/nonexistent"]) == 2
