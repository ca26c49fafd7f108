"""cgpredict: predict GPU (and FPGA) performance of single-threaded C kernels from a trace."""

import os as _os

from .version import __version__ as __version__

# Installed, `instrument/` and `runtime/` are the subpackages cgpredict.instrument and
# cgpredict.runtime (pyproject's package-dir). Imported straight from a source checkout
# (`python -m pytest` puts the checkout first on sys.path), map them the same way.
_checkout = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if not _os.path.isdir(_os.path.join(__path__[0], "instrument")) and _os.path.isfile(
    _os.path.join(_checkout, "instrument", "memtrace.py")
):
    import importlib.util as _util
    import sys as _sys

    for _name in ("instrument", "runtime"):
        _spec = _util.spec_from_file_location(
            f"{__name__}.{_name}",
            _os.path.join(_checkout, _name, "__init__.py"),
            submodule_search_locations=[_os.path.join(_checkout, _name)],
        )
        _mod = _util.module_from_spec(_spec)
        _sys.modules[_spec.name] = _mod
        _spec.loader.exec_module(_mod)

# The library API (api.py), imported on first use so that `import cgpredict` stays fast.
_API = ("predict", "advise", "compare", "report_page", "options", "ReportPage")


def __getattr__(name: str):
    if name in _API:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + list(_API))
