"""Reading corpus audio (WAV, FLAC, Ogg/Vorbis/Opus via soundfile) and the cached
16 kHz mono copies the study works on.

The derived copy of a source file is content-addressed: it lives at
`<cache>/<sha256 of the source>.wav`, is made once, and is linked (or copied)
to its place in the dataset folder. Its own sha256 goes into the manifest.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from math import gcd
from pathlib import Path

import numpy as np
import soundfile as sf
from scipy.signal import resample_poly

from judgeaudit.io import atomic_path, sha256_file

TARGET_SR = 16000
DERIVATION = "16k_mono_pcm16_v1"  # resample_poly, channel mean, PCM16; part of the cache key


class AudioError(ValueError):
    """A clip that is missing, unreadable or empty; the message names the path."""


@dataclass(frozen=True)
class AudioInfo:
    sample_rate: int
    channels: int
    frames: int
    format: str
    subtype: str

    @property
    def duration_s(self) -> float:
        return self.frames / self.sample_rate if self.sample_rate else 0.0


def probe(path: str | os.PathLike) -> AudioInfo:
    p = Path(path)
    if not p.is_file():
        raise AudioError(f"{p}: audio file missing")
    try:
        info = sf.info(str(p))
    except (sf.LibsndfileError, RuntimeError, OSError) as exc:
        raise AudioError(f"{p}: unreadable audio ({exc})") from exc
    if info.frames <= 0 or info.samplerate <= 0:
        raise AudioError(f"{p}: audio has no samples")
    return AudioInfo(info.samplerate, info.channels, info.frames, info.format, info.subtype)


def read(path: str | os.PathLike) -> tuple[np.ndarray, int]:
    """float32 samples (frames, channels) and the sample rate; AudioError names the path."""
    probe(path)
    try:
        data, sr = sf.read(str(path), dtype="float32", always_2d=True)
    except (sf.LibsndfileError, RuntimeError, OSError) as exc:
        raise AudioError(f"{path}: unreadable audio ({exc})") from exc
    if data.shape[0] == 0:
        raise AudioError(f"{path}: audio has no samples")
    return data, sr


def to_mono_16k(data: np.ndarray, sr: int, target_sr: int = TARGET_SR) -> np.ndarray:
    mono = data.mean(axis=1) if data.ndim == 2 else data
    if sr != target_sr:
        g = gcd(sr, target_sr)
        mono = resample_poly(mono, target_sr // g, sr // g)
    return np.clip(mono, -1.0, 1.0).astype(np.float32)


def write_wav16(path: str | os.PathLike, mono: np.ndarray, sr: int = TARGET_SR) -> None:
    with atomic_path(path, suffix=".wav") as tmp:
        sf.write(str(tmp), mono, sr, subtype="PCM_16", format="WAV")


@dataclass(frozen=True)
class Derived:
    path: Path
    sha256: str
    duration_s: float


def derive(src: str | os.PathLike, src_sha256: str, cache_dir: str | os.PathLike,
           dest: str | os.PathLike) -> Derived:
    """The 16 kHz mono PCM16 copy of `src` at `dest` (made once per source content,
    cached under `cache_dir`)."""
    cache_dir, dest = Path(cache_dir), Path(dest)
    cached = cache_dir / DERIVATION / src_sha256[:2] / f"{src_sha256}.wav"
    if not cached.is_file():
        data, sr = read(src)
        write_wav16(cached, to_mono_16k(data, sr))
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dest.exists() or dest.is_symlink():
        dest.unlink()
    try:
        os.link(cached, dest)
    except OSError:
        shutil.copyfile(cached, dest)
    info = probe(dest)
    return Derived(dest, sha256_file(dest), info.duration_s)
