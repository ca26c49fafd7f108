"""Fuzz what cgpredict reads back (issue 29): mutated trace files and tampered cache entries.

* **Traces**: a real small trace (GEMM at 16^3) mutated by single-byte flips, zeroed or
  truncated sections (its checksums left as they were), and crafted counts with the checksums
  made right again (as an attacker would). Each goes through ``cgpredict run --from-trace``:
  a flip must give exit 4 or, in padding, the very same answer (never exit 0 with another
  answer); no mutant may give a traceback (exit 70) or a hang.
* **The cache**: a GEMM report cached, then its entries tampered with (a flipped byte, a
  pickle or a foreign type planted with a matching SHA-256, files removed, the trace cut):
  each prediction afterwards must equal the untouched one, run no planted code and give no
  traceback.

    python validation/fuzz_inputs.py --n 1000 --seed 1 --out validation/results/fuzz-inputs.md
    make fuzz N=1000
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import struct
import sys
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
GEMM = REPO / "polybench_c" / "gemm.c"
SMALL = {"NI": 16, "NJ": 16, "NK": 16}
INTERNAL_ERROR = 70
TRACE_KINDS = ("flip", "zero-section", "truncate", "crafted-count", "crafted-event")


@dataclass(frozen=True)
class Result:
    """One mutant: what was done, the exit code, and whether it broke a rule (and why)."""

    kind: str
    detail: str
    code: int
    bad: str  # "" when fine


def _layout(raw: bytes) -> tuple[int, dict]:
    """(header length, section table) of a trace file's bytes."""
    hlen = struct.unpack("<I", raw[12:16])[0]
    return hlen, json.loads(raw[24 : 24 + hlen])["sections"]


def _nbytes(sec: dict) -> int:
    from cgpredict.frontend.tracefile import _dtype

    return int(np.prod(sec["shape"])) * _dtype(sec["dtype"]).itemsize


def _resealed(raw: bytearray) -> bytes:
    """``raw`` with every section checksum and the header checksum made right again."""
    from cgpredict.frontend import tracefile

    hlen, _ = _layout(bytes(raw))
    meta = json.loads(raw[24 : 24 + hlen])
    for sec in meta["sections"].values():
        sec["crc32"] = zlib.crc32(raw[sec["offset"] : sec["offset"] + _nbytes(sec)])
    blob = json.dumps(meta, separators=(",", ":")).encode()
    if len(blob) > hlen:
        return bytes(raw)  # no room: left as it was (still a valid mutant)
    blob += b" " * (hlen - len(blob))
    head = tracefile.PREFIX.pack(tracefile.MAGIC, tracefile.VERSION, hlen, zlib.crc32(blob), 0)
    return head + blob + bytes(raw[24 + hlen :])


