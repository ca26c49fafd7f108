"""Predicting GEMM from Python, notebook style (each `# %%` is a cell in VS Code / Jupytext).

Run it from the repository root:  python examples/predict_gemm.py
It needs a C compiler (see `cgpredict doctor`); it traces a small GEMM so it runs in seconds.
"""

# %% Predict one kernel on two GPUs
from pathlib import Path

import cgpredict

GEMM = Path(__file__).resolve().parents[1] / "polybench_c" / "gemm.c"
SIZES = {"NI": 256, "NJ": 256, "NK": 256}  # the work size (-D)
TRACE = {"NI": 64, "NJ": 64, "NK": 64}  # the smaller size actually traced (--trace-size)

for device in ("tk1", "h100"):
    rep = cgpredict.predict(GEMM, block="32x8", device=device, sizes=SIZES, trace_sizes=TRACE)
    k = rep.kernels[0]
    print(
        f"{k.name} on {rep.device}: {k.time_ms:.3f} ms, {k.result.bound}-bound, "
        f"time set by {k.result.binding}, MWP {k.result.mwp:.1f} CWP {k.result.cwp:.1f}"
    )

# %% Which access costs what (the typed report; .to_dict() gives the JSON of `run --json`)
for m in k.mem:
    print(f"  {m.text:<10} {m.location:<10} {m.pattern:<12} {m.l2_trans_per_warp:5.2f} trans/warp")
print(sorted(rep.to_dict()))

# %% Sweep the block shape: a pandas-free table
for block in ("32x32", "32x8", "64x4", "128x2"):
    t = cgpredict.predict(GEMM, block=block, device="h100", sizes=SIZES, trace_sizes=TRACE)
    print(f"  block {block:>6}: {t.total_ms:.4f} ms")

# %% What to change, and GPU vs FPGA
advice = cgpredict.advise(GEMM, device="h100", sizes=SIZES, trace_sizes=TRACE)
for f in advice.fixes[:3]:
    print(f"  {f.speedup:.2f}x  {f.title}")
cmp = cgpredict.compare(GEMM, device="h100", sizes=SIZES, trace_sizes=TRACE, fpga="zcu102")
print(f"recommendation: {cmp.recommendation} ({cmp.gpu_total_ms:.3f} ms GPU vs "
      f"{cmp.fpga_total_ms:.3f} ms FPGA)")

# %% The HTML page of `cgpredict report`, from the same library
from cgpredict.render import write_report  # noqa: E402

page = cgpredict.report_page(GEMM, device="h100", sizes=SIZES, trace_sizes=TRACE)
print("wrote", write_report(page, Path("gemm_report.html"), force=False))
