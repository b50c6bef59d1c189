"""Embedded judges with known behaviour (SPEC section 4). Each maps a RequestView
(built from the request alone) to an answer; the adapter wraps it as JSON text.

Study A requests only; Study B requests go to `lexicon.py` (see adapters.py).

- `label_reader`: reads only text. Copies the first allowed label found in a side
  block / reference (reading order: system, then parts); else a fixed text-only
  fallback (an allowed answer chosen by a hash of the text).
- `first_slot`: always `allowed[0]` ("A", "R1", the first label).
- `listener`: audio-grounded cascade: runs perception on the audio it is sent and
  ignores side labels. Without audio it guesses from the text hash.
  When perception reports that a clip it needs has no speech (`NO_SPEECH`, the
  specialist's screen excluded it) the listener and the simulated judge answer
  "no_speech": outside the allowed answers, so the reply is counted as invalid,
  never turned into a default label or a guess.
- `simulated`: perception plus planted shortcut propensities (see `SimKnobs`).
  All draws are deterministic functions of (seed, purpose, content) so caching
  and reruns agree; the pairwise lock draw is keyed on the sorted sample hashes of
  the pair (plus format), so both orders of a pair share it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from judgeaudit.judges.embedded.perception import NO_SPEECH, Perception
from judgeaudit.judges.embedded.reader import RequestView, clip_seed_material
from judgeaudit.judges.parse import match_label
from judgeaudit.similarity import cosine
from judgeaudit.vocab.labels import EMOTIONS, LANGUAGE_NAMES
from judgeaudit.vocab.study_a import PAIR_FORMATS, PLACEMENTS


def uniform(*material: Any) -> float:
    """A deterministic U[0,1) draw from its material."""
    h = hashlib.sha256("\x1f".join(map(str, material)).encode("utf-8")).digest()
    return int.from_bytes(h[:8], "big") / 2.0**64


def text_choice(view: RequestView, salt: str = "") -> str:
    return view.allowed[int(uniform("text", salt, view.text) * len(view.allowed))]


def to_allowed(label: str, view: RequestView) -> str | None:
    """Map a perceived label (emotion name, language code or name) onto `allowed`."""
    hit = match_label(label, view.allowed)
    if hit is not None:
        return hit
    low = label.casefold()
    for code, name in LANGUAGE_NAMES.items():
        if low in (code, name):
            return match_label(code, view.allowed) or match_label(name, view.allowed)
    return None


# ---------------------------------------------------------------- label reader
def label_reader(view: RequestView) -> str:
    if view.task == "classify":
        for lab in view.labels:
            hit = to_allowed(lab.label, view)
            if hit:
                return hit
    return text_choice(view, "label-reader")


def first_slot(view: RequestView) -> str:
    return view.allowed[0]


# ---------------------------------------------------------------- perception helpers
def _pair_scores(view: RequestView, perception: Perception) -> list[float]:
    a, b = view.clips[0], view.clips[1]
    attr = view.attribute
    if attr == "speaker" and view.reference_clip is not None:
        ref = perception.speaker_embedding(view.reference_clip.wav)
        return [float(cosine(ref, perception.speaker_embedding(c.wav))[0]) for c in (a, b)]
    if attr == "emotion":
        target = next((e for e in EMOTIONS if e in view.text.casefold()), None)
        if target:
            return [perception.emotion_scores(c.wav).get(target, 0.0) for c in (a, b)]
    return [perception.quality(c.wav) for c in (a, b)]


def listener_pair(view: RequestView, perception: Perception) -> str | None:
    if len(view.clips) < 2:
        return None
    sa, sb = _pair_scores(view, perception)
    if sa == sb:
        return None
    return match_label("A" if sa > sb else "B", view.allowed)


# ---------------------------------------------------------------- listener
def no_speech(view: RequestView, perception: Perception) -> bool:
    """True when a clip the judge must perceive (emotion/language) has no speech."""
    if not view.has_audio:
        return False
    if view.task == "classify":
        fn = perception.language if view.attribute == "language" else perception.emotion
        return fn(view.clips[0].wav) == NO_SPEECH
    if view.task == "pairwise" and view.attribute != "emotion":
        return False  # naturalness / cleanness / speaker: scores, not labels
    return any(perception.emotion(c.wav) == NO_SPEECH for c in view.clips)


def listener(view: RequestView, perception: Perception) -> str:
    answer: str | None = None
    if no_speech(view, perception):
        return NO_SPEECH
    if view.task == "classify" and view.has_audio:
        fn = perception.language if view.attribute == "language" else perception.emotion
        answer = to_allowed(fn(view.clips[0].wav), view)
    elif view.task == "pairwise":
        answer = listener_pair(view, perception)
    return answer or text_choice(view, "listener")


# ---------------------------------------------------------------- simulated
@dataclass
class SimKnobs:
    seed: int = 0
    audio_accuracy: float = 1.0
    follow_block: dict[str, float] = field(default_factory=lambda: {
        "framed": 0.0, "unframed": 0.0, "with_audio": 0.0, "with_audio_fallible": 0.0})
    follow_reference: dict[str, float] = field(default_factory=lambda: {
        p: 0.0 for p in PLACEMENTS})
    lock: dict[str, dict[str, float]] = field(default_factory=lambda: {
        f: {"first": 0.0, "second": 0.0} for f in PAIR_FORMATS})
    potemkin: float = 0.0

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> SimKnobs:
        k = cls()
        k.seed = int(spec.get("seed", 0))
        k.audio_accuracy = float(spec.get("audio_accuracy", 1.0))
        k.follow_block.update(spec.get("follow_block") or {})
        k.follow_reference.update(spec.get("follow_reference") or {})
        for fmt, v in (spec.get("lock") or {}).items():
            k.lock.setdefault(fmt, {"first": 0.0, "second": 0.0}).update(v)
        k.potemkin = float(spec.get("potemkin", 0.0))
        return k


def _noisy(label: str, options: tuple[str, ...], knobs: SimKnobs, clip_id: str) -> str:
    """Perception with planted audio accuracy: keyed on the clip, not the request,
    so every probe of the same clip perceives it the same way."""
    if knobs.audio_accuracy >= 1.0 or uniform(knobs.seed, "acc", clip_id) < knobs.audio_accuracy:
        return label
    others = [o for o in options if o != label]
    return others[int(uniform(knobs.seed, "acc-wrong", clip_id) * len(others))] if others else label


def simulated(view: RequestView, perception: Perception, knobs: SimKnobs,
              request_id: str) -> str:
    """`request_id` = the request's content hash (replicates draw independently)."""
    if no_speech(view, perception):
        return NO_SPEECH
    if view.task == "pairwise":
        fmt = view.audio_format if view.audio_format in knobs.lock else "native"
        p = knobs.lock.get(fmt, {})
        clips = list(view.clips) + ([view.reference_clip] if view.reference_clip else [])
        u = uniform(knobs.seed, "lock", fmt, clip_seed_material(clips))
        if u < p.get("first", 0.0):
            return view.allowed[0]
        if u < p.get("first", 0.0) + p.get("second", 0.0):
            return view.allowed[1]
        return listener_pair(view, perception) or text_choice(view, "sim")

    if view.task == "classify":
        perceived = None
        if view.has_audio:
            fn = perception.language if view.attribute == "language" else perception.emotion
            raw = to_allowed(fn(view.clips[0].wav), view)
            if raw is not None:
                perceived = _noisy(raw, view.allowed, knobs, view.clips[0].pcm_sha256)
        # references first (RQ2; in cue conflict the reference is weighed first)
        for lab in view.labels_of("reference"):
            shown = to_allowed(lab.label, view)
            if shown and shown != perceived:
                p = knobs.follow_reference.get(lab.placement, 0.0)
                if lab.placement == "text":
                    p = knobs.follow_reference.get("before", 0.0)
                if uniform(knobs.seed, "ref", lab.placement, request_id) < p:
                    return shown
        for lab in view.labels_of("block"):
            shown = to_allowed(lab.label, view)
            if shown and shown != perceived:
                if view.has_audio:
                    cond = "with_audio_fallible" if view.fallible else "with_audio"
                else:
                    cond = "framed" if lab.framed else "unframed"
                if uniform(knobs.seed, "block", cond, request_id) < knobs.follow_block.get(cond, 0.0):
                    return shown
        if perceived is not None:
            return perceived
        shown_all = {to_allowed(lab.label, view) for lab in view.labels}
        options = [a for a in view.allowed if a not in shown_all] or list(view.allowed)
        return options[int(uniform(knobs.seed, "guess", request_id) * len(options))]

    return text_choice(view, "sim")
