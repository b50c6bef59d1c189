"""Text-to-speech for Study B renderings: one interface, two backends.

- `EspeakRenderer` (default, offline): the synthetic corpus' espeak-ng renderer
  (`judgeaudit.datasets.synth.common.render`: prosody table per emotion plus a
  seeded per-rendering jitter), so candidate `c` of a line is a different, but
  reproducible, rendering of the same text in the same emotion and voice.
- `OpenAISpeechRenderer` (real mode): `POST {base_url}/audio/speech` with model
  `gpt-4o-mini-tts`, a voice, the text and an emotion instruction, WAV output.
  The API key comes from an environment variable only; candidates differ by a
  candidate index in the instruction (the service samples).

Both return `Rendering(samples float32, sample_rate, meta)`; `meta` records how
the audio was made (backend, voice, model, instruction) for the candidate log.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np


class TTSError(RuntimeError):
    pass


@dataclass
class Rendering:
    samples: np.ndarray
    sample_rate: int
    meta: dict[str, Any] = field(default_factory=dict)


class Renderer(Protocol):
    name: str

    def render(self, text: str, emotion: str, voice: str, candidate: int,
               key: str) -> Rendering: ...


# The Study B voice roster (`datasets.synth.common.make_voices`: voice i is variant
# i mod V at pitch offset (i // V) mod P): 12 variants x 6 offsets = 72 voices, enough to
# render each of a default task's 50 items in its own voice (issue 32). The first four
# voices are the old 4 x 2 roster's, so the reply roster (`replies.dnsmos_voices` 4)
# is unchanged.
ROSTER_VARIANTS = ("m3", "f2", "m1", "f4", "m2", "f1", "m4", "f3", "m5", "f5", "m6", "m7")
ROSTER_PITCH_OFFSETS = (0, 8, -8, 16, -16, 4)


def roster(n_voices: int, seed: int) -> list:
    """The first `n_voices` voices of the Study B espeak roster (seeded jitter)."""
    from judgeaudit.datasets.synth.common import make_voices

    return make_voices("sb", int(n_voices), list(ROSTER_VARIANTS),
                       list(ROSTER_PITCH_OFFSETS), seed, "study_b")


def _rng(seed: int, key: str) -> np.random.Generator:
    d = hashlib.sha256(f"{int(seed)}|study_b|{key}".encode()).digest()
    return np.random.default_rng(int.from_bytes(d[:8], "little"))


class EspeakRenderer:
    """espeak-ng via the synthetic corpus helpers. `voice` is an index into a
    roster built with the corpus' `make_voices` (seeded), or an espeak name."""

    name = "espeak"

    def __init__(self, sample_rate: int = 16000, seed: int = 0, n_voices: int = 4,
                 intensity: str = "strong", jitter: bool = True) -> None:
        self.sample_rate = int(sample_rate)
        self.seed = int(seed)
        self.intensity = intensity
        self.jitter = jitter
        self.voices = {v.speaker: v for v in roster(n_voices, seed)}

    def voice_ids(self) -> list[str]:
        return sorted(self.voices)

    def render(self, text: str, emotion: str, voice: str, candidate: int,
               key: str) -> Rendering:
        from judgeaudit.datasets.synth.common import render, trim_silence

        if voice not in self.voices:
            raise TTSError(f"espeak renderer: unknown voice {voice!r} (have {self.voice_ids()})")
        v = self.voices[voice]
        intensity = "normal" if emotion == "neutral" else self.intensity
        rng = _rng(self.seed, f"{key}|{emotion}|{candidate}")
        x = render(text, v, self.sample_rate, emotion=emotion, intensity=intensity, rng=rng,
                   jitter=self.jitter and candidate >= 0)
        x = trim_silence(x, self.sample_rate)
        return Rendering(x, self.sample_rate, {
            "backend": "espeak", "voice": v.label, "emotion": emotion,
            "intensity": intensity, "candidate": candidate})


