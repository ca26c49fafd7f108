"""Fuzz cgpredict with csmith programs: any C a user brings must trace, predict or be refused in
one line, never a Python traceback or a hang.

For each seed, csmith writes a random C program; cgpredict then runs, each under a wall-clock
limit:

* ``trace PROG --function func_1``      (csmith's top function, static, called once by main)
* ``run PROG --function func_1``
* ``run PROG`` with ``#pragma cgp kernel`` inserted before the first ``for`` of func_1
  (when func_1 has one)

and the summary (markdown) lists the exit-code histogram per command, the distinct one-line
errors, and every traceback (exit 70, an internal error) or hang with its seed.

    python validation/fuzz.py --n 500 --out validation/results/fuzz.md
    make fuzz N=500

Where csmith is not installed it says so and exits 0 (Debian: apt-get install csmith
libcsmith-dev).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

CSMITH_INCLUDE = ("/usr/include/csmith", "/usr/local/include/csmith",
                  "/usr/include/csmith-2.3.0", "/usr/local/include/csmith-2.3.0")
INTERNAL_ERROR = 70  # cgpredict's exit code for a bug (cli.py)
COMMANDS = ("trace --function func_1", "run --function func_1", "run with pragma")


@dataclass(frozen=True)
class Outcome:
    """One cgpredict command on one csmith program."""

    seed: int
    command: str
    code: int  # exit status; -1: killed at the wall-clock limit (a hang)
    message: str  # the first line of stderr (the one-line error), or the traceback
    seconds: float


def csmith_include() -> Path | None:
    """The directory holding csmith.h, or None when csmith is not installed."""
    if not shutil.which("csmith"):
        return None
    return next((Path(d) for d in CSMITH_INCLUDE if Path(d, "csmith.h").exists()), None)


def generate(seed: int, out: Path) -> None:
    """The csmith program of ``seed`` at ``out``.

    csmith also writes platform.info into its working folder, so each program is made in a
    folder of its own: two seeds generated at once in one folder race on that file (csmith
    exits 255)."""
    with tempfile.TemporaryDirectory(prefix=f"gen{seed}-", dir=out.parent) as gen:
        res = subprocess.run(["csmith", "--seed", str(seed), "-o", out.name], cwd=gen,
                             capture_output=True, text=True, timeout=120)
        if res.returncode != 0:
            raise RuntimeError(f"csmith --seed {seed} failed ({res.returncode}): "
                               f"{res.stderr.strip() or res.stdout.strip()}")
        shutil.move(str(Path(gen, out.name)), out)


def insert_pragma(text: str) -> str | None:
    """``text`` with ``#pragma cgp kernel`` on its own line before the first ``for`` statement
    of func_1's body, or None when func_1 has no for loop."""
    m = re.search(r"^static [^;{]*\bfunc_1\(void\)\s*\{", text, re.M)
    if not m:
        return None
    depth, end = 0, len(text)
    for i in range(m.end() - 1, len(text)):
        depth += (text[i] == "{") - (text[i] == "}")
        if depth == 0:
            end = i
            break
    f = re.compile(r"\bfor\s*\(").search(text, m.end(), end)
    if not f:
        return None
    return text[: f.start()] + "\n#pragma cgp kernel\n" + text[f.start():]


def error_line(stderr: str) -> str:
    """The one-line error of a refused run: the ``cgpredict: error:`` line, not the progress lines
    (``[  3 s] analysing ...``) printed before it when stderr is not a terminal."""
    lines = [x for x in stderr.splitlines() if x.strip()]
    errors = [x for x in lines if x.startswith("cgpredict: error")]
    rest = [x for x in lines if not re.match(r"^\[\s*\d+ s\]", x)]
    return (errors or rest or lines or [""])[-1]


def run_one(args: list[str], cwd: Path, limit_s: float) -> tuple[int, str, float]:
    """(exit code, error line or traceback, seconds) of ``cgpredict ARGS``."""
    env = dict(os.environ, CGP_DEBUG="1")
    t0 = time.perf_counter()
    try:
        res = subprocess.run([sys.executable, "-m", "cgpredict", *args], cwd=cwd, env=env,
                             capture_output=True, text=True, timeout=limit_s)
    except subprocess.TimeoutExpired:
        return -1, f"no answer within {limit_s:g} s", time.perf_counter() - t0
    err = res.stderr.strip()
    if res.returncode == INTERNAL_ERROR or "Traceback (most recent call last)" in err:
        message = err[-3000:]
    else:
        message = error_line(err)
    return res.returncode, message, time.perf_counter() - t0


def fuzz_seed(seed: int, work: Path, timeout_s: float) -> list[Outcome]:
    """The outcomes of the three commands on the csmith program of ``seed``."""
    prog = work / f"s{seed}.c"
    generate(seed, prog)
    limit = timeout_s + 120  # the traced program's own limit plus compile and analysis time
    base = ["--timeout", str(timeout_s)]
    jobs = [
        (COMMANDS[0], ["trace", prog.name, "--function", "func_1", "-o", f"s{seed}.cgptrace",
                       "--force", *base]),
        (COMMANDS[1], ["run", prog.name, "--function", "func_1", *base]),
    ]
    marked = insert_pragma(prog.read_text())
    if marked is not None:
        (work / f"s{seed}_k.c").write_text(marked)
        jobs.append((COMMANDS[2], ["run", f"s{seed}_k.c", *base]))
    out = []
    for name, args in jobs:
        code, message, secs = run_one(args, work, limit)
        out.append(Outcome(seed, name, code, message, secs))
    for f in work.glob(f"s{seed}*"):
        f.unlink()
    return out


