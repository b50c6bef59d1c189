"""Smoke run of the real workflow (`rule all`, every stage) on a tiny config in a
temp directory: every declared output exists and has its provenance record, a
second dry run has nothing to do, and `judgeaudit trace` walks a table back to
its sources."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from judgeaudit.provenance import record_path

TINY = {
    "datasets": {
        "synth_emotion": {"n_voices": 4, "n_sentences": 1, "n_repetitions": 1,
                          "subset_per_class": 1, "test_fraction": 0.5},
        "synth_language": {"n_voices": 2, "clips_per_voice": 2, "test_fraction": 0.5},
        "synth_speaker": {"n_voices": 6, "n_utterances": 2, "n_trials_per_split": 4},
        "synth_naturalness": {"n_voices": 2, "n_sentences": 1, "test_fraction": 0.5},
        "synth_counterfactual": {"n_sentences": 4},
        "synth_dialogue": {"n_dialogues": 2, "n_turns": 6, "shift_turns": [2, 4]},
    },
    "specialists": {"emotion": {"feature_set": "eGeMAPSv02"},
                    "language": {"feature_set": "eGeMAPSv02"}},
    "judges": {"active": ["listener", "label-reader", "first-slot", "sim-mixed"],
               "progress": False},
    "study_a": {"seeds": [1], "reference_seeds": [1], "conflict_seeds": [1],
                "language": {"per_class": 1}, "pairwise": {"n_pairs": 2},
                "bootstrap": {"n_boot": 20}},
    "study_b": {"judges": ["listener", "label-reader", "sim-mixed"],
                "tasks": {"single": {"n_items": 2, "cues": ["none", "hard"]},
                          "positional": {"n_items": 2, "cues": ["none", "transition"]},
                          "conversation": {"enabled": False}},
                "rendering": {"k_candidates": 1}},
    "validation": {"n_seeds": 3, "n_boot": 100, "truth_clusters": 1000,
                   "scenarios": ["pairs_locker", "studyb_single"]},
}


def _snakemake(exe, repo, work, *args):
    cmd = [exe, "-s", str(repo / "Snakefile"), "--directory", str(work), "--cores", "2",
           *args, "--configfile", str(repo / "config.yaml"), str(work / "tiny.yaml")]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=2400)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-6000:]
    return res.stdout + res.stderr


@pytest.mark.slow
def test_full_workflow_on_tiny_config(tmp_path, repo_root, snakemake_exe):
    work = tmp_path / "w"
    work.mkdir()
    (work / "tiny.yaml").write_text(yaml.safe_dump(TINY))
    _snakemake(snakemake_exe, repo_root, work)

    # every output Snakemake knows about exists and has a provenance record
    summary = _snakemake(snakemake_exe, repo_root, work, "--summary")
    outputs = [line.split("\t")[0] for line in summary.splitlines()
               if "\t" in line and not line.startswith("output_file")]
    assert len(outputs) > 50, summary[-2000:]
    missing = [o for o in outputs if not (work / o).exists()]
    no_record = [o for o in outputs if not (work / record_path(o)).exists()]
    assert not missing, missing[:10]
    assert not no_record, no_record[:10]
    rec = json.loads((work / record_path("results/tables/study_a_table2_blueprint.tsv"))
                     .read_text())
    assert rec["rule"] and rec["inputs"] and rec["config_sha256"] and rec["code"]["package_version"]

    # tables and figures of both studies and the specialists
    for table in ("specialist_accuracy", "study_a_table3_reference", "study_b_accuracy",
                  "estimator_validation"):
        assert (work / "results" / "tables" / f"{table}.tsv").stat().st_size > 0
    assert (work / "figures" / "study_b_states.png").stat().st_size > 1000
    report = (work / "results" / "report" / "index.html").read_text()
    assert report.count("provenance record") >= 10 and "study_b_accuracy" in report
    assert "report/index.html" in (work / "results" / "report.html").read_text()  # redirect

    # nothing left to do
    dry = _snakemake(snakemake_exe, repo_root, work, "-n")
    assert not re.search(r"^rule (?!all:)\w+:", dry, re.M), dry[-3000:]

    # a reviewer traces a number back to rules, inputs and code
    trace = subprocess.run(
        [str(Path(sys.executable).parent / "judgeaudit"), "trace",
         "results/tables/study_a_table3_reference.tsv"],
        cwd=work, capture_output=True, text=True, timeout=120,
    )
    assert trace.returncode == 0, trace.stderr
    for rule in ("study_a_tables", "judge_shards_a_cls", "synth_emotion"):
        assert f"rule {rule}" in trace.stdout, trace.stdout[:3000]
