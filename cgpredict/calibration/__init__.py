"""Device calibration on a real GPU (SPEC §6): ``run`` builds and runs the micro-benchmarks
of ``microbench/`` and writes a device file, ``analysis`` turns their raw results into device
fields (latency plateaus, bandwidths, energy per operation), ``records`` reads stored
JSON-lines measurements (``cgpredict calibrate --from-raw``). Imports neither llvmlite nor
numba, so a GPU machine runs it from a source checkout."""
