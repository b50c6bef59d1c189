"""A tiny deterministic perception for tests and demos on pure tones, handed to an
embedded judge's adapter in place of the specialists (`tone_adapter`)."""

from __future__ import annotations

from typing import Any

import numpy as np


def tone_adapter(name: str, spec: dict[str, Any]):
    """The adapter of an embedded judge spec that perceives through ToneFakePerception."""
    from judgeaudit.judges.adapters import registry

    return registry()[spec["provider"]](name, spec, ToneFakePerception())


class ToneFakePerception:
    """A tiny deterministic perception for tests and demos on pure tones: pitch
    (zero crossings) picks the emotion (100 Hz * (index + 2)) and language,
    loudness (RMS) is the quality, and the embedding is (pitch, 1)."""

    LANGS = ("en", "es", "fr", "de")

    def __init__(self, emotions: tuple[str, ...] | None = None):
        from judgeaudit.vocab.labels import EMOTIONS

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

    def language_scores(self, wav: bytes) -> dict[str, float]:
        top = self.language(wav)
        return {c: (0.9 if c == top else 0.1 / (len(self.LANGS) - 1)) for c in self.LANGS}

    def quality(self, wav: bytes) -> float:
        return self._pitch_level(wav)[1]

    def speaker_embedding(self, wav: bytes) -> np.ndarray:
        return np.array([self._pitch_level(wav)[0] / 1000.0, 1.0])