EMOTION_INSTRUCTIONS = {
    "neutral": "Speak in a plain, neutral, matter-of-fact tone.",
    "calm": "Speak in a calm, relaxed, soothing tone.",
    "happy": "Speak in a happy, cheerful, upbeat tone.",
    "sad": "Speak in a sad, downcast, low-energy tone.",
    "angry": "Speak in an angry, irritated, forceful tone.",
    "fearful": "Speak in a fearful, anxious, trembling tone.",
    "disgust": "Speak in a disgusted, repulsed tone.",
    "surprised": "Speak in a surprised, astonished tone.",
}


class OpenAISpeechRenderer:
    """OpenAI speech endpoint (`gpt-4o-mini-tts`) with an emotion instruction."""

    name = "openai"

    def __init__(self, model: str = "gpt-4o-mini-tts", api_key_env: str = "OPENAI_API_KEY",
                 base_url: str | None = None, timeout_s: float = 60.0,
                 sample_rate: int = 16000, max_attempts: int = 3) -> None:
        key = os.environ.get(api_key_env)
        if not key:
            raise TTSError(f"OpenAI speech renderer: environment variable {api_key_env} is "
                           "not set (keys are read from the environment only)")
        self._key = key
        self.model = model
        self.base_url = (base_url or "https://api.openai.com/v1").rstrip("/")
        self.timeout_s = float(timeout_s)
        self.sample_rate = int(sample_rate)
        self.max_attempts = int(max_attempts)

    def instruction(self, emotion: str, candidate: int) -> str:
        if emotion not in EMOTION_INSTRUCTIONS:
            raise TTSError(f"no speaking instruction for emotion {emotion!r}")
        return f"{EMOTION_INSTRUCTIONS[emotion]} (take {candidate + 1})"

    def render(self, text: str, emotion: str, voice: str, candidate: int,
               key: str) -> Rendering:
        import httpx

        from judgeaudit.datasets.audio import read_wav
        from judgeaudit.datasets.synth.tts import resample

        body = {"model": self.model, "voice": voice, "input": text,
                "instructions": self.instruction(emotion, candidate),
                "response_format": "wav"}
        last: Exception | None = None
        for _ in range(self.max_attempts):
            try:
                r = httpx.post(f"{self.base_url}/audio/speech", json=body,
                               timeout=self.timeout_s,
                               headers={"Authorization": f"Bearer {self._key}"})
            except httpx.HTTPError as exc:
                last = exc
                continue
            if r.status_code >= 500 or r.status_code == 429:
                last = TTSError(f"speech endpoint answered HTTP {r.status_code}")
                continue
            if r.status_code != 200:
                raise TTSError(f"speech endpoint answered HTTP {r.status_code}: {r.text[:200]}")
            try:
                x, sr = read_wav(r.content)
            except Exception as exc:  # noqa: BLE001 - any decode failure is the same error
                raise TTSError(f"speech endpoint returned no decodable WAV ({exc})") from exc
            x = resample(x, sr, self.sample_rate)
            return Rendering(x, self.sample_rate, {
                "backend": "openai", "model": self.model, "voice": voice, "emotion": emotion,
                "instruction": body["instructions"], "candidate": candidate})
        raise TTSError(f"speech endpoint failed after {self.max_attempts} attempts: {last}")


def make_renderer(cfg: dict[str, Any], sample_rate: int, seed: int) -> Renderer:
    """Renderer from the `study_b.rendering` config section."""
    backend = cfg.get("backend", "espeak")
    if backend == "espeak":
        return EspeakRenderer(sample_rate=sample_rate, seed=seed,
                              n_voices=int(cfg.get("n_voices", 50)),
                              intensity=cfg.get("intensity", "strong"))
    if backend == "openai":
        o = cfg.get("openai", {})
        return OpenAISpeechRenderer(model=o.get("model", "gpt-4o-mini-tts"),
                                    api_key_env=o.get("api_key_env", "OPENAI_API_KEY"),
                                    base_url=o.get("base_url") or None,
                                    sample_rate=sample_rate)
    raise TTSError(f"study_b.rendering.backend: unknown backend {backend!r} "
                   "(expected 'espeak' or 'openai')")


__all__ = ["EMOTION_INSTRUCTIONS", "EspeakRenderer", "OpenAISpeechRenderer", "Rendering",
           "Renderer", "TTSError", "make_renderer"]
