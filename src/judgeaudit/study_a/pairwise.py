"""Study A RQ3: pairwise A/B trials in both orders and two formats.

`native`: two audio inputs, each after a text part naming its slot (`Clip A:`,
`Clip B:`). `concat`: one audio input holding A, the separator, then B.

The separator is the one the embedded judges split on, defined once in the prompt
contract `judgeaudit.prompts` (with every sentence of these requests) and
re-exported here as `SEPARATOR_*`:
SEPARATOR_SILENCE_S of digital silence, a SEPARATOR_TONE_S sine at
SEPARATOR_TONE_HZ with peak SEPARATOR_TONE_AMPLITUDE (int16 PCM), the same silence
again. Clips are joined as int16 PCM so the tone samples are exact.

Speaker similarity adds a reference clip as the first audio input after a text part
`Reference clip:` (in both formats; the reference is never concatenated), except in
the joined layout of `concat` (`reference_layout`, per judge under `auto`): reference,
A and B in ONE audio input, each announced by a spoken slot cue synthesised with
espeak-ng (`spoken_cue`: "Reference clip", "Clip A", "Clip B", the names the separate
layout's text parts give the clips), the separator after every cue and every clip but
the last, and a text part (prompts.REFERENCE_JOINED_TEXT) naming the cues in order.
Under `auto` (default) a speaker `concat` trial carries the joined request as an
alternate (`alt_requests.joined`, with the sample offsets of every cue and clip); the
judging step sends it only to a judge whose audio-input limit cannot take the separate
layout's two inputs (`judgeaudit.judges.shard.select_request`).
"""

from __future__ import annotations

import functools
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf

from judgeaudit.conditions.common import check_unique_ids, make_trial, rng_for
from judgeaudit.io import sha256_bytes, sha256_json, write_bytes_atomic
from judgeaudit.judges.request import AnswerSpec, AudioPart, Part, Request, TextPart
from judgeaudit.prompts import (
    CONCAT_TEXT,
    JOINED_CUE_ORDER,
    JOINED_CUE_RATE,
    JOINED_CUE_VOICE,
    JOINED_CUES,
    PAIR_FORMAT_TEXT,
    PAIR_QUESTIONS,
    PAIR_SLOTS,
    REFERENCE_CLIP_TEXT,
    REFERENCE_JOINED_TEXT,
    SEPARATOR_SILENCE_S,
    SEPARATOR_TONE_AMPLITUDE,
    SEPARATOR_TONE_HZ,
    SEPARATOR_TONE_S,
    SLOT_TEXT,
    SYSTEM_TEXT,
    concat_pcm,
    separator_pcm,
    split_pcm,
)
from judgeaudit.vocab.study_a import PAIR_FORMATS

STUDY = "A"
ANSWER_KEY = "choice"
ORDERS = ("AB", "BA")
# speaker `concat` layouts: `auto` = separate, plus the joined request as an alternate
# for judges limited to one audio input
REFERENCE_LAYOUTS = ("auto", "separate", "joined")
__all__ = ["REFERENCE_LAYOUTS", "SEPARATOR_SILENCE_S", "SEPARATOR_TONE_AMPLITUDE",
           "SEPARATOR_TONE_HZ", "SEPARATOR_TONE_S", "Clip", "Pair", "concat_wav",
           "joined_wav", "pair_trials", "split_concat", "spoken_cue"]

# every fixed sentence of these requests is the prompt contract's (judgeaudit.prompts)


@dataclass(frozen=True)
class Clip:
    clip_id: str
    path: str
    sha256: str


@dataclass(frozen=True)
class Pair:
    """One pair: `better` is the gold winner; `reference` only for speaker similarity;
    `emotion` names the target of an emotion pair."""

    pair_id: str
    criterion: str
    better: Clip
    worse: Clip
    reference: Clip | None = None
    emotion: str | None = None
    meta: tuple[tuple[str, Any], ...] = ()


def prompt_sha256() -> str:
    return sha256_json([SYSTEM_TEXT, PAIR_QUESTIONS, PAIR_FORMAT_TEXT, CONCAT_TEXT,
                        REFERENCE_CLIP_TEXT, separator_spec()])


def separator_spec() -> dict[str, float]:
    return {"silence_s": SEPARATOR_SILENCE_S, "tone_s": SEPARATOR_TONE_S,
            "tone_hz": SEPARATOR_TONE_HZ, "amplitude": SEPARATOR_TONE_AMPLITUDE}


def separator(sr: int) -> np.ndarray:
    """The separator samples (int16, mono) at sample rate `sr`."""
    return separator_pcm(sr)


def _read_pcm(data: bytes, where: str) -> tuple[np.ndarray, int]:
    try:
        x, sr = sf.read(io.BytesIO(data), dtype="int16", always_2d=True)
    except Exception as exc:  # soundfile raises several types
        raise ValueError(f"{where}: not readable audio ({exc})") from exc
    if x.shape[1] > 1:
        x = np.round(x.astype(np.float64).mean(axis=1, keepdims=True)).astype(np.int16)
    return x[:, 0], int(sr)


