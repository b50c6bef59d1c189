import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
VENV_BIN = Path(sys.executable).parent


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def snakemake_exe() -> str:
    exe = VENV_BIN / "snakemake"
    return str(exe) if exe.exists() else "snakemake"


@pytest.fixture(autouse=True)
def _no_display(monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    yield


os.environ.setdefault("MPLBACKEND", "Agg")
