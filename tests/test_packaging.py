"""pyproject.toml installs every subpackage of cgpredict: the tests import the source tree, so a
subpackage left out of the list would pass them and be missing from `pip install .` (as
cgpredict.render, and with it `report --html/--pdf`, once was)."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_subpackage_is_installed():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
                 ["packages"])
    found = {"cgpredict." + ".".join(p.parent.relative_to(ROOT / "cgpredict").parts)
             for p in (ROOT / "cgpredict").rglob("__init__.py")
             if p.parent != ROOT / "cgpredict"}
    assert found <= listed, sorted(found - listed)
    assert {"cgpredict", "cgpredict.instrument", "cgpredict.runtime"} <= listed
