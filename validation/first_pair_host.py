"""What drives the first event pair's extra: the host's late launch call after the reset's
pageable copies (sixteenth round, t1; eq. (E6), docs/validation.md).

Three readings of the committed leases, no GPU:

1. ``--host``: the lease of 2026-11-28 records, beside each repetition's event pair, the host
   clock from its first ``cudaEventRecord`` to the end of its last call
   (``all_host_issue_ms``, validation/cuda/common.cuh). Over the single-launch rows, each
   repetition's deviation from its row's median pair against its deviation from the row's
   median host time (the first repetition, which creates the events, left out): if the pair
   follows the host rep by rep, what it holds beyond the kernel is the host's. Then each
   row's median host time beside its reset's pageable copies (bytes, all ``upload()`` calls).
2. ``--ncu``: event_vs_ncu.py's extra (event median less the modelled call and gap less
   ncu's duration) of the rows under 0.6 ms, grouped by the reset's pageable copies (at least
   ``upload_launch_min_bytes`` in all, or less) and by ncu's clock: clock-free launches
   (DRAM or L2 at 75 % or more) as read; the others with ncu's time scaled to 1.98 GHz,
   right for compute-bound launches only (latency-bound ones, bilinear, softmax, corr_mean,
   come out far off either way).
3. ``--reset``: reset_state.cu (h100-lease-2026-11-28/reset/): the blind strided launch after
   the port's reset with a pageable and with a pinned copy (both then memset ``out``), idle
   and queued behind a spin kernel: the pageable copy's late call that the memset leaves;
   and dirty_evict.cu (evict/): the same kernel at n = 2^18..2^24 after a clean L2, its
   event pair against ncu's duration: does the pair's overhead grow with the footprint
   (2 to 128 pages of 2 MB)?

    python validation/first_pair_host.py [--host] [--ncu] [--reset]   (all three by default)
"""

from __future__ import annotations

import argparse
import json
import statistics

import numpy as np
from event_vs_ncu import MEASURED, device_launch, port_source, rows_of
from ncu_csv import read_ncu
from port_resets import _buffer_bytes, _calls

LEASE = MEASURED / "h100-lease-2026-11-28"
HOST_FILES = ("blind/plain.json", "blind/restrict.json", "blind/blocks.json", "dirty/ports.json")
MIN_BYTES = 64 << 20  # upload_launch_min_bytes of the H100 file


def upload_bytes(kernel: str, sizes: dict[str, int]) -> int | None:
    """Bytes of all the pageable copies (``upload()`` calls) of a port's reset lambda; None
    when the port or a buffer's size is not followed."""
    src = port_source(kernel)
    if src is None:
        return None
    ups = [_buffer_bytes(src, b, sizes) for b, op in _calls(src) if op == "upload"]
    return None if None in ups else sum(ups)


def host_rows() -> list[dict]:
    """The single-launch rows of HOST_FILES with their per-repetition pairs and host times."""
    out = []
    for rel in HOST_FILES:
        data = json.loads((LEASE / rel).read_text())
        for e in data["results"]:
            res = e.get("result") or {}
            if "all_host_issue_ms" not in res or len(res.get("launches", [])) != 1:
                continue
            if res["launches"][0].get("count") != 1:
                continue
            out.append(dict(where=rel, kernel=e["kernel"], block=e["config"],
                            host=np.array(res["all_host_issue_ms"]) * 1e3,
                            pair=np.array(res["all_total_ms"]) * 1e3,
                            up=upload_bytes(e["kernel"], e.get("work_sizes", {}))))
    return out


def report_host() -> None:
    """Reading 1: the pair against the host clock, rep by rep and row by row."""
    rows = host_rows()
    dx = np.concatenate([r["host"][1:] - np.median(r["host"][1:]) for r in rows])
    dy = np.concatenate([r["pair"][1:] - np.median(r["pair"][1:]) for r in rows])
    slope = float(np.polyfit(dx, dy, 1)[0])
    print(f"## The pair against the host clock ({len(rows)} single-launch rows, "
          f"{dx.size} repetitions)\n")
    print(f"rep by rep about each row's median: r = {np.corrcoef(dx, dy)[0, 1]:.2f}, "
          f"slope {slope:.2f} us of pair a us of host\n")
    print("| file | kernel | block | pageable copies MiB | host us (median) | pair us |")
    print("|---|---|---|---:|---:|---:|")
    for r in sorted(rows, key=lambda r: (r["up"] or 0, r["kernel"])):
        up = "?" if r["up"] is None else f"{r['up'] / 2**20:.0f}"
        print(f"| {r['where']} | {r['kernel']} | {r['block']} | {up} | "
              f"{np.median(r['host'][1:]):.1f} | {np.median(r['pair'][1:]):.1f} |")
    for lab, large in (("< 64 MiB", False), (">= 64 MiB", True)):
        hs = [float(np.median(r["host"][1:])) for r in rows
              if r["up"] is not None and (r["up"] >= MIN_BYTES) == large]
        if hs:
            print(f"\ncopies {lab}: {len(hs)} rows, host median {statistics.median(hs):.1f} us "
                  f"({min(hs):.1f} .. {max(hs):.1f})")


