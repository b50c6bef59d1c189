"""Shared pieces of the synthetic corpora: seeded RNGs, voice rosters, rendering
with an emotion profile, waveform post-processing and manifest writing."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.signal import lfilter

from judgeaudit.datasets import schema
from judgeaudit.datasets.audio import write_wav
from judgeaudit.datasets.synth.prosody import profile
from judgeaudit.datasets.synth.tts import synthesize
from judgeaudit.io import write_tsv_atomic

REF_RMS_DBFS = -26.0
BASE_RATE = 175
BASE_PITCH = 50


def rng_for(seed: int, dataset: str, key: str) -> np.random.Generator:
    """A numpy Generator seeded from (master seed, dataset, clip key) by sha256:
    stable across processes and Python versions, independent of call order."""
    digest = hashlib.sha256(f"{int(seed)}|{dataset}|{key}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


@dataclass(frozen=True)
class Voice:
    """A synthetic speaker: espeak language voice + variant + pitch offset."""

    speaker: str  # stable id, e.g. "emo_v03"
    base: str  # espeak language voice, e.g. "en-us"
    variant: str  # espeak variant, e.g. "m3"
    pitch_offset: int  # added to the espeak base pitch (0-100 scale)
    rate_factor: float  # personal speaking-rate factor

    @property
    def espeak_name(self) -> str:
        return f"{self.base}+{self.variant}" if self.variant else self.base

    @property
    def gender(self) -> str:
        return {"m": "male", "f": "female"}.get(self.variant[:1], "other") \
            if self.variant[1:].isdigit() else "other"

    @property
    def label(self) -> str:
        return f"{self.espeak_name}@p{self.pitch_offset:+d}"


def make_voices(prefix: str, n: int, variants: Sequence[str], pitch_offsets: Sequence[int],
                seed: int, dataset: str, base: str = "en-us") -> list[Voice]:
    """`n` voices cycling through variants, then pitch offsets (variant x pitch).

    Voice i uses variants[i % V] and pitch_offsets[(i // V) % P]; a small seeded
    personal pitch (+-2) and rate (+-4 %) jitter makes every voice distinct."""
    if not variants:
        raise ValueError(f"{dataset}: empty variant list")
    if n > len(variants) * max(1, len(pitch_offsets)):
        raise ValueError(
            f"{dataset}: n_voices={n} exceeds variants x pitch_offsets "
            f"({len(variants)} x {len(pitch_offsets)}); add variants or pitch offsets"
        )
    voices = []
    for i in range(n):
        rng = rng_for(seed, dataset, f"voice/{prefix}/{i}")
        variant = variants[i % len(variants)]
        offset = int(pitch_offsets[(i // len(variants)) % len(pitch_offsets)]) if \
            pitch_offsets else 0
        offset += int(rng.integers(-2, 3))
        voices.append(Voice(f"{prefix}_v{i:02d}", base, variant, offset,
                            float(np.round(rng.uniform(0.96, 1.04), 3))))
    return voices


def split_speakers(speakers: Sequence[Voice], test_fraction: float, seed: int,
                   dataset: str) -> dict[str, str]:
    """Speaker-disjoint split: within each gender group, a seeded share of voices
    goes to `test` (at least one test and one train voice overall)."""
    groups: dict[str, list[Voice]] = {}
    for v in speakers:
        groups.setdefault(v.gender, []).append(v)
    split = {v.speaker: "train" for v in speakers}
    rng = rng_for(seed, dataset, "split")
    carry = 0.0
    for g in sorted(groups):
        members = sorted(groups[g], key=lambda v: v.speaker)
        order = rng.permutation(len(members))
        want = test_fraction * len(members) + carry
        k = int(np.floor(want + 0.5))
        carry = want - k
        for j in order[:k]:
            split[members[j].speaker] = "test"
    n_test = sum(s == "test" for s in split.values())
    ordered = sorted(split)
    if n_test == 0 and len(ordered) > 1:
        split[ordered[int(rng.integers(len(ordered)))]] = "test"
    if n_test == len(ordered) and len(ordered) > 1:
        split[ordered[int(rng.integers(len(ordered)))]] = "train"
    return split


# ---------------------------------------------------------------- post-processing
def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64)) + 1e-12))


def normalise_rms(x: np.ndarray, dbfs: float = REF_RMS_DBFS) -> np.ndarray:
    return (x * (10 ** (dbfs / 20) / rms(x))).astype(np.float32)


def apply_tilt(x: np.ndarray, tilt: float) -> np.ndarray:
    """First-order spectral tilt at constant RMS: tilt > 0 pre-emphasis
    (y = x - b x[n-1]), tilt < 0 one-pole low-pass; b = 0.9 |tilt| (|tilt| <= 1)."""
    b = 0.9 * min(abs(float(tilt)), 1.0)
    if b < 1e-6:
        return x
    y = lfilter([1.0, -b], [1.0], x) if tilt > 0 else lfilter([1.0 - b], [1.0, -b], x)
    return (y * (rms(x) / rms(y))).astype(np.float32)


def envelope(x: np.ndarray, sr: int, win_s: float = 0.02) -> np.ndarray:
    n = max(1, int(win_s * sr))
    return np.convolve(np.abs(x), np.ones(n) / n, mode="same").astype(np.float32)


def apply_emotion_post(x: np.ndarray, sr: int, prof, gain_jitter_db: float,
                       rng: np.random.Generator) -> np.ndarray:
    """Spectral tilt, breath noise, tremolo, saturation, then gain re -26 dBFS."""
    x = normalise_rms(x)
    x = apply_tilt(x, prof.tilt)
    if prof.breath > 0:
        noise = rng.standard_normal(len(x)).astype(np.float32)
        noise = lfilter([1.0, -0.95], [1.0], noise).astype(np.float32)  # high-passed
        noise *= envelope(x, sr) / (rms(noise) + 1e-9)
        x = x + prof.breath * 4.0 * noise
    if prof.tremolo > 0:
        t = np.arange(len(x)) / sr
        phase = rng.uniform(0, 2 * np.pi)
        x = x * (1.0 + prof.tremolo * np.sin(2 * np.pi * 6.5 * t + phase))
    if prof.drive > 0:
        g = 1.0 + 8.0 * prof.drive
        x = np.tanh(g * x / (np.max(np.abs(x)) + 1e-9)) * (np.max(np.abs(x)))
    x = normalise_rms(np.asarray(x, dtype=np.float32), REF_RMS_DBFS + prof.gain_db
                      + gain_jitter_db)
    return limit(x)


def limit(x: np.ndarray, ceiling: float = 0.98) -> np.ndarray:
    """Soft limiter: leaves the signal untouched unless its peak exceeds `ceiling`."""
    peak = float(np.max(np.abs(x))) if len(x) else 0.0
    if peak <= ceiling:
        return x.astype(np.float32)
    return (np.tanh(x / ceiling) * ceiling / np.tanh(peak / ceiling) * 1.0).astype(np.float32)


def render(text: str, voice: Voice, sample_rate: int, emotion: str = "neutral",
           intensity: str = "normal", rng: np.random.Generator | None = None,
           jitter: bool = True) -> np.ndarray:
    """Speak `text` with `voice` in `emotion`/`intensity` (prosody table), with a
    small seeded per-rendering prosody jitter when `rng` is given."""
    prof = profile(emotion, intensity)
    rng = rng or np.random.default_rng(0)
    j = jitter
    pitch = BASE_PITCH + voice.pitch_offset + prof.d_pitch + (rng.uniform(-2, 2) if j else 0)
    prange = prof.pitch_range + (rng.uniform(-4, 4) if j else 0)
    rate = BASE_RATE * voice.rate_factor * prof.rate * (rng.uniform(0.96, 1.04) if j else 1)
    gain_jitter = rng.uniform(-1.0, 1.0) if j else 0.0
    x, sr = synthesize(
        text, voice.espeak_name,
        rate=int(np.clip(round(rate), 80, 450)),
        pitch=int(np.clip(round(pitch), 0, 100)),
        pitch_range=int(np.clip(round(prange), 0, 100)),
        volume=100,
        wordgap=int(round(max(0.0, prof.wordgap))),
        sample_rate=sample_rate,
    )
    return apply_emotion_post(x, sr, prof, gain_jitter, rng)


def trim_silence(x: np.ndarray, sr: int, threshold_db: float = -50.0,
                 pad_s: float = 0.05) -> np.ndarray:
    """Trim leading/trailing samples quieter than threshold (relative to peak)."""
    env = envelope(x, sr, 0.01)
    thr = np.max(env) * 10 ** (threshold_db / 20)
    idx = np.nonzero(env > thr)[0]
    if len(idx) == 0:
        return x
    pad = int(pad_s * sr)
    return x[max(0, idx[0] - pad): idx[-1] + pad + 1]


# ---------------------------------------------------------------- writing
class ClipWriter:
    """Writes clips into `clips_dir` and collects manifest rows."""

    def __init__(self, dataset: str, clips_dir: str | os.PathLike, sample_rate: int,
                 root: str | os.PathLike | None = None) -> None:
        self.dataset = dataset
        self.clips_dir = Path(clips_dir)
        self.clips_dir.mkdir(parents=True, exist_ok=True)
        self.sample_rate = int(sample_rate)
        self.root = Path(root) if root is not None else Path.cwd()
        self.rows: list[dict] = []

    def relpath(self, path: Path) -> str:
        return Path(os.path.relpath(Path(path).resolve(), self.root.resolve())).as_posix()

    def write(self, clip_id: str, x: np.ndarray, speaker: str, split: str,
              add_row: bool = True, **attrs) -> dict:
        path = self.clips_dir / f"{clip_id}.wav"
        info = write_wav(path, x, self.sample_rate)
        row = {
            "clip_id": clip_id, "path": self.relpath(path), "sha256": info["sha256"],
            "duration_s": info["duration_s"], "sample_rate": info["sample_rate"],
            "channels": info["channels"], "speaker": speaker, "split": split, **attrs,
        }
        if add_row:
            self.rows.append(row)
        return row

    def manifest(self, deferred: Sequence[str] = ()) -> pd.DataFrame:
        """Rows as a frame in schema column order; `deferred` columns are added
        by the caller afterwards (see `order_columns`)."""
        cols = [c for c in schema.columns_for(self.dataset) if c not in deferred]
        frame = pd.DataFrame(self.rows)
        missing = [c for c in cols if c not in frame.columns]
        if missing:
            raise ValueError(f"{self.dataset}: generator produced no column(s) {missing}")
        return frame[list(cols)].sort_values("clip_id", kind="stable").reset_index(drop=True)


def order_columns(dataset: str, frame: pd.DataFrame) -> pd.DataFrame:
    return frame[list(schema.columns_for(dataset))]


def write_table(path: str | os.PathLike, frame: pd.DataFrame) -> None:
    write_tsv_atomic(path, frame)
