"""Which validation rows eq. (LTq) would move (docs/models.md; validation/loop_trips.py).

For each row of a result table (kernel, sizes, block) it predicts the kernel on the H100 and
replaces the critical-path bound, waves x the busiest thread's chain C, by the closed loop of
the n = N / 4 warps of a sub-partition around their own path (eq. (LTq)), a warp's service
being its instructions at one a cycle, ``s = (instructions + shared wavefronts) x
inst_cycles_per_warp_inst x schedulers_per_sm``:

    chain' = waves x T(C, s, n)                                                       (LTq)

and prints the row's chain, issue, model and final cycles (per launch), chain' and how much
the final time would move (max(final, chain') / final - 1). Slow: one prediction a row.

    python validation/loop_trip_rows.py PORT TABLE.md CORPUS [KERNEL,...]
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import loop_trips  # noqa: E402

from cgpredict import api  # noqa: E402
from cgpredict.devices import load_device  # noqa: E402


def table_rows(path: Path, only: tuple[str, ...] = ()) -> list[tuple[str, str, str, float]]:
    """(kernel, sizes, block, error %) of each row of a validate Markdown table."""
    out = []
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.split("|")[1:-1]]
        if len(cells) < 6 or cells[0] == "kernel" or cells[0].startswith("-"):
            continue
        if not only or cells[0] in only:
            out.append((cells[0], cells[1], cells[2], float(cells[5])))
    return out


def parse_sizes(text: str) -> dict[str, int]:
    """``NI=NJ=4096 TMAX=500`` as {NI: 4096, NJ: 4096, TMAX: 500}."""
    sizes: dict[str, int] = {}
    for token in text.split():
        names, value = token.rsplit("=", 1)
        for name in names.split("="):
            sizes[name] = int(value)
    return sizes


def row_lines(port: str, corpus: Path, kernel: str, sizes: str, block: str, err: float,
              device) -> list[str]:
    """One line per launch kind of a row: its bounds, model and (LTq)'s chain."""
    report = api.predict(corpus / f"{kernel}.c", block, "h100", parse_sizes(sizes), port)
    lines = []
    for k in report.kernels:
        r, p, b = k.result, k.profile, k.result.bounds
        if b is None:
            continue
        waves = max(math.ceil(k.batches - 1e-9), 1)
        service = ((p.total_insts + p.shared.transactions) * device.inst_cycles_per_warp_inst
                   * device.schedulers_per_sm)
        n = max(math.ceil(r.n_warps / device.schedulers_per_sm), 1)
        ltq = waves * loop_trips.closed_loop_trip(p.chain_cycles, service, n)  # (LTq)
        final = max(r.model_cycles / max(k.launches, 1), b.cycles)
        lines.append(
            f"{kernel:16s} {block:6s} {k.name[:16]:16s} err {err:+6.1f} n {n:2d} "
            f"chain {b.chain_cycles:9.4g} issue {b.issue_cycles:9.4g} "
            f"model {r.model_cycles / max(k.launches, 1):9.4g} final {final:9.4g} "
            f"(LTq) {ltq:9.4g} moves {max(final, ltq) / final - 1:+.2%}")
    return lines


def main(argv: list[str]) -> None:
    port, table, corpus = argv[0], Path(argv[1]), Path(argv[2])
    only = tuple(argv[3].split(",")) if len(argv) > 3 else ()
    device = load_device("h100")
    for kernel, sizes, block, err in table_rows(table, only):
        for line in row_lines(port, corpus, kernel, sizes, block, err, device):
            print(line, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
