# Developer shortcuts. `make test` is what CI runs (through .ci/run).
PY ?= python3

.PHONY: install test test-fast lint bench fuzz measure gpu-session validate clean

install:
	$(PY) -m pip install -e ".[test]"

# pytest-xdist: a worker per core; worksteal hands a worker that runs dry half of the other's
# queue (tests/conftest.py's run_once makes an expensive session result once for both)
XDIST ?= -n auto --dist worksteal

test:
	$(PY) -m pytest -q $(XDIST)

test-fast:  # the suite less the tests marked slow (a browser, a Dask cluster, nvcc, numba warm-up)
	$(PY) -m pytest -q $(XDIST) -m "not slow"

lint:  # what CI runs after the tests (ruff comes with the test extra)
	ruff check cgpredict tests

bench:
	$(PY) bench/bench_trace.py
	$(PY) bench/bench_run.py
	$(PY) bench/bench_cache.py
	$(PY) bench/bench_cli.py
	$(PY) bench/bench_advise.py
	$(PY) bench/bench_stages.py

N ?= 500
fuzz:  # csmith programs through trace and run, then mutated traces and a tampered cache
	$(PY) validation/fuzz.py --n $(N) --out validation/results/fuzz.md
	$(PY) validation/fuzz_inputs.py --n $(N) --out validation/results/fuzz-inputs.md

measure:  # needs an NVIDIA GPU and nvcc
	$(PY) validation/measure.py

gpu-session:  # measure + calibrate in one run on a GPU machine; outputs in gpu-session/
	bash validation/gpu_session.sh gpu-session

validate:
	cgpredict validate --device tk1
	cgpredict validate --device h100

clean:
	rm -rf build dist *.egg-info .pytest_cache validation/cuda/bin
