# Every target bootstraps .venv from pyproject.toml when it is missing or stale.
PYTHON ?= python3
# Every process writes and reuses bytecode caches, even where the environment turns them off:
# without them each process compiles every module of harness/ again (`harness --help` took
# 3.6 s instead of 2.8 s, pytest's collection 25 s instead of 8 s), and the tests and `make run`
# start hundreds of processes.
unexport PYTHONDONTWRITEBYTECODE
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUN_DIR ?= reports/latest

.PHONY: run test test-full bench lint clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

# The main job: a verification run of every registered algorithm, the quick reproduction of
# every paper experiment in harness.experiments.EXPERIMENTS (`harness list --experiments`;
# minutes each), then one HTML report of all. The report is written even when a gate fails; the exit code is
# the verification's, unless a reproduction itself could not run (then its code, so that a
# crash is never hidden). Same code and settings resume the previous run; otherwise it is moved
# aside, never deleted. Timings from an earlier `make bench` (asv results, pytest-benchmark
# JSON) join the report when they exist; without them the report says what is missing.
# GPU machines' asv results (bench/gpu.sh) merge with this machine's in the report.
ASV_INPUT = $(if $(wildcard .asv/results/*/machine.json),.asv/results) \
  $(wildcard bench/results/*/asv)
BENCH_INPUT = $(wildcard $(BENCH_JSON)) $(wildcard $(LIMITS_JSON))
# GPU numbers recorded on a machine with a device (bench/gpu.sh; committed under bench/results).
HARDWARE_INPUT = $(wildcard bench/results/*/hardware*.json bench/results/*/bandwidth.json)
SCHEDULER ?= process
# Reproductions run on every core: each task still has a core to itself, and an experiment's
# timings are ratios of tasks run alike (`harness reproduce` alone defaults to one worker).
WORKERS ?= $(shell nproc 2>/dev/null || echo 1)
run: $(STAMP)
	$(BIN)/harness verify --impl all --out $(RUN_DIR) --move-stale --scheduler $(SCHEDULER); \
	rc=$$?; erc=0; dirs="$(RUN_DIR)"; \
	for e in $$($(BIN)/harness list --experiments); do \
	  $(BIN)/harness reproduce $$e --level quick --out $(RUN_DIR)/$$e --move-stale \
	    --workers $(WORKERS) || erc=$$?; \
	  if [ -f $(RUN_DIR)/$$e/experiment.json ]; then dirs="$$dirs $(RUN_DIR)/$$e"; fi; \
	done; \
	$(BIN)/harness report $$dirs $(ASV_INPUT) $(BENCH_INPUT) $(HARDWARE_INPUT) --output $(RUN_DIR)/report.html \
	  || exit $$?; \
	if [ $$rc -eq 0 ] && [ $$erc -ne 0 ]; then exit $$erc; fi; \
	exit $$rc

# pytest exits 5 when it collects nothing; that must not count as a pass. Tests run on every
# core (pytest-xdist, work stealing: a long test left at the end does not idle a core;
# PYTEST_WORKERS=1 keeps one process; the DURATIONS slowest tests are listed at the end); test-full
# also fuzzes longer.
PYTEST_WORKERS ?= auto
DURATIONS ?= 20
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -m "not slow" -q -n $(PYTEST_WORKERS) --dist worksteal --durations=$(DURATIONS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; exit $$rc

test-full: $(STAMP)
	HYPOTHESIS_PROFILE=full $(BIN)/python -m pytest -q -n $(PYTEST_WORKERS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; exit $$rc

# `make bench`: the speed ratios, the pytest-benchmark pair per algorithm (JSON for the report),
# every figure that has a limit (speed-limits JSON for the report), then every asv benchmark once in this venv, recorded under .asv/results/<machine>/ against HEAD
# (docs/benchmarks.md). BENCH_MACHINE names this machine in merged results (default: hostname).
BENCH_JSON ?= reports/bench/pytest-benchmark.json
LIMITS_JSON ?= reports/bench/speed-limits.json
BENCH_MACHINE ?=
BENCH_ASV_MACHINE := $(if $(BENCH_MACHINE),--machine $(BENCH_MACHINE))
bench: $(STAMP)
	$(BIN)/harness speed
	mkdir -p $(dir $(BENCH_JSON))
	$(BIN)/python -m pytest bench -q --benchmark-only --benchmark-warmup=off \
	  --benchmark-min-rounds=3 --benchmark-max-time=0.5 --benchmark-columns=median,iqr,rounds \
	  --benchmark-json=$(BENCH_JSON)
	$(BIN)/harness speed --limits --json $(LIMITS_JSON)
	$(BIN)/asv machine --yes $(BENCH_ASV_MACHINE)
	$(BIN)/asv run --python=same --quick --set-commit-hash=$$(git rev-parse HEAD) $(BENCH_ASV_MACHINE)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) .asv reports/latest .harness-cache .numba-cache
	find harness implementations suites tests -name "*.nb[ic]" -delete
