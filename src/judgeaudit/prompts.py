"""The prompt contract: every sentence the Study A and Study B builders write into a
request and the embedded judges read back, each defined once, with the pattern
that reads it next to it.

This module sits at the bottom of the package: the trial builders (`judgeaudit.study_a`,
`judgeaudit.study_b`) and the embedded judges (`judgeaudit.judges`) import it; it imports
none of them (only numpy, for the concat separator). A wording change made here reaches
the builder and the reader together; the readers are tolerant of small variations
(case, quotes, trailing punctuation), so an API judge sees natural text.

Study A, classification (request layout in CONTRACTS.md):
    system: SYSTEM_TEXT [+ "\n" + reference when placed in the system]
    parts:  CLS_QUESTIONS[task] + ALLOWED_TEXT, RUBRIC_TEXT [+ reference], [reference
            before], audio, [description], [block], [FALLIBLE_INSTRUCTION], [reference after]
  - reference (RQ2 / cue conflict): REFERENCE_LABEL_TEXT, read by REFERENCE_RE;
  - specialist block, framed: FRAMED_BLOCK (FRAMED_RE); unframed: UNFRAMED_BLOCK
    (UNFRAMED_RE); fallible-label instruction: FALLIBLE_INSTRUCTION (FALLIBLE_RE);
    for a reference / the cue conflict: REFERENCE_FALLIBLE_TEXT / CONFLICT_FALLIBLE_TEXT
    (FALLIBLE_RE), after the block, before a reference placed `after`.
    The blueprint builder writes these three from templates/blueprint/ (block_framed.txt,
    block_unframed.txt, fallible.txt); a test checks the files say exactly this;
  - placement: `system` (system text), `rubric` (a part starting RUBRIC_PREFIX),
    `before` / `after` (a user text part before / after the first audio part), or
    `text` when the request has no audio.

Study A, pairwise: PAIR_QUESTIONS[criterion] + PAIR_FORMAT_TEXT; a speaker reference
clip after a part REFERENCE_CLIP_TEXT (read by REFERENCE_CLIP_MARKER); `native`: parts
SLOT_TEXT A / B before each clip; `concat`: CONCAT_TEXT then one audio
A + separator + B, where the separator is `separator_pcm(sr)` (SEPARATOR_SILENCE_S of
digital silence, a SEPARATOR_TONE_HZ tone of SEPARATOR_TONE_S at
SEPARATOR_TONE_AMPLITUDE, the same silence; int16 PCM, mono). The embedded judges
split on the exact tone samples (`split_pcm`). The attribute of a pair is read from
the question by ATTRIBUTE_KEYWORDS.

Study B (wording of the questions comes from templates/study_b/; the structure is):
  - every audio part follows a mark `audio_mark(slot, turn)`: `[Audio]`, `[Audio A]`,
    `[Audio, turn 3]`, `[Audio B, turn 3]` (AUDIO_MARK);
  - candidate replies: lines `reply_line(slot, text)` = `R1: <text>` (REPLY_LINE);
    reply answers are REPLY_SLOTS under key STUDY_B_ANSWER_KEY with reasoning;
  - transcripts: lines `Turn <i>: <Role>: <text>` (TURN_LINE);
  - a perception question about one turn contains `in turn <i>` (IN_TURN);
  - oracle statements: ORACLE_EMOTION_TEXT / ORACLE_TURN_EMOTION_TEXT / ORACLE_SHIFT_TEXT
    (read by ORACLE_EMOTION and ORACLE_SHIFT).
"""

from __future__ import annotations

import re

import numpy as np

from judgeaudit.vocab.labels import EMOTIONS

# ---------------------------------------------------------------- shared
SYSTEM_TEXT = "You are an expert judge of speech recordings. Reply only with a JSON object."

# ---------------------------------------------------------------- Study A classification
CLS_QUESTIONS = {
    "emotion": "Which emotion does the speaker express?",
    "language": "Which language is spoken in the recording?",
}
RUBRIC_PREFIX = "Grading rubric:"
RUBRIC_TEXT = (RUBRIC_PREFIX + " base your answer on the evidence about the {attribute} "
               "of this recording.")
ALLOWED_TEXT = 'Answer with one of: {labels}. Reply as {{"label": "<answer>"}}.'
REFERENCE_LABEL_TEXT = "Reference label: {label}."
FRAMED_BLOCK = "A classifier labelled this clip as {label}."
UNFRAMED_BLOCK = "Label: {label}."
FALLIBLE_INSTRUCTION = (
    "Classifier labels can be wrong. If a label conflicts with what you hear, "
    "ignore the label and answer from the audio."
)
# the falsifier on the other protocols (issue 21): the same instruction for a
# reference label (RQ2) and for both cues of the cue conflict; FALLIBLE_RE reads all
REFERENCE_FALLIBLE_TEXT = (
    "Reference labels can be wrong. If a label conflicts with what you hear, "
    "ignore the label and answer from the audio."
)
CONFLICT_FALLIBLE_TEXT = (
    "Classifier labels and reference labels can be wrong. If a label conflicts with "
    "what you hear, ignore the label and answer from the audio."
)

