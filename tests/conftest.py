"""Shared fixtures of the trace tests (kept small: the C compiler)."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def compiler(tmp_path_factory):
    """The C compiler cgpredict uses, discovered once, from a scratch directory (so that a
    discovery probe that leaves a file behind cannot litter the repository)."""
    from cgpredict.compiler import find_compiler
    from cgpredict.errors import ToolchainError

    scratch = tmp_path_factory.mktemp("cc-probe")
    old = os.getcwd()
    os.chdir(scratch)
    try:
        return find_compiler()
    except ToolchainError as exc:  # pragma: no cover - depends on the machine
        pytest.skip(f"no C compiler: {exc}")
    finally:
        os.chdir(old)
