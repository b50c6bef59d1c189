"""Study B workflow wiring: a change to one cue wording re-runs only the trial
shards, responses and outputs that use that cue (Snakemake dry-run job lists on a
tiny config in a temp copy of the workflow)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

TARGETS = ["results/tables/study_b_accuracy.tsv", "results/tables/study_b_protocol_gap.tsv",
           "results/tables/study_b_potemkin.tsv", "results/tables/study_b_balance.tsv",
           "figures/study_b_states.png", "figures/study_b_heatmap.png"]
CONFIG = """\
study_a: {enabled: false}
judges:
  panel:
    label-reader: {provider: label_reader}
study_b:
  judges: [label-reader]
  tasks:
    single: {n_items: 2, cues: [none, soft, hard]}
    positional: {n_items: 2, cues: [none, transition]}
    conversation: {enabled: false}
"""


def _smk(exe, repo, work, *args):
    cmd = [exe, "-s", str(repo / "Snakefile"), "--directory", str(work), "--cores", "1",
           *args]
    res = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return res.stdout + res.stderr


def _jobs(text):
    """(rule, output) of every output of every job in a dry-run listing."""
    out = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", text):
        m = re.match(r"(?:local)?rule (\w+):", block)
        o = re.search(r"\n\s+output: ([^\n]+)", block)
        if m and o:
            out += [(m.group(1), f.strip()) for f in o.group(1).split(", ")]
    return out


def _copy_source(repo_root, dest):
    """The workflow's source, as a clone holds it, under `dest`."""
    dest.mkdir()
    for name in ("Snakefile", "rules", "schemas", "scripts", "templates", "profiles", "envs"):
        src = repo_root / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, dest / name)
    shutil.copytree(repo_root / "src" / "judgeaudit", dest / "src" / "judgeaudit",
                    ignore=shutil.ignore_patterns("__pycache__"))


def _pretend_run(exe, repo, work, targets):
    """Pretend a full run happened: every file of the DAG exists, touched in DAG
    order, and a dry run then has no job."""
    summary = _smk(exe, repo, work, "--summary", *targets)
    for line in summary.splitlines():
        parts = line.split("\t")
        if len(parts) < 3 or parts[0] == "output_file":
            continue
        path = work / parts[0]
        if parts[2] == "study_b_render" and path.name == "audio":
            path.mkdir(parents=True, exist_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
    _smk(exe, repo, work, "--touch", *targets)
    assert _jobs(_smk(exe, repo, work, "-n", *targets)) == []


@pytest.mark.slow
def test_cue_change_reruns_only_its_shards(tmp_path, repo_root, snakemake_exe):
    repo, work = tmp_path / "repo", tmp_path / "work"
    _copy_source(repo_root, repo)
    work.mkdir()
    (work / "config.yaml").write_text(CONFIG)
    _pretend_run(snakemake_exe, repo, work, TARGETS)

    (repo / "templates/study_b/cues/soft.txt").write_text("Listen to the voice, please.\n")
    jobs = _jobs(_smk(snakemake_exe, repo, work, "-n", *TARGETS))
    rules = {r for r, _ in jobs}
    trials = sorted(o for r, o in jobs if r == "study_b_trials")
    responses = sorted(o for r, o in jobs if r.startswith("judge_shards"))
    # the text-only baseline T (text-soft) carries the soft cue too
    assert trials == ["results/trials/B/single/pairwise-soft.jsonl",
                      "results/trials/B/single/pointwise-soft.jsonl",
                      "results/trials/B/single/text-soft.jsonl"]
    assert responses == ["results/responses/label-reader/B/single/pairwise-soft.jsonl",
                         "results/responses/label-reader/B/single/pointwise-soft.jsonl",
                         "results/responses/label-reader/B/single/text-soft.jsonl"]
    # outputs that aggregate the soft cells re-run; probes, states, cue dependence
    # (hard vs none), balance and renderings do not
    assert {"study_b_accuracy", "study_b_protocol_gap"} <= rules
    assert ("study_b_table", "results/tables/study_b_accuracy.tsv") in jobs
    assert not rules & {"study_b_states", "study_b_cue_dependence", "study_b_balance",
                        "study_b_render", "study_b_items"}
    rendered = {o for r, o in jobs if r in ("study_b_table", "study_b_figure")}
    assert not rendered & {"figures/study_b_states.png", "results/tables/study_b_potemkin.tsv",
                           "results/tables/study_b_balance.tsv"}
    assert all("soft" in o for r, o in jobs if r.startswith(("study_b_score", "judge_shards")))

    # the transition cue touches only positional shards
    (repo / "templates/study_b/cues/transition.txt").write_text("Where does it change?\n")
    jobs = _jobs(_smk(snakemake_exe, repo, work, "-n", *TARGETS))
    trials = sorted(o for r, o in jobs if r == "study_b_trials")
    assert "results/trials/B/positional/pointwise-transition.jsonl" in trials
    assert all("/positional/" in t and "transition" in t or "soft" in t for t in trials)


@pytest.mark.slow
def test_a_moved_run_folder_reruns_nothing(tmp_path, repo_root, snakemake_exe):
    """A run folder holding its own source (the usual clone) is copied elsewhere: no
    input or param names the old absolute path, so the dry run there has no job."""
    first, moved = tmp_path / "first", tmp_path / "moved"
    _copy_source(repo_root, first)
    (first / "config.yaml").write_text(CONFIG.replace("study_a: {enabled: false}\n", ""))
    targets = [*TARGETS, "results/trials/A/emotion/blueprint.jsonl"]
    _pretend_run(snakemake_exe, first, first, targets)
    shutil.copytree(first, moved, symlinks=True)
    shutil.rmtree(first)
    assert _jobs(_smk(snakemake_exe, moved, moved, "-n", *targets)) == []
