# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
CORES  ?= all

.PHONY: run test lint clean-venv report estimate-cost

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch first: the CPU build on local disk; any other spec pulls CUDA wheels.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev,providers]'
	# resemblyzer's metadata asks for `webrtcvad`/`typing`; its real deps are pinned above.
	$(BIN)/pip install -q --no-deps resemblyzer==0.1.4
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) --profile profiles/default

# API-judge cost estimate only (builds trial shards, calls no judge).
estimate-cost: $(STAMP)
	$(BIN)/judgeaudit estimate-cost --cores $(CORES) --profile profiles/default

# Snakemake's own run report; the project's paper-like report is results/report/index.html.
report: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) --profile profiles/default --report results/snakemake_report.html

# Two pytest workers, whole test modules each: one builds the tiny run the workflow tests
# share (tests/conftest.py `tiny_run`, built once under a file lock) while the other runs
# the unit tests; module order is set in tests/conftest.py.
TEST_WORKERS ?= 2
test: $(STAMP)
	$(BIN)/ruff check src tests scripts benchmarks
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder --durations=30

lint: $(STAMP)
	$(BIN)/ruff check src tests scripts benchmarks

clean-venv:
	rm -rf $(VENV)
