"""CAVA Tone Awareness / EmoCF (`WillHeld/EmoCF` on Hugging Face).

Layout (as released in the CAVA repository, data/EmoCF/): `audio_inputs.jsonl`,
one object per line with `filename` (relative to the folder), `emotion`,
`sentence` and `expected_emotions` (the two emotions of the item), beside the
audio files. File names are `<source id>_<sentence id>_<emotion>.wav`: the two
renderings of one counterfactual item share the prefix `<source id>_<sentence id>`
and the sentence, differ in emotion, and their emotions are exactly the item's
`expected_emotions`. The same sentence can occur under several prefixes (different
sources); those are different items, never paired with each other.

Items (`items.tsv`, shape of the synthetic counterpart): one per prefix group,
clip_a = the rendering in expected_emotions[0], clip_b = the one in
expected_emotions[1]. A group whose two renderings disagree on the sentence or on
expected_emotions, or hold a rendering outside expected_emotions, is a LabelError
naming file and line; a group missing one of its renderings is left out, counted
(`n_incomplete_groups`) and logged. Speakers come from the data: a `speaker` or
`voice` field of the index when present, else the source id of the file name
(both renderings of an item share it, so a pair is always within-speaker).

Labels without audio: `plan(root, cfg, seed)` needs only the index (it is what the
download uses to choose the files to fetch, and what a researcher can run on a
labels-only copy); ingest, which needs the audio, fails with an AudioError naming
the first missing file and how many are missing.

Download: the index is fetched from `<base_url>/audio_inputs.jsonl`, then every
file of the planned items from `<base_url>/<filename>` (the hub's `resolve/main`
URLs).
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.vocab.labels import EMOTIONS

from .audio import AudioError
from .base import ClipSpec, LabelError, License, read_lines, seeded_rng

log = logging.getLogger("judgeaudit.datasets.real")

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
                     "expected_emotions": json.dumps(list(expected)),
                     "speaker": str(obj.get("speaker") or ""),
                     "voice": str(obj.get("voice") or "")})
    return rows


def _normalise(sentence: str) -> str:
    return " ".join(sentence.lower().split())


def _group_key(row: dict[str, Any], path: Path) -> str:
    """`<source id>_<sentence id>` of `<source id>_<sentence id>_<emotion>.wav`."""
    stem = Path(row["filename"]).with_suffix("").as_posix()
    suffix = "_" + row["raw_emotion"]
    if not stem.lower().endswith(suffix) or len(stem) == len(suffix):
        raise LabelError(f"{path}:{row['line']}: filename {row['filename']!r} does not end "
                         f"with '_{row['raw_emotion']}.<ext>' (expected "
                         "'<source id>_<sentence id>_<emotion>.wav')")
    return stem[: -len(suffix)]


def _speaker(row: dict[str, Any], group: str) -> str:
    explicit = row.get("speaker") or row.get("voice")
    source = explicit or Path(group).name.split("_")[0]
    return f"emocf_{source}"


def plan(root: str | Path, cfg: Mapping[str, Any], seed: int
         ) -> tuple[list[ClipSpec], pd.DataFrame, dict]:
    """The counterfactual items from the index alone (no audio is opened)."""
    root = Path(root)
    index = root / INDEX
    emap = {**DEFAULT_EMOTION_MAP, **{k.lower(): v for k, v in cfg.get("emotion_map", {}).items()}}
    rows = parse_index(index, emap)
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        groups[_group_key(r, index)].append(r)
    items, incomplete = [], []
    for key in sorted(groups):
        grp = groups[key]
        first = grp[0]
        expected = json.loads(first["expected_emotions"])
        for r in grp[1:]:
            if _normalise(r["sentence"]) != _normalise(first["sentence"]):
                raise LabelError(f"{index}:{r['line']}: {r['filename']!r} has sentence "
                                 f"{r['sentence']!r} but {first['filename']!r} (line "
                                 f"{first['line']}) of the same item has {first['sentence']!r}")
            if sorted(json.loads(r["expected_emotions"])) != sorted(expected):
                raise LabelError(f"{index}:{r['line']}: expected_emotions "
                                 f"{r['expected_emotions']} differ from {expected} of "
                                 f"{first['filename']!r} (line {first['line']}), same item")
        if len(expected) != 2:
            raise LabelError(f"{index}:{first['line']}: expected_emotions {expected} should "
                             "name the item's two emotions")
        mapped = []
        for e in expected:
            m = emap.get(str(e).strip().lower())
            if m not in EMOTIONS:
                raise LabelError(f"{index}:{first['line']}: expected emotion {e!r} not in the "
                                 f"vocabulary {list(EMOTIONS)} (extend datasets.emocf.emotion_map)")
            mapped.append(m)
        by_emotion: dict[str, dict] = {}
        for r in grp:
            if r["emotion"] not in mapped:
                raise LabelError(f"{index}:{r['line']}: {r['filename']!r} is rendered as "
                                 f"{r['raw_emotion']!r}, not one of the item's expected "
                                 f"emotions {expected}")
            if r["emotion"] in by_emotion:
                raise LabelError(f"{index}:{r['line']}: {r['filename']!r} repeats emotion "
                                 f"{r['raw_emotion']!r} of item {key!r} (line "
                                 f"{by_emotion[r['emotion']]['line']})")
            by_emotion[r["emotion"]] = r
        if len(by_emotion) < 2:
            incomplete.append(key)
            continue
        items.append((key, by_emotion[mapped[0]], by_emotion[mapped[1]]))
    if incomplete:
        log.warning("%s: %d item(s) have only one of their two renderings and are left out, "
                    "e.g. %s", index, len(incomplete), incomplete[:5])
    n = int(cfg.get("n_items", 0))
    if n and len(items) > n:
        rng = seeded_rng(seed, "emocf", "items")
        items = [items[i] for i in sorted(rng.choice(len(items), size=n, replace=False).tolist())]

    def cid(r):
        return "emocf_" + Path(r["filename"]).with_suffix("").as_posix().replace("/", "_")

    clips = []
    for key, a, b in items:
        for r in (a, b):
            clips.append(ClipSpec(
                clip_id=cid(r), source=root / r["filename"], speaker=_speaker(r, key),
                split="test",
                attrs={"emotion": r["emotion"], "transcript": r["sentence"],
                       "raw_emotion": r["raw_emotion"],
                       "expected_emotions": r["expected_emotions"]}))
    table = pd.DataFrame(
        [{"item_id": f"emocf_i{i:04d}", "transcript": a["sentence"], "clip_a": cid(a),
          "clip_b": cid(b), "emotion_a": a["emotion"], "emotion_b": b["emotion"],
          "voice": _speaker(a, key), "source_prefix": key}
         for i, (key, a, b) in enumerate(items)],
        columns=["item_id", "transcript", "clip_a", "clip_b", "emotion_a", "emotion_b",
                 "voice", "source_prefix"])
    if not items:
        raise LabelError(f"{index}: no complete counterfactual item (two renderings of one "
                         "'<source id>_<sentence id>' prefix in its two expected emotions)")
    summary = {"n_index_rows": len(rows), "n_groups": len(groups), "n_items": len(items),
               "n_incomplete_groups": len(incomplete), "n_clips": len(clips),
               "n_speakers": len({c.speaker for c in clips}),
               "pairing": "same <source id>_<sentence id> prefix and sentence, its two "
                          "expected emotions"}
    return clips, table, summary


def specs(root: str | Path, cfg: Mapping[str, Any], seed: int
          ) -> tuple[list[ClipSpec], pd.DataFrame, dict]:
    """`plan`, then require the audio of every planned clip (ingest needs it)."""
    clips, table, summary = plan(root, cfg, seed)
    missing = [c.source for c in clips if not c.source.is_file()]
    if missing:
        raise AudioError(
            f"{missing[0]}: audio file missing ({len(missing)} of the {len(clips)} files of "
            f"the {len(table)} planned items are absent: a labels-only EmoCF copy can be "
            "planned with judgeaudit.datasets.real.emocf.plan, but ingest needs the audio)")
    return clips, table, summary


ATTR_COLUMNS = ["emotion", "transcript", "raw_emotion", "expected_emotions"]