FRAMED_RE = re.compile(r"classifier\s+label(?:l)?ed\s+this\s+clip\s+as\s+[\"'“]?([\w\- ]+?)[\"'”]?\s*(?:[.,;\n]|$)", re.I)
REFERENCE_RE = re.compile(r"reference\s+label\s*:\s*[\"'“]?([\w\- ]+?)[\"'”]?\s*(?:[.,;\n]|$)", re.I)
UNFRAMED_RE = re.compile(r"\blabel\s*:\s*[\"'“]?([\w\- ]+?)[\"'”]?\s*(?:[.,;\n]|$)", re.I)
FALLIBLE_RE = re.compile(r"\b(fallible|can be wrong|may be wrong|might be wrong|can be incorrect|may be incorrect|not always (?:right|correct))\b", re.I)

# ---------------------------------------------------------------- Study A pairwise
PAIR_SLOTS = ("A", "B")
PAIR_QUESTIONS = {
    "naturalness": "Question: which clip sounds more natural?",
    "cleanness": "Question: which clip is cleaner (less degraded)?",
    "speaker": "Question: which clip is spoken by the same speaker as the reference clip?",
    "emotion": "Question: which clip sounds more {emotion}?",
}
PAIR_FORMAT_TEXT = 'Answer "A" or "B". Reply as {"choice": "<A or B>"}.'
CONCAT_TEXT = ("Clips A and B in one recording: clip A, then a short tone, then clip B:")
REFERENCE_CLIP_TEXT = "Reference clip:"
# speaker similarity for judges limited to one audio input (reference_layout: joined,
# or `auto` for such a judge): the reference, A and B in one recording, each announced
# by a spoken slot cue (espeak-ng voice JOINED_CUE_VOICE saying JOINED_CUES[slot], the
# names the separate layout's text parts give the clips: REFERENCE_CLIP_TEXT,
# SLOT_TEXT), with the concat separator after every cue and every clip but the last:
#   cue "Reference clip" | sep | reference | sep | cue "Clip A" | sep | A | sep | cue "Clip B" | sep | B
JOINED_CUES = {"reference": "Reference clip", "A": "Clip A", "B": "Clip B"}
JOINED_CUE_ORDER = ("reference", "A", "B")
JOINED_CUE_VOICE = "en"  # espeak-ng's British English voice: none of the corpora's en-us speakers
JOINED_CUE_RATE = 165  # words per minute
REFERENCE_JOINED_TEXT = (
    "Reference clip, clip A and clip B in one recording. A voice announces each clip: "
    "you hear \"Reference clip\", a short tone, the reference clip, a short tone, "
    "\"Clip A\", a short tone, clip A, a short tone, \"Clip B\", a short tone, "
    "then clip B:")
REFERENCE_CLIP_MARKER = "Reference"
SLOT_TEXT = "Clip {slot}:"

# Pairwise attribute keywords, checked in this order.
ATTRIBUTE_KEYWORDS = (
    ("speaker", re.compile(r"same speaker|speaker similarity|more similar|sounds more like|reference speaker|same person", re.I)),
    ("naturalness", re.compile(r"natural", re.I)),
    ("cleanness", re.compile(r"clean|noise|noisy|degrad|distort|quality", re.I)),
    ("emotion", re.compile(r"emotion|" + "|".join(EMOTIONS), re.I)),
)

SEPARATOR_SILENCE_S = 0.3
SEPARATOR_TONE_S = 0.2
SEPARATOR_TONE_HZ = 880.0
SEPARATOR_TONE_AMPLITUDE = 0.25


def separator_tone(sample_rate: int) -> np.ndarray:
    n = int(round(SEPARATOR_TONE_S * sample_rate))
    t = np.arange(n) / float(sample_rate)
    tone = SEPARATOR_TONE_AMPLITUDE * np.sin(2 * np.pi * SEPARATOR_TONE_HZ * t)
    return np.round(tone * 32767).astype(np.int16)


def separator_pcm(sample_rate: int) -> np.ndarray:
    """The concat separator as int16 PCM: silence, tone, silence."""
    silence = np.zeros(int(round(SEPARATOR_SILENCE_S * sample_rate)), dtype=np.int16)
    return np.concatenate([silence, separator_tone(sample_rate), silence])


