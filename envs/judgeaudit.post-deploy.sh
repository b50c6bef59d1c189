#!/usr/bin/env bash
# Run by Snakemake inside the new conda environment (envs/judgeaudit.yaml), once.
# resemblyzer's metadata asks for `webrtcvad`/`typing`; its real deps are pinned in
# pyproject.toml (webrtcvad-wheels), so it is installed without them, as the Makefile does.
set -euo pipefail
pip install --no-deps resemblyzer==0.1.4
