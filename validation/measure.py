#!/usr/bin/env python3
"""Measure the CUDA reference ports (validation/cuda/*.cu) on the local NVIDIA GPU.

Standalone (python3 standard library only; the tools it drives, nvcc, nvidia-smi and ncu,
in ``measure_tools.py`` beside it). For every port it
  1. builds a small "check" binary (every size macro = --check-size) and a "work" binary at the
     reference work size of SPEC section 8, with ``nvcc -O3 -arch=native`` (falls back to
     ``-arch=sm_90`` when ``native`` is not accepted), into validation/cuda/bin/;
  2. runs the check binary with ``--check`` (device result vs host reference) and records
     pass/fail;
  3. runs the work binary in the reference configurations -- 2-D kernels with blocks 32x32 and
     32x8, 1-D kernels with 256x1 -- and
  4. when Nsight Compute (``ncu``) is found and --no-ncu is not given, profiles one more run of
     every configuration (``ncu --csv --page raw``, the counters of NCU_METRICS, the launches
     of one benchmark run after the warm-up, at most --ncu-launches of them) into
     <out stem>-ncu/<port>-<config>.csv beside the JSON; ``cgpredict explain`` reads them;
  5. writes validation/measured/<gpu-name-slug>.json: GPU name, clocks, driver, date, nvcc
     version, host, the port, and every kernel/config result (the JSON each port prints, see
     validation/README.md for the timing method), with ``counters`` (CSV path, launches per
     run, launches profiled) where ncu ran.

--port plain (default) builds the ports as PolyBench/GPU writes them (every array a plain
``float*`` kernel parameter); --port restrict builds them with ``-DCGP_PORT_RESTRICT=1`` (every
array ``__restrict__``, inputs ``const``), into binaries named ``<port>_restrict`` and, by
default, ``<gpu-name-slug>-restrict.json``. cgpredict predicts either with ``--port``.

--user (or --set user) measures the ports of the user kernels instead (validation/cuda/user/*.cu,
the C files of examples/user at their own work sizes: the size macros' defaults), into
``<gpu-name-slug>[-restrict]-user.json`` and binaries under <bin-dir>/user; --set blind the same
for validation/cuda/blind/*.cu (examples/blind), into ``...-blind.json`` and <bin-dir>/blind.

Usage:
  python validation/measure.py [--user | --set blind] [--only gemm,syrk] [--out FILE]
         [--check-size 64] [--sizes NAME=V ...] [--reps 7] [--timeout 180]
         [--sample gramschmidt=64 ...] [--configs 32x32,32x8] [--configs-1d 32x1,1024x1]
         [--no-check] [--jobs N] [--budget 900] [--nvcc PATH]
         [--bin-dir DIR] [--port plain|restrict] [--dry-run] [--no-ncu] [--ncu PATH]
         [--ncu-launches 60]

Expected duration on one H100: about 2-3 minutes (builds ~30 s with 8 parallel nvcc jobs, checks
~15 s, 39 timed runs ~1-2 min; GRAMSCHMIDT is timed on 64 of its 8192 columns).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from measure_tools import (  # noqa: E402, F401  (NCU_METRICS re-exported: a test reads it)
    NCU_METRICS,
    NCU_METRICS_EXTENDED,
    NCU_METRICS_OPCODES,
    build,
    gpu_info,
    ncu_path,
    nvcc_cmd,
    nvcc_path,
    pick_arch,
    profile_counters,
    run_port,
    usable_metrics,
)

CUDA_DIR = HERE / "cuda"
BIN_DIR = CUDA_DIR / "bin"
# --user: the ports of the user kernels (examples/user/*.c), at their C files' work sizes;
# --set blind: those of examples/blind/*.c, kernels written for a check predicted before timing
USER_DIR = CUDA_DIR / "user"
PORT_SETS = {"corpus": CUDA_DIR, "user": USER_DIR, "blind": CUDA_DIR / "blind"}
MEASURED_DIR = HERE / "measured"
PORTS = ("plain", "restrict")  # cgpredict --port: float* parameters, or each __restrict__

# Reference work size in one dimension (SPEC section 8). Every integer size macro of a port
# (#ifndef X / #define X <int>) is set to this value unless EXTRA_WORK names it.
WORK_SIZE = {
    "2dconv": 4096,
    "2mm": 4096,
    "2mm_tiled": 4096,
    "3dconv": 256,  # 4096^3 floats do not fit any GPU; 256 per dimension as in PolyBench/GPU
    "3mm": 2048,
    "3mm_tiled": 2048,
    "atax": 4096,
    "bicg": 4096,
    "corr": 1024,
    "covar": 1024,
    "fdtd2d": 4096,
    "gemm": 1024,
    "gemm_tiled": 1024,
    "gesummv": 4096,
    "gramschmidt": 8192,
    "mvt": 4096,
    "syr2k": 1024,
    "syr2k_tiled": 1024,
    "syrk": 1024,
    "syrk_tiled": 1024,
    "syrk_transposed": 1024,
    "mm": 1024,
    "gemver": 2048,
    "deriche": 1024,
    "dct1d": 1024,
}
# Size macros that are not a spatial dimension (time steps): value at work size / at check size.
EXTRA_WORK = {"TMAX": 500}
EXTRA_CHECK = {"TMAX": 8}
# Host loops timed on a sample of their iterations (per-launch times extrapolated to the full
# count; the JSON keeps both "count" and "timed"). GRAMSCHMIDT at 8192 is 3 * 8192 launches
# whose single-thread norm kernel alone takes ~1 ms each: all of them would take minutes.
DEFAULT_SAMPLE = {"gramschmidt": 64}
CONFIGS_2D = ("32x32", "32x8")
CONFIGS_1D = ("256x1",)

_SIZE_MACRO = re.compile(r"^\s*#\s*ifndef\s+(\w+)\s*\n\s*#\s*define\s+\1\s+(\d+)\s*$", re.M)
_GRID_DIMS = re.compile(r"GRID_DIMS\s*=\s*([12])")


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "gpu"


def port_info(path: Path) -> tuple[dict[str, int], int]:
    """The default size macros and the grid dimensionality (GRID_DIMS) declared by a port."""
    text = path.read_text()
    sizes = {m.group(1): int(m.group(2)) for m in _SIZE_MACRO.finditer(text)}
    m = _GRID_DIMS.search(text)
    if not m:
        raise SystemExit(f"{path}: no 'GRID_DIMS = 1|2' declaration")
    return sizes, int(m.group(1))


def parse_assignments(items: list[str], what: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        for part in item.split(","):
            if not part:
                continue
            key, sep, val = part.partition("=")
            if not sep or not val.strip().isdigit():
                raise SystemExit(f"measure.py: {what} wants NAME=INT, got {part!r}")
            out[key.strip()] = int(val)
    return out


def _parser() -> argparse.ArgumentParser:
    """The command line of measure.py (module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", help="comma-separated port names (default: all)")
    ap.add_argument("--out", type=Path, help="output JSON (default validation/measured/<gpu>.json)")
    ap.add_argument("--check-size", type=int, default=64, help="size of the --check runs")
    ap.add_argument("--sizes", action="append", default=[], metavar="NAME=V",
                    help="override a size macro of the work builds (e.g. NI=2048, TMAX=100); "
                         "prefix with a port name to limit it: gemm:NI=2048,NJ=2048")
    ap.add_argument("--sample", action="append", default=[], metavar="PORT=S",
                    help="time S evenly spaced host-loop iterations of PORT (0 = all)")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per port run")
    ap.add_argument("--budget", type=float, default=900.0,
                    help="total seconds; runs not started by then are skipped (and reported)")
    ap.add_argument("--configs", help="override the block shapes of 2-D ports (e.g. 32x32,16x16)")
    ap.add_argument("--configs-1d",
                    help="override the block shapes of 1-D ports (e.g. 32x1,1024x1)")
    ap.add_argument("--no-check", action="store_true", help="skip the --check runs")
    ap.add_argument("--jobs", type=int, default=min(8, os.cpu_count() or 1),
                    help="parallel nvcc builds")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and exit")
    ap.add_argument("--nvcc", help="nvcc to use (default $NVCC, nvcc on PATH, /usr/local/cuda)")
    ap.add_argument("--bin-dir", type=Path, default=BIN_DIR, help="where the binaries go")
    ap.add_argument("--port", choices=PORTS, default="plain",
                    help="plain: float* parameters as PolyBench/GPU (default); restrict: "
                         "every array __restrict__ (-DCGP_PORT_RESTRICT=1)")
    ap.add_argument("--user", action="store_true",
                    help="measure the ports of the user kernels (validation/cuda/user, at "
                         "their C files' work sizes) instead of the corpus: binaries in "
                         "<bin-dir>/user, default output <gpu>[-restrict]-user.json")
    ap.add_argument("--set", dest="port_set", choices=tuple(PORT_SETS), default=None,
                    help="which ports: corpus (default), user (= --user) or blind "
                         "(validation/cuda/blind, examples/blind at their work sizes): binaries "
                         "in <bin-dir>/SET, default output <gpu>[-restrict]-SET.json")
    ap.add_argument("--no-ncu", action="store_true", help="do not record Nsight Compute counters")
    ap.add_argument("--ncu", help="ncu to use (default $NCU, ncu on PATH, /usr/local/cuda)")
    ap.add_argument("--ncu-metrics", choices=("standard", "extended", "opcodes"),
                    default="standard",
                    help="standard: NCU_METRICS (what `cgpredict explain` reads); extended: "
                         "NCU_METRICS_EXTENDED, a lease's mechanism checks; opcodes: "
                         "NCU_METRICS_OPCODES, DRAM bytes and the dynamic SASS per opcode")
    ap.add_argument("--ncu-cache-control", choices=("all", "none"), default="all",
                    help="ncu's cache control: all flushes the caches before each profiled "
                         "launch (default, as measured so far); none leaves them as the run does")
    ap.add_argument("--ncu-launches", type=int, default=60,
                    help="launches of one run profiled by ncu (the rest are extrapolated)")
    return ap


def port_set(args: argparse.Namespace) -> str:
    """The set of ports measured: ``--set``, else "user" with --user, else "corpus"."""
    chosen = getattr(args, "port_set", None)
    if getattr(args, "user", False):
        if chosen not in (None, "user"):
            raise SystemExit(f"measure.py: --user and --set {chosen} name different ports")
        return "user"
    return chosen or "corpus"


def port_dir(args: argparse.Namespace) -> Path:
    """The folder of the ports measured: CUDA_DIR, or that of --user / --set."""
    return PORT_SETS[port_set(args)]


def _ports(only: str | None, folder: Path = CUDA_DIR) -> list[str]:
    """The ports to measure: every .cu of ``folder``, or those ``--only`` names (all must
    exist)."""
    ports = sorted(p.stem for p in folder.glob("*.cu"))
    if not only:
        return ports
    wanted = [w.strip() for w in only.split(",") if w.strip()]
    missing = [w for w in wanted if w not in ports]
    if missing:
        raise SystemExit(f"measure.py: no port named {', '.join(missing)} in {folder}")
    return wanted


def _size_overrides(items: list[str]) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """``--sizes`` as (for every port, per port name): "NI=2048,NJ=2048" is for every port,
    "gemm:NI=2048,NJ=2048" for gemm only."""
    global_sizes: dict[str, int] = {}
    port_sizes: dict[str, dict[str, int]] = {}
    for item in items:
        head, sep, rest = item.partition(":")
        if sep and "=" not in head:
            port_sizes.setdefault(head, {}).update(parse_assignments([rest], "--sizes"))
        else:
            global_sizes.update(parse_assignments([item], "--sizes"))
    return global_sizes, port_sizes


def plan_ports(args: argparse.Namespace) -> list[dict]:
    """Per port: its source, grid dimensions, work and check sizes, block shapes and sample."""
    global_sizes, port_sizes = _size_overrides(args.sizes)
    samples = dict(DEFAULT_SAMPLE)
    samples.update(parse_assignments(args.sample, "--sample"))
    plan = []
    folder, corpus = port_dir(args), port_set(args) == "corpus"
    for name in _ports(args.only, folder):
        src = folder / f"{name}.cu"
        defaults, dims = port_info(src)
        work = {}
        check = {}
        for macro in defaults:
            work[macro] = (EXTRA_WORK.get(macro, WORK_SIZE.get(name, defaults[macro]))
                           if corpus else defaults[macro])
            size = args.check_size
            if name.endswith("_tiled"):  # tiled ports need multiples of the 32-wide tile
                size = max(32, (size + 31) // 32 * 32)
            check[macro] = EXTRA_CHECK.get(macro, size)
        for macro, val in {**global_sizes, **port_sizes.get(name, {})}.items():
            if macro in work:
                work[macro] = val
        configs_1d = getattr(args, "configs_1d", None)
        configs = (tuple(configs_1d.split(",")) if configs_1d else CONFIGS_1D) if dims == 1 else (
            tuple(args.configs.split(",")) if args.configs else CONFIGS_2D)
        plan.append({"name": name, "src": src, "dims": dims, "work": work, "check": check,
                     "configs": configs, "sample": samples.get(name, 0)})
    return plan


def _build_all(plan: list[dict], args: argparse.Namespace, nvcc: str, arch: str, suffix: str,
               port_defines: dict[str, int]) -> dict[tuple[str, str], dict]:
    """Every port's work binary (and check binary unless --no-check), ``args.jobs`` nvcc runs
    at once: per (port, "work"|"check") the result of ``build``."""
    bin_dir: Path = args.bin_dir
    bin_dir.mkdir(parents=True, exist_ok=True)
    jobs = []
    for p in plan:
        jobs.append((p, "work", bin_dir / f"{p['name']}{suffix}", {**p["work"], **port_defines}))
        if not args.no_check:
            jobs.append((p, "check", bin_dir / f"{p['name']}{suffix}_check",
                         {**p["check"], **port_defines}))
    builds: dict[tuple[str, str], dict] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futs = {pool.submit(build, nvcc, arch, p["src"], exe, d): (p["name"], kind)
                for p, kind, exe, d in jobs}
        for fut in concurrent.futures.as_completed(futs):
            key = futs[fut]
            builds[key] = fut.result()
            if not builds[key]["ok"]:
                print(f"build FAILED: {key[0]} ({key[1]})\n{builds[key]['stderr']}",
                      file=sys.stderr)
    return builds


def _check_port(p: dict, args: argparse.Namespace, build_result: dict, suffix: str) -> dict:
    """The --check run of one port's check binary: its status, error and sizes."""
    name = p["name"]
    if not build_result["ok"]:
        out = {"status": "build-failed", "stderr": build_result["stderr"]}
    else:
        r = run_port(args.bin_dir / f"{name}{suffix}_check", ["--check", "--reps", "1"],
                     args.timeout)
        out = {"status": r.get("check", "error") if "error" not in r else "error",
               "max_rel_err": r.get("max_rel_err"), "sizes": p["check"],
               **({"error": r["error"]} if "error" in r else {})}
    print(f"check {name:16s} {out['status']} "
          f"(max_rel_err {out.get('max_rel_err')})", file=sys.stderr)
    return out


def _time_config(p: dict, cfg: str, args: argparse.Namespace, suffix: str, ncu: str | None,
                 ncu_dir: Path, t_start: float) -> dict:
    """One timed run of a built port in block shape ``cfg`` (and its ncu counters while the
    budget lasts): the entry the JSON's results list holds."""
    name = p["name"]
    bin_dir: Path = args.bin_dir
    entry = {"kernel": name, "config": cfg, "grid_dims": p["dims"], "work_sizes": p["work"]}
    rargs = ["--block", cfg, "--reps", str(args.reps)]
    if p["sample"]:
        rargs += ["--sample", str(p["sample"])]
    r = run_port(bin_dir / f"{name}{suffix}", rargs, args.timeout)
    entry["result"] = r
    if "error" in r:
        entry["error"] = r["error"]
    elif ncu and time.time() - t_start <= args.budget:
        c = profile_counters(ncu, bin_dir / f"{name}{suffix}", rargs[:2] + rargs[4:], r,
                             ncu_dir / f"{name}-{cfg}.csv", args.ncu_launches,
                             args.timeout, metrics=getattr(args, "metrics", NCU_METRICS),
                             cache_control=getattr(args, "ncu_cache_control", "all"))
        if "csv" in c:
            c["csv"] = f"{ncu_dir.name}/{c['csv']}"
        entry["counters"] = c
        print(f"ncu   {name:16s} {cfg:6s} {c.get('error') or c['csv']}", file=sys.stderr)
    msg = r.get("error") or f"total {r.get('total_ms', float('nan')):.4g} ms"
    print(f"run   {name:16s} {cfg:6s} {msg}  [{r.get('wall_s')} s wall, "
          f"{time.time() - t_start:.0f} s elapsed]", file=sys.stderr)
    return entry


def _time_port(p: dict, args: argparse.Namespace, built: bool, suffix: str,
               ncu: str | None, ncu_dir: Path, t_start: float) -> list[dict]:
    """The results of one port in each of its block shapes; a failed build or a run not
    started within the budget is an entry with its error."""
    out = []
    for cfg in p["configs"]:
        entry = {"kernel": p["name"], "config": cfg, "grid_dims": p["dims"],
                 "work_sizes": p["work"]}
        if not built:
            out.append({**entry, "error": "build failed"})
        elif time.time() - t_start > args.budget:
            out.append({**entry, "error": f"skipped: over the {args.budget:.0f} s budget"})
            print(f"skip  {p['name']:16s} {cfg:6s} (over budget)", file=sys.stderr)
        else:
            out.append(_time_config(p, cfg, args, suffix, ncu, ncu_dir, t_start))
    return out


def _report(args: argparse.Namespace, gpu: dict, nvcc_version: list[str], arch: str,
            builds: dict, checks: dict, results: list[dict], t_start: float) -> dict:
    """The JSON measure.py writes (validation/README.md)."""
    return {
        "schema_version": 1,
        "gpu": gpu,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "platform": platform.platform(),
        "nvcc": nvcc_version[-2:] if nvcc_version else [],
        "nvcc_flags": f"-O3 -arch={arch} -std=c++17",
        "port": args.port,
        "reps": args.reps,
        "check_size": args.check_size,
        "timing": "cudaEvent pair around each launch; warm-up run first; per kernel name the "
                  "median of single launches (median_ms) and of its per-run time (run_ms); "
                  "total_ms = median over repetitions of the run's total. See "
                  "validation/README.md.",
        "builds": {f"{k[0]}:{k[1]}": {kk: v for kk, v in b.items() if kk != "stderr" or not b["ok"]}
                   for k, b in sorted(builds.items())},
        "checks": checks,
        "results": results,
        "elapsed_s": round(time.time() - t_start, 1),
    }


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    which = port_set(args)
    if which != "corpus" and args.bin_dir == BIN_DIR:
        args.bin_dir = BIN_DIR / which
    plan = plan_ports(args)
    suffix = "_restrict" if args.port == "restrict" else ""
    port_defines = {"CGP_PORT_RESTRICT": 1} if args.port == "restrict" else {}
    port_flags = "".join(f" -D{k}={v}" for k, v in port_defines.items())
    if args.dry_run:
        for p in plan:
            print(f"{p['name']:16s} {p['dims']}-D work {p['work']} check {p['check']} "
                  f"blocks {','.join(p['configs'])} sample {p['sample'] or 'all'} "
                  f"port {args.port}{port_flags}")
        return 0

    nvcc = nvcc_path(args.nvcc)
    gpu = gpu_info()
    nvcc_version = subprocess.run([*nvcc_cmd(nvcc), "--version"], capture_output=True,
                                  text=True).stdout.strip().splitlines()
    arch = pick_arch(nvcc, args.bin_dir)
    print(f"GPU: {gpu['name']} (SM {gpu['clock_sm_max']}, mem {gpu['clock_mem_max']}, "
          f"driver {gpu['driver']}); nvcc -arch={arch}", file=sys.stderr)

    tail = suffix.replace("_", "-") + ("" if which == "corpus" else f"-{which}")
    out = args.out or MEASURED_DIR / f"{slug(gpu['name'])}{tail}.json"
    ncu = None if args.no_ncu else ncu_path(args.ncu)
    ncu_dir = out.parent / f"{out.stem}-ncu"
    print(f"Nsight Compute: {ncu or 'not found, no counters'}", file=sys.stderr)
    args.metrics = NCU_METRICS
    if ncu and args.ncu_metrics != "standard":
        wider = NCU_METRICS_EXTENDED if args.ncu_metrics == "extended" else NCU_METRICS_OPCODES
        args.metrics = usable_metrics(ncu, wider)

    t_start = time.time()
    builds = _build_all(plan, args, nvcc, arch, suffix, port_defines)
    print(f"built {sum(b['ok'] for b in builds.values())}/{len(builds)} binaries in "
          f"{time.time() - t_start:.0f} s", file=sys.stderr)

    results = []
    checks = {}
    for p in plan:
        if not args.no_check:
            checks[p["name"]] = _check_port(p, args, builds[(p["name"], "check")], suffix)
        results += _time_port(p, args, builds[(p["name"], "work")]["ok"], suffix, ncu,
                              ncu_dir, t_start)

    report = _report(args, gpu, nvcc_version, arch, builds, checks, results, t_start)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n")
    n_fail = sum(1 for c in checks.values() if c["status"] != "pass")
    n_err = sum(1 for r in results if "error" in r)
    print(f"wrote {out} ({len(results)} runs, {n_err} errors, {n_fail} failed checks, "
          f"{report['elapsed_s']:.0f} s)", file=sys.stderr)
    return 1 if (n_fail or n_err) else 0


if __name__ == "__main__":
    sys.exit(main())
