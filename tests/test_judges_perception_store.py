"""The persistent perception store: a clip heard by one judge is not re-analysed
by another judge or shard, and a retrained model (new version) is re-run."""

import numpy as np

from judgeaudit.judges.embedded.perception import PerceptionStore, SpecialistPerception


class CountingModel:
    def __init__(self, version):
        self.version = version
        self.calls = 0

    def predict_audio(self, wav):
        self.calls += 1

        class P:
            label = "angry" if wav.startswith(b"A") else "sad"
            scores = {"angry": 0.7, "sad": 0.3}

        return P()

    def embed_audio(self, wav):
        self.calls += 1
        return np.array([0.6, 0.8])


def _perception(store, model):
    p = SpecialistPerception({"emotion": "unused", "speaker": "unused"}, store)
    p._models = {"emotion": model, "speaker": model}
    return p


def test_second_judge_reads_the_store(tmp_path):
    store_path = tmp_path / "perception.sqlite"
    first = CountingModel("v1")
    p1 = _perception(PerceptionStore(store_path), first)
    assert p1.emotion(b"A-clip") == "angry"
    assert p1.emotion_scores(b"A-clip") == {"angry": 0.7, "sad": 0.3}
    assert np.allclose(p1.speaker_embedding(b"A-clip"), [0.6, 0.8])
    assert first.calls == 2  # emotion once (memoised), embedding once

    second = CountingModel("v1")
    p2 = _perception(PerceptionStore(store_path), second)
    assert p2.emotion(b"A-clip") == "angry"
    assert np.allclose(p2.speaker_embedding(b"A-clip"), [0.6, 0.8])
    assert second.calls == 0
    assert p2.emotion(b"B-clip") == "sad" and second.calls == 1


def test_new_model_version_is_not_served_stale_values(tmp_path):
    store_path = tmp_path / "perception.sqlite"
    _perception(PerceptionStore(store_path), CountingModel("v1")).emotion(b"A-clip")
    retrained = CountingModel("v2")
    _perception(PerceptionStore(store_path), retrained).emotion(b"A-clip")
    assert retrained.calls == 1


def test_perception_points_its_specialists_at_the_run_feature_cache(tmp_path, monkeypatch):
    """make_perception(store at <cache_dir>/perception.sqlite) hands each loaded
    specialist that reads features the run's <cache_dir>, so it reads the per-clip
    entries specialists_predict's extract_table wrote instead of recomputing them."""
    from judgeaudit import specialists
    from judgeaudit.judges.embedded.perception import make_perception

    class FeatureModel(CountingModel):
        feature_cache_dir = None

    loaded = {}

    def fake_load(kind, path):
        loaded[kind] = FeatureModel("v1") if kind == "emotion" else CountingModel("v1")
        return loaded[kind]

    monkeypatch.setattr(specialists, "load", fake_load)
    p = make_perception({"models": {"emotion": "e.json", "speaker": "s.json"}},
                        tmp_path / "perception.sqlite")
    p.emotion(b"A-clip")
    p.speaker_embedding(b"A-clip")
    assert loaded["emotion"].feature_cache_dir == str(tmp_path)
    assert not hasattr(loaded["speaker"], "feature_cache_dir")
    assert make_perception({"models": {"emotion": "e.json"}}).feature_cache_dir is None


def test_store_hits_never_load_a_fitted_model(tmp_path, monkeypatch):
    """A fitted specialist's store key is model.json's version: a judge whose clips are
    all in the store answers without unpickling the model; a clip not in the store
    loads it, and a model.json of the wrong kind is still refused by the loader."""
    import json

    import pytest

    from judgeaudit import specialists

    model_dir = tmp_path / "emo"
    model_dir.mkdir()
    (model_dir / "model.json").write_text(json.dumps(
        {"kind": "emotion", "backend": "sklearn", "version": "v1"}))
    store = PerceptionStore(tmp_path / "perception.sqlite")
    store.put("emotion", "v1", "0" * 64, {"label": "sad", "scores": {"sad": 1.0}})
    loads = []

    def fake_load(kind, path):
        loads.append(kind)
        return CountingModel("v1")

    monkeypatch.setattr(specialists, "load", fake_load)
    monkeypatch.setattr("judgeaudit.judges.embedded.perception.sha256_bytes",
                        lambda wav: "0" * 64 if wav == b"known" else "1" * 64)
    p = SpecialistPerception({"emotion": str(model_dir / "model.json")}, store)
    assert p.emotion(b"known") == "sad" and loads == []
    assert p.emotion(b"B-clip") == "sad" and loads == ["emotion"]  # a miss loads it
    (model_dir / "model.json").write_text(json.dumps(
        {"kind": "speaker", "backend": "resemblyzer", "version": "v1"}))
    monkeypatch.undo()
    wrong = SpecialistPerception({"emotion": str(model_dir / "model.json")}, store)
    with pytest.raises(ValueError, match="speaker"):
        wrong.emotion(b"known")
