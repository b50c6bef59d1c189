"""OD3, Open Directed Dialogue Dataset (amazon-science/amazon-od3; Chan et al. 2024).

Layout (as released): `od3_<split>.jsonl`, one dialogue per line
`{"sample_id", "source_dataset", "turns": [{"turn_id", "text", "speaker_id",
"is_agent", "audio": {<voice_id>: {"path": "<split>/<xx>/<sample_id>/<turn>.wav",
"voice_id", "universal_agent", ...}}}]}` and the audio under `audio/`.

A seeded sample of `n_dialogues` dialogues (with `min_turns`..`max_turns` turns)
is ingested turn by turn, one voice per turn (the first voice id in sorted
order, so a dialogue keeps its voices), so nobody needs the full 94 GB.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from .base import ClipSpec, LabelError, License, read_lines, seeded_rng

LICENSE = License(
    name="OD3 (Open Directed Dialogue Dataset)",
    license="CC BY-NC-SA 4.0",
    url="https://github.com/amazon-science/amazon-od3",
    citation=(
        "Chan DM, Ghosh S, Tulsiani H, Rastrow A, Hoffmeister B (2024). Task Oriented "
        "Dialogue as a Catalyst for Self-Supervised Automatic Speech Recognition. Proc. "
        "ICASSP. arXiv:2401.02417"
    ),
    non_commercial=True,
)
BASE_URL = "https://da4reusta8pbu.cloudfront.net"


def parse_dialogues(path: Path) -> list[dict[str, Any]]:
    out = []
    for lineno, line in read_lines(path):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LabelError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
        if not isinstance(obj, dict) or "sample_id" not in obj or not isinstance(
                obj.get("turns"), list):
            raise LabelError(f"{path}:{lineno}: expected an object with 'sample_id' and a "
                             "'turns' list")
        for t, turn in enumerate(obj["turns"]):
            if not isinstance(turn, dict) or "text" not in turn:
                raise LabelError(f"{path}:{lineno}: turn {t} has no 'text'")
        obj["_line"] = lineno
        out.append(obj)
    return out


def _voice(turn: Mapping[str, Any]) -> tuple[str, str] | None:
    audio = turn.get("audio") or {}
    if not isinstance(audio, dict) or not audio:
        return None
    vid = sorted(audio)[0]
    entry = audio[vid]
    path = entry.get("path") if isinstance(entry, dict) else None
    return (vid, path) if path else None


def select(dialogues: list[dict], cfg: Mapping[str, Any], seed: int) -> list[dict]:
    lo, hi = int(cfg.get("min_turns", 4)), int(cfg.get("max_turns", 14))
    ok = [d for d in dialogues
          if lo <= len(d["turns"]) <= hi and all(_voice(t) for t in d["turns"])]
    n = int(cfg.get("n_dialogues", 500))
    if n and len(ok) > n:
        rng = seeded_rng(seed, "od3", "dialogues")
        ok = [ok[i] for i in sorted(rng.choice(len(ok), size=n, replace=False).tolist())]
    return ok


def specs(root: str | Path, cfg: Mapping[str, Any], seed: int
          ) -> tuple[list[ClipSpec], pd.DataFrame, dict]:
    root = Path(root)
    split = cfg.get("split", "test")
    index = root / f"od3_{split}.jsonl"
    dialogues = parse_dialogues(index)
    chosen = select(dialogues, cfg, seed)
    if not chosen:
        raise LabelError(f"{index}: no dialogue with audio for every turn and "
                         f"{cfg.get('min_turns', 4)}..{cfg.get('max_turns', 14)} turns")
    clips, table = [], []
    for d in chosen:
        did = f"od3_{d['sample_id']}"
        for i, turn in enumerate(d["turns"]):
            vid, rel = _voice(turn)
            role = "assistant" if turn.get("is_agent") else "user"
            clips.append(ClipSpec(
                clip_id=f"{did}_t{i:02d}", source=root / "audio" / rel,
                speaker=f"od3_voice{vid}", split="test",
                attrs={"dialogue_id": did, "turn_index": i, "role": role,
                       "transcript": str(turn["text"]), "voice": str(vid),
                       "source_dataset": str(d.get("source_dataset", ""))}))
        table.append({"dialogue_id": did, "n_turns": len(d["turns"]),
                      "source_dataset": str(d.get("source_dataset", "")),
                      "index_line": d["_line"]})
    summary = {"n_dialogues_in_index": len(dialogues), "n_dialogues": len(chosen),
               "n_turn_clips": len(clips), "index": str(index)}
    return clips, pd.DataFrame(table, columns=["dialogue_id", "n_turns", "source_dataset",
                                               "index_line"]), summary


ATTR_COLUMNS = ["dialogue_id", "turn_index", "role", "transcript", "voice", "source_dataset"]
