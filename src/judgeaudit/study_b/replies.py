"""Candidate replies for Study B audit items and their lexical-quality measures.

Default: a template bank (`templates/study_b/replies.yaml`). Both replies of one
item share a frame and differ only in the emotion fill (single-turn and
emotional-conversation items) or in the quoted turn (positional items), so they
are lexically balanced by construction; `lexical_quality` measures what the
balance table reports (length, Flesch reading ease, politeness markers).

Real mode: `LLMReplyWriter` asks an OpenAI-compatible chat model for one reply
per (transcript, target) and stores the generated text with the model id; the
API key is read from the environment only.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from judgeaudit.io import sha256_file

_WORD = re.compile(r"[A-Za-z']+")
_SENT = re.compile(r"[.!?;]+")
POLITENESS_MARKERS = ("please", "thank", "thanks", "sorry", "appreciate", "kindly",
                      "grateful", "would you", "could you", "if you like", "let me")


class ReplyBankError(ValueError):
    pass


@dataclass(frozen=True)
class ReplyBank:
    frames: tuple[str, ...]
    positional_frames: tuple[str, ...]
    fills: dict[str, tuple[dict[str, str], ...]]
    quote_words: int
    sha256: str
    path: str

    @classmethod
    def load(cls, path: str | os.PathLike) -> ReplyBank:
        p = Path(path)
        try:
            data = yaml.safe_load(p.read_text(encoding="utf-8"))
        except OSError as exc:
            raise ReplyBankError(f"{p}: cannot read reply bank ({exc.strerror})") from exc
        for key in ("frames", "positional_frames", "emotions"):
            if not data or key not in data:
                raise ReplyBankError(f"{p}: missing key '{key}' in reply bank")
        fills = {}
        for emo, items in data["emotions"].items():
            if not items:
                raise ReplyBankError(f"{p}: emotions.{emo} has no fills")
            for i, fill in enumerate(items):
                if set(fill) != {"state", "response"}:
                    raise ReplyBankError(
                        f"{p}: emotions.{emo}[{i}] needs exactly 'state' and 'response'")
            fills[emo] = tuple(items)
        return cls(tuple(data["frames"]), tuple(data["positional_frames"]), fills,
                   int(data.get("quote_words", 5)), sha256_file(p), str(p))

    def _fill(self, emotion: str, variant: int) -> dict[str, str]:
        if emotion not in self.fills:
            raise ReplyBankError(
                f"{self.path}: no reply fills for emotion {emotion!r} "
                f"(have {sorted(self.fills)})")
        opts = self.fills[emotion]
        return opts[variant % len(opts)]

    def emotion_pair(self, e0: str, e1: str, frame: int, variant: int) -> tuple[str, str]:
        """(R0, R1): the replies right for a speaker in emotion e0 and e1, one frame."""
        f = self.frames[frame % len(self.frames)]
        return (f.format(**self._fill(e0, variant)), f.format(**self._fill(e1, variant)))

    def quote(self, turn_text: str) -> str:
        words = turn_text.strip().rstrip(".!?").split()
        return " ".join(words[: self.quote_words])

    def positional_pair(self, turn0: str, turn1: str, shift_emotion: str, frame: int,
                        variant: int) -> tuple[str, str]:
        """(R0, R1): replies acknowledging an emotion shift at turn0 or at turn1."""
        f = self.positional_frames[frame % len(self.positional_frames)]
        fill = self._fill(shift_emotion, variant)
        return (f.format(quote=self.quote(turn0), **fill),
                f.format(quote=self.quote(turn1), **fill))


# ---------------------------------------------------------------- lexical quality
def syllables(word: str) -> int:
    """Vowel-group syllable count (silent final e dropped), at least 1."""
    w = word.lower().strip("'")
    groups = re.findall(r"[aeiouy]+", w)
    n = len(groups)
    if w.endswith("e") and not w.endswith(("le", "ee", "ye")) and n > 1:
        n -= 1
    return max(1, n)


def flesch_reading_ease(text: str) -> float:
    words = _WORD.findall(text)
    if not words:
        return float("nan")
    sentences = max(1, len([s for s in _SENT.split(text) if s.strip()]))
    syl = sum(syllables(w) for w in words)
    return 206.835 - 1.015 * (len(words) / sentences) - 84.6 * (syl / len(words))


def politeness(text: str) -> int:
    t = " " + " ".join(_WORD.findall(text.lower())) + " "
    return sum(t.count(" " + m + " ") for m in POLITENESS_MARKERS)


def lexical_quality(text: str) -> dict[str, float]:
    words = _WORD.findall(text)
    return {"n_words": float(len(words)), "n_chars": float(len(text)),
            "flesch": flesch_reading_ease(text), "politeness": float(politeness(text))}


# ---------------------------------------------------------------- real mode: LLM
REPLY_INSTRUCTION = (
    "You write one short reply (one or two sentences) of a spoken-dialogue assistant. "
    "The reply must suit a user who said the transcript below {target}. Do not name the "
    "emotion label itself more than once; keep length, politeness and register neutral "
    "so that replies for different targets differ only in how they fit the target. "
    "Answer with JSON {{\"reply\": \"...\"}}."
)


class LLMReplyWriter:
    """Writes replies with an OpenAI-compatible chat model (real mode).

    The key comes from the environment variable `api_key_env` only; `base_url`
    selects the server (a 127.0.0.1 server in tests)."""

    def __init__(self, model: str, api_key_env: str = "OPENAI_API_KEY",
                 base_url: str | None = None, timeout_s: float = 60.0) -> None:
        key = os.environ.get(api_key_env)
        if not key:
            raise ReplyBankError(
                f"LLM reply writer: environment variable {api_key_env} is not set "
                "(keys are read from the environment only)")
        self.model = model
        self._key = key
        self.base_url = (base_url or "https://api.openai.com/v1").rstrip("/")
        self.timeout_s = timeout_s

    def write(self, transcript: str | Sequence[str], target: str) -> dict[str, Any]:
        import httpx

        text = transcript if isinstance(transcript, str) else "\n".join(transcript)
        body = {
            "model": self.model,
            "temperature": 0,
            "response_format": {"type": "json_object"},
            "messages": [
                {"role": "system", "content": REPLY_INSTRUCTION.format(target=target)},
                {"role": "user", "content": text},
            ],
        }
        r = httpx.post(f"{self.base_url}/chat/completions", json=body, timeout=self.timeout_s,
                       headers={"Authorization": f"Bearer {self._key}"})
        r.raise_for_status()
        data = r.json()
        content = data["choices"][0]["message"]["content"]
        try:
            reply = json.loads(content)["reply"]
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ReplyBankError(f"LLM reply writer: unusable reply {content[:80]!r}") from exc
        return {"reply": reply, "model": data.get("model", self.model), "target": target}


__all__ = ["LLMReplyWriter", "POLITENESS_MARKERS", "ReplyBank", "ReplyBankError",
           "flesch_reading_ease", "lexical_quality", "politeness", "syllables"]
