"""BVCC, VoiceMOS Challenge 2022 main track (Cooper & Yamagishi 2021), prepared layout:

    DATA/wav/<sysID>-<uttID>.wav
    DATA/sets/{train,val,test}_mos_list.txt     "<sysID>-<uttID>.wav,<mean MOS>"
    DATA/sets/{TRAINSET,DEVSET,TESTSET}         optional per-rating lines
                                                "<sysID>,<file>,<score>,..." (rater counts)

The official Zenodo package ships the ratings and gathering scripts; the audio is
assembled from the Blizzard/VCC sources by those scripts (`gather_command`), or
the user points `local_dir` at the prepared folder.

Splits: the official main-track sets map to study splits (train -> train,
val -> train, test -> test; the set is kept in `bvcc_set`). The speaking "voice"
is the system (BVCC publishes no speaker ids), and the official sets share
systems, so the study split must be made by system: with `split_policy: auto`
(default) the official split is used only if it is system-disjoint, otherwise a
seeded system-disjoint split of the ingested clips is made (a WARNING names how
many systems the official sets share); `official` refuses a shared system by
name, `seeded` always re-splits.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from .base import ClipSpec, LabelError, License, apply_split_policy, read_lines, seeded_rng

LICENSE = License(
    name="BVCC (VoiceMOS Challenge 2022 main track)",
    license=(
        "Ratings: CC BY 4.0 (Zenodo record 6572573); audio: the terms of the Blizzard "
        "Challenge and Voice Conversion Challenge releases it is gathered from "
        "(research use)"
    ),
    url="https://zenodo.org/records/6572573",
    citation=(
        "Cooper E, Yamagishi J (2021). How do Voices from Past Speech Synthesis Challenges "
        "Compare Today? Proc. SSW 11. arXiv:2105.02373. -- Huang W-C, Cooper E, Tsao Y, "
        "Wang H-M, Toda T, Yamagishi J (2022). The VoiceMOS Challenge 2022. Proc. Interspeech. "
        "arXiv:2203.11389"
    ),
    non_commercial=True,
    notes="Blizzard Challenge audio is released for research use only; treated as non-commercial.",
)
URL = "https://zenodo.org/records/6572573/files/main.tar.gz?download=1"
NAME_RE = re.compile(r"^(sys[0-9A-Za-z]+)-(utt[0-9A-Za-z]+)\.wav$")
SETS = {"train": ("train_mos_list.txt", "TRAINSET"), "val": ("val_mos_list.txt", "DEVSET"),
        "test": ("test_mos_list.txt", "TESTSET")}
STUDY_SPLIT = {"train": "train", "val": "train", "test": "test"}


def find_root(root: Path) -> Path:
    for cand in (root, root / "main", root / "phase1-main", *sorted(root.glob("*"))):
        if (cand / "DATA" / "sets").is_dir():
            return cand / "DATA"
        if cand.name == "DATA" and (cand / "sets").is_dir():
            return cand
    raise LabelError(f"{root}: no DATA/sets folder found (BVCC main-track layout expected)")


def parse_mos_list(path: Path) -> list[tuple[str, float]]:
    out = []
    for lineno, line in read_lines(path):
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 2:
            raise LabelError(f"{path}:{lineno}: expected '<file>.wav,<MOS>', got {line!r}")
        name, mos = parts
        if not NAME_RE.match(name):
            raise LabelError(f"{path}:{lineno}: {name!r} is not '<sysID>-<uttID>.wav'")
        try:
            value = float(mos)
        except ValueError:
            raise LabelError(f"{path}:{lineno}: MOS {mos!r} is not a number") from None
        if not 1.0 <= value <= 5.0:
            raise LabelError(f"{path}:{lineno}: MOS {value} outside 1..5")
        out.append((name, value))
    return out


def rater_counts(path: Path) -> Counter:
    counts: Counter = Counter()
    if not path.is_file():
        return counts
    for lineno, line in read_lines(path):
        parts = line.split(",")
        if len(parts) < 3 or not NAME_RE.match(parts[1].strip()):
            raise LabelError(f"{path}:{lineno}: expected '<sysID>,<file>.wav,<score>,...'")
        counts[parts[1].strip()] += 1
    return counts


def specs(root: str | Path, cfg: Mapping[str, Any], seed: int) -> tuple[list[ClipSpec], dict]:
    data = find_root(Path(root))
    out, summary = [], {"sets": {}}
    for set_name in cfg.get("sets", ["train", "val", "test"]):
        mos_file, ratings_file = SETS[set_name]
        rows = parse_mos_list(data / "sets" / mos_file)
        raters = rater_counts(data / "sets" / ratings_file)
        for name, mos in rows:
            m = NAME_RE.match(name)
            system, utt = m.group(1), m.group(2)
            out.append(ClipSpec(
                clip_id=f"bvcc_{system}-{utt}",
                source=data / "wav" / name,
                # Speaker identity is not published; the system is the speaking "voice".
                speaker=f"bvcc_{system}",
                # Official set -> study split; made system-disjoint below.
                split=STUDY_SPLIT[set_name],
                attrs={"score": mos, "system": system, "utterance": utt,
                       "n_ratings": int(raters[name]) if raters else None,
                       "bvcc_set": set_name},
            ))
        summary["sets"][set_name] = {"n": len(rows), "rater_counts": bool(raters)}
    out, split_info = apply_split_policy(out, cfg.get("split_policy", "auto"),
                                         float(cfg.get("test_fraction", 0.25)), seed, "bvcc")
    summary.update(split_info)
    return out, summary


def pairs(manifest: pd.DataFrame, cfg: Mapping[str, Any], seed: int) -> pd.DataFrame:
    """Naturalness pairs with a clear MOS gap, better clip first (shape of the synthetic
    `pairs.tsv`). Pairs never mix splits."""
    gap, n = float(cfg.get("pair_min_gap", 1.0)), int(cfg.get("n_pairs", 200))
    rng = seeded_rng(seed, "bvcc", "pairs")
    rows = []
    for split, grp in manifest.groupby("split", sort=True):
        g = grp.sort_values("clip_id").reset_index(drop=True)
        if len(g) < 2:
            continue
        seen, tries = set(), 0
        while len([r for r in rows if r["split"] == split]) < n and tries < 50 * n:
            tries += 1
            i, j = rng.choice(len(g), size=2, replace=False).tolist()
            a, b = g.iloc[i], g.iloc[j]
            if abs(a.score - b.score) < gap or (a.clip_id, b.clip_id) in seen:
                continue
            seen |= {(a.clip_id, b.clip_id), (b.clip_id, a.clip_id)}
            better, worse = (a, b) if a.score > b.score else (b, a)
            rows.append({"pair_id": f"bvcc_p{len(rows):05d}", "task": "naturalness",
                         "better_clip": better.clip_id, "worse_clip": worse.clip_id,
                         "better_score": better.score, "worse_score": worse.score,
                         "split": split})
    return pd.DataFrame(rows, columns=["pair_id", "task", "better_clip", "worse_clip",
                                       "better_score", "worse_score", "split"])


ATTR_COLUMNS = ["score", "system", "utterance", "n_ratings", "bvcc_set"]
