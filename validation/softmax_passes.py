"""softmax's passes against Nsight Compute: where its time goes at 4, 8 and 32 warps an SM.

examples/user/softmax.c at R = 16384, C = 1024 (the measured size): a thread a row, three
passes over its 4-KB row (maximum, sum, the write pass with its stores), 512 warps. Each
warp instruction reads 32 rows (32 L1 wavefronts, one a line, a hit or not) and a lane
crosses into a new 32-B sector every 8 floats: 128 crossings a pass. Per block shape, from
the worst-rows lease's counters (``h100-worst-2026-11-27/user-ncu``) and the event times of
the user sets: the SMs in use and the warps on each, the L1 wavefronts an SM and their share
of ncu's elapsed cycles, ncu's time (its SM clock locked near 1.59 GHz) against the event
median (1.98 GHz), the L2's busy time (``lts__throughput`` x duration), and what is left for
the two read passes once the write pass is given the L2's busy time (where the L1's data
stage is busy less than 80 % of the cycles; above, the launch is L1-bound). Stdlib only:

    python validation/softmax_passes.py

Nothing is fitted. Read: docs/validation.md, "softmax and spmv_csr, fifteenth round".
"""

from __future__ import annotations

import json
from pathlib import Path

from ncu_csv import read_ncu

ROOT = Path(__file__).resolve().parent / "measured"
NCU = ROOT / "h100-worst-2026-11-27" / "user-ncu"
EVENTS = [ROOT / "nvidia-h100-80gb-hbm3-user-blocks.json", ROOT / "nvidia-h100-80gb-hbm3-user.json"]
WARPS, SMS, CLOCK_HZ = 512, 132, 1.98e9
SHAPES = {"32x1": 32, "128x1": 128, "256x1": 256, "1024x1": 1024}


def event_ms(config: str) -> float:
    """The median event-timed launch of softmax at ``config`` in the user sets."""
    for path in EVENTS:
        for row in json.loads(path.read_text())["results"]:
            if row["kernel"] == "softmax" and row["config"] == config:
                return float(row["result"]["launches"][0]["median_ms"])
    raise KeyError(config)


def placement(threads: int) -> tuple[int, float]:
    """(SMs in use, warps an SM) of 16384 rows in blocks of ``threads`` dealt round robin."""
    blocks = 16384 // threads
    sms = min(SMS, blocks)
    return sms, WARPS / sms


def figures(config: str) -> dict[str, float]:
    """One block shape's figures (times in us)."""
    m = read_ncu(NCU / f"softmax-{config}.csv")[0].metrics
    sms, per_sm = placement(SHAPES[config])
    dur = m["gpu__time_duration.sum"] / 1e3
    elapsed = m["sm__cycles_elapsed.avg"]
    waves = m["l1tex__data_pipe_lsu_wavefronts.sum"] / sms
    lts_busy = m["lts__throughput.avg.pct_of_peak_sustained_elapsed"] / 100 * dur
    return {"sms": sms, "warps_sm": per_sm, "wavefronts_sm": waves,
            "l1_share": waves / elapsed, "ncu_us": dur, "event_us": 1e3 * event_ms(config),
            "l1_us_198": waves / CLOCK_HZ * 1e6, "lts_busy_us": lts_busy,
            "l2_read_req_M": m["lts__t_requests_srcunit_tex_op_read.sum"] / 1e6,
            "dram_read_MB": m["dram__bytes_read.sum"] / 1e6}


def main() -> None:
    """Prints one row a block shape."""
    print("block  SMs warps/SM  L1 wavefr/SM  busy  ncu us  event us  L1 us@1.98  "
          "L2 busy us  left/read pass us  L2 read req M  DRAM MB")
    for config in SHAPES:
        f = figures(config)
        left = (f["event_us"] - f["lts_busy_us"]) / 2  # the write pass given the L2's time
        shown = f"{left:18.1f}" if f["l1_share"] < 0.8 else f"{'(L1-bound)':>18s}"
        print(f"{config:6s} {f['sms']:4d} {f['warps_sm']:7.2f} {f['wavefronts_sm']:13.0f} "
              f"{f['l1_share']:5.2f} {f['ncu_us']:7.1f} {f['event_us']:9.1f} "
              f"{f['l1_us_198']:11.1f} {f['lts_busy_us']:11.1f} {shown} "
              f"{f['l2_read_req_M']:14.2f} {f['dram_read_MB']:8.1f}")


if __name__ == "__main__":
    main()
