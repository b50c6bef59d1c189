"""What the `listener` and `simulated` judges can perceive from audio bytes.

`Perception` is a protocol so tests can plug in a tiny fake; the default
implementation wraps the offline specialists (`judgeaudit.specialists.load(kind,
path)`), memoising per clip content.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from judgeaudit.io import sha256_bytes

KINDS = ("emotion", "language", "naturalness", "speaker")  # judgeaudit.specialists kinds


@runtime_checkable
class Perception(Protocol):
    def emotion(self, wav: bytes) -> str: ...
    def emotion_scores(self, wav: bytes) -> dict[str, float]: ...
    def language(self, wav: bytes) -> str: ...
    def quality(self, wav: bytes) -> float: ...
    def speaker_embedding(self, wav: bytes) -> np.ndarray: ...


class SpecialistPerception:
    """Perception through the trained/offline specialists; models load lazily."""

    def __init__(self, models: Mapping[str, str | Path]):
        self.paths = {k: str(v) for k, v in models.items() if v}
        self._models: dict[str, Any] = {}
        self._memo: dict[tuple[str, str], Any] = {}

    def _model(self, kind: str):
        if kind not in self._models:
            if kind not in self.paths:
                raise ValueError(f"listener perception: no model path configured for {kind!r}")
            from judgeaudit import specialists

            self._models[kind] = specialists.load(kind, self.paths[kind])
        return self._models[kind]

    def _cached(self, kind: str, wav: bytes, fn):
        key = (kind, sha256_bytes(wav))
        if key not in self._memo:
            self._memo[key] = fn()
        return self._memo[key]

    def _predict(self, kind: str, wav: bytes):
        return self._cached(kind, wav, lambda: self._model(kind).predict_audio(wav))

    def emotion(self, wav: bytes) -> str:
        return str(self._predict("emotion", wav).label)

    def emotion_scores(self, wav: bytes) -> dict[str, float]:
        return {str(k): float(v) for k, v in dict(self._predict("emotion", wav).scores).items()}

    def language(self, wav: bytes) -> str:
        return str(self._predict("language", wav).label)

    def quality(self, wav: bytes) -> float:
        return float(self._cached("naturalness", wav, lambda: self._model("naturalness").score_audio(wav)))

    def speaker_embedding(self, wav: bytes) -> np.ndarray:
        return np.asarray(self._cached("speaker", wav,
                                       lambda: self._model("speaker").embed_audio(wav)))


def make_perception(spec: Mapping[str, Any] | None) -> Perception:
    """`{"kind": "specialists", "models": {emotion: path, ...}}` (default) or
    `{"kind": "python", "factory": "package.module:callable"}` (tests, custom)."""
    spec = dict(spec or {})
    kind = spec.get("kind", "specialists")
    if kind == "specialists":
        return SpecialistPerception(spec.get("models") or {})
    if kind == "python":
        mod, _, attr = str(spec.get("factory", "")).partition(":")
        if not mod or not attr:
            raise ValueError("perception.factory must look like 'package.module:callable'")
        return getattr(importlib.import_module(mod), attr)(**(spec.get("options") or {}))
    raise ValueError(f"unknown perception kind {kind!r} (expected 'specialists' or 'python')")


def model_hashes(spec: Mapping[str, Any] | None) -> dict[str, str | None]:
    """sha256 of each configured model file/folder: part of the judge fingerprint,
    so retrained specialists never replay stale cached answers."""
    from judgeaudit.provenance import hash_path

    models = (spec or {}).get("models") or {}
    return {k: hash_path(v)["sha256"] for k, v in sorted(models.items()) if v}


class ToneFakePerception:
    """A tiny deterministic perception for tests and demos on pure tones: pitch
    (zero crossings) picks the emotion (100 Hz * (index + 2)) and language,
    loudness (RMS) is the quality, and the embedding is (pitch, 1)."""

    LANGS = ("en", "es", "fr", "de")

    def __init__(self, emotions: tuple[str, ...] | None = None):
        from judgeaudit.judges.embedded.conventions import EMOTIONS

        self.emotions = tuple(emotions or EMOTIONS)

    @staticmethod
    def _pitch_level(wav: bytes) -> tuple[float, float]:
        from judgeaudit.judges.embedded.audio import decode_wav

        pcm, sr = decode_wav(wav)
        x = pcm.astype(np.float64)
        crossings = np.count_nonzero(np.diff(np.signbit(x)))
        pitch = crossings / 2.0 / (len(x) / sr) if len(x) else 0.0
        return pitch, float(np.sqrt(np.mean(x**2))) if len(x) else 0.0

    def _index(self, wav: bytes, n: int) -> int:
        return int(min(n - 1, max(0, round(self._pitch_level(wav)[0] / 100.0) - 2)))

    def emotion(self, wav: bytes) -> str:
        return self.emotions[self._index(wav, len(self.emotions))]

    def emotion_scores(self, wav: bytes) -> dict[str, float]:
        top = self.emotion(wav)
        return {e: (0.9 if e == top else 0.1 / (len(self.emotions) - 1)) for e in self.emotions}

    def language(self, wav: bytes) -> str:
        return self.LANGS[self._index(wav, len(self.LANGS))]

    def quality(self, wav: bytes) -> float:
        return self._pitch_level(wav)[1]

    def speaker_embedding(self, wav: bytes) -> np.ndarray:
        return np.array([self._pitch_level(wav)[0] / 1000.0, 1.0])