def concat_pcm(a: np.ndarray, b: np.ndarray, sample_rate: int) -> np.ndarray:
    """A + separator + B (int16 mono) for the `concat` pairwise format."""
    return np.concatenate([np.asarray(a, np.int16), separator_pcm(sample_rate),
                           np.asarray(b, np.int16)])


def split_pcm(pcm: np.ndarray, sample_rate: int) -> list[np.ndarray]:
    """Split int16 PCM on every exact separator; [pcm] if none is found."""
    tone = separator_tone(sample_rate)
    hay = np.ascontiguousarray(pcm, dtype=np.int16).tobytes()
    needle = tone.tobytes()
    n_sil = int(round(SEPARATOR_SILENCE_S * sample_rate))
    pieces: list[np.ndarray] = []
    start = 0
    pos = hay.find(needle)
    while pos != -1:
        if pos % 2 == 0:
            i = pos // 2  # tone start sample
            a_end, b_start = i - n_sil, i + len(tone) + n_sil
            if a_end >= start and b_start <= len(pcm) and not pcm[a_end:i].any() \
                    and not pcm[i + len(tone):b_start].any():
                pieces.append(pcm[start:a_end])
                start = b_start
        pos = hay.find(needle, pos + 2)
    pieces.append(pcm[start:])
    return pieces


# ---------------------------------------------------------------- Study B
STUDY_B_ANSWER_KEY = "pred"
REPLY_SLOTS = ("R1", "R2")
ORACLE_EMOTION_TEXT = "Speaker emotion: {label}."
ORACLE_TURN_EMOTION_TEXT = "Speaker emotion in turn {turn}: {label}."
ORACLE_SHIFT_TEXT = "Emotion shift at turn {turn}."
TURN_SCOPE_TEXT = " in turn {turn}"

AUDIO_MARK = re.compile(r"^\s*\[Audio(?: (?P<slot>[AB]))?(?:, turn (?P<turn>\d+))?\]\s*$")
REPLY_LINE = re.compile(r"^\s*(R[12])\s*:\s*(.+?)\s*$", re.M)
TURN_LINE = re.compile(r"^\s*Turn (\d+)\s*:\s*(.+?)\s*$", re.M)
ORACLE_EMOTION = re.compile(r"Speaker emotion(?: in turn (\d+))?: ([a-z]+)\.")
ORACLE_SHIFT = re.compile(r"Emotion shift at turn (\d+)\.")
IN_TURN = re.compile(r"\bin turn (\d+)\b")


def audio_mark(slot: str | None = None, turn: int | None = None) -> str:
    """The text part announcing an audio part: `[Audio]`, `[Audio A]`, `[Audio, turn 3]`..."""
    label = f"Audio {slot}" if slot else "Audio"
    return f"[{label}, turn {turn}]" if turn is not None else f"[{label}]"


def reply_line(slot: str, text: str) -> str:
    return f"{slot}: {text}"


def turn_line(turn: int, role: str, text: str) -> str:
    return f"Turn {turn}: {role.capitalize()}: {text}"


__all__ = [
    "ALLOWED_TEXT", "ATTRIBUTE_KEYWORDS", "AUDIO_MARK", "CLS_QUESTIONS", "CONCAT_TEXT",
    "CONFLICT_FALLIBLE_TEXT", "REFERENCE_FALLIBLE_TEXT",
    "FALLIBLE_INSTRUCTION", "FALLIBLE_RE", "FRAMED_BLOCK", "FRAMED_RE", "IN_TURN",
    "ORACLE_EMOTION", "ORACLE_EMOTION_TEXT", "ORACLE_SHIFT", "ORACLE_SHIFT_TEXT",
    "ORACLE_TURN_EMOTION_TEXT", "PAIR_FORMAT_TEXT", "PAIR_QUESTIONS", "PAIR_SLOTS",
    "JOINED_CUES", "JOINED_CUE_ORDER", "JOINED_CUE_RATE", "JOINED_CUE_VOICE",
    "REFERENCE_CLIP_MARKER", "REFERENCE_CLIP_TEXT", "REFERENCE_JOINED_TEXT", "REFERENCE_RE",
    "REFERENCE_LABEL_TEXT",
    "REPLY_LINE", "REPLY_SLOTS", "RUBRIC_PREFIX", "RUBRIC_TEXT", "SEPARATOR_SILENCE_S",
    "SEPARATOR_TONE_AMPLITUDE", "SEPARATOR_TONE_HZ", "SEPARATOR_TONE_S", "SLOT_TEXT",
    "STUDY_B_ANSWER_KEY", "SYSTEM_TEXT", "TURN_LINE", "TURN_SCOPE_TEXT", "UNFRAMED_BLOCK",
    "UNFRAMED_RE", "audio_mark", "concat_pcm", "reply_line", "separator_pcm",
    "separator_tone", "split_pcm", "turn_line",
]
