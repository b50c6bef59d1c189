"""Ingest of small real-speech corpora (EmoDB clips in the FLEURS, VoxCeleb1, BVCC and
RAVDESS official layouts, built by tests/real_layouts.py): every ingest yields train
and test speakers, speaker-disjoint, checked against the true (EmoDB) speakers too."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from real_layouts import bvcc_layout, fleurs_layout, ravdess_layout, voxceleb_layout

from judgeaudit.config import validate_config
from judgeaudit.datasets.real import ingest
from judgeaudit.datasets.real.base import LabelError

SEED = 20260715


def _ingest(tmp_path, name, lay, **over):
    cfg = validate_config({"datasets": {name: {"source": "local_dir",
                                               "local_dir": str(lay.root),
                                               **lay.cfg, **over}}})["datasets"][name]
    out = tmp_path / "data" / name
    written = ingest(name, lay.root, out, cfg, seed=SEED, cache_dir=tmp_path / "cache",
                     workdir=tmp_path)
    frame = pd.read_csv(written["manifest.tsv"], sep="\t", keep_default_na=False)
    info = json.loads(written["LICENSE_INFO.json"].read_text())
    splits = pd.read_csv(written["splits.tsv"], sep="\t")
    return frame, info, splits, written


def _assert_disjoint(frame, splits, info, true_speaker):
    by = frame.groupby("split").speaker.apply(set).to_dict()
    assert set(by) == {"train", "test"}, by
    assert by["train"] and by["test"] and not by["train"] & by["test"]
    # the true (EmoDB) speakers behind the corpus ids are disjoint as well
    true = frame.assign(true=frame.orig_path.map(true_speaker))
    assert true["true"].notna().all()
    t = true.groupby("split")["true"].apply(set).to_dict()
    assert not t["train"] & t["test"], t
    # splits.tsv: one row per speaker, agreeing with the manifest and naming the policy
    assert set(splits.speaker) == set(frame.speaker)
    assert (splits.split_policy == info["split_policy"]).all()
    assert info["n_train_speakers"] == len(by["train"])
    assert info["n_test_speakers"] == len(by["test"])
    return t


def _true_by_suffix(lay):
    def f(orig_path: str) -> str | None:
        for key, spk in lay.speaker_of.items():
            if orig_path.endswith(key):
                return spk
        return None
    return f


def test_fleurs_layout_official_train_and_test(tmp_path, emodb_dir):
    lay = fleurs_layout(tmp_path / "fleurs", emodb_dir, n_train=6, n_dev=0, n_test=4)
    frame, info, splits, _ = _ingest(tmp_path, "fleurs", lay)
    assert info["split_policy"] == "official" and "split_fallback" not in info
    t = _assert_disjoint(frame, splits, info, _true_by_suffix(lay))
    assert t == {"train": {s for s, v in lay.split_of_speaker.items() if v == "train"},
                 "test": {s for s, v in lay.split_of_speaker.items() if v == "test"}}
    # both languages on both sides (a language specialist can train and be tested)
    assert frame.groupby("split").language.nunique().to_dict() == {"test": 2, "train": 2}


def test_fleurs_layout_seeded_policy_is_recorded(tmp_path, emodb_dir):
    lay = fleurs_layout(tmp_path / "fleurs", emodb_dir, n_train=3, n_test=3, per_speaker=2)
    frame, info, splits, _ = _ingest(tmp_path, "fleurs", lay, split_policy="seeded",
                                     test_fraction=0.5)
    assert info["split_policy"] == "seeded_speaker_disjoint"
    by = frame.groupby("split").speaker.nunique().to_dict()
    assert by == {"train": 6, "test": 6}


def test_voxceleb_layout_verification_split(tmp_path, emodb_dir):
    lay = voxceleb_layout(tmp_path / "vox1", emodb_dir, n_test=4, n_dev=6, per_speaker=3)
    frame, info, splits, written = _ingest(tmp_path, "voxceleb1", lay)
    assert info["split_policy"] == "official"
    assert "id10270-id10309" in info["split_source"]
    _assert_disjoint(frame, splits, info, _true_by_suffix(lay))
    test_ids = {s.removeprefix("vox1_") for s in frame[frame.split == "test"].speaker}
    assert all(10270 <= int(s[2:]) <= 10309 for s in test_ids)
    trials = pd.read_csv(written["trials.tsv"], sep="\t")
    split = dict(zip(frame.clip_id, frame.split, strict=True))
    test_trials, train_trials = trials[trials.split == "test"], trials[trials.split == "train"]
    assert len(test_trials) == 66  # all pairs of the 4 x 3 test clips
    assert {split[c] for c in pd.concat([test_trials.clip_a, test_trials.clip_b])} == {"test"}
    # train trials for the speaker back-end: only train clips, both kinds
    assert len(train_trials) == 153 and set(train_trials.same) == {0, 1}  # C(18, 2)
    assert {split[c] for c in pd.concat([train_trials.clip_a, train_trials.clip_b])} == {
        "train"}


def test_voxceleb_identification_split_is_refused_or_replaced(tmp_path, emodb_dir, caplog):
    lay = voxceleb_layout(tmp_path / "vox1", emodb_dir, per_speaker=2, iden_split=True)
    with pytest.raises(LabelError, match=r"iden_split.txt.*both sides.*vox1_id10001"):
        _ingest(tmp_path, "voxceleb1", lay, split_policy="official")
    frame, info, splits, _ = _ingest(tmp_path, "voxceleb1", lay)  # auto
    assert "shares" in info["split_fallback"]
    assert any("iden_split.txt" in r.getMessage() and r.levelname == "WARNING"
               for r in caplog.records)
    _assert_disjoint(frame, splits, info, _true_by_suffix(lay))


def test_voxceleb_test_only_copy_gets_a_seeded_split(tmp_path, emodb_dir):
    lay = voxceleb_layout(tmp_path / "vox1", emodb_dir, n_test=8, n_dev=0, per_speaker=2)
    frame, info, splits, written = _ingest(tmp_path, "voxceleb1", lay)
    assert info["split_policy"] == "seeded_speaker_disjoint"
    assert "no dev" in info["split_fallback"]
    t = _assert_disjoint(frame, splits, info, _true_by_suffix(lay))
    assert len(t["train"]) == 6 and len(t["test"]) == 2
    trials = pd.read_csv(written["trials.tsv"], sep="\t")
    split = dict(zip(frame.clip_id, frame.split, strict=True))
    for side in ("train", "test"):
        t = trials[trials.split == side]
        assert len(t) and {split[c] for c in pd.concat([t.clip_a, t.clip_b])} == {side}


def test_bvcc_layout_shared_systems_are_resplit_by_system(tmp_path, emodb_dir):
    lay = bvcc_layout(tmp_path / "bvcc", emodb_dir, per_speaker=3, shared_systems=True)
    with pytest.raises(LabelError, match=r"bvcc official split: 10 speaker\(s\).*bvcc_sys03"):
        _ingest(tmp_path, "bvcc", lay, split_policy="official")
    frame, info, splits, written = _ingest(tmp_path, "bvcc", lay)
    assert info["split_policy"] == "seeded_speaker_disjoint"
    assert "both sides" in info["split_fallback"]
    t = _assert_disjoint(frame, splits, info, _true_by_suffix(lay))
    assert len(t["test"]) == 2 and len(t["train"]) == 8  # round(0.25 * 10) held out
    assert set(frame.bvcc_set) == {"train", "val", "test"}  # official set kept per clip
    pairs = pd.read_csv(written["pairs.tsv"], sep="\t")
    split = dict(zip(frame.clip_id, frame.split, strict=True))
    assert all(split[a] == split[b] for a, b in zip(pairs.better_clip, pairs.worse_clip,
                                                    strict=True))


def test_bvcc_layout_disjoint_official_sets_are_kept(tmp_path, emodb_dir):
    lay = bvcc_layout(tmp_path / "bvcc", emodb_dir, per_speaker=2, shared_systems=False)
    frame, info, splits, _ = _ingest(tmp_path, "bvcc", lay, split_policy="official")
    assert info["split_policy"] == "official"
    t = _assert_disjoint(frame, splits, info, _true_by_suffix(lay))
    assert t["test"] == {"15", "16"}
    assert (frame[frame.bvcc_set == "val"].split == "train").all()


def test_ravdess_layout_actor_disjoint(tmp_path, emodb_dir):
    lay = ravdess_layout(tmp_path / "ravdess", emodb_dir, per_speaker=6)
    frame, info, splits, _ = _ingest(tmp_path, "ravdess", lay)
    assert info["split_policy"] == "seeded_speaker_disjoint"
    _assert_disjoint(frame, splits, info, _true_by_suffix(lay))
    assert set(frame.emotion) <= {"neutral", "happy", "sad", "angry", "fearful", "disgust"}


def test_voxceleb_copy_without_official_test_speakers(tmp_path, emodb_dir, caplog):
    """Every speaker outside id10270-id10309: `official` is refused naming corpus, policy
    and speakers; `auto` falls back to a seeded split with a WARNING (never an empty
    test side) and records the policy it applied."""
    lay = voxceleb_layout(tmp_path / "vox1", emodb_dir, n_test=0, n_dev=8, per_speaker=3)
    with pytest.raises(LabelError, match=r"voxceleb1 \(split_policy: official\).*id10001"):
        _ingest(tmp_path, "voxceleb1", lay, split_policy="official")
    frame, info, splits, written = _ingest(tmp_path, "voxceleb1", lay)  # auto
    assert info["split_policy"] == "seeded_speaker_disjoint"
    assert "no official test speaker" in info["split_fallback"]
    assert any("no official test speaker" in r.getMessage() and r.levelname == "WARNING"
               for r in caplog.records)
    _assert_disjoint(frame, splits, info, _true_by_suffix(lay))
    trials = pd.read_csv(written["trials.tsv"], sep="\t")
    split = dict(zip(frame.clip_id, frame.split, strict=True))
    test = trials[trials.split == "test"]
    assert len(test) and {split[c] for c in pd.concat([test.clip_a, test.clip_b])} == {"test"}
    assert set(test.same) == {0, 1}


def test_voxceleb_single_speaker_copy_is_refused(tmp_path, emodb_dir):
    lay = voxceleb_layout(tmp_path / "vox1", emodb_dir, n_test=1, n_dev=0, per_speaker=3)
    with pytest.raises(LabelError, match=r"voxceleb1 \(split_policy: auto.*train speakers"):
        _ingest(tmp_path, "voxceleb1", lay)
