"""pyproject.toml installs every subpackage of cgpredict: the tests import the source tree, so a
subpackage left out of the list would pass them and be missing from `pip install .` (as
cgpredict.render, and with it `report --html/--pdf`, once was)."""

import re
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]


def test_every_subpackage_is_installed():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"])
    found = {"cgpredict." + ".".join(p.parent.relative_to(ROOT / "cgpredict").parts)
             for p in (ROOT / "cgpredict").rglob("__init__.py")
             if p.parent != ROOT / "cgpredict"}
    assert found <= listed, sorted(found - listed)
    assert {"cgpredict", "cgpredict.instrument", "cgpredict.runtime"} <= listed


def _readme_test_command() -> str:
    """The one-line test command of the README's "Set up on a fresh machine"."""
    text = (ROOT / "README.md").read_text()
    lines = [ln for ln in text.splitlines() if "pip install '.[test]'" in ln and "pytest" in ln]
    assert len(lines) == 1, lines
    return lines[0].strip()


LINT = "ruff check cgpredict tests"


def test_ci_runs_exactly_the_readme_test_command():
    """.ci/run's commands after its system packages are the README's steps, one per line, in
    order (lines may come between them, as another install into the same environment), then
    the lint alone (`make lint`'s command)."""
    steps = _readme_test_command().split(" && ")
    assert steps[0] == "python3 -m venv .venv" and steps[-1].startswith("python -m pytest")
    lines = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()]
    at = [lines.index(step) for step in steps]  # ValueError: a step is missing or changed
    assert at == sorted(at)
    after = [ln for ln in lines[at[-1] + 1:] if ln and not ln.startswith("#")]
    assert after == [LINT], after
    assert "set -euo pipefail" in lines[:at[0]]  # a failed step stops the script


def test_make_lint_is_the_ci_lint():
    """`make lint` runs the lint that CI runs after the tests."""
    text = (ROOT / "Makefile").read_text()
    recipe = text.split("\nlint:", 1)[1].splitlines()[1]
    assert recipe == "\t" + LINT


def test_the_test_extra_brings_the_lint():
    """CI's lint runs in the venv the README's test command made: the test extra must bring
    ruff (a fresh CI machine has none: 'ruff: command not found' failed a clean-clone run)."""
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(re.match(r"ruff\b", d) for d in extra["test"]), extra["test"]


# what a test imports with importorskip -> the distribution that brings it
_SKIPPED_IMPORTS = {"sklearn": "scikit-learn", "matplotlib": "matplotlib", "cachesim": "pycachesim",
                    "pyarrow": "pyarrow", "dask": "dask"}


def test_test_extra_brings_every_optional_import_of_the_tests():
    """`pip install '.[test]'` installs every module a test would otherwise skip without."""
    import re

    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]["test"]
    names = {re.split(r"[\[<>=; ]", req, maxsplit=1)[0].lower() for req in extra}
    imported = {m.split(".")[0] for p in (ROOT / "tests").glob("*.py")  # conftest's too
                for m in re.findall(r"(?:importorskip|require)\(\"([\w.]+)\"", p.read_text())}
    assert imported, "no importorskip found: the pattern is stale"
    assert imported <= set(_SKIPPED_IMPORTS), sorted(imported - set(_SKIPPED_IMPORTS))
    assert {_SKIPPED_IMPORTS[m] for m in imported} <= names
    assert {"dask", "pyarrow"} <= names
