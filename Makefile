# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
CORES  ?= all

.PHONY: run test lint system-deps clean-venv report estimate-cost verify

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
test: lint system-deps
	$(BIN)/python -m pytest -q -rs -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder --durations=30

# The Slurm cluster test (tests/test_slurm_cluster.py: slurm-wlm, munge) and the browser
# test (tests/test_report_paper.py: Debian's chromium) need system packages; installed
# here as .ci/run does (apt-get, as root), else `make test` stops naming what is missing
# (those tests would otherwise skip). SYSTEM_DEPS=skip runs without them (they skip).
SYSTEM_PROGRAMS := chromium munged slurmctld slurmd sbatch squeue scontrol sinfo scancel srun
SYSTEM_PACKAGES := chromium slurm-wlm munge
SYSTEM_DEPS ?= require
system-deps:
	@missing=""; for p in $(SYSTEM_PROGRAMS); do command -v $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ] && [ "$(SYSTEM_DEPS)" != skip ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing $(SYSTEM_PACKAGES) (missing:$$missing)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(SYSTEM_PACKAGES) >/dev/null; \
	  fi; \
	  missing=""; for p in $(SYSTEM_PROGRAMS); do command -v $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	  if [ -n "$$missing" ]; then \
	    echo "make test: missing programs:$$missing (Debian packages: $(SYSTEM_PACKAGES));" \
	         "install them as root (apt-get install -y $(SYSTEM_PACKAGES)), or run" \
	         "'make test SYSTEM_DEPS=skip' to let the Slurm and browser tests skip" >&2; \
	    exit 1; \
	  fi; \
	fi

# ruff on the Python; Snakemake's linter (exit 1 on any lint) and snakefmt on the
# Snakefile and rules/ (formatting is checked, never rewritten here).
lint: $(STAMP)
	$(BIN)/ruff check src tests scripts benchmarks
	$(BIN)/snakemake --lint --cores 1
	$(BIN)/snakefmt --check Snakefile rules/

clean-venv:
	rm -rf $(VENV)
