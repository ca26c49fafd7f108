#!/usr/bin/env python3
"""Kepler (sm_35) schedule of the issue-26 GEMM kernels, read from their cubins: does the
compiler's own schedule, the issue rate or the shared-memory path bind the textbook tiled
GEMM on the TK1 (predicted 3.16x faster than the naive kernel, published 2.22x)?

Kepler code (sm_30 to sm_37) is in groups of eight 64-bit words: a control word, then seven
instructions. The control word holds one byte per instruction at bits 2-9, 10-17, ..., 50-57
(KeplerAs, the Kepler assembler of Zhang et al., PPoPP 2017 artifact:
``KeplerAs.pm`` ``processSassCtrlLine``, ``printCtrl``): bits 0-3 the cycles the warp waits
before its next instruction (stall), bit 4 a wait on the shared-memory barrier, bit 5 clear
when the instruction is dual-issued with the next one, bit 6 a global and bit 7 a texture
barrier. ptxas writes these for every fixed-latency dependence, so the stalls of a loop trip
are the least time one warp needs for it however idle the SM; loads (variable latency)
are waited for by the scoreboard, not counted here.

For the hot loop of each kernel (``kepler_sass.hot_loop_index``: the most FFMAs) this prints,
a k step: instructions, dual-issued pairs, issue groups (a pair is one), the warp's
scheduled cycles (each group's stall, at least one), and the passes of the shared-memory
path (a 32- or 64-bit warp access one, a 128-bit one two: 256 B a clock with 8-byte banks,
the NVIDIA Kepler tuning guide; two transactions a request, nvprof on a K80); then the
TK1's cycles a warp k step on its one SMX: the issue (instructions x
``inst_cycles_per_warp_inst``), the shared path (passes x ``smem_issue_cycles``), the
warp's own schedule over the warps resident (registers from the cubin's
``EIATTR_REGCOUNT``, occupancy from the device file), and the published pair's
(249.16 ms / 2.22 at n = 1024: validation/measured/tk1.json, the CGPredict evaluation).

Reads the cubins and listings committed in validation/kepler/ (``kepler_sass.py --keep``
writes them); no CUDA tool is needed. Usage::

    python validation/kepler_sched.py [--dir validation/kepler] [--json]
"""

from __future__ import annotations

import argparse
import json
import struct
import sys
from collections import OrderedDict
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import kepler_sass  # noqa: E402
import sass_counts  # noqa: E402

KEPLER_DIR = HERE / "kepler"
KERNELS = (("gemm_textbook", "textbook/gemm_textbook"), ("gemm_tiled", "gemm_tiled"),
           ("gemm", "gemm"))  # fmt: skip
PUBLISHED_NAIVE_MS, PUBLISHED_SPEEDUP, N = 249.16, 2.22, 1024  # TK1 GEMM pair (issue 26)
_EIATTR_REGCOUNT, _EIFMT_SVAL = 0x2F, 0x04


@dataclass(frozen=True)
class Control:
    """One instruction's Kepler control byte (KeplerAs's fields)."""

    stall: int
    shared_bar: bool
    dual: bool  # issued in the same cycle as the next instruction
    global_bar: bool
    tex_bar: bool


def decode_byte(b: int) -> Control:
    """The fields of one control byte: stall bits 0-3, barriers 4, 6, 7, bit 5 clear = dual."""
    return Control(stall=b & 0xF, shared_bar=bool(b & 0x10), dual=not b & 0x20,
                   global_bar=bool(b & 0x40), tex_bar=bool(b & 0x80))  # fmt: skip


def decode_control(word: int) -> tuple[Control, ...]:
    """The seven control bytes of a Kepler control word (bits 2-9, 10-17, ..., 50-57)."""
    return tuple(decode_byte((word >> (2 + 8 * j)) & 0xFF) for j in range(7))


def elf_sections(data: bytes) -> dict[str, tuple[int, int, int]]:
    """Name -> (offset, size, link-info) of every section of a 64-bit little-endian ELF."""
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    entsize, count, strndx = struct.unpack_from("<HHH", data, 0x3A)
    heads = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * entsize) for i in range(count)]
    names = heads[strndx][4]
    out = {}
    for h in heads:
        name = data[names + h[0] : data.index(b"\0", names + h[0])].decode()
        out[name] = (h[4], h[5], h[7])
    return out


def control_codes(data: bytes, mangled: str) -> dict[int, Control]:
    """Control byte of every instruction of kernel ``mangled``, by its address."""
    off, size, _ = elf_sections(data)[f".text.{mangled}"]
    words = struct.unpack_from(f"<{size // 8}Q", data, off)
    codes = {}
    for i in range(0, len(words), 8):
        for j, c in enumerate(decode_control(words[i])):
            codes[(i + 1 + j) * 8] = c
    return codes


