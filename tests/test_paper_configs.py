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

# an absolute path into a machine's workspace or home (paths in the repo are relative)
MACHINE_PATH = re.compile(r"(?<![\w.:/])/(?:work|home|root|Users|tmp)/")

API = {"openai", "gemini", "openai_compatible", "bedrock"}
# Paper B's eleven judges (its judge list) -> the panel entry configuring each
PAPER_B_JUDGES = {
    "Gemini-2.5-Flash": "gemini-25-flash", "Gemini-2.5-Pro": "gemini-25-pro",
    "Gemini-3-Flash": "gemini-3-flash", "Gemini-3-Pro": "gemini-3-pro",
    "GPT-4o": "gpt-4o-audio", "GPT-4o-mini": "gpt-4o-mini-audio", "Nova-2-Pro": "nova-2-pro",
    "Qwen2.5-Omni-7B": "qwen25-omni-7b", "Voxtral-Small-24B": "voxtral-small-24b",
    "DeSTA2.5-Audio": "desta25-audio", "Phi-4-MM": "phi-4-mm",
}


def _dry(exe, repo, work, overlay):
    cmd = [exe, "-s", str(repo / "Snakefile"), "--directory", str(work), "--cores", "2", "-n",
           "--configfile", str(repo / "config.yaml"), str(repo / "configs" / overlay)]
    env_keys = {"OPENAI_API_KEY": "", "GEMINI_API_KEY": "",  # a plan needs no keys
                "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_REGION": ""}
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
def test_paper_b_plans_its_corpora_and_eleven_judges(tmp_path, repo_root, snakemake_exe):
    counts, judges = _dry(snakemake_exe, repo_root, tmp_path, "paper_b.yaml")
    cfg = _cfg(repo_root, "paper_b.yaml")
    panel = cfg["judges"]["panel"]
    assert judges == set(cfg["judges"]["active"])
    lalms = {j for j in cfg["judges"]["active"] if panel[j]["provider"] in API}
    assert lalms == set(PAPER_B_JUDGES.values()), lalms  # the paper's eleven, each planned
    providers = {name: panel[j]["provider"] for name, j in PAPER_B_JUDGES.items()}
    assert providers["Nova-2-Pro"] == "bedrock" and providers["GPT-4o-mini"] == "openai"
    for name in ("Qwen2.5-Omni-7B", "Voxtral-Small-24B", "DeSTA2.5-Audio", "Phi-4-MM"):
        spec = panel[PAPER_B_JUDGES[name]]
        assert providers[name] == "openai_compatible"
        assert spec["audio_transport"] in ("audio_url", "input_audio")
        assert isinstance(spec["max_audio_inputs"], int) and spec["max_audio_inputs"] >= 1
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
    # the judge vLLM cannot serve is named with the reason and the alternative
    text = (repo_root / "configs" / "paper_b.yaml").read_text()
    assert "NOT servable by vLLM" in text and "DeSTA2.5-Audio" in text
    assert not MACHINE_PATH.search(text)  # paths inside the repo are relative
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
