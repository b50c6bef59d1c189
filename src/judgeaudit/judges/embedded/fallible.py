"""A fallible listener: the `listener` judge's categorical perception degraded to a
configured accuracy (issue 11).

On the synthetic corpus the specialists the listener perceives through are exact
(accuracy 1.000), so without this the listener is an oracle and its rows say
nothing about how the estimators behave under realistic perception error.
`FalliblePerception` wraps any `Perception`: for each clip it keeps the
specialist's emotion / language label with probability `accuracy`, else it hears a
confusion drawn from the other classes in proportion to the specialist's own
scores (plus a small floor), so errors go preferentially to the classes the
specialist finds closest. The draw is a deterministic function of (judge seed,
sha256 of the clip's audio bytes): every request and probe carrying the same clip
perceives it the same way, reruns and the cache agree, and nothing outside the
judge (trials, facts, estimators) can see which clips were misheard.

Only categorical perception (emotion, language) is degraded; pairwise quality and
speaker-embedding perception pass through (the specialists behind them are not
oracles). The effective accuracy is the specialist's accuracy times `accuracy`
(plus the rare confusion that lands back on the truth when the specialist erred).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from judgeaudit.io import sha256_bytes
from judgeaudit.judges.embedded.judges import uniform
from judgeaudit.vocab.labels import LANGUAGE_NAMES

DEFAULT_ACCURACY = 0.80  # the paper's emotion-specialist accuracy (emotion2vec+ on RAVDESS)
FLOOR = 0.02             # confusion weight every other class gets on top of its score


def confusion(label: str, scores: Mapping[str, float], u: float) -> str:
    """The class heard instead of `label`: one of the other classes, chosen by the
    uniform draw `u` in proportion to score + FLOOR."""
    others = sorted(c for c in scores if c != label)
    if not others:
        return label
    w = np.array([max(float(scores[c]), 0.0) + FLOOR for c in others])
    cum = np.cumsum(w / w.sum())
    return others[min(int(np.searchsorted(cum, u, side="right")), len(others) - 1)]


class FalliblePerception:
    """`Perception` with categorical labels kept with probability `accuracy` per clip."""

    def __init__(self, base, accuracy: float = DEFAULT_ACCURACY, seed: int = 0):
        accuracy = float(accuracy)
        if not 0.0 <= accuracy <= 1.0:
            raise ValueError(f"listener perception.accuracy must be in [0, 1], got {accuracy}")
        self.base = base
        self.accuracy = accuracy
        self.seed = int(seed)

    def _heard(self, kind: str, wav: bytes, label: str, scores: Mapping[str, float]) -> str:
        if self.accuracy >= 1.0:
            return label
        key = sha256_bytes(wav)
        if uniform(self.seed, "listener-keep", kind, key) < self.accuracy:
            return label
        return confusion(label, scores, uniform(self.seed, "listener-confusion", kind, key))

    # emotion: the label and the score vector agree (the misheard class is on top)
    def emotion(self, wav: bytes) -> str:
        return self._heard("emotion", wav, self.base.emotion(wav), self.base.emotion_scores(wav))

    def emotion_scores(self, wav: bytes) -> dict[str, float]:
        scores = dict(self.base.emotion_scores(wav))
        label = self.base.emotion(wav)
        heard = self._heard("emotion", wav, label, scores)
        if heard != label and label in scores and heard in scores:
            scores[label], scores[heard] = scores[heard], scores[label]
        return scores

    def language(self, wav: bytes) -> str:
        label = self.base.language(wav)
        fn = getattr(self.base, "language_scores", None)
        scores = dict(fn(wav)) if callable(fn) else {c: 0.0 for c in LANGUAGE_NAMES}
        scores.setdefault(label, 1.0)
        return self._heard("language", wav, label, scores)

    # not degraded
    def quality(self, wav: bytes) -> float:
        return self.base.quality(wav)

    def speaker_embedding(self, wav: bytes):
        return self.base.speaker_embedding(wav)


__all__ = ["DEFAULT_ACCURACY", "FalliblePerception", "confusion"]
