"""Shared fixtures of the trace tests (kept small: the C compiler)."""

from __future__ import annotations

import fcntl
import os
import pickle
import re
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

T = TypeVar("T")


def session_scratch(tmp_path_factory, name: str) -> Path:
    """A scratch folder shared by the whole run: under pytest-xdist (``-n``) the one folder
    above the workers' own base temp folders, so every worker finds what another made."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder = root / name
    folder.mkdir(exist_ok=True)
    return folder


def run_once(tmp_path_factory, key: str, compute: Callable[[], T]) -> T:
    """``compute()`` once per test run, shared by the pytest-xdist workers: the first worker to
    ask computes it under a file lock and keeps it pickled in the session scratch folder, the
    others wait for it and read it back (``--dist worksteal`` may split a file's tests over
    both workers; its expensive session results, nvcc's among them, are then made once)."""
    folder = session_scratch(tmp_path_factory, "run-once")
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", key)
    done = folder / f"{stem}.pickle"
    with open(folder / f"{stem}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if done.exists():
            return pickle.loads(done.read_bytes())  # written by this run's own workers
        value = compute()
        part = done.with_suffix(".part")
        part.write_bytes(pickle.dumps(value))
        part.replace(done)
        return value


def kernel_checks(tmp_path_factory, prefix: str, check_file: Callable[[str, str], list]):
    """A getter of ``check_file(name, port)``'s kernel checks by launch, computed once per test
    run and shared by the xdist workers (``run_once``, keyed ``PREFIX-NAME-PORT``)."""
    cache: dict[tuple[str, str], dict] = {}

    def get(name: str, port: str) -> dict:
        if (name, port) not in cache:
            got = run_once(tmp_path_factory, f"{prefix}-{name}-{port}",
                           lambda: check_file(name, port))
            cache[(name, port)] = {k.launch: k for k in got}
        return cache[(name, port)]

    return get


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory):
    """Every test's cgpredict cache (diskcache) lives in a scratch directory, never in the
    user's ~/.cache; shared by the session's tests (and by the xdist workers, whose processes
    use it at once as a sweep's pool does), so a file traced by one test is reused by the
    next as it would be by a user."""
    old = os.environ.get("CGPREDICT_CACHE_DIR")
    os.environ["CGPREDICT_CACHE_DIR"] = str(session_scratch(tmp_path_factory, "cgp-cache"))
    yield
    if old is None:
        os.environ.pop("CGPREDICT_CACHE_DIR", None)
    else:
        os.environ["CGPREDICT_CACHE_DIR"] = old


@pytest.fixture(scope="session")
def compiler(tmp_path_factory):
    """The C compiler cgpredict uses, discovered once, from a scratch directory (so that a
    discovery probe that leaves a file behind cannot litter the repository)."""
    from cgpredict.errors import ToolchainError
    from cgpredict.frontend.compiler import find_compiler

    scratch = tmp_path_factory.mktemp("cc-probe")
    old = os.getcwd()
    os.chdir(scratch)
    try:
        return find_compiler()
    except ToolchainError as exc:  # pragma: no cover - depends on the machine
        pytest.skip(f"no C compiler: {exc}")
    finally:
        os.chdir(old)


def require(module: str):
    """``module`` imported. Where it is missing: a skip on a developer's machine, a failure in
    CI (``CI`` set), whose ``pip install '.[test]'`` must have brought it."""
    import importlib

    if os.environ.get("CI"):
        return importlib.import_module(module)
    return pytest.importorskip(module)


@pytest.fixture(scope="session")
def pycachesim_hits():
    """pycachesim's LRU cache as a function (addrs, sets, ways, line_bytes) -> per single-byte
    load whether it hit: the reference the cache tests compare the analyzer with (a skip
    where pycachesim is not installed)."""
    import numpy as np

    cachesim = pytest.importorskip("cachesim")  # the module of the pycachesim distribution

    def hits(addrs, sets: int, ways: int, line_bytes: int) -> np.ndarray:
        mem = cachesim.MainMemory()
        l2 = cachesim.Cache("L2", sets, ways, line_bytes, "LRU")
        mem.load_to(l2)
        mem.store_from(l2)
        sim = cachesim.CacheSimulator(l2, mem)
        out = np.empty(len(addrs), dtype=bool)
        before = 0
        for t, a in enumerate(addrs):
            sim.load(int(a), length=1)
            out[t] = l2.backend.HIT_count > before
            before = l2.backend.HIT_count
        assert l2.backend.LOAD_count == len(addrs)
        return out

    return hits


class BruteLru:
    """The brute-force cache oracle of the cache tests: a fully associative LRU of
    ``capacity`` lines, each line holding the set of its parts (sectors, halves) filled."""

    def __init__(self, capacity: int) -> None:
        self.capacity: int = capacity
        self.lines: OrderedDict[int, set[int]] = OrderedDict()

    def has(self, line: int, part: int = 0) -> bool:
        """Whether ``part`` of ``line`` is held (no update)."""
        return line in self.lines and part in self.lines[line]

    def touch(self, line: int, part: int = 0) -> bool:
        """Access ``part`` of ``line``: True on a hit; allocates (and evicts) on a miss."""
        if line in self.lines:
            self.lines.move_to_end(line)
            hit = part in self.lines[line]
            self.lines[line].add(part)
            return hit
        self.lines[line] = {part}
        if len(self.lines) > self.capacity:
            self.lines.popitem(last=False)
        return False


def lru_hit_rate(lines: list[int], capacity: int) -> float:
    """The share of ``lines`` that hit in a :class:`BruteLru` of ``capacity`` lines."""
    cache = BruteLru(capacity)
    return sum(cache.touch(ln) for ln in lines) / len(lines)
