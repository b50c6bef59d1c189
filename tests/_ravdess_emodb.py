"""A RAVDESS-layout copy made from real EmoDB clips (Actor_XX/03-01-EE-II-SS-RR-XX.wav):
EmoDB speakers become actors (male -> odd actor number, female -> even, as in
RAVDESS), EmoDB emotions map to the RAVDESS codes (boredom -> calm, the nearest
low-arousal class; no EmoDB clip is `surprised`). Each actor x emotion gets up to
`per_cell` clips spread over intensity x statement x repetition codes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd

CODES = {"neutral": 1, "bored": 2, "happy": 3, "sad": 4, "angry": 5, "fearful": 6,
         "disgust": 7}


def ravdess_from_emodb(emodb: Path, root: Path, per_cell: int = 4) -> Path:
    labels = pd.read_csv(Path(emodb) / "labels.tsv", sep="\t", dtype=str)
    males = sorted(labels.loc[labels["sex"] == "m", "speaker"].unique())
    females = sorted(labels.loc[labels["sex"] == "f", "speaker"].unique())
    actor = {s: 2 * i + 1 for i, s in enumerate(males)}
    actor |= {s: 2 * i + 2 for i, s in enumerate(females)}
    for (spk, emo), g in labels.groupby(["speaker", "emotion"], sort=True):
        code = CODES[emo]
        cells = ([(1, s, r) for s in (1, 2) for r in (1, 2)] if code == 1 else
                 [(i, s, r) for i in (1, 2) for s in (1, 2) for r in (1, 2)])
        a = actor[spk]
        out = Path(root) / f"Actor_{a:02d}"
        out.mkdir(parents=True, exist_ok=True)
        for (inten, stmt, rep), file in zip(cells[:per_cell], sorted(g["file"]), strict=False):
            name = f"03-01-{code:02d}-{inten:02d}-{stmt:02d}-{rep:02d}-{a:02d}.wav"
            shutil.copy(Path(emodb) / "wav" / file, out / name)
    return Path(root)
