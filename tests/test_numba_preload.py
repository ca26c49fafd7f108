"""numba's cached kernels read on the warm-up thread (cgpredict/numba_preload.py): every
kernel listed is one of cgpredict's numba kernels; in a fresh process `preload` reads from
numba's cache exactly the signatures its index holds and compiles nothing (numba's own miss
counters), a kernel absent from the cache is left alone, and a cold `run` then finds every
listed kernel already loaded when its analysis calls it."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from numba.core.registry import CPUDispatcher

from cgpredict import numba_preload

ROOT = Path(__file__).resolve().parents[1]


def _python(code: str, **env: str) -> dict:
    """``code`` run in a fresh interpreter (nothing of numba loaded yet); its JSON line."""
    res = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, env={**os.environ, **env}, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(("module", "name"), numba_preload.RUN_KERNELS)
def test_every_listed_kernel_is_a_cached_numba_kernel(module, name):
    fn = getattr(importlib.import_module(module), name)
    assert isinstance(fn, CPUDispatcher) and fn._cache.__class__.__name__ == "FunctionCache"


def test_preload_reads_what_the_cache_holds_and_compiles_nothing():
    out = _python("""
        import json
        from cgpredict import numba_preload as p
        from cgpredict.warps import map_kernel
        read = p.preload()
        rows = []
        for mod, name in p.RUN_KERNELS:
            d = getattr(__import__(mod, fromlist=[name]), name)
            rows.append([len(d.overloads), len(p.cached_signatures(d)),
                         sum(d.stats.cache_hits.values()), sum(d.stats.cache_misses.values())])
        print(json.dumps({"read": read, "rows": rows}))
    """)
    rows = out["rows"]
    assert all(loaded == cached == hits and misses == 0 for loaded, cached, hits, misses in rows)
    assert out["read"] == sum(r[0] for r in rows)
    # this checkout's tests and runs have cached the pseudo-warps' kernels at least once
    assert out["read"] >= len(numba_preload.RUN_KERNELS)


def test_a_kernel_missing_from_the_cache_is_left_to_its_first_call(tmp_path):
    (tmp_path / "u2_uncached.py").write_text(textwrap.dedent("""
        from numba import njit

        @njit(cache=True)
        def twice(x):
            return 2 * x
    """))
    out = _python(f"""
        import json, sys
        sys.path.insert(0, {str(tmp_path)!r})
        from cgpredict import numba_preload as p
        import u2_uncached as m
        read = p.preload((("u2_uncached", "twice"), ("u2_uncached", "nothing_here"),
                          ("no_such_module_u2", "f")))
        print(json.dumps({{"read": read, "loaded": len(m.twice.overloads),
                          "misses": sum(m.twice.stats.cache_misses.values())}}))
    """, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    assert out == {"read": 0, "loaded": 0, "misses": 0}


@pytest.mark.usefixtures("compiler")
def test_a_cold_run_finds_every_listed_kernel_loaded_before_its_analysis():
    """The warm-up thread reads them: no analysis thread loads a listed kernel."""
    out = _python(f"""
        import json, sys, threading
        import numba.core.dispatcher as D
        loaded_by = []
        orig = D.Dispatcher.compile
        def compile(self, sig):
            loaded_by.append([threading.current_thread().name, self.py_func.__module__,
                              self.py_func.__name__])
            return orig(self, sig)
        D.Dispatcher.compile = compile
        from click.testing import CliRunner
        from cgpredict.cli import main
        r = CliRunner().invoke(main, ["run", {str(ROOT / "polybench_c" / "gemm.c")!r},
                                      "--no-cache", "--json"])
        print(json.dumps({{"exit": r.exit_code, "loaded_by": loaded_by}}))
    """, CGPREDICT_NO_CACHE="1")
    assert out["exit"] == 0
    listed = {tuple(k) for k in numba_preload.RUN_KERNELS}
    by = {(mod, name): who for who, mod, name in out["loaded_by"] if (mod, name) in listed}
    assert set(by) == listed  # GEMM's analysis calls every listed kernel
    assert set(by.values()) == {"cgp-numba-warmup"}
