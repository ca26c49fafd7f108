"""The sandbox of the traced program (sandbox.py, issue 29): a minimal environment, limits,
its own process group killed with the run, bounded output, bubblewrap where installed; and
cgpredict's SIGTERM handler, which leaves no process and no temp folder behind."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from cgpredict.errors import TraceRunError
from cgpredict.frontend import sandbox
from cgpredict.frontend.tracer import TraceOptions, trace_program

pytestmark = pytest.mark.usefixtures("compiler")
HAVE_BWRAP = shutil.which("bwrap") is not None
ROOT = os.geteuid() == 0

PROGRAM = """#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/prctl.h>
#define N 32
float A[N];
int main(void) {
  prctl(PR_SET_NAME, "TAG", 0, 0, 0);
  BEFORE
#pragma cgp kernel k
  for (int i = 0; i < N; i++) A[i] = i;
  AFTER
  printf("%f\\n", A[3]);
  return 0;
}
"""


def program(tmp_path: Path, before: str = "", after: str = "") -> tuple[Path, str]:
    """A small traced program named by a fresh tag (its process name), and the tag."""
    tag = "cgp" + uuid.uuid4().hex[:10]
    src = tmp_path / "p.c"
    src.write_text(PROGRAM.replace("TAG", tag).replace("BEFORE", before)
                   .replace("AFTER", after))
    return src, tag


def processes_named(tag: str) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        try:
            if d.name.isdigit() and (d / "comm").read_text().strip() == tag[:15]:
                out.append(int(d.name))
        except OSError:
            continue
    return out


def test_a_forked_child_is_killed_and_does_not_hold_the_run(tmp_path):
    marker = tmp_path / "child-lived"
    src, tag = program(tmp_path, before=f'if (fork() == 0) {{ sleep(20); '
                                        f'fopen("{marker}", "w"); _exit(0); }}')
    t0 = time.perf_counter()
    try:
        trace_program(src, tmp_path / "o.cgptrace", TraceOptions(timeout_s=30))
    except TraceRunError:
        assert not ROOT  # RLIMIT_NPROC: fork() fails for a user, the program goes on
    assert time.perf_counter() - t0 < 20
    assert processes_named(tag) == []


@pytest.mark.skipif(not HAVE_BWRAP and ROOT, reason="root without bwrap: no file confinement")
def test_writes_and_commands_outside_the_output_folder_are_confined(tmp_path):
    written, touched = tmp_path / "written", tmp_path / "touched"
    src, _ = program(tmp_path, before=f'FILE *f = fopen("{written}", "w"); if (f) fclose(f); '
                                      f'int r = system("touch {touched}"); (void)r;')
    trace_program(src, tmp_path / "o.cgptrace", TraceOptions())
    assert not written.exists() and not touched.exists()
    assert (tmp_path / "o.cgptrace").exists()


@pytest.mark.skipif(sandbox.no_process_filter() is None, reason="seccomp filter: x86-64 only")
@pytest.mark.parametrize("bwrap", [False, True])
def test_no_new_processes_even_for_root_but_threads_run(tmp_path, monkeypatch, bwrap):
    if bwrap and not HAVE_BWRAP:
        pytest.skip("bwrap is not installed")
    if not bwrap:
        monkeypatch.setattr(sandbox.shutil, "which",
                            lambda n, _w=shutil.which: None if n == "bwrap" else _w(n))
    touched = tmp_path / "touched"
    src, _ = program(tmp_path, before='pid_t p = fork(); if (p == 0) _exit(0); '
                                      f'int r = system("touch {touched}");',
                     after='printf("fork=%d system=%d\\n", (int)p, r);')
    src.write_text("#include <pthread.h>\n" + src.read_text())
    tr = trace_program(src, tmp_path / "o.cgptrace", TraceOptions())
    assert "fork=-1 system=32512" in tr.header.stdout_tail and not touched.exists()
    monkeypatch.setenv("CGPREDICT_NO_SANDBOX", "1")
    tr = trace_program(src, tmp_path / "p.cgptrace", TraceOptions())
    assert "fork=-1" not in tr.header.stdout_tail and touched.exists()


def test_the_filter_is_fourteen_instructions_that_end_in_returns():
    import struct

    prog = sandbox.no_process_filter()
    if prog is None:
        pytest.skip("x86-64 only")
    ins = [struct.unpack("<HBBI", prog[k:k + 8]) for k in range(0, len(prog), 8)]
    assert len(ins) == 14 and all(code == 0x06 for code, *_ in ins[-3:])
    for k, (code, jt, jf, _) in enumerate(ins):  # every jump lands inside the program
        if code & 0x07 == 0x05:
            assert k + 1 + max(jt, jf) < len(ins)


def test_the_environment_is_minimal_unless_the_sandbox_is_off(tmp_path, monkeypatch):
    src, _ = program(tmp_path, after='printf("secret=%s\\n", getenv("CGP_TEST_SECRET") ? '
                                     'getenv("CGP_TEST_SECRET") : "none");')
    monkeypatch.setenv("CGP_TEST_SECRET", "s3cret")
    tr = trace_program(src, tmp_path / "a.cgptrace", TraceOptions())
    assert "secret=none" in tr.header.stdout_tail
    monkeypatch.setenv("CGPREDICT_NO_SANDBOX", "1")
    tr = trace_program(src, tmp_path / "b.cgptrace", TraceOptions())
    assert "secret=s3cret" in tr.header.stdout_tail


def test_output_is_kept_bounded(tmp_path):
    res = sandbox.run_confined(
        [sys.executable, "-c", "import sys; sys.stdout.write('x' * 3_000_000 + 'END')"],
        tmp_path, {}, 30, 1 << 20,
    )
    assert res.returncode == 0 and len(res.stdout) == sandbox.KEEP_BYTES
    assert res.stdout.endswith("END")


def test_a_left_child_ends_with_the_run_and_a_loop_at_the_timeout(tmp_path):
    t0 = time.perf_counter()
    res = sandbox.run_confined(["/bin/sh", "-c", "sleep 30 & echo started"], tmp_path, {},
                               20, 1 << 20, confine=False)
    assert res.stdout == "started\n" and not res.timed_out
    assert time.perf_counter() - t0 < 10
    res = sandbox.run_confined(["/bin/sh", "-c", "while :; do :; done"], tmp_path, {}, 1,
                               1 << 20, confine=False)
    assert res.timed_out


def test_sigterm_kills_the_traced_program_and_removes_temp_folders(tmp_path):
    src, tag = program(tmp_path, after="for (;;) { }")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, TMPDIR=str(tmp), CGPREDICT_NO_CACHE="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "cgpredict", "trace", str(src), "-o", str(tmp_path / "o.t"),
         "--timeout", "60"], env=env, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not processes_named(tag) and time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert processes_named(tag), proc.stderr.read() if proc.poll() is not None else "no start"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM
    assert err.strip() == "cgpredict: stopped by SIGTERM"
    time.sleep(0.5)
    assert processes_named(tag) == []
    assert [p.name for p in tmp.iterdir() if p.name.startswith("cgp-")] == []
