"""Resolved config: every Snakemake job's record points to the merged, defaults-filled
config saved under its hash, and `judgeaudit config <hash>` prints it."""

import json
import types
from pathlib import Path

import pytest
import yaml

from judgeaudit.cli import main as cli_main
from judgeaudit.config import load_config
from judgeaudit.provenance import (
    config_hash,
    find_resolved_config,
    read_record,
    record_snakemake_job,
    save_resolved_config,
)


class _NL(list):
    """A minimal stand-in for Snakemake's Namedlist (list + .items())."""

    def __init__(self, items=(), **named):
        super().__init__([*items, *named.values()])
        self._named = named

    def items(self):
        return self._named.items()


def test_job_record_points_to_saved_resolved_config(tmp_path, monkeypatch, repo_root):
    monkeypatch.chdir(tmp_path)
    cfg = load_config(repo_root / "config.yaml")  # defaults filled, as the workflow has it
    Path("in.txt").write_text("x")
    Path("out.txt").write_text("y")
    smk = types.SimpleNamespace(rule="r", output=_NL(["out.txt"]), input=_NL(src="in.txt"),
                                params=_NL(), wildcards=_NL(), log=_NL(), config=cfg)
    record_snakemake_job(smk)
    rec = read_record("out.txt")
    assert rec["config_sha256"] == config_hash(cfg)
    saved = Path(rec["config_path"])
    assert saved == Path("results/config") / f"{rec['config_sha256']}.yaml"
    loaded = yaml.safe_load(saved.read_text())
    assert config_hash(loaded) == rec["config_sha256"]  # YAML round trip keeps the hash
    assert loaded["judges"]["panel"] == json.loads(json.dumps(cfg["judges"]["panel"]))


def test_cli_prints_config_by_hash_prefix(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    digest, _ = save_resolved_config({"seed": 7, "study_a": {"enabled": True}})
    assert cli_main(["config", digest[:10]]) == 0
    out = capsys.readouterr().out
    assert f"config_sha256: {digest}" in out and "seed: 7" in out
    assert cli_main(["config", digest, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["seed"] == 7
    assert cli_main(["config", "abcdef0123"]) == 1
    assert "no resolved config 'abcdef0123'" in capsys.readouterr().err


def test_tampered_config_is_refused(tmp_path):
    digest, path = save_resolved_config({"seed": 1}, store=tmp_path)
    path.write_text("seed: 2\n")
    with pytest.raises(ValueError, match="does not match"):
        find_resolved_config(digest, tmp_path)
