"""Issue 10: specialist per corpus, no leakage by construction, no silent fallback.

Unit checks of the refusals plus a real-layout corpus (RAVDESS layout made from real
EmoDB clips): the real-mode emotion specialist trains on that corpus's own train
actors, the default study subset comes only from held-out actors, and an
overlapping subset is refused with the clip, speaker and specialist named."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from _ravdess_emodb import ravdess_from_emodb

from judgeaudit.conditions.corpus import tag_corpus, trial_clips
from judgeaudit.config import validate_config
from judgeaudit.datasets import sources
from judgeaudit.datasets.real import ingest
from judgeaudit.specialists import SpecialistError, workflow
from judgeaudit.specialists.corpus import (
    LeakageError,
    check_applicable,
    check_no_leakage,
    check_study_clips,
    corpus_kind,
)
from judgeaudit.stats.corpus import attach_corpus, corpus_by_task

SYNTH_META = {"kind": "emotion", "backend": "sklearn", "version": "v",
              "corpus": "synth_emotion", "corpus_kind": "synthetic",
              "train_speakers": ["synth_v00", "synth_v01"]}


def test_corpus_kind_by_name():
    assert corpus_kind("synth_emotion") == "synthetic"
    assert corpus_kind("ravdess") == "real"
    assert corpus_kind("my_lab_corpus") == "real"


def test_synthetic_model_is_refused_on_real_speech_and_vice_versa():
    with pytest.raises(SpecialistError, match="fitted on the synthetic corpus 'synth_emotion'"
                       ".*cannot be applied to the real corpus 'ravdess'"):
        check_applicable(SYNTH_META, "ravdess", "emotion predictions")
    real = dict(SYNTH_META, corpus="ravdess", corpus_kind="real")
    with pytest.raises(SpecialistError, match="real corpus 'ravdess'.*synthetic corpus"):
        check_applicable(real, "synth_emotion", "x")
    check_applicable(SYNTH_META, "synth_counterfactual", "x")  # same kind: fine
    check_applicable(dict(SYNTH_META, corpus_kind="pretrained"), "ravdess", "x")  # Whisper etc.
    with pytest.raises(SpecialistError, match="records no training corpus"):
        check_applicable({"kind": "emotion", "backend": "sklearn", "version": "v"}, "ravdess",
                         "x")


def test_leakage_refusal_names_clip_speaker_and_specialist():
    clips = [("c1", "synth_v05", "synth_emotion"), ("c2", "synth_v01", "synth_emotion"),
             ("c3", "synth_v01", "other_corpus")]  # another corpus: not this model's speakers
    with pytest.raises(LeakageError) as err:
        check_no_leakage(clips, {"emotion@synth_emotion": SYNTH_META}, "study A emotion")
    msg = str(err.value)
    assert "1 study clip(s)" in msg
    assert "clip c2 (speaker synth_v01)" in msg and "emotion@synth_emotion" in msg
    assert "c1" not in msg and "c3" not in msg
    assert check_no_leakage(clips[:1], {"e": SYNTH_META}, "ok") == {"e": 1}
    pre = dict(SYNTH_META, corpus_kind="pretrained")
    assert check_no_leakage(clips, {"whisper": pre}, "ok") == {"whisper": 0}


def test_trials_carry_corpus_and_every_metric_row_names_it():
    trials = [{"study": "A", "task": "emotion", "condition": "audio_only", "trial_id": "x",
               "facts": {"clip_id": "c1"}},
              {"study": "A", "task": "pair_speaker", "condition": "native", "trial_id": "y",
               "facts": {"clip_a": "a", "clip_b": "b", "reference_clip": "r"}}]
    tagged = tag_corpus(trials[:1], "ravdess") + tag_corpus(trials[1:], "synth_speaker")
    assert tagged[0]["facts"]["corpus"] == "ravdess" and tagged[0]["trial_id"] != "x"
    assert trial_clips(tagged) == ["a", "b", "c1", "r"]
    corpora = corpus_by_task(tagged)
    assert corpora == {"emotion": "ravdess", "pair_speaker": "synth_speaker"}
    m = pd.DataFrame({"judge": ["j", "j"], "task": ["emotion", "pair_speaker"], "estimate": [1, 0]})
    out = attach_corpus(m, corpora)
    assert list(out.columns) == ["judge", "task", "corpus", "estimate"]
    assert list(out["corpus"]) == ["ravdess", "synth_speaker"]
    with pytest.raises(ValueError, match="more than one corpus"):
        corpus_by_task(tag_corpus(trials[:1], "ravdess") + tag_corpus(trials[:1], "synth_emotion"))
    with pytest.raises(ValueError, match="names no corpus"):
        corpus_by_task(trials)


def test_real_mode_fallback_is_flagged_and_warned(caplog):
    attrs = {"emotion": ("ravdess", "synth_emotion"), "language": ("fleurs", "synth_language"),
             "cleanness": (None, "synth_naturalness")}
    frame = sources.corpus_sources(attrs, {"ravdess": "local_dir", "fleurs": "synthetic"},
                                   {"emotion": "ravdess", "language": "synth_language",
                                    "cleanness": "synth_naturalness"})
    assert dict(zip(frame["attribute"], frame["fallback"], strict=True)) == {
        "cleanness": True, "emotion": False, "language": True}
    with caplog.at_level("WARNING"):
        msgs = sources.warn_fallbacks(frame)
    assert len(msgs) == 2 and all("REAL-MODE FALLBACK" in r.message for r in caplog.records)
    assert "WARNING: 2 attribute(s)" in sources.markdown(frame)
    synthetic_run = sources.corpus_sources(attrs, {"ravdess": "synthetic", "fleurs": "synthetic"},
                                           {"emotion": "synth_emotion",
                                            "language": "synth_language",
                                            "cleanness": "synth_naturalness"})
    assert not synthetic_run["fallback"].any()  # the embedded default is not a fallback


@pytest.fixture(scope="module")
def ravdess_like(emodb_dir, tmp_path_factory):
    """RAVDESS-layout copy of EmoDB ingested with the default config (held-out subset)."""
    tmp = tmp_path_factory.mktemp("rav")
    root = ravdess_from_emodb(emodb_dir, tmp / "RAVDESS", per_cell=2)

    def run(**over):
        cfg = validate_config({"datasets": {"ravdess": {
            "source": "local_dir", "local_dir": str(root), "check_complete": False,
            "subset_per_class": 2, **over}}})["datasets"]["ravdess"]
        out = tmp / "data" / f"v{len(over)}" / "ravdess"  # inside the audio roots (data/)
        written = ingest("ravdess", root, out, cfg, seed=7, cache_dir=tmp / "cache",
                         workdir=tmp)
        return Path(written["manifest.tsv"])

    return tmp, run


def test_real_layout_specialist_trains_on_own_actors_and_leakage_is_refused(ravdess_like,
                                                                           monkeypatch):
    tmp, run = ravdess_like
    monkeypatch.chdir(tmp)  # manifests name audio relative to the workdir, as in a run
    manifest = run()  # defaults: subset_split test
    frame = pd.read_csv(manifest, sep="\t", dtype=str)
    train_actors = set(frame.loc[frame["split"] == "train", "speaker"])
    subset = frame[frame["subset"] == "1"]
    assert len(subset) == 14 and set(subset["split"]) == {"test"}  # 7 EmoDB emotions x 2
    cfg = {"backend": "sklearn", "feature_set": "eGeMAPSv02", "model": "logreg",
           "c_grid": [0.01]}
    meta = workflow.train("emotion", manifest, cfg, tmp / "model", cache_dir=tmp / "cache",
                          corpus="ravdess")
    assert meta["corpus"] == "ravdess" and meta["corpus_kind"] == "real"
    assert set(meta["train_speakers"]) == train_actors
    on_disk = json.loads((tmp / "model" / "model.json").read_text())
    assert on_disk["train_speakers"] == meta["train_speakers"]
    pred = workflow.predict("emotion", tmp / "model" / "model.json", manifest,
                            cache_dir=tmp / "cache", corpus="ravdess")
    assert len(pred) == len(frame)
    with pytest.raises(SpecialistError, match="cannot be applied to the synthetic corpus"):
        workflow.predict("emotion", tmp / "model" / "model.json", manifest, corpus="synth_emotion")
    model = {"emotion@ravdess": str(tmp / "model" / "model.json")}
    # the default held-out subset passes ...
    assert check_study_clips(subset["clip_id"], str(manifest), "ravdess", model, "A") == {
        "emotion@ravdess": 14}
    # ... a subset over every actor (as in the paper) is refused, naming clip and speaker
    leaky = pd.read_csv(run(subset_split="all"), sep="\t", dtype=str)
    leaky_subset = leaky[leaky["subset"] == "1"]
    bad_rows = leaky_subset[leaky_subset["speaker"].isin(train_actors)]
    assert len(bad_rows)
    with pytest.raises(LeakageError) as err:
        check_study_clips(leaky_subset["clip_id"], str(manifest), "ravdess", model,
                          "study A emotion/blueprint")
    assert any(f"clip {r.clip_id} (speaker {r.speaker})" in str(err.value)
               for r in bad_rows.itertuples())
    assert "emotion@ravdess" in str(err.value)


def _accuracy_script():
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "scripts" / "specialists_accuracy.py"
    spec = importlib.util.spec_from_file_location("specialists_accuracy_script", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_accuracy_rows_per_specialist_and_corpus_with_their_own_targets(tmp_path):
    """One row per (specialist, corpus); a real corpus gets the real target (0.58), not
    the synthetic 0.90."""
    mod = _accuracy_script()
    inp, uses = {}, []
    for corpus, kind_of_corpus, target in (("synth_emotion", "synthetic", 0.90),
                                           ("ravdess", "real", 0.58)):
        m = pd.DataFrame({"clip_id": [f"{corpus}_{i}" for i in range(4)],
                          "path": "x.wav", "sha256": "0", "speaker": ["a", "a", "b", "b"],
                          "split": "test", "emotion": ["angry", "sad", "angry", "sad"]})
        p = m[["clip_id", "split"]].assign(label=["angry", "sad", "sad", "sad"], status="ok",
                                           version="v", score_angry=0.5, score_sad=0.5)
        key = f"emotion__{corpus}"
        m.to_csv(tmp_path / f"{corpus}_m.tsv", sep="\t", index=False)
        p.to_csv(tmp_path / f"{corpus}_p.tsv", sep="\t", index=False)
        inp[f"{key}__manifest"] = str(tmp_path / f"{corpus}_m.tsv")
        inp[f"{key}__pred"] = str(tmp_path / f"{corpus}_p.tsv")
        uses.append({"kind": "emotion", "dataset": corpus, "corpus_kind": kind_of_corpus,
                     "key": key, "cfg": {"target": target}})
    rows = [dict(r, corpus_kind=u["corpus_kind"]) for u in uses
            for r in mod.rows_for(u, inp, {})]
    assert [(r["dataset"], r["corpus_kind"], r["target"], r["estimate"]) for r in rows] == [
        ("synth_emotion", "synthetic", 0.90, 0.75), ("ravdess", "real", 0.58, 0.75)]
    assert [r["meets_target"] for r in rows] == [False, True]


def test_real_overlay_dag_fits_one_specialist_per_corpus(tmp_path, repo_root, snakemake_exe):
    """Dry run with a RAVDESS overlay: Study A's emotion specialist is fitted on
    RAVDESS, Study B keeps its own on synth_emotion, and every fallback is a WARNING."""
    import subprocess

    import yaml

    from judgeaudit.testing.real_fixtures import ravdess_tree

    copy = ravdess_tree(tmp_path / "R", actors=(1, 2, 3, 4, 5, 6), seconds=0.05)
    (tmp_path / "o.yaml").write_text(yaml.safe_dump({"datasets": {"ravdess": {
        "source": "local_dir", "local_dir": str(copy), "check_complete": False,
        "subset_per_class": 2}}}))
    res = subprocess.run(
        [snakemake_exe, "-s", str(repo_root / "Snakefile"), "--directory", str(tmp_path),
         "-n", "--cores", "1", "--configfile", str(repo_root / "config.yaml"),
         str(tmp_path / "o.yaml"), "--", "results/tables/specialist_accuracy.tsv",
         "results/trials/A/emotion/blueprint.jsonl", "results/conditions/B/single/renderings.tsv"],
        capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    out = res.stdout
    for model in ("emotion/ravdess/model.json", "emotion/synth_emotion/model.json",
                  "language/synth_language/model.json"):
        assert f"results/specialists/{model}" in out, model
    render = out[out.index("rule study_b_render:"):].split("\n\n")[0]
    assert "results/specialists/emotion/synth_emotion/model.json" in render
    assert "emotion/ravdess" not in render
    trials = out[out.index("rule study_a_trials_classification:"):].split("\n\n")[0]
    assert "results/specialists/emotion/ravdess/model.json" in trials
    for attribute in ("language", "speaker", "naturalness", "cleanness"):
        assert f"WARNING: REAL-MODE FALLBACK: attribute {attribute!r}" in res.stderr
    assert "attribute 'emotion'" not in res.stderr