def report_ncu() -> None:
    """Reading 2: event_vs_ncu's extra by the reset's pageable copies and its last call."""
    folders = sorted({j.parent for j in MEASURED.rglob("*.json")})
    groups: dict[str, list[float]] = {}
    print("\n## The first pair's extra over ncu by the reset's pageable copies\n")
    print("| lease/file | kernel | block | last call | copies MiB | extra us | clock |")
    print("|---|---|---|---|---:|---:|---|")
    for folder in folders:
        for r in rows_of(folder, 75.0):
            up = upload_bytes(r["kernel"], r["work"])
            if up is None or r["event_us"] > 600:
                continue  # a size not followed; a row of a millisecond or more
            x = r["extra"] if r["bound"] else r["scaled"]
            big = "large" if up >= MIN_BYTES else "small"
            clock = "clock-free" if r["bound"] else "scaled"
            groups.setdefault(f"{clock}, last call {r['reset']}, copies {big}", []).append(x)
            print(f"| {r['where']} | {r['name']} | {r['block']} | {r['reset']} | "
                  f"{up / 2**20:.0f} | {x:+.1f} | {'free' if r['bound'] else 'scaled'} |")
    for key, xs in sorted(groups.items()):
        print(f"\n{key}: {len(xs)} launches, extra median {statistics.median(xs):+.1f} us "
              f"({min(xs):+.1f} .. {max(xs):+.1f})")


def report_reset() -> None:
    """Reading 3: reset_state.cu's pageable and pinned resets, idle and queued."""
    d = json.loads((LEASE / "reset" / "reset_state.json").read_text())
    idle, queued = d["idle"], d["queued"]
    print("\n## reset_state.cu (strided 2^24, 128x1; medians of 7, us)\n")
    print("| state | idle | queued | idle - queued |")
    print("|---|---:|---:|---:|")
    for key in idle:
        i, q = idle[key] * 1e3, queued[key] * 1e3
        print(f"| {key[:-3]} | {i:.2f} | {q:.2f} | {i - q:.2f} |")
    late = (idle["port_ms"] - idle["pinned_ms"]) * 1e3
    gpu = (queued["port_ms"] - queued["pinned_ms"]) * 1e3
    alone = (idle["upload_only_ms"] - idle["none_ms"]) * 1e3
    print(f"\npageable less pinned copy, both then the memset: idle {late:+.2f} us, queued "
          f"{gpu:+.2f} (the GPU's time the same): the late call the memset leaves; the "
          f"pageable copy alone {alone:+.2f} over none (upload_launch_us on this host)")
    dev = device_launch()
    print(f"device file: upload_launch_us {dev['upload_launch_us']}")
    ev = json.loads((LEASE / "evict" / "dirty_evict.json").read_text())
    by: dict[str, list[float]] = {}
    for launch in list(read_ncu(LEASE / "evict" / "dirty_evict_ncu.csv"))[1:]:  # 0: warm-up
        by.setdefault(launch.cells.get("Grid Size", "?"), []).append(
            launch.metrics["gpu__time_duration.sum"] * 1e-3)
    print("\n## dirty_evict.cu after a clean L2 (strided, 128x1): the pair over ncu by footprint\n")
    print("| n | footprint MB | event pair us | ncu us (3 launches) | pair - ncu |")
    print("|---|---:|---:|---:|---:|")
    for lg, ts in zip(range(18, 25), by.values()):
        pair, ncu = ev[f"n{lg}_s0_ms"] * 1e3, statistics.median(ts[:3])  # the clean three
        print(f"| 2^{lg} | {16 * 2**lg / 1e6:.0f} | {pair:.2f} | {ncu:.2f} | {pair - ncu:+.2f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for flag in ("--host", "--ncu", "--reset"):
        ap.add_argument(flag, action="store_true")
    args = ap.parse_args()
    every = not (args.host or args.ncu or args.reset)
    if args.host or every:
        report_host()
    if args.ncu or every:
        report_ncu()
    if args.reset or every:
        report_reset()


if __name__ == "__main__":
    main()
