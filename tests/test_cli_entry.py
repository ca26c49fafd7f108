"""The `cgpredict` program as a user runs it (cli.entry, in a process of its own): exit codes,
one-line errors and complete output through the fast exit (cli._leave)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _cgpredict(*args: str, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "CGPREDICT_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, "-m", "cgpredict", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_version_and_usage_error_exit_codes(tmp_path):
    ok = _cgpredict("--version", tmp_path=tmp_path)
    assert ok.returncode == 0 and ok.stdout.startswith("cgpredict, version")
    bad = _cgpredict("run", "polybench_c/gemm.c", "--block", "0x8", tmp_path=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "block shape '0x8'" in bad.stderr


def test_json_report_is_complete_and_temporaries_are_removed(tmp_path):
    src = tmp_path / "saxpy.c"
    src.write_text(
        "#define N 4096\nfloat x[N], y[N];\nint main(void) {\n"
        "#pragma cgp kernel saxpy\n  for (int i = 0; i < N; i++) y[i] += 2.0f * x[i];\n"
        "  return (int)y[7];\n}\n"
    )
    got = _cgpredict("run", str(src), "--json", tmp_path=tmp_path)
    assert got.returncode == 0, got.stderr
    rep = json.loads(got.stdout)  # the whole document reached the pipe before os._exit
    assert [k["name"] for k in rep["kernels"]] == ["saxpy"]
    assert not any((tmp_path / "cache" / "tmp").glob("*"))  # exit handlers ran


def test_blas_runs_in_the_calling_thread_unless_the_user_says_otherwise():
    """cli.entry sets OPENBLAS_NUM_THREADS=1 before numpy loads (no spinning BLAS workers);
    a value in the user's environment is kept."""
    code = ("import sys, os, cgpredict.cli as c; c.main = lambda: print("
            "os.environ['OPENBLAS_NUM_THREADS'], 'numpy' in sys.modules); c.entry()")
    for given, want in ((None, "1 False"), ("3", "3 False")):
        env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
        if given:
            env["OPENBLAS_NUM_THREADS"] = given
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, env=env, cwd=ROOT)
        assert out.stdout.strip() == want


@pytest.mark.skipif(sys.platform != "linux", reason="numpy asks for huge pages on Linux only")
def test_numpy_asks_for_no_huge_pages_unless_the_user_says_otherwise():
    """cli.entry sets NUMPY_MADVISE_HUGEPAGE=0 before numpy loads, and numpy takes it (no
    transparent huge pages asked for its large arrays: speed.md, round 6); a value in the
    user's environment is kept."""
    code = ("import sys, os, cgpredict.cli as c\n"
            "def main():\n"
            "    import numpy._core.multiarray as m\n"
            "    print(os.environ['NUMPY_MADVISE_HUGEPAGE'], m._get_madvise_hugepage())\n"
            "c.main = main; c.entry()")
    for given, want in ((None, "0 False"), ("1", "1 True")):
        env = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
        if given:
            env["NUMPY_MADVISE_HUGEPAGE"] = given
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, env=env, cwd=ROOT)
        assert out.stdout.strip() == want
