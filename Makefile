# Every target bootstraps .venv from pyproject.toml when it is missing or stale.
PYTHON ?= python3
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

# The main job: a verification run of every registered algorithm, the quick reproductions of
# the paper experiments (racing-synthetic: 000 Fig. 1; racing-arch: 000 Sec. 5.2; potts: 003
# Sec. 4.1; minibatch-gap: 003 Thm. 1-2; continuous-spin: 003 Sec. 4.2; minutes each),
# then one HTML report of all. The report is written even when a gate fails; the exit code is
# the verification's, unless a reproduction itself could not run (then its code, so that a
# crash is never hidden). Same code and settings resume the previous run; otherwise it is moved
# aside, never deleted.
EXPERIMENTS := racing-synthetic racing-arch potts minibatch-gap continuous-spin
run: $(STAMP)
	$(BIN)/harness verify --impl all --out $(RUN_DIR) --move-stale; rc=$$?; \
	erc=0; dirs="$(RUN_DIR)"; \
	for e in $(EXPERIMENTS); do \
	  $(BIN)/harness reproduce $$e --level quick --out $(RUN_DIR)/$$e || erc=$$?; \
	  if [ -f $(RUN_DIR)/$$e/experiment.json ]; then dirs="$$dirs $(RUN_DIR)/$$e"; fi; \
	done; \
	$(BIN)/harness report $$dirs --output $(RUN_DIR)/report.html || exit $$?; \
	if [ $$rc -eq 0 ] && [ $$erc -ne 0 ]; then exit $$erc; fi; \
	exit $$rc

# pytest exits 5 when it collects nothing; that must not count as a pass.
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -m "not slow" -q; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; exit $$rc

test-full: $(STAMP)
	$(BIN)/python -m pytest -q; rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "pytest collected no tests: failing" >&2; exit 1; fi; exit $$rc

bench: $(STAMP)
	$(BIN)/harness speed
	$(BIN)/asv machine --yes
	$(BIN)/asv run --python=same --quick

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf $(VENV) .asv reports/latest
