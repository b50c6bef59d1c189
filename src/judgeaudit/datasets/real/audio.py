"""Reading corpus audio (WAV, FLAC, Ogg/Vorbis/Opus via soundfile) and the cached
16 kHz mono copies the study works on.

Integrity: a RIFF/WAVE file whose `data` chunk (or RIFF size) declares more bytes
than the file holds -- a copy cut short by an interrupted transfer -- is rejected
with an AudioError naming the clip and both sizes (libsndfile would silently read
it as a shorter clip). Rejecting, rather than accepting with a warning, keeps a
damaged clip from entering a manifest whose sha256 would then vouch for it; the
user re-fetches or removes the file. The same holds for any decoder that returns
fewer frames than the header promises (FLAC/Ogg checked on read).

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

from judgeaudit.datasets.audio import check_samples
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


_UNKNOWN_SIZES = (0, 0xFFFFFFFF)  # streamed WAVs / RF64 placeholders: size not declared


def check_riff(path: str | os.PathLike) -> None:
    """Raise AudioError when a RIFF/WAVE file is shorter than its headers declare.

    Walks the chunk list: the `data` chunk's declared size must fit in the bytes
    that follow its header (a declared size of 0 or 0xFFFFFFFF means "unknown",
    as written by streaming encoders and RF64, and is accepted). Non-RIFF files
    are left to their decoder."""
    p = Path(path)
    size = p.stat().st_size
    with open(p, "rb") as fh:
        head = fh.read(12)
        if len(head) < 12 or head[:4] not in (b"RIFF", b"RIFX") or head[8:12] != b"WAVE":
            return
        order = "little" if head[:4] == b"RIFF" else "big"
        pos = 12
        while pos + 8 <= size:
            fh.seek(pos)
            hdr = fh.read(8)
            cid, csize = hdr[:4], int.from_bytes(hdr[4:8], order)
            available = size - pos - 8
            if cid == b"data":
                if csize not in _UNKNOWN_SIZES and csize > available:
                    raise AudioError(
                        f"{p}: truncated WAV: the data chunk declares {csize} bytes but "
                        f"the file holds only {available} after the chunk header "
                        f"({available / csize:.0%}); re-fetch the clip or remove it")
                return
            if csize > available:
                raise AudioError(f"{p}: truncated WAV: chunk {cid!r} declares {csize} bytes, "
                                 f"only {available} present before end of file")
            pos += 8 + csize + (csize & 1)
    raise AudioError(f"{p}: WAV file has no data chunk (truncated in the header?)")


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
    if info.format in ("WAV", "WAVEX", "RF64"):
        check_riff(p)
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
    try:  # NaN / infinity in a float WAV: refused, never turned into PCM16 clicks
        check_samples(data, str(path))
    except ValueError as exc:
        raise AudioError(str(exc)) from None
    expected = sf.info(str(path)).frames
    if data.shape[0] < expected:
        raise AudioError(f"{path}: decoder returned {data.shape[0]} of the {expected} frames "
                         "the header declares (truncated or damaged file)")
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
