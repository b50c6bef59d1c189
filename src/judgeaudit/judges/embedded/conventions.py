"""Prompt and audio conventions the embedded judges read from a request.

The embedded judges see only the request (text parts, system text, audio bytes,
answer spec), exactly what an API judge gets. The study stages that build
requests should use these constants (importing them is allowed: conditions may
import judges, never the reverse), and the reader in `reader.py` is tolerant of
small wording changes (case, quotes, trailing punctuation).

Task kind (from `answer.allowed` first, then the instruction text):
  - classification: allowed is a subset of EMOTIONS (emotion) or of LANGUAGES
    codes/names (language);
  - pairwise: allowed == PAIR_SLOTS ("A", "B"); the attribute from keywords in the
    text (ATTRIBUTE_KEYWORDS: speaker similarity, naturalness, cleanness, emotion);
  - reply choice (Study B): allowed == REPLY_SLOTS ("R1", "R2"); the replies are
    lines `R1: <text>` / `R2: <text>` in any text part;
  - position (Study B trajectory / shift location): allowed are turn numbers
    ("1", "2", ... or "turn 3").

Side information (each found with its placement and framing):
  - specialist block, framed:   `A classifier labelled this clip as <label>.`
  - specialist block, unframed: `Label: <label>.`
  - reference:                  `Reference label: <label>.`
  - oracle statement (Study B O probe and staging probe): `The speaker's tone of voice is <label>.`
  - fallible-label instruction: FALLIBLE_INSTRUCTION (any text matching FALLIBLE_RE).
  Placement: `system` (system text), `rubric` (a text part starting `Grading rubric:`),
  `before` / `after` (a user text part before / after the first audio part), or
  `text` when the request has no audio.

Audio:
  - `native` pairwise: two audio parts (A then B); with a speaker reference, three
    (reference, A, B) or a text part containing `Reference` right before the first;
  - `concat` pairwise: one audio = A + separator + B, where the separator is
    `separator_pcm(sr)`: SEPARATOR_SILENCE_S of digital silence, a SEPARATOR_TONE_HZ
    tone of SEPARATOR_TONE_S at SEPARATOR_TONE_AMPLITUDE, and the same silence
    again (int16 PCM, mono). Use `concat_pcm(a, b, sr)` to build it; the embedded
    judges locate the exact tone samples and split there;
  - Study B Pairwise: two audio contexts introduced by text naming `Context A` and
    `Context B`; the answer (R1/R2) is the reply that fits Context A;
  - dialogues (Study B positional): one audio part per turn, or one audio with the
    turns joined by the same separator; turn n is the n-th clip (1-based).

Study B reply mapping: a reply fits an emotion when it contains that emotion's
cue words (REPLY_CUES); the template bank should put at least one cue of the
target emotion in the fitting reply and none of the other reply's emotion.
Positional replies may name the turn they react to as `turn <n>`.
"""

from __future__ import annotations

import re

import numpy as np

EMOTIONS = ("neutral", "calm", "happy", "sad", "angry", "fearful", "disgust", "surprised")
LANGUAGES = {"en": "english", "es": "spanish", "fr": "french", "de": "german",
             "pt": "portuguese", "it": "italian", "zh": "chinese", "ja": "japanese"}
PAIR_SLOTS = ("A", "B")
REPLY_SLOTS = ("R1", "R2")

FRAMED_BLOCK = "A classifier labelled this clip as {label}."
UNFRAMED_BLOCK = "Label: {label}."
REFERENCE = "Reference label: {label}."
ORACLE_STATEMENT = "The speaker's tone of voice is {label}."
RUBRIC_PREFIX = "Grading rubric:"
FALLIBLE_INSTRUCTION = (
    "Classifier labels can be wrong. If a label conflicts with what you hear, "
    "ignore the label and answer from the audio."
)
REFERENCE_CLIP_MARKER = "Reference"
REPLY_LINE = "{slot}: {text}"

FRAMED_RE = re.compile(r"classifier\s+label(?:l)?ed\s+this\s+clip\s+as\s+[\"'“]?([\w\- ]+?)[\"'”]?\s*(?:[.,;\n]|$)", re.I)
REFERENCE_RE = re.compile(r"reference\s+label\s*:\s*[\"'“]?([\w\- ]+?)[\"'”]?\s*(?:[.,;\n]|$)", re.I)
UNFRAMED_RE = re.compile(r"\blabel\s*:\s*[\"'“]?([\w\- ]+?)[\"'”]?\s*(?:[.,;\n]|$)", re.I)
ORACLE_RE = re.compile(r"(?:tone\s+of\s+voice\s+is|speaker\s+sounds|emotion\s+is)\s+[\"'“]?([\w\- ]+?)[\"'”]?\s*(?:[.,;\n]|$)", re.I)
FALLIBLE_RE = re.compile(r"\b(fallible|can be wrong|may be wrong|might be wrong|can be incorrect|may be incorrect|not always (?:right|correct))\b", re.I)
REPLY_RE = re.compile(r"^\s*\**(R[12])\**\s*[:)\-]\s*(.+?)\s*$", re.M)
CONTEXT_A_RE = re.compile(r"\bcontext\s*A\b", re.I)
CONTEXT_B_RE = re.compile(r"\bcontext\s*B\b", re.I)
TURN_RE = re.compile(r"\bturn\s*(\d+)\b", re.I)

# Pairwise attribute keywords, checked in this order.
ATTRIBUTE_KEYWORDS = (
    ("speaker", re.compile(r"same speaker|speaker similarity|more similar|sounds more like|reference speaker|same person", re.I)),
    ("naturalness", re.compile(r"natural", re.I)),
    ("cleanness", re.compile(r"clean|noise|noisy|degrad|distort|quality", re.I)),
    ("emotion", re.compile(r"emotion|" + "|".join(EMOTIONS), re.I)),
)

REPLY_CUES = {
    "neutral": ("noted", "okay", "sure", "understood", "got it"),
    "calm": ("relaxed", "peaceful", "take your time", "no rush", "steady"),
    "happy": ("great", "wonderful", "glad", "congratulations", "exciting", "fantastic"),
    "sad": ("sorry", "here for you", "that sounds hard", "comfort", "must be difficult"),
    "angry": ("frustrat", "understand why you're upset", "calm down", "apologi", "fix this"),
    "fearful": ("safe", "don't worry", "it will be okay", "reassur", "scary"),
    "disgust": ("gross", "unpleasant", "awful", "yuck", "revolting"),
    "surprised": ("unexpected", "wow", "didn't see that coming", "surprise", "really?"),
}

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
