"""The speech screen on real speech: quiet but audible EmoDB speech (attenuated to
-45 dBFS peak) is kept; a clip without speech is excluded with a counted, logged
reason and is never given a label or scores, by the feature table, the emotion
specialist, its accuracy table and the perceiving (listener) judge."""

from __future__ import annotations

import csv
import json
import logging

import numpy as np
import pandas as pd
import pytest
import soundfile as sf

from judgeaudit.features.audio import (
    NO_SPEECH,
    ScreenConfig,
    load_audio,
    screen,
    speech_activity,
    to_wav_bytes,
)
from judgeaudit.features.extract import extract_table
from judgeaudit.io import sha256_bytes

SR = 16000
PEAK_DB = -45.0


def _labels(emodb_dir):
    with open(emodb_dir / "labels.tsv", encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def _quiet(emodb_dir, name: str, peak_db: float = PEAK_DB) -> bytes:
    """An EmoDB clip scaled to `peak_db` dBFS peak, as 16-bit WAV bytes (quantised)."""
    x, sr = sf.read(str(emodb_dir / "wav" / name), dtype="float64")
    x = x / np.max(np.abs(x)) * 10 ** (peak_db / 20)
    return to_wav_bytes(x.astype(np.float32), sr)


def _spread(emodb_dir, n_per_speaker: int, emotions=None):
    rows = _labels(emodb_dir)
    out = []
    for spk in sorted({r["speaker"] for r in rows}):
        mine = sorted((r for r in rows if r["speaker"] == spk
                       and (emotions is None or r["emotion"] in emotions)),
                      key=lambda r: r["file"])
        out.extend(mine[:: max(1, len(mine) // n_per_speaker)][:n_per_speaker])
    return out


def test_quiet_emodb_speech_is_not_screened_as_silent(emodb_dir):
    rows = _spread(emodb_dir, 3)  # 30 clips, every speaker
    old_rule_silent = 0
    for r in rows:
        x, sr = load_audio(_quiet(emodb_dir, r["file"]))
        assert 20 * np.log10(np.max(np.abs(x))) == pytest.approx(PEAK_DB, abs=0.1)
        rms_db = 20 * np.log10(np.sqrt(np.mean(x.astype(np.float64) ** 2)))
        old_rule_silent += rms_db < -60.0  # the former absolute RMS screen
        assert screen(x, sr) == "ok", (r["file"], speech_activity(x, sr))
        assert speech_activity(x, sr).speech_s >= 0.5, r["file"]
    # the old -60 dBFS RMS rule would have called most of these audible clips silent
    assert old_rule_silent >= len(rows) // 2


@pytest.mark.parametrize("kind", ["zeros", "dither", "white_noise", "hum", "tone"])
def test_clips_without_speech_are_no_speech(kind):
    rng = np.random.default_rng(0)
    t = np.arange(2 * SR) / SR
    x = {"zeros": np.zeros(2 * SR),
         "dither": np.round(rng.standard_normal(2 * SR) * 0.5) / 32767,
         "white_noise": 0.03 * rng.standard_normal(2 * SR),
         "hum": 0.003 * np.sin(2 * np.pi * 50 * t) + 1e-4 * rng.standard_normal(2 * SR),
         "tone": 0.3 * np.sin(2 * np.pi * 220 * t)}[kind].astype(np.float32)
    assert screen(x, SR) == NO_SPEECH
    # ... at any level: loudness is not what the screen looks at
    peak = float(np.max(np.abs(x)))
    if peak > 0:
        assert screen(x / peak * 0.5, SR) == NO_SPEECH


def _write(tmp_path, name, data: bytes) -> dict:
    p = tmp_path / "clips" / f"{name}.wav"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    return {"clip_id": name, "path": str(p), "sha256": sha256_bytes(data)}


@pytest.fixture(scope="module")
def emodb_model(tmp_path_factory, emodb_dir):
    """A small eGeMAPS + LR emotion specialist on 6 EmoDB speakers (normal level)."""
    from judgeaudit.specialists.classifier import FeatureClassifier

    tmp = tmp_path_factory.mktemp("emo")
    emotions = {"angry", "happy", "sad", "neutral"}
    rows = [r for r in _spread(emodb_dir, 5, emotions)
            if r["speaker"] in {"03", "08", "09", "10", "11", "12"}]
    clips = pd.DataFrame([
        {**_write(tmp, r["file"][:-4], (emodb_dir / "wav" / r["file"]).read_bytes()),
         "emotion": r["emotion"], "speaker": r["speaker"], "split": "train"} for r in rows])
    feats = extract_table(clips, "eGeMAPSv02", cache_dir=tmp / "cache")
    table = feats.merge(clips[["clip_id", "emotion", "speaker", "split"]], on="clip_id")
    model = FeatureClassifier.fit("emotion", table, "emotion",
                                  ("neutral", "happy", "sad", "angry"), "eGeMAPSv02")
    model.save(tmp / "model")
    return model, tmp / "model", tmp


def test_silent_clip_is_excluded_with_a_counted_reason(tmp_path, emodb_dir, emodb_model,
                                                       caplog):
    from judgeaudit.specialists import evaluate

    model, _, _ = emodb_model
    test_rows = [r for r in _spread(emodb_dir, 2, {"angry", "happy", "sad", "neutral"})
                 if r["speaker"] in {"13", "14", "15", "16"}]
    clips = [dict(_write(tmp_path, f"q_{r['file'][:-4]}", _quiet(emodb_dir, r["file"])),
                  emotion=r["emotion"], speaker=r["speaker"]) for r in test_rows]
    silent = to_wav_bytes(np.zeros(2 * SR, np.float32), SR)
    clips.append(dict(_write(tmp_path, "silent", silent), emotion="neutral", speaker="16"))
    frame = pd.DataFrame(clips)
    with caplog.at_level(logging.WARNING):
        feats = extract_table(frame, "eGeMAPSv02", cache_dir=tmp_path / "cache")
    assert feats.status.value_counts().to_dict() == {"ok": len(clips) - 1, NO_SPEECH: 1}
    assert any("1 of" in r.getMessage() and "silent" in r.getMessage()
               and r.levelname == "WARNING" for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        pred = model.predict_table(feats)
    row = pred.set_index("clip_id").loc["silent"]
    assert row.status == NO_SPEECH and row.label == ""  # no default label ...
    assert row.filter(like="score_").isna().all()        # ... and no uniform scores
    ok = pred[pred.clip_id != "silent"]
    assert ok.label.isin(model.classes).all() and ok.filter(like="score_").notna().all().all()
    assert any("excluded by the screen" in r.getMessage() for r in caplog.records)
    # the specialist accuracy table counts it as invalid
    manifest = frame.assign(split="test")
    table_row, _ = evaluate.classification("emotion", "emodb", pred.assign(split="test"),
                                           manifest, "emotion", None)
    assert table_row["n_invalid"] == 1 and table_row["n"] == len(clips)
    # single-clip API: explicit excluded prediction
    p = model.predict_audio(silent)
    assert p.excluded and p.status == NO_SPEECH and p.label == "" and p.scores == {}


def test_listener_answers_no_speech_instead_of_a_label(tmp_path, emodb_dir, emodb_model):
    from judgeaudit.judges.adapters import make_adapter
    from judgeaudit.judges.parse import parse_response
    from judgeaudit.judges.request import AnswerSpec, AudioPart, LoadedRequest, Request, TextPart
    from judgeaudit.vocab.labels import EMOTIONS

    _, model_dir, _ = emodb_model
    q = "Question: which emotion does the speaker express? Answer with one of: " + \
        ", ".join(EMOTIONS) + "."

    def ask(wav: bytes, provider="listener", **extra):
        sha = sha256_bytes(wav)
        lr = LoadedRequest(Request(None, (TextPart(q), AudioPart(sha, "wav")),
                                   AnswerSpec("label", tuple(EMOTIONS))), {sha: wav})
        adapter = make_adapter("j", {"provider": provider, **extra,
                                     "perception": {"models": {"emotion": str(model_dir)}}})
        raw = adapter.complete_sync(lr).raw_text
        return json.loads(raw)["label"], parse_response(raw, lr.request.answer), adapter

    quiet = _quiet(emodb_dir, "16a01Wb.wav")
    label, parsed, _ = ask(quiet)
    assert label in EMOTIONS and parsed.status == "valid"
    silent = to_wav_bytes(np.zeros(2 * SR, np.float32), SR)
    label, parsed, adapter = ask(silent)
    assert label == NO_SPEECH and parsed.status != "valid"  # counted as invalid, not guessed
    assert adapter.perception.excluded[("emotion", NO_SPEECH)] == 1
    label, parsed, _ = ask(silent, provider="simulated",
                           simulated={"follow_block": {"with_audio": 1.0}})
    assert label == NO_SPEECH


def test_screen_config_accepts_saved_model_settings():
    cfg = ScreenConfig(**{"min_duration_s": 0.25, "silence_dbfs": -60.0,
                          "saturation_fraction": 0.5})  # a model saved before the VAD screen
    assert cfg.vad_mode == 2 and cfg.min_speech_s == 0.1


def test_study_a_clip_set_leaves_out_excluded_clips(tmp_path, caplog):
    from judgeaudit.study_a.build import load_clipset

    m = pd.DataFrame({"clip_id": ["a", "b", "c"], "path": ["a.wav", "b.wav", "c.wav"],
                      "sha256": ["1", "2", "3"], "emotion": ["sad", "happy", "sad"],
                      "split": "test"})
    p = pd.DataFrame({"clip_id": ["a", "b", "c"], "label": ["sad", "", "happy"],
                      "status": ["ok", NO_SPEECH, "ok"]})
    m.to_csv(tmp_path / "m.tsv", sep="\t", index=False)
    p.to_csv(tmp_path / "p.tsv", sep="\t", index=False)
    cfg = {"label_column": "emotion", "labels": ["angry", "happy", "sad"], "per_class": None}
    with caplog.at_level(logging.WARNING):
        cs = load_clipset("emotion", cfg, tmp_path / "m.tsv", tmp_path / "p.tsv", 1)
    assert list(cs.clips.clip_id) == ["a", "c"] and "nan" not in set(cs.clips.pred)
    assert any("1 clip(s) excluded" in r.getMessage() for r in caplog.records)


@pytest.mark.slow
def test_whisper_lid_excludes_a_clip_without_speech(tmp_path, emodb_dir):
    from judgeaudit.specialists.adapters import WhisperLID, assemble_whisper_base

    model = WhisperLID(assemble_whisper_base(tmp_path / "whisper-base"), ["en", "de"])
    p = model.predict_audio(to_wav_bytes(np.zeros(2 * SR, np.float32), SR))
    assert p.excluded and p.status == NO_SPEECH and p.label == "" and p.scores == {}
    q = model.predict_audio(_quiet(emodb_dir, "03a01Fa.wav"))  # quiet German speech
    assert q.status == "ok" and q.label in ("en", "de")
