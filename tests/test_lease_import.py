"""validation/lease_import.py: a lease's raw measure.py file made validate-ready.

Oracles: the registers of a hand-made reference entry, the reset lambdas read by hand from
the ports (2DCONV ends with ``dB.zero()``; FDTD-2D's last call uploads a 4096 x 4096 float
array), and the committed copies of the 2026-11-28 shapes, whose times are the raw file's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "validation"))

import lease_import  # noqa: E402

MEASURED = ROOT / "validation" / "measured"
SHAPES = MEASURED / "h100-lease-2026-11-28" / "shapes"


def _entry(kernel: str, block: str, sizes: dict, **extra) -> dict:
    return {"kernel": kernel, "config": block, "work_sizes": sizes,
            "result": {"total_ms": 1.0}, **extra}


def test_annotate_copies_registers_and_reads_resets():
    big = {"NX": 4096, "NY": 4096, "TMAX": 500}
    raw = {"results": [_entry("2dconv", "16x16", {"NI": 4096, "NJ": 4096}),
                       _entry("fdtd2d", "64x4", big)]}
    ref = {"date": "D", "results": [_entry("2dconv", "32x8", {"NI": 4096, "NJ": 4096},
                                           registers=24),
                                    _entry("fdtd2d", "32x8", big, registers=18)]}
    out = lease_import.annotate(raw, ref, ROOT / "validation" / "cuda")
    conv, fdtd = out["results"]
    assert (conv["registers"], conv["reset"], "reset_bytes" in conv) == (24, "memset", False)
    assert (fdtd["registers"], fdtd["reset"], fdtd["reset_bytes"]) == (18, "upload",
                                                                      4 * 4096 * 4096)


def test_a_kernel_without_reference_is_an_error():
    raw = {"results": [_entry("2dconv", "16x16", {"NI": 64, "NJ": 64})]}
    ref = {"results": [_entry("2dconv", "32x8", {"NI": 4096, "NJ": 4096}, registers=24)]}
    with pytest.raises(KeyError):
        lease_import.annotate(raw, ref, ROOT / "validation" / "cuda")


def test_never_overwrites(tmp_path):
    out = tmp_path / "x.json"
    out.write_text("{}")
    run = subprocess.run([sys.executable, str(ROOT / "validation" / "lease_import.py"),
                          str(SHAPES / "corpus.json"),
                          str(MEASURED / "nvidia-h100-80gb-hbm3.json"), str(out)],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "never overwrites" in run.stderr
    assert "Traceback" not in run.stderr and out.read_text() == "{}"


@pytest.mark.parametrize("raw, copy", [
    ("corpus.json", "nvidia-h100-80gb-hbm3-shapes.json"),
    ("user.json", "nvidia-h100-80gb-hbm3-user-shapes.json"),
])
def test_committed_copies_keep_the_raw_times(raw, copy):
    src = json.loads((SHAPES / raw).read_text())["results"]
    got = json.loads((MEASURED / copy).read_text())["results"]
    assert [(e["kernel"], e["config"], e["result"]["total_ms"]) for e in got] == \
        [(e["kernel"], e["config"], e["result"]["total_ms"]) for e in src]
    assert all(e["registers"] in (18, 24) and e["reset"] in ("memset", "upload") for e in got)
