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
PRECEDENCE = ("block", "reference")
FALLIBLE = "_fallible"


@dataclass
class SimKnobs:
    """Planted propensities of one simulated judge (config `judges.panel.<name>.simulated`).

    The top-level knobs apply to every attribute; `attributes.<attribute>` overrides any
    of audio_accuracy, follow_block, follow_reference, lock and precedence for one
    attribute (emotion, language for classification; speaker, naturalness, cleanness,
    emotion for pairs), so "language resists while emotion copies" can be planted.
    A `<knob>_fallible` follow rate left at None means the fallible-label instruction
    changes nothing (the plain rate applies). `precedence`: which cue is weighed first
    when a block and a reference both contradict what the judge hears (cue conflict).
    Study B requests use the top-level audio_accuracy and potemkin only."""

    seed: int = 0
    audio_accuracy: float = 1.0
    follow_block: dict[str, float | None] = field(default_factory=lambda: {
        "framed": 0.0, "unframed": 0.0, "with_audio": 0.0})
    follow_reference: dict[str, float | None] = field(default_factory=lambda: {
        p: 0.0 for p in PLACEMENTS})
    lock: dict[str, dict[str, float]] = field(default_factory=lambda: {
        f: {"first": 0.0, "second": 0.0} for f in PAIR_FORMATS})
    precedence: str = "block"
    potemkin: float = 0.0
    attributes: dict[str, dict[str, Any]] = field(default_factory=dict)

    def _update(self, spec: dict[str, Any]) -> None:
        if spec.get("audio_accuracy") is not None:
            self.audio_accuracy = float(spec["audio_accuracy"])
        self.follow_block.update({k: v for k, v in (spec.get("follow_block") or {}).items()
                                  if v is not None})
        self.follow_reference.update({k: v for k, v in
                                      (spec.get("follow_reference") or {}).items()
                                      if v is not None})
        for fmt, v in (spec.get("lock") or {}).items():
            self.lock.setdefault(fmt, {"first": 0.0, "second": 0.0}).update(
                {s: r for s, r in (v or {}).items() if r is not None})
        if spec.get("precedence") is not None:
            if spec["precedence"] not in PRECEDENCE:
                raise ValueError(f"simulated.precedence must be one of {PRECEDENCE}, got "
                                 f"{spec['precedence']!r}")
            self.precedence = str(spec["precedence"])

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> SimKnobs:
        k = cls()
        k.seed = int(spec.get("seed", 0))
        k._update(spec)
        k.potemkin = float(spec.get("potemkin", 0.0))
        k.attributes = {a: dict(v or {}) for a, v in (spec.get("attributes") or {}).items()}
        return k

    def for_attribute(self, attribute: str | None) -> SimKnobs:
        """These knobs with the attribute's overrides applied (self when it has none)."""
        over = self.attributes.get(attribute or "")
        if not over:
            return self
        k = SimKnobs(seed=self.seed, audio_accuracy=self.audio_accuracy,
                     follow_block=dict(self.follow_block),
                     follow_reference=dict(self.follow_reference),
                     lock={f: dict(v) for f, v in self.lock.items()},
                     precedence=self.precedence, potemkin=self.potemkin)
        k._update(over)
        return k

    def rate(self, table: dict[str, float | None], key: str, fallible: bool) -> float:
        """The follow rate of `key`; with the fallible instruction `<key>_fallible`
        when planted, else the plain rate."""
        if fallible and table.get(key + FALLIBLE) is not None:
            return float(table[key + FALLIBLE])
        return float(table.get(key) or 0.0)


def _noisy(label: str, options: tuple[str, ...], knobs: SimKnobs, clip_id: str) -> str:
    """Perception with planted audio accuracy: keyed on the clip, not the request,
    so every probe of the same clip perceives it the same way."""
    if knobs.audio_accuracy >= 1.0 or uniform(knobs.seed, "acc", clip_id) < knobs.audio_accuracy:
        return label
    others = [o for o in options if o != label]
    return others[int(uniform(knobs.seed, "acc-wrong", clip_id) * len(others))] if others else label


def simulated(view: RequestView, perception: Perception, knobs: SimKnobs,
              request_id: str) -> str:
    """`request_id` = the request's content hash (replicates draw independently).

    Classification: the judge perceives the clip (planted audio accuracy); each shown
    label that differs from what it perceives (without audio: every shown label) is
    followed with its planted rate, cues weighed in the order `precedence` gives; a
    judge that neither follows nor hears guesses uniformly over ALL allowed labels
    (chance 1/K, shown labels included)."""
    if no_speech(view, perception):
        return NO_SPEECH
    knobs = knobs.for_attribute(view.attribute)
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
        cues = []
        for lab in view.labels_of("reference"):
            placement = "before" if lab.placement == "text" else lab.placement
            cues.append(("reference", lab, placement,
                         knobs.rate(knobs.follow_reference, placement, view.fallible)))
        for lab in view.labels_of("block"):
            if view.has_audio:
                cond = "with_audio"
            else:
                cond = "framed" if lab.framed else "unframed"
            cues.append(("block", lab, cond,
                         knobs.rate(knobs.follow_block, cond, view.fallible)))
        cues.sort(key=lambda c: 0 if c[0] == knobs.precedence else 1)  # stable
        for kind, lab, cond, p in cues:
            shown = to_allowed(lab.label, view)
            if shown and shown != perceived:
                fall = FALLIBLE if view.fallible else ""
                if uniform(knobs.seed, kind, cond + fall, request_id) < p:
                    return shown
        if perceived is not None:
            return perceived
        return view.allowed[int(uniform(knobs.seed, "guess", request_id) * len(view.allowed))]

    return text_choice(view, "sim")
