"""Specialists: fit on the train split only, load(kind, path), audio API, memo,
vocabulary errors, adapters' mapping table and missing-model errors, evaluation."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from judgeaudit import specialists
from judgeaudit.features import extract as fx
from judgeaudit.features.audio import to_wav_bytes
from judgeaudit.io import sha256_bytes
from judgeaudit.specialists import adapters, evaluate, single, workflow
from judgeaudit.specialists.base import ModelMissingError, SpecialistError
from judgeaudit.specialists.classifier import FeatureClassifier
from judgeaudit.testing.toyaudio import voice
from judgeaudit.vocab.labels import EMOTIONS

SR = 16000
# toy "emotions" rendered by prosody, the way the synthetic corpus does it
STYLES = {
    "neutral": dict(f0_mul=1.0, f0_range=0.04, level_db=-24, syllable_rate=4.0),
    "angry": dict(f0_mul=1.5, f0_range=0.30, level_db=-10, syllable_rate=5.5),
    "sad": dict(f0_mul=0.85, f0_range=0.02, level_db=-34, syllable_rate=2.5),
}
SPEAKERS = {f"spk{i}": (100 + 12 * i, 0.9 + 0.05 * i) for i in range(6)}
TEST_SPEAKERS = {"spk1", "spk4"}


def _corpus(root, label_col="emotion", labels=STYLES, speakers=SPEAKERS, reps=3):
    rows = []
    for spk, (f0, shift) in speakers.items():
        for lab, st in labels.items():
            for r in range(reps):
                x = voice(f0=f0 * st["f0_mul"], f0_range=st["f0_range"], level_db=st["level_db"],
                          syllable_rate=st["syllable_rate"], formant_shift=shift,
                          duration_s=1.5, seed=hash((spk, lab, r)) % 1000)
                data = to_wav_bytes(x, SR)
                name = f"{spk}_{lab}_{r}"
                (root / f"{name}.wav").write_bytes(data)
                rows.append({"clip_id": name, "path": f"{name}.wav", "sha256": sha256_bytes(data),
                             "speaker": spk, "split": "test" if spk in TEST_SPEAKERS else "train",
                             label_col: lab})
    frame = pd.DataFrame(rows)
    frame.to_csv(root / "manifest.tsv", sep="\t", index=False)
    return root / "manifest.tsv"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return _corpus(tmp_path_factory.mktemp("emo"))


CFG = {"backend": "sklearn", "feature_set": "eGeMAPSv02", "model": "logreg", "c_grid": [0.1, 1.0]}


@pytest.fixture(scope="module")
def trained(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("model")
    meta = workflow.train("emotion", corpus, CFG, out, cache_dir=out / "cache", n_jobs=1)
    return out, meta


def test_no_test_speaker_reaches_training(corpus, tmp_path, monkeypatch):
    seen = []
    real = fx.extract_table

    def spy(clips, *a, **k):
        seen.extend(clips["clip_id"])
        return real(clips, *a, **k)

    monkeypatch.setattr(single, "extract_table", spy)  # features_for lives in single
    meta = workflow.train("emotion", corpus, CFG, tmp_path, n_jobs=1)
    manifest = pd.read_csv(corpus, sep="\t")
    test_clips = set(manifest.loc[manifest.split == "test", "clip_id"])
    assert seen and not (set(seen) & test_clips)
    assert not (set(meta["train_speakers"]) & TEST_SPEAKERS)
    assert not (set(meta["train_clips"]) & test_clips)


def test_leaking_split_is_refused(corpus, tmp_path):
    m = pd.read_csv(corpus, sep="\t")
    m.loc[m.index[0], "split"] = "test"  # spk0 now in both splits
    m.to_csv(tmp_path / "manifest.tsv", sep="\t", index=False)
    with pytest.raises(SpecialistError, match="both train and test"):
        workflow.train("emotion", tmp_path / "manifest.tsv", CFG, tmp_path / "out")


def test_label_outside_vocabulary_is_an_error(tmp_path):
    labels = {"neutral": STYLES["neutral"], "bored": STYLES["sad"]}
    manifest = _corpus(tmp_path, labels=labels, reps=1)
    with pytest.raises(SpecialistError, match="bored"):
        workflow.train("emotion", manifest, CFG, tmp_path / "out")


def test_predict_audio_reads_the_feature_cache_extract_table_filled(trained, corpus, tmp_path,
                                                                     monkeypatch):
    """A judge's specialist (feature_cache_dir set) reads the per-clip entry
    specialists_predict's extract_table wrote for the same bytes: exactly the values
    it would compute, so the prediction is the same, and nothing is extracted again."""
    out, _ = trained
    model = FeatureClassifier.load(out / "model.json")
    wav = (corpus.parent / "spk4_sad_2.wav").read_bytes()
    fresh = model.predict_audio(wav)
    frame = workflow.read_manifest(corpus)
    fx.extract_table(frame[frame["clip_id"] == "spk4_sad_2"], model.feature_set, tmp_path, 1,
                     workflow.base_dirs(corpus), model.screen_cfg)
    cached = FeatureClassifier.load(out / "model.json")
    cached.feature_cache_dir = str(tmp_path)
    monkeypatch.setattr(fx, "featurize_bytes", lambda *a: pytest.fail("recomputed"))
    assert cached.predict_audio(wav) == fresh
    monkeypatch.undo()
    # a clip not in the cache is computed once and stored for the next job
    other = (corpus.parent / "spk1_angry_1.wav").read_bytes()
    again = FeatureClassifier.load(out / "model.json")
    again.feature_cache_dir = str(tmp_path)
    assert again.predict_audio(other) == model.predict_audio(other)
    entry = fx.FeatureCache(tmp_path, model.feature_set, model.screen_cfg).path(
        sha256_bytes(other))
    assert entry.exists()


def test_load_predict_audio_and_memo(trained, corpus, monkeypatch):
    out, meta = trained
    model = specialists.load("emotion", out / "model.json")
    assert specialists.load("emotion", out) is model  # memoised load, folder path works
    wav = (corpus.parent / "spk1_angry_0.wav").read_bytes()
    pred = model.predict_audio(wav)
    assert pred.label in model.classes and pred.version == meta["version"]
    assert abs(sum(pred.scores.values()) - 1) < 1e-6 and pred.status == "ok"
    import judgeaudit.specialists.classifier as clf

    monkeypatch.setattr(clf, "featurize_cached", lambda *a: pytest.fail("not memoised"))
    assert model.predict_audio(wav) == pred
    silent = to_wav_bytes(np.zeros(SR, np.float32), SR)
    monkeypatch.undo()
    p = model.predict_audio(silent)
    assert p.status == "no_speech" and p.excluded and p.label == "" and p.scores == {}
    with pytest.raises(SpecialistError, match="'language' specialist|not 'language'|holds"):
        specialists.load("language", out / "model.json")


def test_held_out_accuracy_and_table(trained, corpus, tmp_path):
    out, _ = trained
    pred = workflow.predict("emotion", out / "model.json", corpus, cache_dir=out / "cache")
    manifest = workflow.read_manifest(corpus, ["emotion"])
    row, cm = evaluate.classification("emotion", "toy", pred, manifest, "emotion", 0.9)
    n_test = int((manifest.split == "test").sum())
    assert row["n"] == n_test == cm.to_numpy().sum()
    assert row["estimate"] >= 0.9 and row["meets_target"]
    from statsmodels.stats.proportion import proportion_confint

    k = round(row["estimate"] * n_test)
    lo, hi = proportion_confint(k, n_test, method="wilson")
    # speaker-clustered: the Wilson interval on n / DEFF (DEFF >= 1) contains the plain one
    assert row["ci_low"] <= lo + 1e-12 and row["ci_high"] >= hi - 1e-12
    assert row["ci_low"] < row["estimate"] or row["estimate"] == 0
    assert "speaker-clustered" in row["method"]
    md = evaluate.markdown(evaluate.table([row]))
    assert "emotion" in md and "wilson" in md.lower()
    evaluate.confusion_figure({"toy": cm}, str(tmp_path / "c.png"), str(tmp_path / "c.pdf"))
    assert (tmp_path / "c.png").stat().st_size > 1000 and (tmp_path / "c.pdf").exists()


def test_missing_model_messages(tmp_path):
    with pytest.raises(ModelMissingError, match="specialists/emotion/model.json"):
        specialists.load("emotion", tmp_path / "nothing")
    with pytest.raises(ModelMissingError, match="model path"):
        adapters.Emotion2VecPlus("")
    with pytest.raises(ModelMissingError, match="does not exist"):
        adapters.UtmosScorer(tmp_path / "utmos.pt")
    (tmp_path / "e2v").mkdir()
    with pytest.raises(ModelMissingError, match="funasr"):
        adapters.Emotion2VecPlus(tmp_path / "e2v")
    with pytest.raises(ModelMissingError, match="lacks"):
        adapters.WhisperLID(tmp_path / "e2v", ["en"])
    with pytest.raises(SpecialistError, match="unknown specialist kind"):
        specialists.load("pitch", tmp_path)


def test_emotion2vec_mapping_table():
    labels = ["生气/angry", "厌恶/disgusted", "恐惧/fearful", "开心/happy", "中立/neutral",
              "其他/other", "难过/sad", "吃惊/surprised", "<unk>"]
    scores = [0.1, 0.05, 0.05, 0.1, 0.4, 0.2, 0.05, 0.05, 0.0]
    none = adapters.map_emotion2vec(labels, scores, "none")
    assert set(none) == set(EMOTIONS)
    assert none["calm"] == 0 and abs(sum(none.values()) - 1) < 1e-9
    assert none["neutral"] == pytest.approx(0.4 / 0.8)  # other/unk mass dropped
    assert none["disgust"] == pytest.approx(0.05 / 0.8)
    shared = adapters.map_emotion2vec(labels, scores, "neutral")
    assert shared["calm"] == shared["neutral"] == pytest.approx(0.25)
    assert adapters._argmax(shared, EMOTIONS) == "neutral"
    with pytest.raises(SpecialistError, match="mapping table"):
        adapters.map_emotion2vec(["bored"], [1.0])


def test_adapter_config_fails_early_with_install_hint(tmp_path):
    (tmp_path / "e2v").mkdir()
    cfg = {"backend": "emotion2vec", "model_path": str(tmp_path / "e2v")}
    with pytest.raises(ModelMissingError, match="pip install funasr"):
        workflow.train("emotion", tmp_path / "unused.tsv", cfg, tmp_path / "out")


def test_model_json_is_plain_metadata(trained):
    out, meta = trained
    on_disk = json.loads((out / "model.json").read_text())
    assert on_disk["kind"] == "emotion" and on_disk["backend"] == "sklearn"
    assert on_disk["version"].startswith("emotion-logreg-eGeMAPSv02-")
    assert (out / "model.joblib").exists()


def test_one_command_train_eval(corpus, tmp_path, capsys):
    from judgeaudit.specialists.__main__ import main

    rc = main(["train-eval", "--kind", "emotion", "--manifest", str(corpus), "--out",
               str(tmp_path / "out"), "--feature-set", "eGeMAPSv02", "--c-grid", "1.0",
               "--cache-dir", str(tmp_path / "cache"), "--jobs", "1"])
    assert rc == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n_test"] == 18 and 0 <= report["wilson95"][0] <= report["accuracy"]
    table = pd.read_csv(tmp_path / "out" / "accuracy.tsv", sep="\t")
    assert table.loc[0, "method"].startswith("speaker-clustered wilson")
    assert (tmp_path / "out" / "model.json").exists()
