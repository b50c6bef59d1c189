"""Reading clips (from a path or raw WAV bytes) and screening them before feature
extraction: a clip that is empty, too short, silent or saturated gets a recorded
reason instead of NaN features."""

from __future__ import annotations

import io
import os
from dataclasses import dataclass

import numpy as np
import soundfile as sf

#: Status values a clip can get (besides "ok").
STATUS_REASONS = ("unreadable", "empty", "too_short", "silent", "saturated", "nonfinite")


@dataclass(frozen=True)
class ScreenConfig:
    """Thresholds of the screen (the `features:` config section holds the values)."""

    min_duration_s: float = 0.25
    silence_dbfs: float = -60.0
    saturation_fraction: float = 0.5


DEFAULT_SCREEN = ScreenConfig()


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
    rms = float(np.sqrt(np.mean(np.square(x, dtype=np.float64))))
    if rms <= 0 or 20 * np.log10(rms) < cfg.silence_dbfs:
        return "silent"
    peak = float(np.max(np.abs(x)))
    if np.mean(np.abs(x) >= 0.999 * max(peak, 1e-9)) >= cfg.saturation_fraction and peak > 0.5:
        # clipped to nothing: most samples sit at the rails, a square wave without voice
        return "saturated"
    return "ok"


def to_wav_bytes(x: np.ndarray, sr: int) -> bytes:
    """16-bit PCM WAV bytes of mono samples (used by tests and the benchmark)."""
    buf = io.BytesIO()
    sf.write(buf, np.asarray(x, dtype=np.float32), sr, format="WAV", subtype="PCM_16")
    return buf.getvalue()
