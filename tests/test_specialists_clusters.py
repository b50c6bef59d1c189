"""Issue 35: the speaker row is named for what it is (HTER at the stored
threshold, the test EER beside it), and every specialist interval resting on fewer
clusters than it needs (~10) says so, `compare-naturalness` included."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import pytest

from judgeaudit.datasets.audio import write_wav
from judgeaudit.specialists import evaluate
from judgeaudit.specialists.__main__ import main as specialists_main


def _speaker_toy(n_speakers):
    rng = np.random.default_rng(1)
    emb, man, trials = [], [], []
    for s in range(n_speakers):
        for u in range(4):
            ang = s * 0.4 + rng.normal(0, 0.15)
            emb.append({"clip_id": f"s{s}_u{u}", "status": "ok", "emb_000": np.cos(ang),
                        "emb_001": np.sin(ang), "version": "v"})
            man.append({"clip_id": f"s{s}_u{u}", "speaker": f"spk{s}", "split": "test"})
        for u in range(3):
            o = (s + 1) % n_speakers
            trials += [{"clip_a": f"s{s}_u{u}", "clip_b": f"s{s}_u{u + 1}", "same": True,
                        "split": "test"},
                       {"clip_a": f"s{s}_u{u}", "clip_b": f"s{o}_u{u}", "same": False,
                        "split": "test"}]
    return pd.DataFrame(emb), pd.DataFrame(trials), pd.DataFrame(man)


def test_speaker_rows_are_hter_at_the_stored_threshold_and_eer_beside(caplog):
    from judgeaudit.specialists.speaker import eer

    emb, trials, man = _speaker_toy(12)
    meta = {"threshold": 0.99, "threshold_fit": "stored"}
    hter, eer_row = evaluate.speaker_rows("toy", emb, trials, 0.05, manifest=man, meta=meta,
                                          n_boot=200)
    assert hter["metric"] == "hter" and hter["target"] == 0.05
    assert "HTER" in hter["method"] and "0.9900" in hter["method"]
    e = emb.set_index("clip_id")[["emb_000", "emb_001"]]
    sc = np.sum(e.loc[trials.clip_a].to_numpy() * e.loc[trials.clip_b].to_numpy(), axis=1)
    same = trials["same"].to_numpy(bool)
    assert hter["estimate"] == pytest.approx(((sc[~same] >= 0.99).mean()
                                              + (sc[same] < 0.99).mean()) / 2)
    assert eer_row["metric"] == "eer" and eer_row["target"] is None
    assert eer_row["estimate"] == pytest.approx(eer(sc, same)[0])
    assert eer_row["ci_low"] <= eer_row["estimate"] <= eer_row["ci_high"]
    assert hter["estimate"] != eer_row["estimate"]
    assert "WARNING" not in hter["method"]  # 12 speakers: enough clusters
    md = evaluate.markdown(evaluate.table([hter, eer_row]))
    assert "| speaker | toy | hter |" in md and "| speaker | toy | eer |" in md
    assert "<= 0.05" in md


def test_few_speaker_clusters_warn_on_every_interval(caplog):
    emb, trials, man = _speaker_toy(5)
    with caplog.at_level(logging.WARNING):
        hter, eer_row = evaluate.speaker_rows("toy", emb, trials, 0.05, manifest=man,
                                              meta={"threshold": 0.9}, n_boot=200)
    for row in (hter, eer_row):
        assert "WARNING: the interval rests on 5 speaker cluster(s)" in row["method"]
    assert any("5 speaker cluster" in r.getMessage() for r in caplog.records)
    md = evaluate.markdown(evaluate.table([hter, eer_row]))
    assert "**Few clusters.**" in md
    pred = man[["clip_id", "split"]].assign(label="a", status="ok", version="v",
                                            score_a=1.0, score_b=0.0)
    gold = man.assign(emotion=["a", "b"] * (len(man) // 2))
    row, _ = evaluate.classification("emotion", "toy", pred, gold, "emotion", None)
    assert "5 speaker cluster(s)" in row["method"]


def _mos_manifest(tmp_path, n_test_sources):
    from judgeaudit.datasets.synth.tts import synthesize

    rng = np.random.default_rng(0)
    rows = []
    for split, n_src in (("train", 2), ("test", n_test_sources)):
        for s in range(n_src):
            base, _ = synthesize(f"The {split} sentence number {s} is read aloud.",
                                 f"en-us+m{s + 1}")
            for k, noise in enumerate((0.0, 0.05, 0.3)):
                cid = f"{split}{s}_{k}"
                x = np.clip(base + rng.normal(0, noise * 0.3, base.size), -1, 1)
                info = write_wav(tmp_path / "clips" / f"{cid}.wav", x, 16000)
                rows.append({"clip_id": cid, "path": str(tmp_path / "clips" / f"{cid}.wav"),
                             "sha256": info["sha256"], "speaker": f"{split}_spk{s}",
                             "split": split, "source_clip": f"{split}{s}",
                             "degradation": "clean" if k == 0 else f"noise{k}",
                             "score": 5.0 - 2 * k})
    m = tmp_path / "mos" / "manifest.tsv"
    m.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(m, sep="\t", index=False)
    return m


def test_compare_naturalness_warns_below_the_cluster_floor(tmp_path, caplog, capsys):
    manifest = _mos_manifest(tmp_path, 4)
    with caplog.at_level(logging.WARNING):
        rc = specialists_main(["compare-naturalness", "--manifest", str(manifest), "--out",
                               str(tmp_path / "out"), "--recipes", "dnsmos_p808",
                               "--cache-dir", str(tmp_path / "cache"), "--resamples", "200"])
    assert rc == 0
    out = capsys.readouterr().out
    assert "4 source_clip cluster(s)" in out and "fewer than the 10" in out
    assert any("4 source_clip cluster(s)" in r.getMessage() for r in caplog.records)
    summary = pd.read_csv(tmp_path / "out" / "summary.tsv", sep="\t")
    assert summary["method"].str.contains("WARNING").all()
    assert (summary["n_clusters"] == 4).all()


def test_compare_naturalness_talker_folds_pooled_with_codec_only_rows(tmp_path, capsys):
    manifest = _mos_manifest(tmp_path, 4)
    rc = specialists_main(["compare-naturalness", "--manifest", str(manifest), "--out",
                           str(tmp_path / "out"), "--recipes", "dnsmos_p808,dnsmos_rf",
                           "--folds", "3", "--reference-column", "degradation",
                           "--reference-values", "clean", "--cluster-column", "speaker",
                           "--cache-dir", str(tmp_path / "cache"), "--resamples", "200"])
    assert rc == 0
    s = pd.read_csv(tmp_path / "out" / "summary.tsv", sep="\t")
    assert list(s["specialist"]) == ["dnsmos_p808", "dnsmos_rf"] * 2
    subsets = list(dict.fromkeys(s["subset"]))
    assert subsets == ["all", "codec-only (without degradation=clean)"]
    n_all = s.loc[s.subset == "all", "n"].tolist()
    n_codec = s.loc[s.subset != "all", "n"].tolist()
    assert [c / a for a, c in zip(n_all, n_codec, strict=True)] == pytest.approx([2 / 3] * 2)
    assert max(n_all) == 18  # pooled over every clip of the 6 talkers (train + test)
    assert s["method"].str.contains("pooled out of fold over 3 talker folds").all()
    assert s["method"].str.contains("speaker-clustered").all()
    assert (s["n_clusters"] == 6).all() and s["method"].str.contains("WARNING").all()
    assert s.groupby("subset")["best"].sum().ge(1).all()
    preds = pd.read_csv(tmp_path / "out" / "predictions.tsv", sep="\t")
    assert len(preds[preds.recipe == "dnsmos_rf"]) == 18
    folds = pd.read_csv(tmp_path / "out" / "dnsmos_rf" / "crossfit_folds.tsv", sep="\t")
    assert len(folds) == 3 and folds["n_clips"].sum() == 18
    assert "codec-only" in capsys.readouterr().out


def test_whisper_dnsmos_ridge_appends_dnsmos_to_the_embedding(tmp_path, monkeypatch):
    from judgeaudit.specialists import load, workflow
    from judgeaudit.specialists.adapters import assemble_whisper_base
    from judgeaudit.specialists.naturalness_compare import recipe_cfg

    manifest = _mos_manifest(tmp_path, 2)
    whisper = str(assemble_whisper_base(tmp_path / "whisper-base"))
    cfg = recipe_cfg("whisper_dnsmos_ridge", whisper, "score")
    cfg["whisper_ridge"]["alphas"] = [10.0, 100.0]
    meta = workflow.train("naturalness", manifest, cfg, tmp_path / "m", tmp_path / "cache", 1)
    assert meta["extra_feature_set"] == "dnsmos_p808"
    assert meta["extra_columns"] == ["dnsmos_p808"] and "+dnsmos_p808" in meta["version"]
    pred = workflow.predict("naturalness", tmp_path / "m" / "model.json", manifest,
                            tmp_path / "cache", 1)
    man = pd.read_csv(manifest, sep="\t")
    ok = pred[pred["status"] == "ok"]
    assert len(ok) >= len(man) - 4
    model = load("naturalness", tmp_path / "m")
    row = ok.iloc[0]
    path = man.set_index("clip_id").loc[row["clip_id"], "path"]
    from pathlib import Path

    assert model.score_audio(Path(path).read_bytes()) == pytest.approx(row["score"], abs=1e-5)
    # without the DNSMOS columns the same embedding gives another model
    plain = workflow.train("naturalness", manifest, recipe_cfg("whisper_ridge", whisper,
                                                               "score"), tmp_path / "p",
                           tmp_path / "cache", 1)
    assert "extra_feature_set" not in plain and plain["version"] != meta["version"]
