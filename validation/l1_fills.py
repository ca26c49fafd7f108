"""The L1 data stage's passes for the sectors a load misses, eq. (B2f), read off Nsight
Compute counters (issue 24, twelfth round, t3; the lease of 2026-11-27, worst rows).

A warp load passes the L1's data stage (B2t) times when it hits; the sectors it misses come
back from the L2 over the crossbar and are written into the SRAM by the same stage. For each
profiled launch whose loads' hit passes are known by hand this prints ncu's data-stage
wavefronts a request (``l1tex__data_pipe_lsu_wavefronts`` over the global load requests),
the missed sectors a request (``l1tex__m_xbar2l1tex_read_sectors``), and the passes a
missed sector implies, (wavefronts - hit passes) / missed; and hit passes + missed / 4,
what (B2f) with ``l1_fill_sectors`` = 4 gives these loads (none is bank-conflicted, so the
max with the bank ways does not bind: per warp load max(ways, ceil(lines / 4) +
ceil(missed / 4)), docs/models.md).

The hit passes, by hand (docs/models.md, (B2t)):
* particles ``step_soa``: three coalesced float loads, one line, one bank way each: 1.
* strided: ``in[3i]`` and ``in[3i + 2]``, 3 lines in 32 banks each: 1.
* trmv_t: the brute force of its SASS lane order (``validation/trmv_t_lanes.py``; the
  ``L[i][j]`` load 9 rows, ceil(9 / 4) = 3, ``x[i]`` 2 bank ways) over 32 warps: 2.49.

    python validation/l1_fills.py
"""

from __future__ import annotations

from pathlib import Path

from ncu_csv import read_ncu

ROOT = Path(__file__).resolve().parents[1]
NCU = ROOT / "validation/measured/h100-worst-2026-11-27"
FILL_SECTORS = 4  # h100.toml l1_fill_sectors

#: (csv under NCU, kernel name prefix, (B2t) passes a request when every sector hits)
CASES = (
    ("more-ncu/particles-1024x1.csv", "step_soa", 1.0),
    ("blind-ncu/strided-32x1.csv", "strided", 1.0),
    ("blind-ncu/strided-128x1.csv", "strided", 1.0),
    ("blind-ncu/strided-1024x1.csv", "strided", 1.0),
    ("blind-ncu/trmv_t-32x1.csv", "trmv_t", 2.49),
    ("blind-ncu/trmv_t-128x1.csv", "trmv_t", 2.49),
    ("blind-ncu/trmv_t-1024x1.csv", "trmv_t", 2.49),
)


def main() -> None:
    print("launch                        wf/req  missed/req  hit passes  a missed sector"
          "  (B2f)")
    for name, kernel, hit in CASES:
        for launch in read_ncu(NCU / name):
            if not launch.kernel.startswith(kernel):
                continue
            m = launch.metrics
            req = m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"]
            wf = m["l1tex__data_pipe_lsu_wavefronts.sum"] / req
            missed = m["l1tex__m_xbar2l1tex_read_sectors.sum"] / req
            model = hit + missed / FILL_SECTORS
            print(f"{name.split('/')[1][:-4] + ' ' + kernel:29s} {wf:6.3f}  {missed:10.2f}"
                  f"  {hit:10.2f}  {(wf - hit) / missed:15.3f}  {model:5.2f}"
                  f" ({model / wf - 1:+.1%})")


if __name__ == "__main__":
    main()
