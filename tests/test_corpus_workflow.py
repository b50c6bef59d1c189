"""Issue 10 end to end on the shared tiny run (the RAVDESS overlay runs in a clone):

- every Study A/B table (TSV and Markdown) has a `corpus` column;
- enabling a RAVDESS overlay (a RAVDESS-layout copy of real EmoDB clips) retrains
  Study A's emotion specialist on RAVDESS, yet schedules no Study B job and leaves
  every Study B table byte-identical (Study B has its own emotion specialist, for
  its TTS filter and its embedded listener);
- the real-mode run names its synthetic fallbacks (WARNING + corpus_sources.tsv);
- a study subset over training actors is refused by the leakage check."""

from __future__ import annotations

import re

import pandas as pd
import pytest
import yaml
from _ravdess_emodb import ravdess_from_emodb

# Study A only, to keep the RAVDESS rerun small (Study B's settings stay the tiny run's)
STUDY_A_ONLY = {"judges": ["label-reader"], "pairwise": {"criteria": ["emotion"]}}
STUDY_A = ["study_a_table2_blueprint", "study_a_table3_reference", "study_a_table4_conflict",
           "study_a_table5_pairwise", "study_a_contrasts", "study_a_planted"]
STUDY_B = ["study_b_accuracy", "study_b_protocol_gap", "study_b_balance", "study_b_potemkin"]
TARGETS = ([f"results/tables/{t}.tsv" for t in STUDY_A + STUDY_B]
           + ["figures/study_b_states.png", "figures/study_b_heatmap.png",
              "results/tables/corpus_sources.tsv"])


def _run(run, tmp_path, overlay, *extra, check=True):
    path = tmp_path / "overlay.yaml"
    path.write_text(yaml.safe_dump(overlay))
    res = run.run(*TARGETS, *extra, overlays=[path])
    if check and res.returncode != 0:
        raise AssertionError(res.stdout[-3000:] + res.stderr[-5000:])
    return res


def _study_b_bytes(work):
    out = {}
    for t in STUDY_B:
        for ext in ("tsv", "md", "tex"):
            out[f"{t}.{ext}"] = (work / "results" / "tables" / f"{t}.{ext}").read_bytes()
    for f in ("study_b_states", "study_b_heatmap"):
        out[f] = (work / "figures" / f"{f}.png").stat().st_size
    for p in sorted((work / "results" / "metrics" / "B").rglob("*.tsv")):
        out[str(p.relative_to(work))] = p.read_bytes()
    return out


@pytest.mark.slow
def test_corpus_column_study_b_independence_and_leakage(tiny_run, tmp_path, emodb_dir):
    run = tiny_run.clone(tmp_path / "w")
    work = run.root

    # 1. every Study A/B table names its corpus (tidy TSV column; rendered Markdown column)
    for t in STUDY_A + STUDY_B:
        tsv = pd.read_csv(work / "results" / "tables" / f"{t}.tsv", sep="\t")
        assert "corpus" in tsv.columns, t
        if len(tsv):
            assert tsv["corpus"].notna().all(), t
        md = (work / "results" / "tables" / f"{t}.md").read_text()
        assert re.search(r"^\| .*\bcorpus\b", md, re.M), t
    a2 = pd.read_csv(work / "results" / "tables" / "study_a_table2_blueprint.tsv", sep="\t")
    assert dict(a2.groupby("task")["corpus"].first()) == {"emotion": "synth_emotion",
                                                          "language": "synth_language"}
    acc = pd.read_csv(work / "results" / "tables" / "study_b_accuracy.tsv", sep="\t")
    # single-turn items come from the counterfactual corpus, positional ones from dialogues
    assert acc.groupby("task")["corpus"].nunique().eq(1).all()
    assert dict(acc.groupby("task")["corpus"].first()) == {
        "single": "synth_counterfactual", "positional": "synth_dialogue"}
    sources0 = pd.read_csv(work / "results" / "tables" / "corpus_sources.tsv", sep="\t")
    assert not sources0["fallback"].any()  # the synthetic default is not a fallback
    before = _study_b_bytes(work)

    # 2. RAVDESS overlay for Study A's emotion attribute
    rav = ravdess_from_emodb(emodb_dir, tmp_path / "RAVDESS", per_cell=2)
    overlay = {"study_a": STUDY_A_ONLY, "datasets": {"ravdess": {
        "source": "local_dir", "local_dir": str(rav), "check_complete": False,
        "subset_per_class": 1}}}
    dry = _run(run, tmp_path, overlay, "-n")
    jobs = re.findall(r"^(?:local)?rule (\S+):", dry.stdout, re.M)
    assert "ingest_ravdess" in jobs and "specialists_train" in jobs
    assert not [j for j in jobs if j.startswith("study_b")], sorted(set(jobs))
    assert "B/" not in " ".join(re.findall(r"output: (results/responses/\S+)", dry.stdout))
    assert "WARNING: REAL-MODE FALLBACK: attribute 'language'" in dry.stderr
    res = _run(run, tmp_path, overlay)
    assert _study_b_bytes(work) == before  # Study B untouched by Study A's corpus choice

    a2 = pd.read_csv(work / "results" / "tables" / "study_a_table2_blueprint.tsv", sep="\t")
    assert dict(a2.groupby("task")["corpus"].first()) == {"emotion": "ravdess",
                                                          "language": "synth_language"}
    model = (work / "results" / "specialists" / "emotion" / "ravdess" / "model.json")
    assert '"corpus_kind": "real"' in model.read_text()
    sources1 = pd.read_csv(work / "results" / "tables" / "corpus_sources.tsv", sep="\t")
    flags = dict(zip(sources1["attribute"], sources1["fallback"], strict=True))
    assert flags["emotion"] is False or not flags["emotion"]
    assert flags["language"] and flags["speaker"] and flags["cleanness"]
    log = (work / "logs" / "datasets" / "corpus_sources.log").read_text()
    assert "WARNING" in log and "REAL-MODE FALLBACK" in log
    assert "leakage check" in (work / "logs" / "conditions" / "study_a_trials_classification"
                               / "emotion_blueprint.log").read_text()
    del res

    # 3. a subset drawn over every actor (training actors included) is refused
    leaky = dict(overlay, datasets={**overlay["datasets"], "ravdess": {
        **overlay["datasets"]["ravdess"], "subset_split": "all"}})
    bad = _run(run, tmp_path, leaky, "--keep-going", check=False)
    assert bad.returncode != 0
    logs = "".join(p.read_text() for p in (work / "logs" / "conditions").rglob("emotion_*.log"))
    assert re.search(r"clip ravdess_\S+ \(speaker ravdess_actor\d+\) is in the training split "
                     r"of the emotion@ravdess specialist", logs + bad.stderr), bad.stderr[-3000:]
