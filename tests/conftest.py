"""Shared fixtures of the trace tests (kept small: the C compiler)."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="session")
def compiler(tmp_path_factory):
    """The C compiler cgpredict uses, discovered once.

    Discovery runs inside a scratch directory: the ziglang probe of ``find_compiler`` writes a
    file named ``-`` into the current directory (see test_tracer.py), which must not land in
    the repository.
    """
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