def failed(o: Outcome) -> bool:
    """A traceback (an internal error; with CGP_DEBUG=1 Python prints it and exits 1) or a
    hang: what the fuzzing must never find."""
    return o.code in (-1, INTERNAL_ERROR) or "Traceback (most recent call last)" in o.message


def normalise(message: str) -> str:
    """An error line with the seed-specific parts (file names, numbers) blanked, to group them."""
    message = re.sub(r"s\d+(_k)?\.c", "PROG.c", message)
    message = re.sub(r"\b\d+(\.\d+)?\b", "#", message)
    return message[:240]


def summary(outcomes: list[Outcome], seeds: list[int], timeout_s: float, wall_s: float) -> str:
    """The markdown report."""
    lines = [
        "# csmith fuzzing of cgpredict",
        "",
        f"Generated by `validation/fuzz.py` (`make fuzz N={len(seeds)}`): "
        f"{_csmith_version()}, seeds {min(seeds)}..{max(seeds)} ({len(seeds)} programs), "
        f"traced program limit `--timeout {timeout_s:g}`, wall-clock limit "
        f"{timeout_s + 120:g} s per command, {wall_s / 60:.1f} min in all.",
        "",
        "## Exit codes per command",
        "",
        "| command | runs | " + " | ".join(f"exit {c}" for c in _codes(outcomes)) + " |",
        "|---|---|" + "---|" * len(_codes(outcomes)),
    ]
    for cmd in COMMANDS:
        rows = [o for o in outcomes if o.command == cmd]
        hist = Counter(o.code for o in rows)
        lines.append(f"| `{cmd}` | {len(rows)} | "
                     + " | ".join(str(hist.get(c, 0)) for c in _codes(outcomes)) + " |")
    lines += ["", "Exit codes: 0 ok, 2 refused input (one line), 3 the traced program crashed or "
              "ran past its limit, 70 (or 1 with a Python traceback) internal error, -1 no "
              "answer within the wall-clock limit (a hang).", ""]
    bad = [o for o in outcomes if failed(o)]
    lines += [f"## Tracebacks and hangs: {len(bad)}", ""]
    for o in bad:
        lines += [f"* seed {o.seed}, `{o.command}`, exit {o.code}:", "", "```",
                  o.message, "```", ""]
    lines += ["## Distinct one-line errors", "", "| command | count | first seed | message |",
              "|---|---|---|---|"]
    groups: dict[tuple[str, str], list[Outcome]] = {}
    for o in outcomes:
        if o.code != 0 and not failed(o):
            groups.setdefault((o.command, normalise(o.message)), []).append(o)
    for (cmd, msg), rows in sorted(groups.items(), key=lambda kv: (kv[0][0], -len(kv[1]))):
        text = msg.replace("|", "\\|")
        lines.append(f"| `{cmd}` | {len(rows)} | {rows[0].seed} | {text} |")
    lines += ["", "## Seeds", "", " ".join(str(s) for s in seeds), ""]
    return "\n".join(lines)


def _codes(outcomes: list[Outcome]) -> list[int]:
    return sorted({o.code for o in outcomes})


def _csmith_version() -> str:
    try:
        res = subprocess.run(["csmith", "--version"], capture_output=True, text=True, timeout=30)
    except OSError:
        return "?"
    return res.stdout.strip().splitlines()[0] if res.stdout.strip() else "?"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=500, help="number of programs")
    ap.add_argument("--start", type=int, default=1, help="first seed")
    ap.add_argument("--timeout", type=float, default=10.0, help="traced program limit, s")
    ap.add_argument("--out", type=Path, default=None, help="markdown summary path")
    ap.add_argument("--jobs", type=int, default=1, help="programs processed at once")
    args = ap.parse_args(argv)
    include = csmith_include()
    if include is None:
        print("fuzz: csmith is not installed (apt-get install csmith libcsmith-dev): skipped")
        return 0
    seeds = list(range(args.start, args.start + args.n))
    outcomes: list[Outcome] = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="cgp-fuzz-") as tmp:
        work = Path(tmp)
        for h in include.glob("*.h"):
            shutil.copy(h, work)  # csmith programs include "csmith.h" from their own folder
        with ThreadPoolExecutor(max(args.jobs, 1)) as pool:  # commands are processes
            results = pool.map(lambda s: fuzz_seed(s, work, args.timeout), seeds)
            for k, (seed, got) in enumerate(zip(seeds, results)):
                outcomes += got
                codes = " ".join(f"{o.code}" for o in got)
                print(f"[{k + 1}/{len(seeds)}] seed {seed}: {codes}", flush=True)
                if args.out and (k + 1) % 10 == 0:  # a partial summary survives a stop
                    _write(args.out, summary(outcomes, seeds[: k + 1], args.timeout,
                                             time.perf_counter() - t0))
    text = summary(outcomes, seeds, args.timeout, time.perf_counter() - t0)
    if args.out:
        _write(args.out, text)
        print(f"wrote {args.out}")
    else:
        print(text)
    return 1 if any(failed(o) for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
