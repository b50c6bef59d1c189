"""VoxCeleb1 (Nagrani, Chung, Zisserman 2017): gated, so the user supplies the audio
(folder or the official archives, e.g. `vox1_test_wav.zip`) and the trial list.

Layout: `wav/<speaker id>/<YouTube id>/<nnnnn>.wav`; trial list `veri_test2.txt`
(VoxCeleb1-O cleaned), lines `<1|0> <spk/yt/nnnnn.wav> <spk/yt/nnnnn.wav>`.
Speaker ids come from the path. The workflow never asks for credentials.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from .base import ClipSpec, LabelError, License, read_lines, seeded_rng

LICENSE = License(
    name="VoxCeleb1",
    license="CC BY 4.0 (audio: YouTube videos; access is gated by the VoxCeleb organisers)",
    url="https://www.robots.ox.ac.uk/~vgg/data/voxceleb/vox1.html",
    citation=(
        "Nagrani A, Chung JS, Zisserman A (2017). VoxCeleb: a large-scale speaker "
        "identification dataset. Proc. Interspeech. arXiv:1706.08612"
    ),
    non_commercial=False,
)
TRIAL_LIST_URL = "https://mm.kaist.ac.kr/datasets/voxceleb/meta/veri_test2.txt"
REL_RE = re.compile(r"^(id\d{5})/([^/]+)/(\d{5})\.wav$")


def find_wav_root(root: Path) -> Path:
    for cand in (root / "wav", root / "vox1_test_wav" / "wav", root):
        if cand.is_dir() and any(cand.glob("id*/")):
            return cand
    raise LabelError(f"{root}: no wav/idXXXXX/ folders found (VoxCeleb1 layout expected)")


def parse_trials(path: Path) -> list[tuple[int, str, str, int]]:
    out = []
    for lineno, line in read_lines(path):
        parts = line.split()
        if len(parts) != 3 or parts[0] not in ("0", "1"):
            raise LabelError(f"{path}:{lineno}: expected '<1|0> <enroll.wav> <test.wav>', "
                             f"got {line!r}")
        for rel in parts[1:]:
            if not REL_RE.match(rel):
                raise LabelError(f"{path}:{lineno}: {rel!r} is not 'idNNNNN/<video>/NNNNN.wav'")
        same = int(parts[0])
        spk_a, spk_b = parts[1].split("/")[0], parts[2].split("/")[0]
        if bool(same) != (spk_a == spk_b):
            raise LabelError(f"{path}:{lineno}: label {same} contradicts the speaker ids "
                             f"{spk_a} / {spk_b}")
        out.append((lineno, parts[1], parts[2], same))
    return out


def clip_id(rel: str) -> str:
    return "vox1_" + rel[:-4].replace("/", "_")


def select(trials: list[tuple[int, str, str, int]], n: int, seed: int):
    """A seeded sample of `n` trials, half same-speaker and half different (all if n=0)."""
    if not n or n >= len(trials):
        return trials
    rng = seeded_rng(seed, "voxceleb1", "trials")
    out = []
    for label, k in ((1, n // 2), (0, n - n // 2)):
        pool = [t for t in trials if t[3] == label]
        if len(pool) < k:
            raise LabelError(f"VoxCeleb1 trial list: {len(pool)} trials with label {label}, "
                             f"need {k} (lower datasets.voxceleb1.n_trials)")
        idx = sorted(rng.choice(len(pool), size=k, replace=False).tolist())
        out.extend(pool[i] for i in idx)
    return sorted(out)


def specs(root: str | Path, trial_list: Path, cfg: Mapping[str, Any], seed: int
          ) -> tuple[list[ClipSpec], pd.DataFrame, dict]:
    wav_root = find_wav_root(Path(root))
    trials = select(parse_trials(trial_list), int(cfg.get("n_trials", 200)), seed)
    rels = sorted({r for t in trials for r in t[1:3]})
    out = []
    for rel in rels:
        spk, video, utt = REL_RE.match(rel).groups()
        out.append(ClipSpec(clip_id=clip_id(rel), source=wav_root / rel,
                            speaker=f"vox1_{spk}", split="test",
                            attrs={"video_id": video, "utterance_id": utt,
                                   "voxceleb_path": rel}))
    table = pd.DataFrame(
        [{"trial_id": f"vox1_t{line:06d}", "clip_a": clip_id(a), "clip_b": clip_id(b),
          "same": same, "split": "test"} for line, a, b, same in trials],
        columns=["trial_id", "clip_a", "clip_b", "same", "split"])
    summary = {"n_trials": len(trials), "n_same": int(table["same"].sum()),
               "n_clips": len(out), "trial_list": str(trial_list)}
    return out, table, summary


ATTR_COLUMNS = ["video_id", "utterance_id", "voxceleb_path"]
