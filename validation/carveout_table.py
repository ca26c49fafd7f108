"""The shared carve-out the driver picked per launch shape, from every committed Nsight
Compute CSV that records launch__shared_mem_config_size, against eq. (SC1)-(SC3)
(cgpredict/carveout.py).

    python validation/carveout_table.py [ROOT]     # ROOT: validation/measured

Prints one row per (threads a block, shared bytes a block, registers a thread): the
carve-outs ncu recorded (KB) with their launch counts, the model's, and whether they agree.
"""

from __future__ import annotations

import collections
import sys
from pathlib import Path

from ncu_csv import read_ncu_text

from cgpredict.carveout import launch_carveout
from cgpredict.devices import load_device

_FIELDS = ("launch__shared_mem_config_size", "launch__block_size",
           "launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic",
           "launch__registers_per_thread")


def _number(text: str) -> int:
    """An ncu value such as '32,768 (0: 32,768)' or '256': its first integer."""
    return int(text.split("(")[0].replace(",", "").strip())


def launches(root: Path) -> list[tuple[int, int, int, int]]:
    """(threads, shared bytes, registers, carve-out bytes) of every launch row of every
    CSV under ``root`` that has the carve-out metric."""
    out = []
    for path in sorted(root.rglob("*.csv")):
        text = path.read_text(errors="replace")
        if _FIELDS[0] not in text:
            continue
        for launch in read_ncu_text(text):
            m = launch.cells
            try:
                conf, threads, static, dyn, regs = (_number(m[f]) for f in _FIELDS)
            except (KeyError, ValueError):
                continue
            out.append((threads, static + dyn, regs, conf))
    return out


def main(argv: list[str]) -> int:
    root = Path(argv[0]) if argv else Path(__file__).parent / "measured"
    h100 = load_device("h100")
    seen: dict[tuple[int, int, int], collections.Counter] = collections.defaultdict(
        collections.Counter)
    for threads, smem, regs, conf in launches(root):
        seen[(threads, smem, regs)][conf // 1024] += 1
    print("| threads | shared B | regs | ncu carve-out KB (launches) | model KB | agree |")
    print("|---:|---:|---:|---|---:|---|")
    agree = total = 0
    for (threads, smem, regs), counts in sorted(seen.items()):
        model = launch_carveout(h100, threads, regs, smem).shared_bytes // 1024
        ok = set(counts) == {model}
        n = sum(counts.values())
        agree, total = agree + n * ok, total + n
        got = ", ".join(f"{k} ({v})" for k, v in sorted(counts.items()))
        print(f"| {threads} | {smem} | {regs} | {got} | {model} | {'yes' if ok else 'NO'} |")
    print(f"\n{agree} of {total} launch records agree")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
