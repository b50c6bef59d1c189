"""Read a LoadedRequest into a `RequestView` the embedded judges reason over.

Everything here comes from the request alone (system text, text parts in order,
audio bytes, answer spec): see the prompt contract `judgeaudit.prompts` for the
wording it expects. Study A requests only: Study B requests (answer key `pred` with
reasoning) are read by `lexicon.read_request`.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from dataclasses import dataclass, field

from judgeaudit import prompts as C
from judgeaudit.io import sha256_bytes
from judgeaudit.judges.embedded.audio import decode_wav, encode_wav, pcm_hash
from judgeaudit.judges.parse import match_label
from judgeaudit.judges.request import AudioPart, LoadedRequest
from judgeaudit.vocab.labels import EMOTIONS, LANGUAGE_NAMES


@dataclass(frozen=True)
class Clip:
    wav: bytes
    pcm_sha256: str
    sample_rate: int


@dataclass(frozen=True)
class SideLabel:
    label: str  # canonical spelling (an allowed value, or a vocabulary word)
    kind: str  # "block" | "reference"
    framed: bool  # blocks only: the "A classifier labelled ..." authority framing
    placement: str  # "system" | "rubric" | "before" | "after" | "text"


@dataclass
class RequestView:
    task: str  # "classify" | "pairwise" | "unknown"
    attribute: str | None  # emotion | language | naturalness | cleanness | speaker
    allowed: tuple[str, ...]
    key: str
    reasoning: bool
    text: str  # system + all text parts, in order
    clips: list[Clip] = field(default_factory=list)  # A/B slots, turns, or the one clip
    reference_clip: Clip | None = None
    audio_format: str = "none"  # none | single | concat | native | multi
    labels: list[SideLabel] = field(default_factory=list)
    fallible: bool = False

    @property
    def has_audio(self) -> bool:
        return bool(self.clips)

    def labels_of(self, kind: str) -> list[SideLabel]:
        return [lab for lab in self.labels if lab.kind == kind]


def _task(allowed: tuple[str, ...], text: str) -> tuple[str, str | None]:
    low = {a.casefold() for a in allowed}
    if low == {"a", "b"}:
        for attr, rx in C.ATTRIBUTE_KEYWORDS:
            if rx.search(text):
                return "pairwise", attr
        return "pairwise", "naturalness"
    if low and low <= set(EMOTIONS):
        return "classify", "emotion"
    if low and low <= set(LANGUAGE_NAMES) | set(LANGUAGE_NAMES.values()):
        return "classify", "language"
    return "unknown", None


def _vocab(attribute: str | None, allowed: tuple[str, ...]) -> tuple[str, ...]:
    if attribute == "emotion" and set(allowed) <= set(C.PAIR_SLOTS):
        return EMOTIONS
    if attribute in ("emotion", "language") and allowed and not set(allowed) <= set(C.PAIR_SLOTS):
        return allowed
    return EMOTIONS + tuple(LANGUAGE_NAMES)


@functools.lru_cache(maxsize=8192)
def _find_labels(text: str, placement: str, vocab: tuple[str, ...]
                 ) -> tuple[tuple[int, SideLabel], ...]:
    """Side labels in one text part (a pure function of its arguments, memoised: a
    job's trials repeat the same few hundred question / block / reference texts)."""
    found: list[tuple[int, SideLabel]] = []
    taken: list[tuple[int, int]] = []
    for kind, framed, rx in (("reference", False, C.REFERENCE_RE), ("block", True, C.FRAMED_RE),
                             ("block", False, C.UNFRAMED_RE)):
        for m in rx.finditer(text):
            if any(s <= m.start() < e for s, e in taken):
                continue
            label = match_label(m.group(1), vocab)
            if label is None:
                continue
            taken.append((m.start(), m.end()))
            found.append((m.start(), SideLabel(label, kind, framed, placement)))
    return tuple(sorted(found, key=lambda x: x[0]))


#: audio sha256 -> (clips, was_split) of that recording: a job's trials carry the same
#: few hundred clips many times over, and what a recording splits into is a function of
#: its bytes alone. The clips are immutable, so every request of one recording gets the
#: same Clip objects (and the same bytes object, hashed once: judgeaudit.io.sha256_bytes).
#: Bounded by the audio bytes it keeps (least recently used leave first).
_CLIP_MEMO: OrderedDict[str, tuple[tuple[Clip, ...], bool]] = OrderedDict()
_CLIP_MEMO_BUDGET = 64 << 20
_clip_memo_held = 0


def _split_clips(data: bytes) -> tuple[tuple[Clip, ...], bool]:
    global _clip_memo_held
    key = sha256_bytes(data)
    hit = _CLIP_MEMO.get(key)
    if hit is not None:
        _CLIP_MEMO.move_to_end(key)
        return hit
    pcm, sr = decode_wav(data)
    pieces = C.split_pcm(pcm, sr)
    if len(pieces) == 1:
        value = ((Clip(data, pcm_hash(pcm), sr),), False)
    else:
        value = (tuple(Clip(encode_wav(p, sr), pcm_hash(p), sr) for p in pieces), True)
    size = sum(len(c.wav) for c in value[0])
    while _CLIP_MEMO and _clip_memo_held + size > _CLIP_MEMO_BUDGET:
        _, (old, _split) = _CLIP_MEMO.popitem(last=False)
        _clip_memo_held -= sum(len(c.wav) for c in old)
    _CLIP_MEMO[key] = value
    _clip_memo_held += size
    return value


def _clips_from_audio(loaded: LoadedRequest) -> list[tuple[int, list[Clip], bool]]:
    """Per audio part: (part index, clips, was_split)."""
    out = []
    for i, part in enumerate(loaded.request.parts):
        if not isinstance(part, AudioPart):
            continue
        clips, split = _split_clips(loaded.audio_bytes(part))
        out.append((i, list(clips), split))
    return out


def read_request(loaded: LoadedRequest) -> RequestView:
    req = loaded.request
    texts = [p.text for p in req.parts if p.kind == "text"]
    full_text = "\n".join(([req.system] if req.system else []) + texts)
    task, attribute = _task(req.answer.allowed, full_text)
    view = RequestView(task, attribute, req.answer.allowed, req.answer.key,
                       req.answer.reasoning, full_text)
    audio_idx = [i for i, p in enumerate(req.parts) if isinstance(p, AudioPart)]
    first_audio = audio_idx[0] if audio_idx else None

    # side labels with placement
    found: list[tuple[tuple[int, int], SideLabel]] = []
    if req.system:
        vocab = _vocab(attribute, req.answer.allowed)
        found += [((-1, pos), lab) for pos, lab in _find_labels(req.system, "system", vocab)]
    for i, part in enumerate(req.parts):
        if part.kind != "text":
            continue
        if part.text.lstrip().lower().startswith(C.RUBRIC_PREFIX.lower()):
            placement = "rubric"
        elif first_audio is None:
            placement = "text"
        else:
            placement = "before" if i < first_audio else "after"
        vocab = _vocab(attribute, req.answer.allowed)
        found += [((i, pos), lab) for pos, lab in _find_labels(part.text, placement, vocab)]
    view.labels = [lab for _, lab in sorted(found, key=lambda x: x[0])]
    view.fallible = bool(C.FALLIBLE_RE.search(full_text))

    # audio
    per_part = _clips_from_audio(loaded)
    clips = [c for _, cs, _ in per_part for c in cs]
    if not clips:
        return view
    if task == "pairwise":
        ref = None
        if len(per_part) == 1 and len(per_part[0][1]) == 6:
            # reference_layout "joined": cue, reference, cue, A, cue, B in one
            # recording (the spoken slot cues are pieces 0, 2, 4; REFERENCE_JOINED_TEXT)
            ref, rest = per_part[0][1][1], [per_part[0][1][3], per_part[0][1][5]]
        elif len(per_part) >= 2 and _marks_reference(req, per_part[0][0]) \
                or len(per_part) == 3 or (len(per_part) == 2 and per_part[1][2]):
            ref = per_part[0][1][0]
            rest = [c for _, cs, _ in per_part[1:] for c in cs]
        else:
            rest = clips
        view.reference_clip = ref
        view.clips = rest[:2]
        split = any(s for _, _, s in per_part)
        view.audio_format = "concat" if split else "native"
    else:
        view.clips = clips
        view.audio_format = "single" if len(clips) == 1 else "multi"
    return view


def _marks_reference(req, audio_index: int) -> bool:
    if audio_index == 0:
        return False
    prev = req.parts[audio_index - 1]
    return prev.kind == "text" and C.REFERENCE_CLIP_MARKER.lower() in prev.text.lower() \
        and "reference label" not in prev.text.lower()


def clip_seed_material(clips: list[Clip]) -> str:
    """Order-free identity of a set of clips (sorted sample hashes)."""
    return ",".join(sorted(c.pcm_sha256 for c in clips))
