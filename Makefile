# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
CORES  ?= all

.PHONY: run test lint clean-venv report estimate-cost verify

$(STAMP): pyproject.toml Makefile
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch first: the CPU build on local disk; any other spec pulls CUDA wheels.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev,cluster,bedrock]'
	# resemblyzer's metadata asks for `webrtcvad`/`typing`; its real deps are pinned above.
	$(BIN)/pip install -q --no-deps resemblyzer==0.1.4
	# compile librosa's numba kernels once, serially, before any parallel job or test
	# worker loads them (numba's on-disk kernel cache races: judgeaudit/librosa_safe.py)
	$(BIN)/python -m judgeaudit.librosa_safe
	touch $(STAMP)

# profiles/default is the workflow profile: Snakemake 9 loads it by itself ("Using
# workflow specific profile profiles/default ..."); passing --profile too loaded it twice.
run: $(STAMP)
	$(BIN)/snakemake --cores $(CORES)

# API-judge cost estimate only (builds trial shards, calls no judge).
estimate-cost: $(STAMP)
	$(BIN)/judgeaudit estimate-cost --cores $(CORES)

# Is the finished run still backed by its files? Re-hashes every manifest clip and every
# output/input a provenance record names, checks the judge cache (results/verify.json).
verify: $(STAMP)
	$(BIN)/judgeaudit verify

# Snakemake's own run report, at its own path: the workflow's paper-like report is
# results/report/index.html (and results/report.html, its redirect), never overwritten.
report: $(STAMP)
	$(BIN)/snakemake --cores $(CORES) --report results/snakemake_report.html

# Two pytest workers, whole test modules each: one builds the tiny run the workflow tests
# share (tests/conftest.py `tiny_run`, built once under a file lock) while the other runs
# the unit tests; module order is set in tests/conftest.py.
TEST_WORKERS ?= 2
test: lint
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder --durations=30

# ruff on the Python; Snakemake's linter (exit 1 on any lint) and snakefmt on the
# Snakefile and rules/ (formatting is checked, never rewritten here).
lint: $(STAMP)
	$(BIN)/ruff check src tests scripts benchmarks
	$(BIN)/snakemake --lint --cores 1
	$(BIN)/snakefmt --check Snakefile rules/

clean-venv:
	rm -rf $(VENV)
