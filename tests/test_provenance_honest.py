"""Honest provenance: `git_dirty` is true only when tracked files differ from HEAD,
and a workflow run on a clean checkout writes nothing outside ignored folders, so
its records say `git_dirty: False`."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from judgeaudit.provenance import RECORD_SUFFIX, git_state


def _git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture
def repo(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    r = tmp_path / "r"
    r.mkdir()
    _git(r, "init", "-q")
    (r / ".gitignore").write_text("/results/\n")
    (r / "tracked.txt").write_text("a\n")
    _git(r, "add", "-A")
    _git(r, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
    return r


def test_untracked_and_ignored_files_do_not_make_a_checkout_dirty(repo):
    assert git_state(repo)["git_dirty"] is False
    (repo / "results").mkdir()
    (repo / "results" / "out.tsv").write_text("x\n")  # ignored
    (repo / "benchmarks_new.tsv").write_text("x\n")  # untracked
    state = git_state(repo)
    assert state["git_dirty"] is False
    assert len(state["git_commit"]) == 40


def test_a_changed_tracked_file_makes_it_dirty(repo):
    (repo / "tracked.txt").write_text("b\n")
    assert git_state(repo)["git_dirty"] is True
    _git(repo, "add", "tracked.txt")  # staged counts too
    assert git_state(repo)["git_dirty"] is True


def test_outside_a_checkout_is_unknown(tmp_path):
    assert git_state(tmp_path)["git_dirty"] in (None, False)  # no checkout: None
    assert git_state(tmp_path / "missing")["git_commit"] is None


def test_no_rule_writes_into_a_tracked_folder(repo_root):
    """Every path a rule declares (output/log/benchmark) starts in a folder the
    project ignores (data/ results/ figures/ logs/ cache/)."""
    import re

    allowed = ("data/", "results/", "figures/", "logs/", "cache/", "{")
    bad = []
    for smk in sorted((repo_root / "rules").glob("*.smk")):
        text = smk.read_text()
        for m in re.finditer(r"^\s+(benchmark|log):\s*\n\s+f?\"([^\"]+)\"", text, re.M):
            if not m.group(2).startswith(allowed):
                bad.append((smk.name, m.group(1), m.group(2)))
    assert not bad, bad


TINY = {
    "datasets": {
        "synth_emotion": {"n_voices": 4, "n_sentences": 1, "n_repetitions": 1,
                          "subset_per_class": 1, "test_fraction": 0.5},
        "synth_language": {"n_voices": 2, "clips_per_voice": 2, "test_fraction": 0.5},
        "synth_speaker": {"n_voices": 6, "n_utterances": 2, "n_trials_per_split": 4},
        "synth_naturalness": {"n_voices": 2, "n_sentences": 1, "test_fraction": 0.5},
    },
    "specialists": {"emotion": {"feature_set": "eGeMAPSv02"}},
    "judges": {"active": ["label-reader", "first-slot"], "progress": False},
    "study_a": {"seeds": [1], "reference_seeds": [1], "conflict_seeds": [1],
                "language": {"per_class": 1}, "pairwise": {"n_pairs": 2},
                "bootstrap": {"n_boot": 20}},
    "study_b": {"enabled": False},
}


@pytest.mark.slow
def test_records_of_a_run_on_a_clean_clone_say_not_dirty(tmp_path, repo_root, snakemake_exe):
    """Clone HEAD of this checkout, run the tiny Study A metrics of one judge (the
    rule that used to write its benchmark into the tracked benchmarks/ folder):
    afterwards `git status` shows nothing, not even untracked files, and every
    record says git_dirty False with the clone's commit."""
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", "--no-hardlinks", str(repo_root), str(clone))
    head = _git(clone, "rev-parse", "HEAD").strip()
    tiny = tmp_path / "tiny.yaml"  # outside the clone
    tiny.write_text(yaml.safe_dump(TINY))
    env = dict(os.environ, PYTHONPATH=str(clone / "src"))
    cmd = [snakemake_exe, "-s", str(clone / "Snakefile"), "--directory", str(clone),
           "--cores", "2", "results/metrics/A/judges/label-reader.tsv",
           "--configfile", str(clone / "config.yaml"), str(tiny)]
    res = subprocess.run(cmd, cwd=clone, env=env, capture_output=True, text=True, timeout=1200)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert _git(clone, "status", "--porcelain") == ""  # nothing written outside ignored folders
    records = sorted(Path(clone).rglob("*" + RECORD_SUFFIX))
    assert len(records) >= 5
    for rec_path in records:
        code = json.loads(rec_path.read_text())["code"]
        assert code["git_dirty"] is False, rec_path
        assert code["git_commit"] == head, rec_path
    assert (clone / "logs" / "metrics" / "study_a_metrics_judge"
            / "label-reader.benchmark.tsv").exists()
