"""The paper-size configs plan without error on a machine without their data or keys
(`snakemake -n --configfile config.yaml configs/paper_X.yaml`): the plan downloads
and ingests each paper's corpora and judges every trial shard with every judge
the config activates, in grouped judge jobs. configs/scale.yaml plans offline."""

from __future__ import annotations

import os
import re
import subprocess

import pytest
import yaml

API = {"openai", "gemini", "openai_compatible"}


def _dry(exe, repo, work, overlay):
    cmd = [exe, "-s", str(repo / "Snakefile"), "--directory", str(work), "--cores", "2", "-n",
           "--configfile", str(repo / "config.yaml"), str(repo / "configs" / overlay)]
    env_keys = {"OPENAI_API_KEY": "", "GEMINI_API_KEY": ""}  # a plan needs no keys
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                         env={**os.environ, **env_keys})
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-4000:]
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", out.split("Job stats:")[1], re.M))
    judges = set(re.findall(r"wildcards: judge=([^,\n]+)", out))
    return {k: int(v) for k, v in counts.items()}, judges


def _cfg(repo, overlay):
    return yaml.safe_load((repo / "configs" / overlay).read_text())


@pytest.mark.slow
def test_paper_a_plans_its_corpora_and_six_judges(tmp_path, repo_root, snakemake_exe):
    counts, judges = _dry(snakemake_exe, repo_root, tmp_path, "paper_a.yaml")
    cfg = _cfg(repo_root, "paper_a.yaml")
    panel = cfg["judges"]["panel"]
    lalms = [j for j in cfg["judges"]["active"] if panel[j]["provider"] in API]
    assert len(lalms) == 6, lalms                      # the paper's six judges
    assert judges == set(cfg["judges"]["active"])      # every one is queried
    for corpus in ("ravdess", "fleurs", "bvcc", "voxceleb1"):
        assert counts[f"download_{corpus}"] == 1 and counts[f"ingest_{corpus}"] == 1
    assert counts["real_degraded"] == 1                # cleanness pairs on real speech
    assert counts["judge_preflight"] == 1              # the budget gate before any call
    # grouped: one job per judge x Study A task (2 classification + 4 pair criteria)
    n = len(cfg["judges"]["active"])
    assert counts["judge_shards_a_cls"] == 2 * n and counts["judge_shards_a_pair"] == 4 * n
    assert not any(k.startswith(("study_b", "judge_shards_b")) for k in counts)


@pytest.mark.slow
def test_paper_b_plans_its_corpora_and_judges(tmp_path, repo_root, snakemake_exe):
    counts, judges = _dry(snakemake_exe, repo_root, tmp_path, "paper_b.yaml")
    cfg = _cfg(repo_root, "paper_b.yaml")
    assert judges == set(cfg["judges"]["active"])
    for corpus in ("emocf", "od3"):
        assert counts[f"download_{corpus}"] == 1 and counts[f"ingest_{corpus}"] == 1
    tasks = cfg["study_b"]["tasks"]
    assert (tasks["single"]["n_items"], tasks["positional"]["n_items"],
            tasks["conversation"]["n_items"]) == (189, 500, 500)
    # one job per judge x task x cue, plus one for the two probes of each task
    n = len(cfg["judges"]["active"])
    groups = sum(len(t["cues"]) + 1 for t in tasks.values())
    assert counts["judge_shards_b_cue"] + counts["judge_shards_b_probes"] == n * groups
    assert counts["study_b_score"] + counts["study_b_score_probes"] == n * groups
    # every named judge the project cannot call is listed with its reason
    text = (repo_root / "configs" / "paper_b.yaml").read_text()
    assert "Nova-2-Pro" in text and "NOT CONFIGURED" in text
    assert not any(k.startswith(("study_a", "judge_shards_a")) for k in counts)


@pytest.mark.slow
def test_scale_config_plans_offline(tmp_path, repo_root, snakemake_exe):
    counts, judges = _dry(snakemake_exe, repo_root, tmp_path, "scale.yaml")
    assert not any(k.startswith(("download_", "ingest_")) for k in counts)
    assert "judge_preflight" not in counts             # embedded judges only
    cfg = _cfg(repo_root, "scale.yaml")
    base = yaml.safe_load((repo_root / "config.yaml").read_text())
    panel = {**base["judges"]["panel"], **cfg["judges"]["panel"]}
    assert len(cfg["study_a"]["judges"]) == 6 and len(cfg["study_b"]["judges"]) == 11
    assert judges == set(cfg["study_a"]["judges"]) | set(cfg["study_b"]["judges"])
    assert not {panel[j]["provider"] for j in judges} & API
