"""Speaker (resemblyzer + back-end, EER) and naturalness (DNSMOS + regressor)
specialists, and the Whisper LID adapter on the registry's Whisper base."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgeaudit import specialists
from judgeaudit.features.audio import to_wav_bytes
from judgeaudit.io import sha256_bytes
from judgeaudit.specialists import evaluate, workflow
from judgeaudit.specialists.base import SpecialistError
from judgeaudit.specialists.speaker import eer
from judgeaudit.testing.toyaudio import voice

SR = 16000


def test_eer_known_values():
    same = np.array([1, 1, 1, 1, 0, 0, 0, 0])
    assert eer(np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2]), same)[0] == 0
    rate, _ = eer(np.array([0.9, 0.8, 0.7, 0.3, 0.6, 0.4, 0.2, 0.1]), same)
    assert rate == pytest.approx(0.25)
    assert eer(np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]), same)[0] == 1.0
    with pytest.raises(SpecialistError):
        eer(np.ones(3), np.ones(3))


def _speaker_corpus(root):
    rows = []
    spk = {f"s{i}": (90 + 25 * i, 0.8 + 0.08 * i) for i in range(5)}
    for s, (f0, shift) in spk.items():
        for u in range(4):
            x = voice(f0=f0, formant_shift=shift, duration_s=1.6, vowels="aiueoa"[u:] + "ei",
                      seed=u)
            data = to_wav_bytes(x, SR)
            (root / f"{s}_{u}.wav").write_bytes(data)
            rows.append({"clip_id": f"{s}_{u}", "path": str(root / f"{s}_{u}.wav"),
                         "sha256": sha256_bytes(data), "speaker": s,
                         "split": "test" if s == "s2" else "train"})
    m = pd.DataFrame(rows)
    m.to_csv(root / "manifest.tsv", sep="\t", index=False)
    train = m[m.split == "train"]
    trials = []
    ids = list(train.clip_id)
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            trials.append({"trial_id": f"t{len(trials)}", "clip_a": a, "clip_b": b,
                           "same": int(a[:2] == b[:2]), "split": "train"})
    pd.DataFrame(trials).to_csv(root / "trials.tsv", sep="\t", index=False)
    return root / "manifest.tsv"


@pytest.mark.slow
def test_speaker_specialist_roundtrip(tmp_path):
    manifest = _speaker_corpus(tmp_path)
    cfg = {"backend": "resemblyzer", "projection": "lda", "shrinkage": 0.5}
    meta = workflow.train("speaker", manifest, cfg, tmp_path / "m", cache_dir=tmp_path / "c")
    assert "s2" not in meta["train_speakers"] and meta["dim"] == 3
    model = specialists.load("speaker", tmp_path / "m")
    a = (tmp_path / "s0_0.wav").read_bytes()
    e = model.embed_audio(a)
    assert e.shape == (3,) and abs(np.linalg.norm(e) - 1) < 1e-6
    assert model.similarity(a, a) == pytest.approx(1.0)
    pred = workflow.predict("speaker", tmp_path / "m" / "model.json", manifest,
                            cache_dir=tmp_path / "c")
    assert [c for c in pred.columns if c.startswith("emb_")] == ["emb_000", "emb_001", "emb_002"]
    assert set(pred.split) == {"train", "test"}


def _quality_corpus(root):
    rows = []
    rng = np.random.default_rng(0)
    for s in range(6):
        for level in range(5):
            x = voice(f0=100 + 20 * s, duration_s=1.5, seed=s)
            x = np.clip(x + (0.02 * level**1.5) * rng.standard_normal(x.size), -1, 1)
            data = to_wav_bytes(x.astype(np.float32), SR)
            name = f"q{s}_{level}"
            (root / f"{name}.wav").write_bytes(data)
            rows.append({"clip_id": name, "path": str(root / f"{name}.wav"),
                         "sha256": sha256_bytes(data), "speaker": f"s{s}",
                         "split": "test" if s in (1, 4) else "train", "score": 5.0 - level})
    m = pd.DataFrame(rows)
    m.to_csv(root / "manifest.tsv", sep="\t", index=False)
    return root / "manifest.tsv"


@pytest.mark.slow
def test_naturalness_regressor_ranks_held_out_noise(tmp_path):
    manifest = _quality_corpus(tmp_path)
    cfg = {"backend": "dnsmos_regressor", "feature_set": "dnsmos_p808+eGeMAPSv02",
           "model": "random_forest", "target_column": "score"}
    meta = workflow.train("naturalness", manifest, cfg, tmp_path / "m")
    assert set(meta["train_speakers"]).isdisjoint({"s1", "s4"})
    model = specialists.load("quality", tmp_path / "m")  # the listener's alias
    clean = (tmp_path / "q1_0.wav").read_bytes()
    noisy = (tmp_path / "q1_4.wav").read_bytes()
    assert model.score_audio(clean) > model.score_audio(noisy)
    pred = workflow.predict("naturalness", tmp_path / "m" / "model.json", manifest)
    row = evaluate.naturalness("toy", pred, workflow.read_manifest(manifest, ["score"]),
                               "score", 0.8)
    assert row["n"] == 10 and row["estimate"] >= 0.8
    assert "dnsmos_p808" in pred.columns


@pytest.mark.slow
def test_whisper_lid_adapter_runs_on_a_synthetic_clip(tmp_path):
    from judgeaudit.specialists.adapters import WhisperLID, assemble_whisper_base

    d = assemble_whisper_base(tmp_path / "whisper-base")
    size = (d / "model.bin").stat().st_size
    assert assemble_whisper_base(d) == d and (d / "model.bin").stat().st_size == size
    model = WhisperLID(d, ["en", "es", "fr", "de"])
    pred = model.predict_audio(to_wav_bytes(voice(duration_s=2.0), SR))
    assert pred.label in ("en", "es", "fr", "de")
    assert set(pred.scores) == {"en", "es", "fr", "de"}
    assert abs(sum(pred.scores.values()) - 1) < 1e-6
    scores, full = model.detect(voice(duration_s=2.0))
    assert len(full) > 50  # Whisper's whole language distribution


def test_speaker_threshold_is_cross_fitted_and_transfers_to_unseen_speakers():
    """The LDA back-end separates its own training speakers far better than unseen
    ones: the in-sample EER point is too strict for new speakers. The cross-fitted
    threshold (folds of train speakers scored by a back-end fitted without them)
    keeps the error on unseen speakers near their own EER."""
    import itertools

    import numpy as np
    import pandas as pd

    from judgeaudit.specialists.speaker import (
        FEATURE_SET,
        ResemblyzerSpeaker,
        eer,
        feature_names,
        project,
        trial_scores,
    )

    rng = np.random.default_rng(7)
    names = list(feature_names(FEATURE_SET))

    def speakers(prefix, n_spk, n_clips=6):
        rows = []
        for s in range(n_spk):
            centre = rng.normal(size=len(names))
            for c in range(n_clips):
                rows.append({"clip_id": f"{prefix}{s}_{c}", "speaker": f"{prefix}{s}",
                             "status": "ok",
                             **dict(zip(names, centre + rng.normal(scale=1.6, size=len(names)),
                                        strict=True))})
        return pd.DataFrame(rows)

    def trials(emb):
        ids = emb["clip_id"].tolist()
        spk = dict(zip(emb["clip_id"], emb["speaker"], strict=True))
        pairs = list(itertools.combinations(ids, 2))
        rows = [{"clip_a": a, "clip_b": b, "same": int(spk[a] == spk[b])} for a, b in pairs]
        return pd.DataFrame(rows)

    train, test = speakers("tr", 12), speakers("te", 8)
    model = ResemblyzerSpeaker.fit(train, trials(train), "lda", 0.5)
    assert model.meta["threshold_fit"] == "speaker-crossfit"
    z = project(test[names].to_numpy(float), model.projection)
    zt = pd.DataFrame(z, columns=[f"emb_{i:03d}" for i in range(z.shape[1])])
    zt.insert(0, "clip_id", test["clip_id"].to_numpy())
    t = trials(test)
    scores, same = trial_scores(zt, t), t["same"].astype(bool).to_numpy()

    def hter(thr):
        acc = scores >= thr
        return (np.mean(acc[~same]) + np.mean(~acc[same])) / 2

    oracle = eer(scores, same.astype(int))[0]
    in_sample = eer(trial_scores(
        pd.concat([train[["clip_id"]], pd.DataFrame(
            project(train[names].to_numpy(float), model.projection),
            columns=zt.columns[1:])], axis=1), trials(train)),
        trials(train)["same"].to_numpy())[1]
    assert hter(model.meta["threshold"]) <= oracle + 0.05
    assert hter(in_sample) > hter(model.meta["threshold"])


def test_speaker_crossfit_keeps_one_dimension_for_every_back_end():
    """Every fold back-end and the final back-end keep the same LDA dimension (the
    most the smallest fold fit allows), and every within-fold clip pair is scored:
    a threshold fitted at one cosine scale is used at that scale."""
    import numpy as np
    import pandas as pd

    from judgeaudit.specialists.speaker import (
        FEATURE_SET,
        ResemblyzerSpeaker,
        crossfit_threshold,
        feature_names,
        speaker_folds,
    )

    rng = np.random.default_rng(3)
    names = list(feature_names(FEATURE_SET))
    rows = []
    for s in range(14):
        centre = rng.normal(size=len(names))
        for c in range(3):
            rows.append({"clip_id": f"s{s:02d}_{c}", "speaker": f"s{s:02d}", "status": "ok",
                         **dict(zip(names, centre + rng.normal(scale=1.5, size=len(names)),
                                    strict=True))})
    emb = pd.DataFrame(rows)
    trials = pd.DataFrame({"clip_a": ["s00_0", "s00_0"], "clip_b": ["s00_1", "s01_0"],
                           "same": [1, 0]})
    folds = speaker_folds(emb["speaker"], 4)
    sizes = np.bincount(list(folds.values()))
    assert sorted(sizes) == [3, 3, 4, 4]
    cross = crossfit_threshold(emb, names, "lda", 0.5, 4)
    assert cross["folds"] == 4 and cross["dim"] == 14 - 4 - 1
    assert cross["n_pairs"] == sum(3 * k * (3 * k - 1) // 2 for k in sizes)
    model = ResemblyzerSpeaker.fit(emb, trials, "lda", 0.5, n_folds=4)
    assert model.meta["dim"] == cross["dim"] == model.projection["matrix"].shape[1]
    assert model.meta["threshold"] == pytest.approx(cross["threshold"])
    assert model.meta["threshold_folds"] == 4
    assert model.meta["n_threshold_pairs"] == cross["n_pairs"]
    # too few speakers for two folds with a back-end on the rest: in-sample fallback,
    # full dimension
    small = emb[emb["speaker"].isin(["s00", "s01", "s02", "s03"])]
    assert crossfit_threshold(small, names, "lda", 0.5, 4) is None
    fallback = ResemblyzerSpeaker.fit(small, trials, "lda", 0.5)
    assert fallback.meta["threshold_fit"].startswith("in-sample")
    assert fallback.meta["dim"] == 3


@pytest.mark.slow
def test_table_scores_the_models_own_same_speaker_decision(tmp_path):
    """One decision rule: the accuracy table's error on the test trials equals the
    error of the fitted model's own `same_speaker(a, b)` (the listener's rule, on the
    clips' audio) over the same trials."""
    import itertools

    rows = []
    for s in range(12):
        for u in range(3):
            x = voice(f0=85 + 9 * s, formant_shift=0.78 + 0.04 * s, duration_s=1.2,
                      vowels="aiueoa"[u:] + "ei", seed=10 * s + u)
            data = to_wav_bytes(x, SR)
            (tmp_path / f"s{s:02d}_{u}.wav").write_bytes(data)
            rows.append({"clip_id": f"s{s:02d}_{u}", "path": str(tmp_path / f"s{s:02d}_{u}.wav"),
                         "sha256": sha256_bytes(data), "speaker": f"s{s:02d}",
                         "split": "test" if s % 3 == 0 else "train"})
    m = pd.DataFrame(rows)
    m.to_csv(tmp_path / "manifest.tsv", sep="\t", index=False)
    spk = dict(zip(m.clip_id, m.speaker, strict=True))
    trials = pd.DataFrame([{"trial_id": f"t{i}", "clip_a": a, "clip_b": b,
                            "same": int(spk[a] == spk[b]), "split": split}
                           for split in ("train", "test")
                           for i, (a, b) in enumerate(itertools.combinations(
                               m.loc[m.split == split, "clip_id"], 2))])
    trials.to_csv(tmp_path / "trials.tsv", sep="\t", index=False)
    cfg = {"backend": "resemblyzer", "projection": "lda", "shrinkage": 0.5}
    meta = workflow.train("speaker", tmp_path / "manifest.tsv", cfg, tmp_path / "m",
                          cache_dir=tmp_path / "c")
    assert meta["threshold_fit"] == "speaker-crossfit" and meta["threshold_folds"] == 4
    model = specialists.load("speaker", tmp_path / "m")
    pred = workflow.predict("speaker", tmp_path / "m" / "model.json", tmp_path / "manifest.tsv",
                            cache_dir=tmp_path / "c")
    row = evaluate.speaker("toy", pred, trials, 0.05, manifest=m, meta=meta, n_boot=200)
    test = trials[trials.split == "test"]
    audio = {c: (tmp_path / f"{c}.wav").read_bytes() for c in m.clip_id}
    accept = np.array([model.same_speaker(audio[a], audio[b])
                       for a, b in zip(test.clip_a, test.clip_b, strict=True)])
    same = test["same"].astype(bool).to_numpy()
    assert row["estimate"] == pytest.approx((accept[~same].mean() + (~accept[same]).mean()) / 2)
    assert f"model's stored threshold (speaker-crossfit) {meta['threshold']:.4f}" in row["method"]
