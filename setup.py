"""The build step that warms numba's cache (cgpredict/numba_warm.py): after the package is
copied to build/lib, the README's first command runs on it, so the wheel carries the
compiled kernels and the first ``cgpredict run`` after ``pip install .`` does not compile
them. Skipped for editable installs, when the corpus is not there (an sdist without it) or
with ``CGPREDICT_NO_WARM=1``; a failed warm-up is a warning, never a failed install."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


class WarmBuildPy(build_py):
    """build_py, then numba's kernels compiled into the built package's __pycache__."""

    def run(self) -> None:
        super().run()
        try:
            self._warm()
        except Exception as exc:  # never a failed install
            print(f"cgpredict: warning: numba warm-up skipped ({exc}); the first run compiles")

    def _warm(self) -> None:
        import tempfile

        corpus = HERE / "polybench_c"
        if getattr(self, "editable_mode", False) or os.environ.get("CGPREDICT_NO_WARM"):
            return
        if not (corpus / "gemm.c").is_file():
            print("cgpredict: no polybench_c/ here: numba's kernels compile on the first run")
            return
        print("cgpredict: compiling the numba kernels once, into the wheel (about 15 s) ...",
              flush=True)
        env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
        path = [str(Path(self.build_lib).resolve()), env.get("PYTHONPATH", "")]
        env.update(PYTHONPATH=os.pathsep.join(p for p in path if p), CGPREDICT_NO_CACHE="1")
        with tempfile.TemporaryDirectory() as scratch:  # whatever a run leaves, not here
            r = subprocess.run([sys.executable, "-m", "cgpredict.numba_warm", str(corpus)],
                               cwd=scratch, env=env, capture_output=True, text=True)
        tail = (r.stdout + r.stderr).strip().splitlines()[-3:]
        if r.returncode == 0:
            print("\n".join(tail))
        else:
            print("cgpredict: warning: numba warm-up failed, the first run compiles instead: "
                  + " | ".join(tail))


setup(cmdclass={"build_py": WarmBuildPy})
