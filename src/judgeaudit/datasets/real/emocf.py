"""CAVA Tone Awareness / EmoCF (`WillHeld/EmoCF` on Hugging Face).

Layout: `audio_inputs.jsonl` (one object per line: `filename` relative to the
folder, `emotion`, `sentence`, `expected_emotions`) beside the audio files. The
study (Study B, single turn) needs transcript-matched emotion pairs: two
renderings of the same sentence in two different emotions -> `items.tsv`
(shape of the synthetic counterpart's table).

Download: the index is fetched from `<base_url>/audio_inputs.jsonl` and every
referenced file from `<base_url>/<filename>` (the hub's `resolve/main` URLs).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from itertools import combinations
from pathlib import Path
from typing import Any

import pandas as pd

from .base import EMOTIONS, ClipSpec, LabelError, License, read_lines, seeded_rng

LICENSE = License(
    name="CAVA Tone Awareness (EmoCF)",
    license="see the dataset card of WillHeld/EmoCF (not verifiable offline)",
    url="https://huggingface.co/datasets/WillHeld/EmoCF",
    citation=(
        "Held W, Ryan MJ, Shrivastava A, et al. (2025). CAVA: Comprehensive Assessment of "
        "Voice Assistants. https://github.com/SALT-NLP/CAVA"
    ),
    non_commercial=None,
)
BASE_URL = "https://huggingface.co/datasets/WillHeld/EmoCF/resolve/main"
INDEX = "audio_inputs.jsonl"
DEFAULT_EMOTION_MAP = {
    "neutral": "neutral", "calm": "calm", "happy": "happy", "happiness": "happy",
    "joy": "happy", "sad": "sad", "sadness": "sad", "angry": "angry", "anger": "angry",
    "fear": "fearful", "fearful": "fearful", "disgust": "disgust", "disgusted": "disgust",
    "surprise": "surprised", "surprised": "surprised",
}
REQUIRED = ("filename", "emotion", "sentence", "expected_emotions")


def parse_index(path: Path, emotion_map: Mapping[str, str]) -> list[dict[str, Any]]:
    rows = []
    for lineno, line in read_lines(path):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LabelError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise LabelError(f"{path}:{lineno}: expected a JSON object")
        missing = [k for k in REQUIRED if k not in obj]
        if missing:
            raise LabelError(f"{path}:{lineno}: missing field(s) {missing}")
        raw = str(obj["emotion"]).strip().lower()
        emotion = emotion_map.get(raw)
        if emotion not in EMOTIONS:
            raise LabelError(f"{path}:{lineno}: emotion {obj['emotion']!r} not in the vocabulary "
                             f"{list(EMOTIONS)} (extend datasets.emocf.emotion_map)")
        fname = str(obj["filename"])
        if fname.startswith("/") or ".." in Path(fname).parts:
            raise LabelError(f"{path}:{lineno}: filename {fname!r} must be relative to the folder")
        expected = obj["expected_emotions"]
        if isinstance(expected, str):
            expected = [expected]
        rows.append({"line": lineno, "filename": fname, "emotion": emotion,
                     "raw_emotion": raw, "sentence": str(obj["sentence"]).strip(),
                     "expected_emotions": json.dumps(list(expected))})
    return rows


def specs(root: str | Path, cfg: Mapping[str, Any], seed: int
          ) -> tuple[list[ClipSpec], pd.DataFrame, dict]:
    root = Path(root)
    emap = {**DEFAULT_EMOTION_MAP, **{k.lower(): v for k, v in cfg.get("emotion_map", {}).items()}}
    rows = parse_index(root / INDEX, emap)
    by_sentence: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_sentence[" ".join(r["sentence"].lower().split())].append(r)
    items = []
    for _key, group in sorted(by_sentence.items()):
        for a, b in combinations(sorted(group, key=lambda r: r["filename"]), 2):
            if a["emotion"] != b["emotion"]:
                items.append((a, b))
    n = int(cfg.get("n_items", 0))
    if n and len(items) > n:
        rng = seeded_rng(seed, "emocf", "items")
        items = [items[i] for i in sorted(rng.choice(len(items), size=n, replace=False).tolist())]
    used = {r["filename"]: r for pair in items for r in pair}

    def cid(r):
        return "emocf_" + Path(r["filename"]).with_suffix("").as_posix().replace("/", "_")

    clips = [ClipSpec(clip_id=cid(r), source=root / r["filename"], speaker="emocf_tts",
                      split="test",
                      attrs={"emotion": r["emotion"], "transcript": r["sentence"],
                             "raw_emotion": r["raw_emotion"],
                             "expected_emotions": r["expected_emotions"]})
             for _, r in sorted(used.items())]
    table = pd.DataFrame(
        [{"item_id": f"emocf_i{i:04d}", "transcript": a["sentence"], "clip_a": cid(a),
          "clip_b": cid(b), "emotion_a": a["emotion"], "emotion_b": b["emotion"],
          "voice": "emocf_tts"} for i, (a, b) in enumerate(items)],
        columns=["item_id", "transcript", "clip_a", "clip_b", "emotion_a", "emotion_b", "voice"])
    summary = {"n_index_rows": len(rows), "n_items": len(items), "n_clips": len(clips)}
    if not items:
        raise LabelError(f"{root / INDEX}: no sentence is rendered in two different emotions")
    return clips, table, summary


ATTR_COLUMNS = ["emotion", "transcript", "raw_emotion", "expected_emotions"]
