"""World knowledge an embedded judge uses on Study B requests, and the reader of
Study B prompt conventions.

An embedded judge sees only its request. To answer a Study B question it must
(1) find what is asked (perception of one recording or one turn, an oracle
mapping from a stated emotion, a pointwise or pairwise reply choice), (2) know
which reply suits which emotion (the lexicon: words a considerate reply to a
speaker in that state tends to use), and (3) know which dialogue turn a reply is
about (the words it quotes). This module supplies all three from the request
text alone; the judge supplies perception (`perceive(audio_bytes) -> scores`).

Prompt conventions (the prompt contract `judgeaudit.prompts`, which the Study B
condition builder writes with; the patterns that read them live there too):
- audio parts are announced by a text part `[Audio]`, `[Audio A]`, `[Audio B]`,
  `[Audio, turn 3]` or `[Audio A, turn 3]` right before them;
- candidate replies are lines `R1: <text>` and `R2: <text>`; answers allowed
  are ("R1", "R2") for reply choices, emotion names for perception probes;
- dialogue transcripts are lines `Turn <i>: <text>`;
- a perception question about one turn contains `in turn <i>`;
- an oracle statement reads `Speaker emotion: <label>.`,
  `Speaker emotion in turn <i>: <label>.` or `Emotion shift at turn <i>.`;
- a pairwise question asks which reply fits `Audio A` (the other fits `Audio B`).

The judges package never imports the conditions code: this file is the judge's
own, independent knowledge; a test checks the reply bank agrees with it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from judgeaudit.prompts import (
    AUDIO_MARK,
    IN_TURN,
    ORACLE_EMOTION,
    ORACLE_SHIFT,
    REPLY_LINE,
    REPLY_SLOTS,
    STUDY_B_ANSWER_KEY,
    TURN_LINE,
)
from judgeaudit.vocab.study_b import AUDIO_PROTOCOLS

#: bump when the Study B decision logic or the lexicon changes (enters the embedded
#: judges' cache fingerprint, so no stale cached answer is replayed)
LEXICON_VERSION = 2

EMOTION_WORDS: dict[str, tuple[str, ...]] = {
    "neutral": ("details", "facts", "step by step", "information", "straightforward",
                "summary", "noted"),
    "calm": ("relaxed", "at ease", "no rush", "peaceful", "unhurried", "easy pace",
             "settled"),
    "happy": ("delighted", "wonderful", "great news", "celebrate", "thrilled",
              "excited", "joy"),
    "sad": ("down", "heavy", "comfort", "gently", "gentle", "hard time", "loss",
            "disheartening", "lonely"),
    "angry": ("frustrated", "annoyed", "unacceptable", "fix", "furious", "irritating",
              "outrageous", "right away"),
    "fearful": ("worried", "anxious", "safe", "reassure", "scared", "frightening",
                "clear plan"),
    "disgust": ("revolted", "gross", "unpleasant", "put off", "repulsive", "nasty",
                "get away from"),
    "surprised": ("caught off guard", "unexpected", "wow", "astonishing", "just happened",
                  "did not see", "sudden"),
}

_WORD = re.compile(r"[a-z0-9']+")
QUOTE = re.compile(r"\u201c([^\u201d]+)\u201d|\"([^\"]+)\"")


def _norm(text: str) -> str:
    return " " + " ".join(_WORD.findall(text.lower())) + " "


def emotion_scores(text: str) -> dict[str, float]:
    """How strongly `text` addresses each emotion: matched lexicon phrases."""
    t = _norm(text)
    return {emo: float(sum(t.count(" " + " ".join(_WORD.findall(w)) + " ") for w in words))
            for emo, words in EMOTION_WORDS.items()}


def reply_emotion(text: str) -> str | None:
    """The emotion a reply addresses, or None when no lexicon phrase (or a tie)."""
    scores = emotion_scores(text)
    best = max(scores.values())
    top = [e for e, s in scores.items() if s == best]
    return top[0] if best > 0 and len(top) == 1 else None


def reply_for_emotion(emotion: str, replies: Mapping[str, str]) -> str | None:
    """The reply id whose text best addresses `emotion` (None on a tie)."""
    scores = {rid: emotion_scores(text).get(emotion, 0.0) for rid, text in replies.items()}
    best = max(scores.values())
    top = [r for r, s in scores.items() if s == best]
    return top[0] if len(top) == 1 else None


def quoted_turn(reply: str, turns: Mapping[int, str]) -> int | None:
    """The turn whose words the reply quotes (longest overlap of the quote)."""
    m = QUOTE.search(reply)
    if not m:
        return None
    quote = m.group(1) or m.group(2)
    qwords = _WORD.findall(quote.lower())
    if not qwords or not turns:
        return None
    q = " ".join(qwords)
    hits = [t for t, text in turns.items() if q in " ".join(_WORD.findall(text.lower()))]
    if len(hits) == 1:
        return hits[0]
    overlap = {t: len(set(qwords) & set(_WORD.findall(text.lower()))) for t, text in turns.items()}
    best = max(overlap.values())
    top = [t for t, s in overlap.items() if s == best]
    return top[0] if best > 0 and len(top) == 1 else None


@dataclass
class StudyBView:
    """What a Study B request asks, read from its text parts.

    kind: "perception" (answer an emotion), "oracle" (no audio, a stated label,
    reply choice), "text" (no audio and no stated label: the text-only baseline T;
    the judges answer it from the text alone),
    "pointwise" (one recording or dialogue, reply choice), "pairwise" (Audio A and
    Audio B, reply choice: which reply fits Audio A)."""

    kind: str
    allowed: tuple[str, ...]
    replies: dict[str, str] = field(default_factory=dict)
    turns: dict[int, str] = field(default_factory=dict)
    audio: dict[tuple[str | None, int | None], int] = field(default_factory=dict)
    ask_turn: int | None = None
    oracle_emotion: str | None = None
    oracle_turn: int | None = None


def is_study_b(request) -> bool:
    """A Study B request: its answer is JSON {"reasoning", "pred"}."""
    ans = request.answer
    return ans.key == STUDY_B_ANSWER_KEY and bool(ans.reasoning)


def read_request(request) -> StudyBView:
    """Parse a Study B request (a `judgeaudit.judges.request.Request`)."""
    from judgeaudit.judges.request import AudioPart, TextPart

    texts: list[str] = [request.system or ""]
    audio: dict[tuple[str | None, int | None], int] = {}
    pending: tuple[str | None, int | None] | None = None
    for idx, part in enumerate(request.parts):
        if isinstance(part, TextPart):
            m = AUDIO_MARK.match(part.text)
            if m:
                pending = (m.group("slot"), int(m.group("turn")) if m.group("turn") else None)
                continue
            texts.append(part.text)
        elif isinstance(part, AudioPart):
            audio[pending if pending is not None else (None, None)] = idx
            pending = None
    body = "\n".join(texts)
    replies = dict(REPLY_LINE.findall(body))
    turns = {int(i): t for i, t in TURN_LINE.findall(body)}
    allowed = tuple(request.answer.allowed)
    view = StudyBView(kind="", allowed=allowed, replies=replies, turns=turns, audio=audio)
    if set(allowed) != set(REPLY_SLOTS):
        view.kind = "perception"
        m = IN_TURN.search(body)
        view.ask_turn = int(m.group(1)) if m else None
        return view
    if not audio:
        view.kind = "oracle"
        m = ORACLE_EMOTION.search(body)
        if m:
            view.oracle_emotion = m.group(2)
            view.oracle_turn = int(m.group(1)) if m.group(1) else None
        m = ORACLE_SHIFT.search(body)
        if m:
            view.oracle_turn = int(m.group(1))
        if view.oracle_emotion is None and view.oracle_turn is None:
            view.kind = "text"  # the text-only baseline T: nothing stated, nothing heard
        return view
    view.kind = "pairwise" if any(slot == "B" for slot, _ in audio) else "pointwise"
    return view


Scores = Mapping[str, float]
Perceive = Callable[[bytes], Scores]


def _best(scores: Scores, allowed: Sequence[str]) -> str:
    return max(allowed, key=lambda a: (scores.get(a, float("-inf")), -allowed.index(a)))


def _turn_audio(view: StudyBView, slot: str | None, turn: int | None) -> int | None:
    return view.audio.get((slot, turn))


def _dialogue_turns(view: StudyBView, slot: str | None) -> list[int]:
    return sorted(t for s, t in view.audio if s == slot and t is not None)


def _shift_evidence(per_turn: dict[int, Scores], candidates: Sequence[int],
                    target: str | None) -> dict[int, float]:
    """Change-point evidence that the speaker's emotion shifts at each candidate
    turn. The shifted emotion is the one the replies address (`target`); the
    starting emotion is the first turn's most likely other emotion. A shift at c
    means turns before c sound more like the start than the target, and turns
    from c on the reverse: evidence = sum over turns of +-(s(target) - s(start))."""
    turns = sorted(per_turn)
    if not turns:
        return {}
    first = per_turn[turns[0]]
    if target is None:
        target = max(per_turn[turns[-1]], key=lambda e: (per_turn[turns[-1]][e], e))
    others = {e: v for e, v in first.items() if e != target}
    start = max(others, key=lambda e: (others[e], e)) if others else None
    out = {}
    for c in candidates:
        s = 0.0
        for t in turns:
            d = float(per_turn[t].get(target, 0.0)) - float(per_turn[t].get(start, 0.0))
            s += d if t >= c else -d
        out[c] = s / len(turns)
    return out


def _reply_turns(view: StudyBView) -> dict[str, int | None]:
    return {rid: quoted_turn(text, view.turns) for rid, text in view.replies.items()}


def _fit(view: StudyBView, slot: str | None, audio_bytes: Callable[[int], bytes],
         perceive: Perceive) -> dict[str, float]:
    """How well each reply fits the recording (or dialogue) in `slot`."""
    turns = _dialogue_turns(view, slot)
    reply_turns = _reply_turns(view)
    positional = len(turns) > 1 and all(t is not None for t in reply_turns.values()) \
        and len(set(reply_turns.values())) == len(reply_turns)
    if positional:
        per_turn = {t: perceive(audio_bytes(_turn_audio(view, slot, t))) for t in turns}
        emos = {reply_emotion(text) for text in view.replies.values()}
        target = emos.pop() if len(emos) == 1 else None
        evidence = _shift_evidence(per_turn, [t for t in reply_turns.values()], target)
        return {rid: evidence.get(t, 0.0) for rid, t in reply_turns.items()}
    # emotion of the single recording, or of the last turn of a dialogue
    idx = _turn_audio(view, slot, turns[-1]) if turns else _turn_audio(view, slot, None)
    scores = perceive(audio_bytes(idx))
    fit = {}
    for rid, text in view.replies.items():
        emo = reply_emotion(text)
        fit[rid] = float(scores.get(emo, 0.0)) if emo else 0.0
    return fit


def answer(view: StudyBView, audio_bytes: Callable[[int], bytes], perceive: Perceive,
           fallback: str | None = None) -> str | None:
    """The cascade answer to a Study B request: perceive, then map with the lexicon.

    `audio_bytes(part_index)` returns a part's bytes; `perceive(bytes)` returns
    per-emotion scores. Returns one of `view.allowed`, or `fallback` when the
    request gives nothing to decide on."""
    if view.kind == "perception":
        if view.ask_turn is not None:
            idx = view.audio.get((None, view.ask_turn))
        else:
            idx = view.audio.get((None, None))
            if idx is None and view.audio:
                idx = view.audio[sorted(view.audio, key=lambda k: (k[1] or 0))[-1]]
        if idx is None:
            return fallback
        return _best(perceive(audio_bytes(idx)), list(view.allowed))
    if view.kind == "oracle":
        return oracle_answer(view, fallback)
    if view.kind == "pointwise":
        fit = _fit(view, None, audio_bytes, perceive)
        return _argmax_reply(fit, fallback)
    if view.kind == "pairwise":
        fa = _fit(view, "A", audio_bytes, perceive)
        fb = _fit(view, "B", audio_bytes, perceive)
        keep = fa.get("R1", 0) + fb.get("R2", 0)
        swap = fa.get("R2", 0) + fb.get("R1", 0)
        if keep == swap:
            return fallback
        return "R1" if keep > swap else "R2"
    return fallback


def oracle_answer(view: StudyBView, fallback: str | None = None) -> str | None:
    """Map a stated emotion (or shift position) to the reply that fits it."""
    if view.oracle_turn is not None and view.oracle_emotion is None:
        for rid, t in _reply_turns(view).items():
            if t == view.oracle_turn:
                return rid
        return fallback
    if view.oracle_emotion is not None:
        return reply_for_emotion(view.oracle_emotion, view.replies) or fallback
    return fallback


def _argmax_reply(fit: Mapping[str, float], fallback: str | None) -> str | None:
    if not fit:
        return fallback
    best = max(fit.values())
    top = sorted(r for r, s in fit.items() if s == best)
    return top[0] if len(top) == 1 else fallback


# ------------------------------------------------------------ embedded judges' entry points
def _uniform(*material) -> float:
    import hashlib

    h = hashlib.sha256("\x1f".join(map(str, material)).encode("utf-8")).digest()
    return int.from_bytes(h[:8], "big") / 2.0**64


def _text_of(request) -> str:
    from judgeaudit.judges.request import TextPart

    return "\n".join([request.system or ""] + [p.text for p in request.parts
                                                if isinstance(p, TextPart)])


def text_only_choice(request, salt: str) -> str:
    """A fixed answer from the request text alone (identical requests text ->
    identical answer, whatever the audio)."""
    allowed = request.answer.allowed
    return allowed[int(_uniform("text", salt, _text_of(request)) * len(allowed))]


def _part_bytes(loaded):
    parts = loaded.request.parts
    return lambda idx: loaded.audio_bytes(parts[idx])


def listener_answer(loaded, perception) -> str:
    """`listener` on a Study B request: specialist perception + lexicon mapping."""
    view = read_request(loaded.request)
    ans = answer(view, _part_bytes(loaded), perception.emotion_scores)
    return ans or text_only_choice(loaded.request, "listener")


def label_reader_answer(loaded) -> str:
    """`label-reader` on a Study B request: maps a stated label (O probe) with the
    lexicon; otherwise answers from the text alone."""
    view = read_request(loaded.request)
    if view.kind == "oracle":
        ans = oracle_answer(view)
        if ans:
            return ans
    return text_only_choice(loaded.request, "label-reader")


def noisy_scores(scores: Mapping[str, float], seed: int, clip_key: str,
                 accuracy: float) -> dict[str, float]:
    """Planted perception errors keyed on the clip (every probe of one clip errs the
    same way): with probability 1 - accuracy the top two emotions swap scores."""
    out = dict(scores)
    if accuracy >= 1.0 or len(out) < 2 or _uniform(seed, "acc", clip_key) < accuracy:
        return out
    a, b = sorted(out, key=lambda e: (-out[e], e))[:2]
    out[a], out[b] = out[b], out[a]
    return out


def simulated_answer(loaded, perception, seed: int = 0, audio_accuracy: float = 1.0,
                     potemkin: float = 0.0) -> str:
    """`simulated` on a Study B request: the listener's cascade with planted
    perception errors (`audio_accuracy`, per clip) and a planted integration
    failure: with probability `potemkin` (per request) a reply choice made from
    audio is flipped even though perception and mapping succeeded."""
    from judgeaudit.io import sha256_bytes

    view = read_request(loaded.request)

    def perceive(data: bytes) -> dict[str, float]:
        return noisy_scores(perception.emotion_scores(data), seed, sha256_bytes(data),
                            audio_accuracy)

    ans = answer(view, _part_bytes(loaded), perceive)
    if ans is None:
        return text_only_choice(loaded.request, "simulated")
    if view.kind in AUDIO_PROTOCOLS and potemkin > 0 and \
            _uniform(seed, "potemkin", loaded.request.content_hash()) < potemkin:
        return "R2" if ans == "R1" else "R1"
    return ans


__all__ = [
    "EMOTION_WORDS", "LEXICON_VERSION", "label_reader_answer", "listener_answer", "noisy_scores",
    "simulated_answer", "text_only_choice", "StudyBView", "answer", "emotion_scores", "is_study_b", "oracle_answer",
    "quoted_turn", "read_request", "reply_emotion", "reply_for_emotion",
]