def mutate_trace(raw: bytes, rng: np.random.Generator) -> tuple[str, str, bytes, bool]:
    """(kind, detail, mutated bytes, sealed?) of one random mutant of a trace file; sealed
    mutants carry right checksums, so they may legitimately give another answer."""
    kind = TRACE_KINDS[int(rng.integers(len(TRACE_KINDS)))]
    out = bytearray(raw)
    _, sections = _layout(raw)
    names = sorted(sections)
    sec = sections[names[int(rng.integers(len(names)))]]
    lo, n = sec["offset"], max(_nbytes(sec), 1)
    if kind == "flip":
        pos, bit = int(rng.integers(len(raw))), int(rng.integers(8))
        out[pos] ^= 1 << bit
        return kind, f"byte {pos} bit {bit}", bytes(out), False
    if kind == "zero-section":
        out[lo : lo + n] = bytes(min(n, len(out) - lo))
        return kind, f"offset {lo}", bytes(out), False
    if kind == "truncate":
        cut = int(rng.integers(len(raw)))
        return kind, f"at {cut}", bytes(out[:cut]), False
    pos = lo + 8 * int(rng.integers(max(n // 8, 1)))
    values = [0, 1, 2**31, 2**32 - 1, 2**47, 2**62, 2**64 - 1]
    value = values[int(rng.integers(len(values)))]
    if kind == "crafted-event":
        value = (0xFFFF << 48) | (int(rng.integers(4)) << 32) | (value & 0xFFFFFFFF)
    out[pos : pos + 8] = struct.pack("<Q", value)
    return kind, f"u64 at {pos} = {value:#x}", _resealed(out), True


def _invoke(args: list[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of cgpredict ``args`` in this process."""
    from click.testing import CliRunner

    from cgpredict.cli import main

    r = CliRunner().invoke(main, args)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        return INTERNAL_ERROR, "", f"{type(r.exception).__name__}: {r.exception}"
    return r.exit_code, r.stdout, r.stderr


def judge(code: int, out: str, err: str, expected: str, sealed: bool) -> str:
    """The rule a mutant's outcome breaks, or ''."""
    if code == INTERNAL_ERROR or "Traceback" in err:
        return f"internal error: {err.strip()[-300:]}"
    lines = [x for x in err.splitlines() if x.startswith("cgpredict: error:")]
    if code != 0 and len(lines) != 1:
        return f"exit {code} without one error line: {err.strip()[-300:]}"
    if code == 0 and out != expected and not sealed:
        return "exit 0 with another answer"
    return ""


def fuzz_traces(trace: Path, n: int, seed: int, work: Path) -> list[Result]:
    """``n`` mutants of ``trace`` through ``run --from-trace``."""
    raw = trace.read_bytes()
    code, expected, err = _invoke(["run", "--from-trace", str(trace)])
    if code != 0:
        raise RuntimeError(f"the unmutated trace fails: {err}")
    rng = np.random.default_rng(seed)
    out = []
    for k in range(n):
        kind, detail, data, sealed = mutate_trace(raw, rng)
        path = work / f"m{k}.cgptrace"
        path.write_bytes(data)
        code, stdout, err = _invoke(["run", "--from-trace", str(path)])
        out.append(Result(kind, detail, code, judge(code, stdout, err, expected, sealed)))
        path.unlink()
    return out


def _entries(cache: Path, kind: str) -> list[Path]:
    base = cache / "entries" / kind
    return sorted(base.iterdir()) if base.is_dir() else []


def _plant(entry: Path, name: str, data: bytes, drop: str | None = None) -> None:
    """Put ``data`` in ``entry`` as ``name`` with a matching size and SHA-256 in its stamp."""
    from cgpredict.diskcache import file_digest

    (entry / name).write_bytes(data)
    stamp = json.loads((entry / "entry.json").read_text())
    if drop:
        stamp["files"].pop(drop, None)
        (entry / drop).unlink(missing_ok=True)
    stamp["files"][name] = [len(data), file_digest(entry / name)]
    (entry / "entry.json").write_text(json.dumps(stamp))


class _Boom:
    """A pickle that creates a marker file when unpickled."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def _tampers(marker: Path):
    """(name, function of the cache root) of each way of tampering with the cache."""

    def flip_report(root):
        for e in _entries(root, "report"):
            raw = bytearray((e / "report.json").read_bytes())
            raw[len(raw) // 2] ^= 0x20
            (e / "report.json").write_bytes(bytes(raw))

    def pickle_report(root):
        for e in _entries(root, "report"):
            _plant(e, "report.pickle", pickle.dumps(_Boom(marker)), drop="report.json")

    def foreign_type(root):
        doc = {"__cgp__": "dataclass", "type": "subprocess:Popen", "f": {"args": "true"}}
        for e in _entries(root, "report"):
            _plant(e, "report.json", json.dumps(doc).encode())

    def cut_trace(root):
        for e in _entries(root, "prepared") + _entries(root, "report"):
            for f in e.iterdir():
                if f.suffix == ".cgptrace":
                    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])
            (e / "report.json").unlink(missing_ok=True)

    def resealed_trace(root):
        for e in _entries(root, "prepared"):
            t = e / "trace.cgptrace"
            raw = bytearray(t.read_bytes())
            _, sec = _layout(bytes(raw))
            off = sec["events"]["offset"] + 8
            raw[off : off + 8] = struct.pack("<Q", 0xFFFF_0003_FFFF_FFF0)
            _plant(e, "trace.cgptrace", _resealed(raw))
        for e in _entries(root, "report"):
            _plant(e, "report.json", b"[]")

    def garbage_stamp(root):
        for kind in ("report", "prepared", "deps", "macros"):
            for e in _entries(root, kind):
                (e / "entry.json").write_bytes(b"\x00\xff not json")

    return [("flipped report", flip_report), ("planted pickle", pickle_report),
            ("foreign type", foreign_type), ("cut trace", cut_trace),
            ("resealed bad trace", resealed_trace), ("garbage stamps", garbage_stamp)]


def fuzz_cache(work: Path, only: tuple[str, ...] = ()) -> list[Result]:
    """Each tampering of a fresh cache (``only``: those named), then the same prediction:
    same answer, no code run."""
    from cgpredict import api
    from cgpredict.errors import CGPredictError

    def answer() -> str:
        rep = api.predict(GEMM, "32x8", "tk1", {k: 2 * v for k, v in SMALL.items()},
                          trace_sizes=SMALL)
        d = json.loads(rep.to_json())
        d.pop("seconds")
        return json.dumps(d, sort_keys=True)

    old = os.environ.get("CGPREDICT_CACHE_DIR")
    marker = work / "planted-code-ran"
    out = []
    try:
        for name, tamper in _tampers(marker):
            if only and name not in only:
                continue
            root = Path(tempfile.mkdtemp(prefix="cache-", dir=work))
            os.environ["CGPREDICT_CACHE_DIR"] = str(root)
            expected = answer()
            answer()  # read back from the cache once
            tamper(root)
            try:
                got, bad = answer(), ""
            except CGPredictError as exc:
                got, bad = "", f"refused: {exc}"
            except Exception as exc:  # noqa: BLE001 - a bug: reported
                got, bad = "", f"internal error: {type(exc).__name__}: {exc}"
            if not bad and got != expected:
                bad = "another answer"
            if marker.exists():
                bad = "planted code ran"
            out.append(Result("cache", name, 0 if not bad else 1, bad))
    finally:
        if old is None:
            os.environ.pop("CGPREDICT_CACHE_DIR", None)
        else:
            os.environ["CGPREDICT_CACHE_DIR"] = old
    return out


def small_trace(work: Path) -> Path:
    """GEMM at 16^3 traced into ``work``."""
    from cgpredict.frontend.tracer import TraceOptions, trace_program

    out = work / "gemm16.cgptrace"
    trace_program(GEMM, out, TraceOptions(macros={k: str(v) for k, v in SMALL.items()}))
    return out


def summary(results: list[Result]) -> str:
    """Markdown: outcomes per kind of mutant, then every broken rule."""
    kinds = sorted({r.kind for r in results})
    lines = ["# Fuzzing traces and the cache (validation/fuzz_inputs.py)", "",
             "| mutant | runs | exit 0 | refused | rule broken |", "|---|---|---|---|---|"]
    for k in kinds:
        rs = [r for r in results if r.kind == k]
        lines.append(f"| {k} | {len(rs)} | {sum(r.code == 0 for r in rs)} | "
                     f"{sum(r.code != 0 for r in rs)} | {sum(bool(r.bad) for r in rs)} |")
    bad = [r for r in results if r.bad]
    lines += ["", f"## Rules broken: {len(bad)}", ""]
    lines += [f"- {r.kind} ({r.detail}): {r.bad}" for r in bad]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1000, help="number of mutated traces")
    ap.add_argument("--seed", type=int, default=1, help="seed of the mutations")
    ap.add_argument("--out", type=Path, default=None, help="markdown summary path")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="fuzz-inputs-") as tmp:
        work = Path(tmp)
        os.environ.setdefault("CGPREDICT_CACHE_DIR", str(work / "cache"))
        results = fuzz_traces(small_trace(work), args.n, args.seed, work) + fuzz_cache(work)
    text = summary(results)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        print(f"wrote {args.out}")
    else:
        print(text)
    return 1 if any(r.bad for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
