"""WAV bytes <-> int16 PCM for the embedded judges (mono; stereo is averaged)."""

from __future__ import annotations

import io
import wave

import numpy as np

from judgeaudit.io import sha256_bytes


def decode_wav(data: bytes) -> tuple[np.ndarray, int]:
    try:
        with wave.open(io.BytesIO(data), "rb") as w:
            sr, ch, width = w.getframerate(), w.getnchannels(), w.getsampwidth()
            frames = w.readframes(w.getnframes())
        if width != 2:
            raise wave.Error(f"sample width {width}")
        pcm = np.frombuffer(frames, dtype="<i2")
    except (wave.Error, EOFError):
        import soundfile as sf

        arr, sr = sf.read(io.BytesIO(data), dtype="int16", always_2d=True)
        pcm, ch = arr.reshape(-1), arr.shape[1]
    if ch > 1:
        pcm = pcm.reshape(-1, ch).mean(axis=1).astype(np.int16)
    return pcm.astype(np.int16, copy=False), int(sr)


def encode_wav(pcm: np.ndarray, sample_rate: int) -> bytes:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(int(sample_rate))
        w.writeframes(np.asarray(pcm, dtype="<i2").tobytes())
    return buf.getvalue()


def pcm_hash(pcm: np.ndarray) -> str:
    """Content hash of the samples (not the container): identical for a clip whether
    it arrived as its own file or as a segment of a concat."""
    return sha256_bytes(np.asarray(pcm, dtype="<i2").tobytes())
