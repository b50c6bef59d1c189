"""WAV read/write helpers: mono 16-bit PCM, deterministic bytes.

Files are written with soundfile as plain RIFF/WAVE PCM_16 (no timestamps or
peak chunks), to an in-memory buffer first so that the bytes (and their sha256)
are known before the atomic rename.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np
import soundfile as sf

from judgeaudit.io import sha256_bytes, write_bytes_atomic

#: the project's float <-> PCM_16 scale: `to_pcm16` writes round(x * PCM16_SCALE) and
#: `from_pcm16` reads k / PCM16_SCALE, so write(read(k)) == k for every int16 k
#: (libsndfile's own float reader divides by 32768 instead)
PCM16_SCALE = 32767.0


def to_pcm16(x: np.ndarray) -> np.ndarray:
    """float samples in [-1, 1] -> int16 (clipped, rounded half to even)."""
    x = np.asarray(x)
    if x.dtype == np.int16:
        return x
    return np.clip(np.round(x.astype(np.float64) * PCM16_SCALE), -32768, 32767).astype(np.int16)


def from_pcm16(pcm: np.ndarray) -> np.ndarray:
    """int16 samples -> float32 at the scale `to_pcm16` writes (its exact inverse)."""
    return (np.asarray(pcm, dtype=np.float64) / PCM16_SCALE).astype(np.float32)


def wav_bytes(x: np.ndarray, sample_rate: int) -> bytes:
    """Encode mono samples (float in [-1, 1] or int16) as PCM_16 WAV bytes."""
    pcm = to_pcm16(x)
    if pcm.ndim != 1:
        raise ValueError(f"expected mono samples (1-D), got shape {pcm.shape}")
    buf = io.BytesIO()
    sf.write(buf, pcm, int(sample_rate), subtype="PCM_16", format="WAV")
    return buf.getvalue()


def write_wav(path: str | os.PathLike, x: np.ndarray, sample_rate: int) -> dict:
    """Write a WAV atomically; return {sha256, duration_s, sample_rate, channels, n_samples}."""
    data = wav_bytes(x, sample_rate)
    write_bytes_atomic(path, data)
    n = int(np.asarray(x).shape[0])
    return {
        "sha256": sha256_bytes(data),
        "duration_s": round(n / int(sample_rate), 6),
        "sample_rate": int(sample_rate),
        "channels": 1,
        "n_samples": n,
    }


def check_samples(x: np.ndarray, where: str) -> None:
    """ValueError naming `where` when `x` has no samples or any non-finite one (NaN or
    infinity: a float WAV can hold them, and PCM16 conversion would turn them into
    full-scale clicks without a word)."""
    if x.shape[0] == 0:
        raise ValueError(f"{where}: audio has no samples (empty file)")
    finite = np.isfinite(x)
    if not finite.all():
        bad = int(x.size - np.count_nonzero(finite))
        first = int(np.argmin(finite.all(axis=1) if x.ndim == 2 else finite))
        raise ValueError(f"{where}: {bad} non-finite sample(s) (NaN or infinity), first at "
                         f"frame {first}; refusing to read it")


def read_wav(path: str | os.PathLike | bytes, mono: bool = True) -> tuple[np.ndarray, int]:
    """Read a WAV file (path or bytes) as float32 in [-1, 1]; down-mix if `mono`.
    An empty file or one holding a non-finite sample is refused (ValueError naming
    the file)."""
    src = io.BytesIO(path) if isinstance(path, bytes | bytearray) else Path(path)
    x, sr = sf.read(src, dtype="float32", always_2d=True)
    check_samples(x, "<WAV bytes>" if isinstance(src, io.BytesIO) else str(src))
    if mono:
        return x.mean(axis=1).astype(np.float32), int(sr)
    return x, int(sr)


__all__ = ["PCM16_SCALE", "check_samples", "from_pcm16", "read_wav", "to_pcm16", "wav_bytes",
           "write_wav"]
