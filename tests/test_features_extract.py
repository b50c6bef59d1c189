"""Features stage: screening, per-clip extraction, sha256-keyed cache, process pool."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judgeaudit.features import extract as fx
from judgeaudit.features.audio import DEFAULT_SCREEN, ScreenConfig, load_audio, screen, to_wav_bytes
from judgeaudit.io import sha256_bytes
from judgeaudit.testing.toyaudio import voice

SR = 16000


def _write(tmp_path, name, x):
    data = to_wav_bytes(x, SR)
    p = tmp_path / f"{name}.wav"
    p.write_bytes(data)
    return {"clip_id": name, "path": str(p), "sha256": sha256_bytes(data)}


def test_screen_reasons():
    cfg = ScreenConfig(min_duration_s=0.25, silence_dbfs=-60, saturation_fraction=0.5)
    assert screen(voice(duration_s=1.0), SR, cfg) == "ok"
    assert screen(np.zeros(SR, np.float32), SR, cfg) == "no_speech"
    assert screen(voice(duration_s=0.1), SR, cfg) == "too_short"
    assert screen(np.zeros(0, np.float32), SR, cfg) == "empty"
    square = np.sign(np.sin(np.linspace(0, 400, SR))).astype(np.float32)
    assert screen(square, SR, cfg) == "saturated"
    # mild clipping (a few peaks at the rails) keeps its features
    mild = np.clip(voice(duration_s=1.0, level_db=-6) * 1.5, -0.9, 0.9)
    assert screen(mild, SR, cfg) == "ok"
    bad = voice(duration_s=1.0)
    bad[10] = np.nan
    assert screen(bad, SR, cfg) == "nonfinite"


def test_load_audio_bytes_and_errors(tmp_path):
    x = voice(duration_s=0.5)
    y, sr = load_audio(to_wav_bytes(x, SR))
    assert sr == SR and y.shape == x.shape and np.allclose(x, y, atol=1e-4)
    with pytest.raises(ValueError, match="not a readable audio file"):
        load_audio(b"not a wav")


def test_egemaps_values_track_pitch():
    names = fx.feature_names("eGeMAPSv02")
    assert len(names) == 88
    lo = dict(zip(names, fx.compute(voice(f0=110), SR, "eGeMAPSv02"), strict=True))
    hi = dict(zip(names, fx.compute(voice(f0=220), SR, "eGeMAPSv02"), strict=True))
    key = "F0semitoneFrom27.5Hz_sma3nz_amean"
    # an octave is 12 semitones on openSMILE's scale
    assert 10 < hi[key] - lo[key] < 14
    assert abs(27.5 * 2 ** (lo[key] / 12) - 110) < 15


def test_feature_set_validation():
    with pytest.raises(ValueError, match="unknown feature set"):
        fx.split_sets("eGeMAPS+nope")
    assert fx.split_sets("mfcc_stats+eGeMAPSv02") == ["mfcc_stats", "eGeMAPSv02"]
    n = len(fx.feature_names("mfcc_stats+eGeMAPSv02"))
    assert n == len(fx.feature_names("mfcc_stats")) + 88


def test_table_status_cache_and_sha_check(tmp_path, monkeypatch):
    clips = pd.DataFrame([
        _write(tmp_path, "a", voice(f0=120, seed=1)),
        _write(tmp_path, "b", voice(f0=180, seed=2)),
        _write(tmp_path, "silent", np.zeros(SR, np.float32)),
        _write(tmp_path, "short", voice(duration_s=0.05)),
    ])
    cache = tmp_path / "cache"
    t1 = fx.extract_table(clips, "eGeMAPSv02", cache, n_jobs=1)
    assert list(t1["status"]) == ["ok", "ok", "no_speech", "too_short"]
    assert t1.loc[t1.status == "ok"].iloc[:, 3:].notna().all().all()
    assert t1.loc[t1.status != "ok"].iloc[:, 3:].isna().all().all()
    entries = list((cache / "features" / "eGeMAPSv02").rglob("*.npz"))
    assert len(entries) == 4
    # cached clips are never recomputed
    calls = []
    monkeypatch.setattr(fx, "compute", lambda *a, **k: calls.append(a) or None)
    t2 = fx.extract_table(clips, "eGeMAPSv02", cache, n_jobs=1)
    assert calls == []
    pd.testing.assert_frame_equal(t1, t2)
    monkeypatch.undo()
    # a changed file under an old manifest hash is an error naming the clip
    (tmp_path / "a.wav").write_bytes(to_wav_bytes(voice(f0=300), SR))
    stale = clips.copy()
    stale.loc[0, "sha256"] = "0" * 64
    with pytest.raises(ValueError, match="does not match the manifest"):
        fx.extract_table(stale.iloc[:1], "eGeMAPSv02", cache, n_jobs=1)


def test_screen_thresholds_change_the_cache_key(tmp_path):
    assert fx.extract_table is not None
    k1 = fx.extractor_key("eGeMAPSv02", ScreenConfig())
    k2 = fx.extractor_key("eGeMAPSv02", ScreenConfig(min_duration_s=1.0))
    assert k1 != k2 and k1 != fx.extractor_key("ComParE_2016", ScreenConfig())


def test_process_pool_matches_single_process(tmp_path):
    clips = pd.DataFrame([_write(tmp_path, f"c{i}", voice(f0=100 + 20 * i, seed=i))
                          for i in range(4)])
    serial = fx.extract_table(clips, "eGeMAPSv02", None, n_jobs=1)
    pooled = fx.extract_table(clips, "eGeMAPSv02", None, n_jobs=2)
    pd.testing.assert_frame_equal(serial, pooled)


def test_missing_column_is_an_error():
    with pytest.raises(ValueError, match="missing column 'path'"):
        fx.extract_table(pd.DataFrame({"clip_id": ["x"]}), "eGeMAPSv02")


def test_featurize_cached_computes_a_clip_once_across_processes(tmp_path, monkeypatch):
    """featurize_cached: a clip another process is computing (fresh `.computing`
    marker) is waited for and read back; a stale marker (a crash) is ignored; the
    values equal featurize_bytes's exactly, hit or miss."""
    import os
    import threading
    import time

    data = to_wav_bytes(voice(duration_s=1.0, seed=3), 16000)
    want = fx.featurize_bytes(data, "eGeMAPSv02")
    cache = fx.FeatureCache(tmp_path, "eGeMAPSv02", DEFAULT_SCREEN)
    entry = cache.path(sha256_bytes(data))
    marker = entry.with_name(entry.name + ".computing")
    marker.parent.mkdir(parents=True)
    marker.write_text("other process")

    def other_process_finishes():
        time.sleep(0.3)
        cache.put(sha256_bytes(data), *want)
        marker.unlink()

    t = threading.Thread(target=other_process_finishes)
    t.start()
    calls = []
    real = fx.featurize_bytes
    monkeypatch.setattr(fx, "featurize_bytes", lambda *a: calls.append(1) or real(*a))
    got = fx.featurize_cached(data, "eGeMAPSv02", DEFAULT_SCREEN, tmp_path)
    t.join()
    assert got[0] == want[0] and np.array_equal(got[1], want[1]) and calls == []
    # a crashed computation's marker (old mtime) does not make anyone wait
    other = to_wav_bytes(voice(duration_s=1.0, seed=4), 16000)
    stale = cache.path(sha256_bytes(other))
    stale = stale.with_name(stale.name + ".computing")
    stale.parent.mkdir(parents=True, exist_ok=True)
    stale.write_text("crashed")
    os.utime(stale, (1, 1))
    t0 = time.monotonic()
    got = fx.featurize_cached(other, "eGeMAPSv02", DEFAULT_SCREEN, tmp_path)
    assert time.monotonic() - t0 < fx.COMPUTING_STALE_S / 2 and calls == [1]
    assert np.array_equal(got[1], real(other, "eGeMAPSv02")[1])
    assert cache.get(sha256_bytes(other)) is not None  # stored for the next job