def _symbols(data: bytes, secs: dict) -> list[str]:
    """Names of the ELF symbol table's entries, by index."""
    off, size, _ = secs[".symtab"]
    str_off = secs[".strtab"][0]
    names = []
    for i in range(size // 24):
        name = struct.unpack_from("<I", data, off + 24 * i)[0]
        names.append(data[str_off + name : data.index(b"\0", str_off + name)].decode())
    return names


def register_counts(data: bytes) -> dict[str, int]:
    """Registers a thread of each kernel (``EIATTR_REGCOUNT`` of the cubin's ``.nv.info``)."""
    secs = elf_sections(data)
    syms, out = _symbols(data, secs), {}
    off, size, _ = secs[".nv.info"]
    p = off
    while p < off + size:
        fmt, attr = data[p], data[p + 1]
        if fmt == _EIFMT_SVAL:
            length = struct.unpack_from("<H", data, p + 2)[0]
            if attr == _EIATTR_REGCOUNT:
                sym, regs = struct.unpack_from("<II", data, p + 4)
                out[syms[sym]] = regs
            p += 4 + length
        else:
            p += 2 if fmt == 1 else 4  # EIFMT_NVAL: 2 bytes; BVAL, HVAL: 4
    return out


@dataclass(frozen=True)
class LoopSchedule:
    """One hot loop's trip on Kepler: its k steps and, a trip, its instructions, dual-issued
    pairs, issue groups, the warp's scheduled cycles and the shared path's passes."""

    label: str
    k_steps: int
    insts: int
    dual_pairs: int
    groups: int
    own_cycles: int
    shared_passes: int

    def per_k(self, value: float) -> float:
        """``value`` a trip, a k step."""
        return value / self.k_steps


def shared_passes(opcode: str) -> int:
    """Passes of the shared-memory path a warp access takes (8-byte banks, 256 B a clock):
    one for 32- and 64-bit accesses, two for 128-bit; 0 for other instructions."""
    if opcode.split(".")[0] not in ("LDS", "STS"):
        return 0
    return 2 if "128" in opcode.split(".") else 1


def loop_schedule(kernel: sass_counts.SassKernel, codes: dict[int, Control]) -> LoopSchedule:
    """The schedule of ``kernel``'s hot loop, one trip (kepler_sass.hot_loop_index)."""
    k = kepler_sass.hot_loop_index(kernel)
    lp = kernel.loops[k]
    insts = [i for i in kernel.insts[lp.start : lp.end + 1] if not i.slow]
    dual = groups = own = 0
    for idx, inst in enumerate(insts):
        c = codes[inst.addr]
        if c.dual and idx + 1 < len(insts):
            dual += 1  # issues with the next: one group, whose stall is the next one's
            continue
        groups += 1
        own += max(c.stall, 1)
    return LoopSchedule(
        label=lp.label, k_steps=kepler_sass._own_ffmas(kernel, k), insts=len(insts),
        dual_pairs=dual, groups=groups, own_cycles=own,
        shared_passes=sum(shared_passes(i.opcode) for i in insts),
    )  # fmt: skip


def tk1_cycles(s: LoopSchedule, registers: int, threads: int = 1024) -> dict[str, float]:
    """Cycles a warp k step on the TK1's SMX: issue, shared path, the warp's own schedule
    over the resident warps (none when a block of ``threads`` does not fit its registers),
    and the published pair's (see the module docstring)."""
    from cgpredict.devices import load_device
    from cgpredict.occupancy import BlockDoesNotFit, occupancy

    dev = load_device("tk1")
    try:
        warps = occupancy(dev, threads, registers, 8192).warps_per_sm
    except BlockDoesNotFit:  # more than 32768 registers a block (compute capability 3.2)
        warps = 0
    published_ms = PUBLISHED_NAIVE_MS / PUBLISHED_SPEEDUP
    warp_k_steps = N**3 / dev.warp_size
    return {
        "issue": s.per_k(s.insts) * dev.inst_cycles_per_warp_inst,
        "shared_path": s.per_k(s.shared_passes) * dev.smem_issue_cycles,
        "own_schedule": s.per_k(s.own_cycles) / warps if warps else float("nan"),
        "warps_resident": warps,
        "published": published_ms * 1e-3 * dev.freq_hz * dev.sm_count / warp_k_steps,
    }


def staging_misses(n: int, tile: int, l2_bytes: int, line: int, ways: int,
                   resident: int) -> tuple[int, int]:
    """(line accesses, misses) of the textbook tiled GEMM's staging loads (``n`` x ``n``
    floats, ``tile`` x ``tile`` blocks launched x-fastest, ``resident`` of them running
    their phases in step, each phase loading its A tile then its B tile row by row) in an
    LRU cache of ``l2_bytes`` with ``line``-byte lines and ``ways`` ways: a brute force."""
    sets = l2_bytes // line // ways
    cache: list[OrderedDict[int, None]] = [OrderedDict() for _ in range(sets)]
    accesses = misses = 0
    b_base = n * n * 4  # B follows A
    blocks = [(bx, by) for by in range(n // tile) for bx in range(n // tile)]
    for g in range(0, len(blocks), resident):
        for p in range(n // tile):
            for bx, by in blocks[g : g + resident]:
                for base, row0, col0 in ((0, by * tile, p * tile), (b_base, p * tile, bx * tile)):
                    for r in range(tile):
                        first = (base + ((row0 + r) * n + col0) * 4) // line
                        for ln in range(first, (base + ((row0 + r) * n + col0 + tile) * 4 - 1)
                                        // line + 1):
                            s = cache[ln % sets]
                            accesses += 1
                            if ln in s:
                                s.move_to_end(ln)
                                continue
                            misses += 1
                            s[ln] = None
                            if len(s) > ways:
                                s.popitem(last=False)
    return accesses, misses


def tk1_staging_dram() -> dict[str, float]:
    """The textbook kernel's staging traffic on the TK1 (its L2 geometry, 2 blocks resident,
    n = N): line accesses, misses, hit rate, DRAM bytes and their time at its bandwidth."""
    from cgpredict.devices import load_device

    dev = load_device("tk1")
    acc, miss = staging_misses(N, 32, dev.l2_bytes, dev.l2_line_bytes, dev.l2_ways, 2)
    mb = miss * dev.l2_line_bytes / 1e6
    return {"accesses": acc, "misses": miss, "hit": 1 - miss / acc, "dram_mb": mb,
            "gbps": dev.dram_bandwidth_gbps, "dram_ms": mb / dev.dram_bandwidth_gbps}  # fmt: skip


def analyse(directory: Path, port: str) -> dict[str, dict]:
    """Per kernel of ``port``: its hot loop's schedule and the TK1's cycles a warp k step."""
    out = {}
    for stem, name in KERNELS:
        data = (directory / f"{stem}.{port}.sm_35.cubin").read_bytes()
        listing = (directory / f"{stem}.{port}.sm_35.sass").read_text()
        regs = register_counts(data)
        for launch, kern in sass_counts.kernels_by_launch(name, listing).items():
            s = loop_schedule(kepler_sass.recount(kern), control_codes(data, kern.mangled))
            out[f"{stem}/{launch}"] = {
                "registers": regs[kern.mangled], "schedule": asdict(s),
                "tk1": tk1_cycles(s, regs[kern.mangled]),
            }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, default=KEPLER_DIR)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--l2", action="store_true",
                    help="also the staging loads' L2 misses on the TK1 at n = 1024 (a minute)")
    a = ap.parse_args(argv)
    result = {port: analyse(a.dir, port) for port in ("plain", "restrict")}
    if a.l2:
        result["l2"] = tk1_staging_dram()
    if a.json:
        json.dump(result, sys.stdout, indent=1)
        print()
        return 0
    l2 = result.pop("l2", None)
    for port, kernels in result.items():
        for name, r in kernels.items():
            s, t = LoopSchedule(**r["schedule"]), r["tk1"]
            print(f"{name} ({port}, {r['registers']} registers, "
                  f"{t['warps_resident']} warps an SMX): loop {s.label}, {s.k_steps} k steps "
                  f"a trip; a k step {s.per_k(s.insts):.3f} "
                  f"instructions, {s.per_k(s.dual_pairs):.3f} dual pairs, {s.per_k(s.groups):.3f} "
                  f"issue groups, {s.per_k(s.own_cycles):.2f} scheduled cycles, "
                  f"{s.per_k(s.shared_passes):.3f} shared passes")  # fmt: skip
            print(f"  TK1 cycles a warp k step: issue {t['issue']:.3f}, shared path "
                  f"{t['shared_path']:.3f}, own schedule {t['own_schedule']:.3f}; "
                  f"published pair {t['published']:.3f}")  # fmt: skip
    if l2:
        print(f"textbook staging loads at n = {N}, TK1 L2, 2 blocks in step: {l2['accesses']} "
              f"line accesses, {l2['misses']} misses ({l2['hit']:.1%} hits), DRAM "
              f"{l2['dram_mb']:.1f} MB, {l2['dram_ms']:.2f} ms at {l2['gbps']:g} GB/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
