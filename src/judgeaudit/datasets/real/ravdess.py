"""RAVDESS speech (Livingstone & Russo 2018), official layout
`Actor_XX/MM-VC-EE-II-SS-RR-AA.wav` (48 kHz WAV).

Filename fields: modality (01 full AV, 02 video only, 03 audio only), vocal
channel (01 speech, 02 song), emotion (01..08 in the order of `EMOTIONS`),
intensity (01 normal, 02 strong; neutral has no strong), statement (01 "Kids are
talking by the door", 02 "Dogs are sitting by the door"), repetition (01, 02),
actor (01..24; odd = male, even = female).
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from judgeaudit.vocab.labels import EMOTIONS

from .base import ClipSpec, LabelError, License, seeded_rng, split_summary

LICENSE = License(
    name="RAVDESS (speech, audio-only)",
    license="CC BY-NC-SA 4.0",
    url="https://zenodo.org/records/1188976",
    citation=(
        "Livingstone SR, Russo FA (2018). The Ryerson Audio-Visual Database of Emotional "
        "Speech and Song (RAVDESS): A dynamic, multimodal set of facial and vocal expressions "
        "in North American English. PLoS ONE 13(5): e0196391. "
        "https://doi.org/10.1371/journal.pone.0196391"
    ),
    non_commercial=True,
)
log = logging.getLogger("judgeaudit.datasets.real")
URL = "https://zenodo.org/records/1188976/files/Audio_Speech_Actors_01-24.zip?download=1"
MD5 = "bc696df654c87fed845eb13823edef8a"

MODALITY = {"01": "full-AV", "02": "video-only", "03": "audio-only"}
CHANNEL = {"01": "speech", "02": "song"}
INTENSITY = {"01": "normal", "02": "strong"}
STATEMENT = {"01": "Kids are talking by the door", "02": "Dogs are sitting by the door"}
N_ACTORS = 24
N_CLIPS = 1440
NAME_RE = re.compile(r"^(\d\d)-(\d\d)-(\d\d)-(\d\d)-(\d\d)-(\d\d)-(\d\d)\.wav$", re.IGNORECASE)


@dataclass(frozen=True)
class RavdessName:
    modality: str
    channel: str
    emotion: str
    intensity: str
    statement: str
    repetition: int
    actor: int

    @property
    def gender(self) -> str:
        return "male" if self.actor % 2 == 1 else "female"


def parse_filename(path: str | Path) -> RavdessName:
    """Parse every field of a RAVDESS filename; LabelError names the path and field."""
    p = Path(path)
    m = NAME_RE.match(p.name)
    if not m:
        raise LabelError(f"{p}: not a RAVDESS filename (expected MM-VC-EE-II-SS-RR-AA.wav)")
    mo, vc, em, it, st, rep, ac = m.groups()

    def field(table: Mapping[str, str], code: str, what: str) -> str:
        if code not in table:
            raise LabelError(f"{p}: {what} code {code!r} not one of {sorted(table)}")
        return table[code]

    emotion_idx = int(em)
    if not 1 <= emotion_idx <= len(EMOTIONS):
        raise LabelError(f"{p}: emotion code {em!r} not in 01..08")
    actor = int(ac)
    if not 1 <= actor <= N_ACTORS:
        raise LabelError(f"{p}: actor code {ac!r} not in 01..24")
    if rep not in ("01", "02"):
        raise LabelError(f"{p}: repetition code {rep!r} not one of ['01', '02']")
    name = RavdessName(
        modality=field(MODALITY, mo, "modality"),
        channel=field(CHANNEL, vc, "vocal channel"),
        emotion=EMOTIONS[emotion_idx - 1],
        intensity=field(INTENSITY, it, "intensity"),
        statement=field(STATEMENT, st, "statement"),
        repetition=int(rep),
        actor=actor,
    )
    if name.emotion == "neutral" and name.intensity == "strong":
        raise LabelError(f"{p}: neutral has no strong intensity in RAVDESS")
    return name


def expected_filenames() -> list[str]:
    out = []
    for actor in range(1, N_ACTORS + 1):
        for e in range(1, 9):
            for it in ("01",) if e == 1 else ("01", "02"):
                for st in ("01", "02"):
                    for rep in ("01", "02"):
                        out.append(f"Actor_{actor:02d}/03-01-{e:02d}-{it}-{st}-{rep}-{actor:02d}.wav")
    return out


def find_root(root: Path) -> Path:
    """The folder holding `Actor_XX/` (the given one, or a single nested level)."""
    if any(root.glob("Actor_*")):
        return root
    for sub in sorted(p for p in root.iterdir() if p.is_dir()):
        if any(sub.glob("Actor_*")):
            return sub
    raise LabelError(f"{root}: no Actor_XX folders found (official RAVDESS layout expected)")


def scan(root: str | Path, *, check_complete: bool = True) -> list[tuple[Path, RavdessName]]:
    root = find_root(Path(root))
    found = []
    for path in sorted(root.glob("Actor_*/*")):
        if path.name.startswith(".") or path.is_dir():
            continue
        name = parse_filename(path)
        folder = path.parent.name
        if folder != f"Actor_{name.actor:02d}":
            raise LabelError(f"{path}: actor {name.actor:02d} in the filename but folder {folder}")
        if name.modality != "audio-only" or name.channel != "speech":
            raise LabelError(
                f"{path}: {name.modality}/{name.channel} clip; the speech archive holds "
                "audio-only speech (03-01-...) only"
            )
        found.append((path, name))
    if not found:
        raise LabelError(f"{root}: no RAVDESS clips found under Actor_XX/")
    if check_complete:
        have = {f"{p.parent.name}/{p.name}" for p, _ in found}
        missing = [f for f in expected_filenames() if f not in have]
        if missing:
            raise LabelError(
                f"{root}: {len(missing)} of {N_CLIPS} RAVDESS clips missing, e.g. "
                f"{missing[:5]} (set datasets.ravdess.check_complete: false for a partial copy)"
            )
    return found


def actor_splits(actors: Sequence[int], test_fraction: float, seed: int) -> dict[int, str]:
    """Actor-disjoint split, balanced by gender (same share of male and female actors)."""
    rng = seeded_rng(seed, "ravdess", "split")
    split = {}
    for parity in (1, 0):
        group = sorted(a for a in actors if a % 2 == parity)
        n_test = int(round(len(group) * test_fraction))
        if len(group) > 1:
            n_test = min(max(n_test, 1), len(group) - 1)
        else:
            n_test = 0
        test = set(rng.permutation(group)[:n_test].tolist())
        split.update({a: "test" if a in test else "train" for a in group})
    return split


def study_subset(found: Sequence[tuple[Path, RavdessName]], per_class: int, seed: int,
                 emotions: Sequence[str] = EMOTIONS) -> set[str]:
    """Keys (Actor_XX/filename) of the balanced study subset: `per_class` clips per
    emotion, spread over actors (each actor gets floor or ceil of per_class/n_actors),
    the extra slots alternating between genders and rotating over actors across
    emotions, intensities and statements spread within an actor. Seeded."""
    rng = seeded_rng(seed, "ravdess", "subset")
    by_emotion: dict[str, dict[int, list[tuple[str, RavdessName]]]] = defaultdict(
        lambda: defaultdict(list))
    for path, n in found:
        by_emotion[n.emotion][n.actor].append((f"{path.parent.name}/{path.name}", n))
    extras = defaultdict(int)  # extra slots each actor got so far (rotation)
    chosen: set[str] = set()
    for emotion in emotions:
        actors = by_emotion.get(emotion, {})
        available = sum(len(v) for v in actors.values())
        if available < per_class:
            raise LabelError(
                f"RAVDESS: emotion {emotion!r} has {available} clips, fewer than "
                f"subset_per_class={per_class} (the subset is drawn from the "
                f"datasets.ravdess.subset_split actors; hold out more actors with "
                f"test_fraction or lower subset_per_class)"
            )
        ids = sorted(actors)
        base = per_class // len(ids)
        quota = {a: min(base, len(actors[a])) for a in ids}
        # Extra slots: alternate genders, preferring actors with the fewest extras so far.
        order = {a: (extras[a], float(rng.random())) for a in ids}
        pools = {g: sorted((a for a in ids if a % 2 == g), key=order.__getitem__) for g in (1, 0)}
        gender = int(rng.integers(2))
        need = per_class - sum(quota.values())
        while need > 0:
            pick = None
            for g in (gender, 1 - gender):
                cands = [a for a in pools[g] if quota[a] < len(actors[a])]
                if cands:
                    pick = cands[0]
                    pools[g].remove(pick)
                    pools[g].append(pick)
                    break
            if pick is None:  # every actor exhausted (cannot happen when available >= n)
                break
            quota[pick] += 1
            if quota[pick] > base:
                extras[pick] += 1
            need -= 1
            gender = 1 - gender
        for a in ids:
            clips = sorted(actors[a], key=lambda kv: kv[0])
            # Spread over intensity x statement cells before taking a second from one cell.
            perm = rng.permutation(len(clips))
            cells: dict[tuple[str, str], list[str]] = defaultdict(list)
            for i in perm:
                key, n = clips[int(i)]
                cells[(n.intensity, n.statement)].append(key)
            cell_keys = sorted(cells)
            cell_keys = [cell_keys[int(i)] for i in rng.permutation(len(cell_keys))]
            taken: list[str] = []
            while len(taken) < quota[a]:
                for ck in cell_keys:
                    if cells[ck] and len(taken) < quota[a]:
                        taken.append(cells[ck].pop())
            chosen.update(taken)
    return chosen


def specs(root: str | Path, cfg: Mapping[str, Any], seed: int) -> tuple[list[ClipSpec], dict]:
    """ClipSpecs for every clip plus a summary; cfg is `datasets.ravdess`."""
    found = scan(root, check_complete=bool(cfg.get("check_complete", True)))
    actors = sorted({n.actor for _, n in found})
    split = actor_splits(actors, float(cfg.get("test_fraction", 0.34)), seed)
    subset_split = cfg.get("subset_split", "test")
    pool = [(p, n) for p, n in found if subset_split == "all" or split[n.actor] == subset_split]
    # a partial copy (check_complete: false) may lack an emotion altogether
    present = [e for e in EMOTIONS if any(n.emotion == e for _, n in found)]
    subset = study_subset(pool, int(cfg.get("subset_per_class", 30)), seed, present)
    out = []
    for path, n in found:
        key = f"{path.parent.name}/{path.name}"
        out.append(ClipSpec(
            clip_id=f"ravdess_{path.stem}",
            source=path,
            speaker=f"ravdess_actor{n.actor:02d}",
            split=split[n.actor],
            attrs={
                "emotion": n.emotion, "intensity": n.intensity, "transcript": n.statement,
                "statement": n.statement, "repetition": n.repetition, "actor": n.actor,
                "gender": n.gender, "modality": n.modality, "vocal_channel": n.channel,
                "subset": int(key in subset),
            },
        ))
    per_class = {e: sum(1 for s in out if s.attrs["subset"] == 1 and s.attrs["emotion"] == e)
                 for e in EMOTIONS}
    summary = {
        "n_actors": len(actors),
        "test_actors": sorted(a for a in actors if split[a] == "test"),
        "subset_per_class": per_class,
        "subset_total": int(np.sum(list(per_class.values()))),
        "subset_split": subset_split,
        **split_summary(out, "seeded_speaker_disjoint"),
    }
    return out, summary


ATTR_COLUMNS = ["emotion", "intensity", "transcript", "statement", "repetition", "actor",
                "gender", "modality", "vocal_channel", "subset"]