def concat_wav(a: bytes, b: bytes, where: str = "concat") -> bytes:
    """WAV bytes (16-bit PCM mono) of A, separator, B. Both clips need one sample rate."""
    xa, sra = _read_pcm(a, f"{where} clip A")
    xb, srb = _read_pcm(b, f"{where} clip B")
    if sra != srb:
        raise ValueError(f"{where}: clips have different sample rates ({sra} vs {srb} Hz)")
    buf = io.BytesIO()
    sf.write(buf, concat_pcm(xa, xb, sra), sra, subtype="PCM_16", format="WAV")
    return buf.getvalue()


@functools.lru_cache(maxsize=16)
def _cue_pcm(slot: str, sr: int) -> bytes:
    from judgeaudit.datasets.synth.common import trim_silence
    from judgeaudit.datasets.synth.tts import synthesize

    x, _ = synthesize(JOINED_CUES[slot], JOINED_CUE_VOICE, rate=JOINED_CUE_RATE,
                      sample_rate=sr)
    x = trim_silence(x, sr)
    return np.round(np.clip(x, -1.0, 1.0) * 32767).astype(np.int16).tobytes()


def spoken_cue(slot: str, sr: int) -> np.ndarray:
    """The spoken slot cue of `slot` (reference | A | B) as int16 PCM at `sr`: real
    espeak-ng speech of prompts.JOINED_CUES[slot] in voice JOINED_CUE_VOICE, edge
    silence trimmed (deterministic: the same samples in every request)."""
    if slot not in JOINED_CUES:
        raise ValueError(f"spoken_cue: unknown slot {slot!r} (expected one of {JOINED_CUE_ORDER})")
    return np.frombuffer(_cue_pcm(slot, int(sr)), dtype=np.int16)


def joined_wav(reference: bytes, a: bytes, b: bytes,
               where: str = "joined") -> tuple[bytes, list[list]]:
    """WAV bytes (16-bit PCM mono) of cue, sep, reference, sep, cue, sep, A, sep, cue,
    sep, B, and the segments [[name, start, end], ...] in samples (names cue_reference,
    reference, cue_A, A, cue_B, B). The three clips need one sample rate."""
    clips = {}
    rates = set()
    for slot, data in zip(JOINED_CUE_ORDER, (reference, a, b), strict=True):
        clips[slot], sr = _read_pcm(data, f"{where} {slot} clip")
        rates.add(sr)
    if len(rates) != 1:
        raise ValueError(f"{where}: clips have different sample rates ({sorted(rates)} Hz)")
    sr = rates.pop()
    sep = separator_pcm(sr)
    pieces: list[tuple[str, np.ndarray]] = []
    for slot in JOINED_CUE_ORDER:
        pieces += [(f"cue_{slot}", spoken_cue(slot, sr)), (slot, clips[slot])]
    out, segments, pos = [], [], 0
    for i, (name, x) in enumerate(pieces):
        if i:
            out.append(sep)
            pos += len(sep)
        out.append(x)
        segments.append([name, pos, pos + len(x)])
        pos += len(x)
    buf = io.BytesIO()
    sf.write(buf, np.concatenate(out), sr, subtype="PCM_16", format="WAV")
    return buf.getvalue(), segments


def split_concat(samples: np.ndarray, sr: int) -> tuple[np.ndarray, np.ndarray]:
    """Inverse of `concat_wav` on int16 samples: (A, B), cut at the exact separator."""
    pieces = split_pcm(np.asarray(samples, dtype=np.int16), sr)
    if len(pieces) != 2:
        raise ValueError(f"split_concat: expected one separator, found {len(pieces) - 1}")
    return pieces[0], pieces[1]


def _question(pair: Pair) -> str:
    if pair.criterion not in PAIR_QUESTIONS:
        raise ValueError(f"pair {pair.pair_id}: unknown criterion {pair.criterion!r}")
    if pair.criterion == "emotion":
        if not pair.emotion:
            raise ValueError(f"pair {pair.pair_id}: emotion pair without a target emotion")
        return PAIR_QUESTIONS["emotion"].format(emotion=pair.emotion)
    return PAIR_QUESTIONS[pair.criterion]


def _audio(clip: Clip) -> AudioPart:
    return AudioPart(clip.sha256, "wav", clip.path)


def _write_audio(data: bytes, concat_dir: str | Path) -> AudioPart:
    digest = sha256_bytes(data)
    path = Path(concat_dir) / f"{digest[:20]}.wav"
    if not path.exists():
        write_bytes_atomic(path, data)
    return AudioPart(digest, "wav", str(path))


