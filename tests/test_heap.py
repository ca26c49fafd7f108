"""heap.keep_freed_memory: glibc takes the settings; opting out leaves the allocator alone.
Each check runs in a child process (the settings are the whole process's)."""

import os
import platform
import subprocess
import sys

import pytest

CHECK = "from cgpredict.heap import keep_freed_memory as k; print(k(), k())"


def _child(env: dict[str, str]) -> str:
    out = subprocess.run([sys.executable, "-c", CHECK], env={**os.environ, **env},
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's mallopt only")
def test_glibc_takes_the_settings_once():
    assert _child({"CGPREDICT_MALLOC": ""}) == "True True"


def test_opt_out_changes_nothing():
    assert _child({"CGPREDICT_MALLOC": "system"}) == "False False"


def test_cli_sets_it_for_its_own_process():
    """`python -m cgpredict` goes through cli.entry, which asks for the settings."""
    code = ("import cgpredict.cli as c, cgpredict.heap as h; "
            "c.main = lambda: print(h._done); c.entry()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env={**os.environ, "CGPREDICT_MALLOC": ""})
    assert out.stdout.strip() == str(platform.libc_ver()[0] == "glibc")
