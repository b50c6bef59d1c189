"""Small real-speech corpora in each corpus's official layout, built from EmoDB clips.

EmoDB (the dev copy behind the `emodb_dir` fixture: labels.tsv + wav/, 10 speakers,
22.05 kHz mono, 2 s clips) supplies real speech; each builder copies a handful of
clips per EmoDB speaker into a temp folder laid out exactly as the real corpus
(file names, label files, sample rate), with the EmoDB speakers as the corpus's
speakers. Every builder returns a `Layout`: the root to give `ingest`, the config
overrides an ingest of it needs, and `speaker_of` (corpus file -> EmoDB speaker) so
a test can check speaker-disjointness against the true speakers even where the
corpus publishes no speaker ids (FLEURS) or uses its own (VoxCeleb ids, BVCC systems).

    from real_layouts import fleurs_layout
    lay = fleurs_layout(tmp_path / "fleurs", emodb_dir)
    ingest("fleurs", lay.root, out, validate_config({"datasets": {"fleurs": lay.cfg}})...)

Speakers are assigned to splits in sorted order of EmoDB speaker id (03 08 09 10 11
12 13 14 15 16), so the tests are deterministic. Labels that EmoDB cannot supply are
structural: FLEURS languages are assigned per speaker group (every clip is German
speech), BVCC MOS values are a fixed function of the emotion. Use them to exercise
ingest/splits/training plumbing on real speech, not to measure language or MOS skill.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass, field
from math import gcd
from pathlib import Path
from typing import Any

import numpy as np
import soundfile as sf
from scipy.signal import resample_poly

EMODB_SPEAKERS = ("03", "08", "09", "10", "11", "12", "13", "14", "15", "16")
MALE = {"03", "10", "11", "12", "15"}
#: EmoDB emotion -> RAVDESS emotion code (bored has none)
RAVDESS_CODE = {"neutral": 1, "happy": 3, "sad": 4, "angry": 5, "fearful": 6, "disgust": 7}
#: a fixed, made-up MOS per EmoDB emotion (structural label for the BVCC-like layout)
MOS_OF = {"neutral": 4.6, "happy": 3.9, "sad": 3.1, "angry": 2.4, "fearful": 1.8,
          "disgust": 1.3, "bored": 2.9}


@dataclass
class Layout:
    root: Path
    cfg: dict[str, Any]
    speaker_of: dict[str, str] = field(default_factory=dict)  # corpus file/rel -> EmoDB spk
    split_of_speaker: dict[str, str] = field(default_factory=dict)  # EmoDB spk -> intended


def emodb_rows(emodb_dir: str | os.PathLike, per_speaker: int = 6,
               speakers=EMODB_SPEAKERS, emotions=None) -> list[dict[str, str]]:
    """labels.tsv rows (file, speaker, sex, text, emotion, version), the first
    `per_speaker` per speaker in file order (optionally only `emotions`), spread over
    emotions: round-robin by emotion within a speaker."""
    with open(Path(emodb_dir) / "labels.tsv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    out = []
    for spk in speakers:
        mine = [r for r in rows if r["speaker"] == spk
                and (emotions is None or r["emotion"] in emotions)]
        by_emo: dict[str, list[dict[str, str]]] = {}
        for r in sorted(mine, key=lambda r: r["file"]):
            by_emo.setdefault(r["emotion"], []).append(r)
        picked: list[dict[str, str]] = []
        while len(picked) < per_speaker and any(by_emo.values()):
            for emo in sorted(by_emo):
                if by_emo[emo] and len(picked) < per_speaker:
                    picked.append(by_emo[emo].pop(0))
        out.extend(picked)
    return out


def copy_clip(emodb_dir: str | os.PathLike, name: str, dest: str | os.PathLike,
              sr: int | None = 16000, channels: int = 1, gain_db: float = 0.0) -> Path:
    """Write EmoDB clip `name` to `dest` as PCM16 WAV at `sr` (None = keep 22.05 kHz),
    duplicated to `channels`, scaled by `gain_db`."""
    x, src_sr = sf.read(str(Path(emodb_dir) / "wav" / name), dtype="float64")
    if sr and sr != src_sr:
        g = gcd(int(sr), int(src_sr))
        x = resample_poly(x, sr // g, src_sr // g)
    x = np.clip(x * 10 ** (gain_db / 20), -1, 1)
    data = np.stack([x] * channels, axis=1) if channels > 1 else x
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    sf.write(str(dest), data, sr or src_sr, subtype="PCM_16")
    return dest


def _split_speakers(train: int, test: int, dev: int = 0) -> dict[str, str]:
    spk = list(EMODB_SPEAKERS)
    if train + dev + test > len(spk):
        raise ValueError(f"only {len(spk)} EmoDB speakers")
    out = {s: "train" for s in spk[:train]}
    out.update({s: "dev" for s in spk[train:train + dev]})
    out.update({s: "test" for s in spk[train + dev:train + dev + test]})
    return out


def fleurs_layout(root: str | os.PathLike, emodb_dir: str | os.PathLike,
                  languages: dict[str, str] | None = None, per_speaker: int = 4,
                  n_train: int = 6, n_dev: int = 0, n_test: int = 4) -> Layout:
    """data/<config>/{train,dev,test}.tsv + data/<config>/audio/<split>/<id>.wav (16 kHz).

    EmoDB speakers go to official splits (first `n_train` -> train.tsv, then `n_dev`
    -> dev.tsv, then `n_test` -> test.tsv); within a split, speakers alternate
    between the `languages` (default {"de": "de_de", "en": "en_us"}), so every
    language has speakers on both sides when each split has >= 2 speakers per
    language. Config: languages, min_duration_s 1.0, n_per_language 0,
    n_train_per_language 0, train_split "train"."""
    root = Path(root)
    languages = languages or {"de": "de_de", "en": "en_us"}
    langs = sorted(languages.items())
    plan = _split_speakers(n_train, n_test, n_dev)
    lay = Layout(root, {"languages": dict(languages), "min_duration_s": 1.0,
                        "n_per_language": 0, "n_train_per_language": 0,
                        "train_split": "train", "split": "test"},
                 split_of_speaker={s: ("train" if v == "dev" else v) for s, v in plan.items()})
    lines: dict[tuple[str, str], list[str]] = {}
    counter = 0
    for split in ("train", "dev", "test"):
        spk = [s for s in EMODB_SPEAKERS if plan.get(s) == split]
        for i, s in enumerate(spk):
            _lang, conf = langs[i % len(langs)]
            for r in emodb_rows(emodb_dir, per_speaker, speakers=(s,)):
                counter += 1
                fname = f"{10_000_000 + counter}.wav"
                path = copy_clip(emodb_dir, r["file"],
                                 root / "data" / conf / "audio" / split / fname)
                n = sf.info(str(path)).frames
                gender = "MALE" if s in MALE else "FEMALE"
                text = f"EmoDB text {r['text']}"
                lines.setdefault((conf, split), []).append("\t".join(
                    [r["text"], fname, text, text.lower(), "-", str(n), gender]))
                lay.speaker_of[fname] = s
    for (conf, split), body in lines.items():
        (root / "data" / conf / f"{split}.tsv").write_text("\n".join(body) + "\n",
                                                           encoding="utf-8")
    for _lang, conf in langs:  # every config has every split's tsv (possibly empty)
        for split in ("train", "test") + (("dev",) if n_dev else ()):
            tsv = root / "data" / conf / f"{split}.tsv"
            if not tsv.exists():
                tsv.parent.mkdir(parents=True, exist_ok=True)
                tsv.write_text("", encoding="utf-8")
                (root / "data" / conf / "audio" / split).mkdir(parents=True, exist_ok=True)
    return lay


def voxceleb_layout(root: str | os.PathLike, emodb_dir: str | os.PathLike,
                    per_speaker: int = 4, n_test: int = 4, n_dev: int = 6,
                    iden_split: bool = False) -> Layout:
    """wav/idNNNNN/<video>/NNNNN.wav (16 kHz) + veri_test2.txt.

    The first `n_dev` EmoDB speakers become dev speakers id10001.. (official train
    side), the next `n_test` become verification test speakers id10270.. (every
    same/different pair of their clips is a trial). Videos are EmoDB text codes.
    With `iden_split`, an identification-style iden_split.txt is written that puts
    every speaker's first clip in set 3 (test) and the rest in 1 (train): it shares
    speakers across sides, as the real one does. Config: n_trials 0,
    n_train_speakers 0, n_train_per_speaker 0."""
    root = Path(root)
    plan = _split_speakers(n_dev, n_test)
    lay = Layout(root, {"n_trials": 0, "n_train_speakers": 0, "n_train_per_speaker": 0},
                 split_of_speaker=dict(plan))
    dev_i, test_i = 10001, 10270
    test_rels, iden = [], []
    for s in EMODB_SPEAKERS:
        if s not in plan:
            continue
        if plan[s] == "train":
            vid, dev_i = f"id{dev_i}", dev_i + 1
        else:
            vid, test_i = f"id{test_i}", test_i + 1
        for k, r in enumerate(emodb_rows(emodb_dir, per_speaker, speakers=(s,))):
            rel = f"{vid}/{r['text']}{r['version']}/{k + 1:05d}.wav"
            copy_clip(emodb_dir, r["file"], root / "wav" / rel)
            lay.speaker_of[rel] = s
            iden.append(f"{3 if k == 0 else 1} {rel}")
            if plan[s] == "test":
                test_rels.append(rel)
    trials = [f"{int(a.split('/')[0] == b.split('/')[0])} {a} {b}"
              for i, a in enumerate(test_rels) for b in test_rels[i + 1:]]
    (root / "veri_test2.txt").write_text("\n".join(trials) + "\n")
    if iden_split:
        (root / "iden_split.txt").write_text("\n".join(iden) + "\n")
    return lay


def bvcc_layout(root: str | os.PathLike, emodb_dir: str | os.PathLike,
                per_speaker: int = 6, shared_systems: bool = True) -> Layout:
    """DATA/wav/sys<spk>-utt<file>.wav (16 kHz) + DATA/sets/{train,val,test}_mos_list.txt
    and TRAINSET/DEVSET/TESTSET rating lines (4 raters per clip).

    Each EmoDB speaker is one "system" (sysNN). With `shared_systems` (as in the real
    BVCC sets) every system has clips in train, val and test; otherwise systems 03-13
    are train, 14 val, 15-16 test. MOS = MOS_OF[emotion] (structural). Config:
    sets [train, val, test], n_pairs 20, pair_min_gap 0.5."""
    root = Path(root)
    data = root / "DATA"
    (data / "sets").mkdir(parents=True, exist_ok=True)
    lay = Layout(root, {"sets": ["train", "val", "test"], "n_pairs": 20, "pair_min_gap": 0.5})
    lists: dict[str, list[str]] = {"train": [], "val": [], "test": []}
    ratings: dict[str, list[str]] = {"train": [], "val": [], "test": []}
    for si, s in enumerate(EMODB_SPEAKERS):
        fixed = "train" if si < 7 else "val" if si == 7 else "test"
        lay.split_of_speaker[s] = "test" if fixed == "test" else "train"
        for k, r in enumerate(emodb_rows(emodb_dir, per_speaker, speakers=(s,))):
            set_name = ("train", "val", "test")[k % 3] if shared_systems else fixed
            stem = Path(r["file"]).stem[2:]  # e.g. a01Fa
            name = f"sys{s}-utt{stem}.wav"
            copy_clip(emodb_dir, r["file"], data / "wav" / name)
            mos = MOS_OF[r["emotion"]]
            lists[set_name].append(f"{name},{mos:.3f}")
            ratings[set_name].extend(f"sys{s},{name},{round(mos)},rater{j}" for j in range(4))
            lay.speaker_of[name] = s
    from judgeaudit.datasets.real.bvcc import SETS

    for set_name, (mos_file, ratings_file) in SETS.items():
        (data / "sets" / mos_file).write_text("\n".join(lists[set_name]) + "\n")
        (data / "sets" / ratings_file).write_text("\n".join(ratings[set_name]) + "\n")
    return lay


def ravdess_layout(root: str | os.PathLike, emodb_dir: str | os.PathLike,
                   per_speaker: int = 8, gain_db: float = 0.0) -> Layout:
    """Actor_XX/03-01-EE-01-SS-RR-XX.wav (48 kHz stereo, like RAVDESS) from EmoDB clips
    of the six emotions RAVDESS shares with EmoDB (calm and surprised are absent: the
    partial-copy ingest leaves them out of the study subset); EmoDB speakers become
    actors 01..10 with RAVDESS's gender parity (odd = male). `gain_db` scales every
    clip (e.g. -40 for quiet copies). Config: check_complete false, subset_per_class 1,
    test_fraction 0.3."""
    root = Path(root)
    male = [s for s in EMODB_SPEAKERS if s in MALE]
    female = [s for s in EMODB_SPEAKERS if s not in MALE]
    actor = {s: 2 * i + 1 for i, s in enumerate(male)}
    actor.update({s: 2 * i + 2 for i, s in enumerate(female)})
    lay = Layout(root, {"check_complete": False, "subset_per_class": 1, "test_fraction": 0.3})
    for s in EMODB_SPEAKERS:
        a = actor[s]
        used: dict[int, int] = {}
        for r in emodb_rows(emodb_dir, per_speaker, speakers=(s,), emotions=set(RAVDESS_CODE)):
            e = RAVDESS_CODE[r["emotion"]]
            k = used.get(e, 0)
            if k >= 4:  # 2 statements x 2 repetitions at normal intensity
                continue
            used[e] = k + 1
            name = f"03-01-{e:02d}-01-{k // 2 + 1:02d}-{k % 2 + 1:02d}-{a:02d}.wav"
            copy_clip(emodb_dir, r["file"], root / f"Actor_{a:02d}" / name, sr=48000,
                      channels=2, gain_db=gain_db)
            lay.speaker_of[f"Actor_{a:02d}/{name}"] = s
    return lay


__all__ = ["EMODB_SPEAKERS", "Layout", "bvcc_layout", "copy_clip", "emodb_rows",
           "fleurs_layout", "ravdess_layout", "voxceleb_layout"]