def _joined_request(pair: Pair, slot_a: Clip, slot_b: Clip, concat_dir, read_bytes
                    ) -> tuple[Request, dict[str, Any]]:
    """The joined-layout speaker request (one audio part) and its layout facts."""
    data, segments = joined_wav(read_bytes(pair.reference.path), read_bytes(slot_a.path),
                                read_bytes(slot_b.path), f"pair {pair.pair_id} (joined)")
    parts = (TextPart(f"{_question(pair)} {PAIR_FORMAT_TEXT}"),
             TextPart(REFERENCE_JOINED_TEXT), _write_audio(data, concat_dir))
    req = Request(system=SYSTEM_TEXT, parts=parts, answer=AnswerSpec(ANSWER_KEY, PAIR_SLOTS))
    return req, {"reference_layout": "joined", "joined_segments": segments,
                 "cue_voice": JOINED_CUE_VOICE}


def pair_trials(task: str, pairs: Sequence[Pair], fmt: str, seed: int,
                concat_dir: str | Path | None = None,
                read_bytes=lambda p: Path(p).read_bytes(),
                reference_layout: str = "auto") -> list[dict]:
    """Trials for one format: every pair in AB and BA order.

    The AB order puts the better clip first in a seeded half of the pairs, so gold
    is balanced over slots. `concat` writes the joined audio (content-addressed file
    names) into `concat_dir`. Speaker similarity in `concat`: `separate` sends the
    reference as its own input (2 inputs); `joined` sends reference, A and B in ONE
    audio input with spoken slot cues (`joined_wav`, announced by
    REFERENCE_JOINED_TEXT); `auto` (default) sends the separate layout and carries the
    joined one as the trial's alternate `alt_requests.joined` (request + layout facts),
    taken by judges limited to one audio input. Trial ids of `auto` and `separate` are
    the same (the alternate is not part of the facts)."""
    if reference_layout not in REFERENCE_LAYOUTS:
        raise ValueError(f"reference_layout must be one of {REFERENCE_LAYOUTS}, got "
                         f"{reference_layout!r}")
    if fmt not in PAIR_FORMATS:
        raise ValueError(f"pair format must be one of {PAIR_FORMATS}, got {fmt!r}")
    if fmt == "concat" and concat_dir is None:
        raise ValueError("concat format needs concat_dir for the joined audio")
    trials = []
    for pair in pairs:
        better_first = bool(rng_for("pair-order", seed, task, pair.pair_id).integers(0, 2))
        first, second = (pair.better, pair.worse) if better_first else (pair.worse, pair.better)
        for order in ORDERS:
            slot_a, slot_b = (first, second) if order == "AB" else (second, first)
            gold = "A" if slot_a == pair.better else "B"
            speaker_concat = pair.reference is not None and fmt == "concat"
            layout_facts: dict[str, Any] = {}
            alt: dict[str, Any] = {}
            if speaker_concat and reference_layout == "joined":
                req, layout_facts = _joined_request(pair, slot_a, slot_b, concat_dir,
                                                    read_bytes)
            else:
                parts: list[Part] = [TextPart(f"{_question(pair)} {PAIR_FORMAT_TEXT}")]
                if pair.reference is not None:
                    parts += [TextPart(REFERENCE_CLIP_TEXT), _audio(pair.reference)]
                if fmt == "native":
                    parts += [TextPart(SLOT_TEXT.format(slot="A")), _audio(slot_a),
                              TextPart(SLOT_TEXT.format(slot="B")), _audio(slot_b)]
                else:
                    joined = concat_wav(read_bytes(slot_a.path), read_bytes(slot_b.path),
                                        f"pair {pair.pair_id}")
                    parts += [TextPart(CONCAT_TEXT), _write_audio(joined, concat_dir)]
                req = Request(system=SYSTEM_TEXT, parts=tuple(parts),
                              answer=AnswerSpec(ANSWER_KEY, PAIR_SLOTS))
                if speaker_concat and reference_layout == "auto":
                    alt_req, alt_facts = _joined_request(pair, slot_a, slot_b, concat_dir,
                                                         read_bytes)
                    alt = {"joined": {"request": alt_req.to_json(), "facts": {
                        **alt_facts, "request_sha256": alt_req.content_hash()}}}
            facts = {
                "family": "pairwise", "pair_id": pair.pair_id, "criterion": pair.criterion,
                "format": fmt, "order": order, "better_slot": gold,
                "better_slot_ab": "A" if first == pair.better else "B",
                "clip_a": slot_a.clip_id, "clip_b": slot_b.clip_id,
                "better_clip": pair.better.clip_id,
                "reference_clip": pair.reference.clip_id if pair.reference else None,
                "emotion": pair.emotion, "seed": int(seed), "prompt_sha256": prompt_sha256(),
                "cluster": pair.pair_id, "cluster_unit": "pair",
                **dict(pair.meta),
                **layout_facts,
            }
            trial = make_trial(STUDY, task, fmt, req, gold, facts)
            if alt:
                trial["alt_requests"] = alt
            trials.append(trial)
    check_unique_ids(trials, f"study A {task} {fmt}")
    return trials
