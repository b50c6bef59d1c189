"""Reading clips (from a path or raw WAV bytes) and screening them before feature
extraction: a clip that is empty, too short, without speech or saturated gets a
recorded reason instead of NaN features.

Speech, not level: a clip is screened `no_speech` when a voice-activity detector
finds less than `min_speech_s` of speech in it. The detector is WebRTC's VAD
(`webrtcvad`, mode `vad_mode`) run on 30 ms frames of the clip normalised to its
own peak (so a quiet but audible recording is judged like a loud one), and a frame
counts only when it also stands `speech_margin_db` above the clip's own noise floor
(its 10th-percentile frame level: a stationary hum, hiss or tone has none) and above
the digital floor `silence_dbfs` (default -90 dBFS, a couple of 16-bit LSBs). An
absolute RMS threshold (the former -60 dBFS rule) screened audible speech recorded
at a low level as silent; quiet EmoDB speech at -45 dBFS peak (RMS about -62 dBFS)
passes this screen, digital silence, dither, white noise and pure tones do not.

A screened clip is never given a label or a score: its status travels with it
(`featurize_bytes` returns no features; the specialists return an explicit
excluded prediction) and the callers count the statuses in their outputs."""

from __future__ import annotations

import io
import os
from dataclasses import dataclass

import numpy as np
import soundfile as sf

#: Status values a clip can get (besides "ok").
STATUS_REASONS = ("unreadable", "empty", "too_short", "no_speech", "saturated", "nonfinite")
NO_SPEECH = "no_speech"
VAD_RATES = (8000, 16000, 32000, 48000)
FRAME_S = 0.03


@dataclass(frozen=True)
class ScreenConfig:
    """Thresholds of the screen (the `features:` config section holds the first three;
    the speech-detector settings keep their defaults unless set in code)."""

    min_duration_s: float = 0.25
    #: digital floor: frames whose RMS is below this never count as speech
    silence_dbfs: float = -90.0
    saturation_fraction: float = 0.5
    vad_mode: int = 2
    speech_margin_db: float = 3.0
    min_speech_s: float = 0.1


DEFAULT_SCREEN = ScreenConfig()


@dataclass(frozen=True)
class SpeechActivity:
    speech_s: float
    n_frames: int
    n_speech_frames: int
    noise_floor_dbfs: float
    peak_dbfs: float


def speech_activity(x: np.ndarray, sr: int, cfg: ScreenConfig | None = None
                    ) -> SpeechActivity:
    """Seconds of detected speech in mono float samples `x` (see the module doc)."""
    import webrtcvad

    cfg = cfg or DEFAULT_SCREEN
    x = np.asarray(x, dtype=np.float64)
    if sr not in VAD_RATES:
        from math import gcd

        from scipy.signal import resample_poly

        g = gcd(int(sr), 16000)
        x, sr = resample_poly(x, 16000 // g, int(sr) // g), 16000
    flen = int(sr * FRAME_S)
    n = len(x) // flen
    peak = float(np.max(np.abs(x))) if len(x) else 0.0
    peak_db = 20 * np.log10(peak) if peak > 0 else -np.inf
    if n == 0 or peak <= 0:
        return SpeechActivity(0.0, n, 0, -np.inf, peak_db)
    frames = x[: n * flen].reshape(n, flen)
    level = 20 * np.log10(np.maximum(np.sqrt(np.mean(frames**2, axis=1)), 1e-12))
    floor = float(np.percentile(level, 10))
    pcm = (np.clip(frames / peak * 0.5, -1, 1) * 32767).astype("<i2")
    vad = webrtcvad.Vad(int(cfg.vad_mode))
    voiced = np.fromiter((vad.is_speech(f.tobytes(), sr) for f in pcm), bool, count=n)
    active = voiced & (level >= floor + cfg.speech_margin_db) & (level >= cfg.silence_dbfs)
    k = int(active.sum())
    return SpeechActivity(k * FRAME_S, n, k, floor, peak_db)




def load_audio(source: str | os.PathLike | bytes) -> tuple[np.ndarray, int]:
    """Mono float32 samples in [-1, 1] and the sample rate, from a path or WAV bytes.

    Multi-channel audio is averaged to mono. Raises ValueError naming the source
    when the data cannot be decoded."""
    try:
        if isinstance(source, bytes | bytearray | memoryview):
            data, sr = sf.read(io.BytesIO(bytes(source)), dtype="float32", always_2d=True)
        else:
            data, sr = sf.read(str(source), dtype="float32", always_2d=True)
    except (sf.LibsndfileError, RuntimeError, TypeError) as exc:
        where = "audio bytes" if isinstance(source, bytes | bytearray) else f"'{source}'"
        raise ValueError(f"{where}: not a readable audio file ({exc})") from exc
    return data.mean(axis=1).astype(np.float32), int(sr)


def screen(x: np.ndarray, sr: int, cfg: ScreenConfig = DEFAULT_SCREEN) -> str:
    """'ok' or the reason the clip cannot give meaningful features."""
    if x.size == 0:
        return "empty"
    if not np.all(np.isfinite(x)):
        return "nonfinite"
    if x.size / sr < cfg.min_duration_s:
        return "too_short"
    peak = float(np.max(np.abs(x)))
    if np.mean(np.abs(x) >= 0.999 * max(peak, 1e-9)) >= cfg.saturation_fraction and peak > 0.5:
        # clipped to nothing: most samples sit at the rails, a square wave without voice
        return "saturated"
    if speech_activity(x, sr, cfg).speech_s < cfg.min_speech_s:
        return NO_SPEECH
    return "ok"


def to_wav_bytes(x: np.ndarray, sr: int) -> bytes:
    """16-bit PCM WAV bytes of mono samples (used by tests and the benchmark)."""
    buf = io.BytesIO()
    sf.write(buf, np.asarray(x, dtype=np.float32), sr, format="WAV", subtype="PCM_16")
    return buf.getvalue()
