"""VoxCeleb1 (Nagrani, Chung, Zisserman 2017): gated, so the user supplies the audio
(folder or the official archives, e.g. `vox1_test_wav.zip`) and the trial list.

Layout: `wav/<speaker id>/<YouTube id>/<nnnnn>.wav`; trial list `veri_test2.txt`
(VoxCeleb1-O cleaned), lines `<1|0> <spk/yt/nnnnn.wav> <spk/yt/nnnnn.wav>`.
Speaker ids come from the path. The workflow never asks for credentials.

Splits: the official VoxCeleb1 verification split holds out speakers
id10270-id10309 (the test speakers of the trial list); every other speaker is
"dev" and becomes the study's train split. When `iden_split.txt` (the official
identification split, lines `<1|2|3> idNNNNN/<video>/NNNNN.wav`) is in the folder it
is read instead (1, 2 -> train, 3 -> test); that split shares speakers across its
sides by design, so `split_policy: auto` falls back to the verification split by
speaker id, and `official` refuses it, naming the shared speakers. Train clips are a
seeded sample of `n_train_speakers` dev speakers x `n_train_per_speaker` clips found
under wav/. A copy with the test speakers only (vox1_test_wav) has no dev speakers:
`auto` then holds out a seeded share of the test speakers as train speakers (the
trials that touch them are dropped), and says so.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from .base import (
    ClipSpec,
    LabelError,
    License,
    check_speaker_disjoint,
    read_lines,
    seeded_rng,
    seeded_speaker_split,
    split_summary,
)

log = logging.getLogger("judgeaudit.datasets.real")

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
TEST_SPEAKERS = frozenset(f"id{n}" for n in range(10270, 10310))  # verification test set
IDEN_SPLIT = {"1": "train", "2": "train", "3": "test"}


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


def parse_iden_split(path: Path) -> dict[str, str]:
    """idNNNNN/<video>/NNNNN.wav -> study split, from the official iden_split.txt."""
    out = {}
    for lineno, line in read_lines(path):
        parts = line.split()
        if len(parts) != 2 or parts[0] not in IDEN_SPLIT or not REL_RE.match(parts[1]):
            raise LabelError(f"{path}:{lineno}: expected '<1|2|3> idNNNNN/<video>/NNNNN.wav', "
                             f"got {line!r}")
        out[parts[1]] = IDEN_SPLIT[parts[0]]
    return out


def _clip(wav_root: Path, rel: str, split: str) -> ClipSpec:
    spk, video, utt = REL_RE.match(rel).groups()
    return ClipSpec(clip_id=clip_id(rel), source=wav_root / rel, speaker=f"vox1_{spk}",
                    split=split, attrs={"video_id": video, "utterance_id": utt,
                                        "voxceleb_path": rel})


def scan_wavs(wav_root: Path) -> dict[str, list[str]]:
    """speaker id -> sorted relative clip paths found under wav/."""
    out: dict[str, list[str]] = {}
    for p in sorted(wav_root.glob("id*/*/*.wav")):
        rel = p.relative_to(wav_root).as_posix()
        if REL_RE.match(rel):
            out.setdefault(rel.split("/")[0], []).append(rel)
    return out


def _split_of(root: Path, speakers: list[str], policy: str, cfg: Mapping[str, Any],
              seed: int) -> tuple[dict[str, str], dict[str, Any]]:
    """Speaker id -> study split, and what the summary records about it."""
    info: dict[str, Any] = {}
    iden = root / "iden_split.txt"
    if iden.is_file() and policy in ("auto", "official"):
        by_clip = parse_iden_split(iden)
        sides: dict[str, set[str]] = {}
        for rel, split in by_clip.items():
            sides.setdefault(rel.split("/")[0], set()).add(split)
        shared = sorted(s for s, v in sides.items() if len(v) > 1)
        if not shared:
            info["split_source"] = str(iden)
            return {s: next(iter(sides[s])) for s in speakers if s in sides}, info
        if policy == "official":
            raise LabelError(
                f"{iden}: the identification split puts {len(shared)} speaker(s) on both "
                f"sides, e.g. {[f'vox1_{s}' for s in shared[:10]]}; the study needs "
                "speaker-disjoint splits (remove iden_split.txt to use the verification "
                "split, or set datasets.voxceleb1.split_policy: auto)")
        log.warning("voxceleb1: %s shares %d speakers between its splits; using the "
                    "verification split by speaker id instead", iden, len(shared))
        info["split_fallback"] = f"{iden.name} shares {len(shared)} speakers"
    if policy == "seeded":
        assign = seeded_speaker_split(speakers, float(cfg.get("test_fraction", 0.25)), seed,
                                      "voxceleb1")
        info["split_source"] = "seeded"
        return assign, info
    assign = {s: "test" if s in TEST_SPEAKERS else "train" for s in speakers}
    info["split_source"] = "verification test speakers id10270-id10309"
    if "test" not in assign.values():
        if policy == "official":
            raise LabelError(
                f"voxceleb1 (split_policy: official): none of the {len(speakers)} speakers "
                f"in the copy ({_ids(speakers)}) is an official test speaker "
                "(id10270-id10309), so the study would have no test trials; add the test "
                "speakers' wav/ folders or set datasets.voxceleb1.split_policy: auto or "
                "seeded")
        assign = seeded_speaker_split(speakers, float(cfg.get("test_fraction", 0.25)), seed,
                                      "voxceleb1", "no-official-test")
        msg = (f"no official test speaker (id10270-id10309) among the {len(speakers)} "
               "speakers in the copy: a seeded speaker-disjoint split is used and the test "
               "trials are seeded same/different pairs of the test speakers' clips")
        log.warning("voxceleb1: %s", msg)
        info["split_fallback"] = msg
        info["split_source"] = "seeded"
        return assign, info
    if "train" not in assign.values() and policy == "auto":
        test_spk = sorted(s for s in speakers if s in TEST_SPEAKERS)
        held = seeded_speaker_split(test_spk, 1.0 - float(cfg.get("test_fraction", 0.25)),
                                    seed, "voxceleb1", "train-from-test")
        # seeded_speaker_split labels its `fraction` share "test": here that share trains
        assign = {s: "train" if held.get(s) == "test" else "test" for s in speakers}
        msg = ("no dev (non-test) speakers in the copy: a seeded share of the test "
               "speakers is used for training and their trials are dropped")
        log.warning("voxceleb1: %s", msg)
        info["split_fallback"] = msg
        info["split_source"] = "seeded"
    return assign, info


def _ids(speakers, k: int = 8) -> str:
    speakers = sorted(speakers)
    return ", ".join(speakers[:k]) + (f" ... ({len(speakers)} in all)" if len(speakers) > k
                                      else "") if speakers else "none"


def assign_side(assign: Mapping[str, str], side: str) -> list[str]:
    return sorted(s for s, v in assign.items() if v == side)


def _seeded_pairs(rels: list[str], n: int, seed: int, what: str) -> list[tuple]:
    """Seeded same/different-speaker pairs of clips, half of each kind where the clips
    allow, in parse_trials' layout (a running number, a, b, same); n = 0: every pair."""
    pool = [(0, a, b, int(a.split("/")[0] == b.split("/")[0]))
            for i, a in enumerate(rels) for b in rels[i + 1:]]
    if not n:
        return [(i + 1, a, b, same) for i, (_, a, b, same) in enumerate(pool)]
    same = [t for t in pool if t[3] == 1]
    diff = [t for t in pool if t[3] == 0]
    rng = seeded_rng(seed, "voxceleb1", what, "pairs")
    k_same = min(len(same), n // 2)
    k_diff = min(len(diff), n - k_same)
    pick = ([same[int(i)] for i in rng.choice(len(same), k_same, replace=False)]
            + [diff[int(i)] for i in rng.choice(len(diff), k_diff, replace=False)])
    pick.sort(key=lambda t: (t[1], t[2]))
    return [(i + 1, a, b, same) for i, (_, a, b, same) in enumerate(pick)]


def specs(root: str | Path, trial_list: Path, cfg: Mapping[str, Any], seed: int
          ) -> tuple[list[ClipSpec], pd.DataFrame, dict]:
    root = Path(root)
    wav_root = find_wav_root(root)
    policy = cfg.get("split_policy", "auto")
    if policy not in ("auto", "official", "seeded"):
        raise LabelError(f"datasets.voxceleb1.split_policy: {policy!r} is not one of "
                         "auto, official, seeded")
    all_trials = parse_trials(trial_list)
    found = scan_wavs(wav_root)
    trial_spk = {r.split("/")[0] for t in all_trials for r in t[1:3]}
    speakers = sorted(set(found) | trial_spk)
    assign, info = _split_of(root, speakers, policy, cfg, seed)
    missing = sorted(set(speakers) - set(assign))
    if missing:
        raise LabelError(f"voxceleb1: speakers {missing[:10]} are not in the split file "
                         f"{info.get('split_source')}")
    test_trials = [t for t in all_trials
                   if assign[t[1].split("/")[0]] == "test" and assign[t[2].split("/")[0]] == "test"]
    if not test_trials and info.get("split_source") == "seeded":
        # the trial list names none of the seeded test speakers: pair their clips
        test_rels = sorted(r for s, rels in found.items() if assign.get(s) == "test"
                           for r in rels)
        test_trials = _seeded_pairs(test_rels, int(cfg.get("n_trials", 200)), seed, "test")
    trials = select(test_trials, int(cfg.get("n_trials", 200)), seed)
    rels = sorted({r for t in trials for r in t[1:3]})
    out = [_clip(wav_root, rel, "test") for rel in rels]
    # training clips: a seeded sample of train speakers' clips found under wav/
    train_spk = sorted(s for s in found if assign.get(s) == "train")
    n_spk, n_per = int(cfg.get("n_train_speakers", 40)), int(cfg.get("n_train_per_speaker", 8))
    rng = seeded_rng(seed, "voxceleb1", "train")
    if n_spk and len(train_spk) > n_spk:
        train_spk = sorted(train_spk[int(i)] for i in rng.choice(len(train_spk), n_spk,
                                                                 replace=False))
    for spk in train_spk:
        clips = found[spk]
        if n_per and len(clips) > n_per:
            clips = sorted(clips[int(i)] for i in rng.choice(len(clips), n_per, replace=False))
        out.extend(_clip(wav_root, rel, "train") for rel in clips)
    check_speaker_disjoint(out, "voxceleb1")
    used = "seeded_speaker_disjoint" if info.get("split_source") == "seeded" else "official"
    sides = {side: sorted({c.speaker for c in out if c.split == side}) for side in ("train", "test")}
    if not trials or not sides["train"]:
        raise LabelError(
            f"voxceleb1 (split_policy: {policy}, applied: {used}): the split leaves "
            f"{len(trials)} test trials over {len(sides['test'])} test speakers and "
            f"{len(sides['train'])} train speakers (speakers in the copy: "
            f"{_ids(speakers)}; test: {_ids(assign_side(assign, 'test'))}; train: "
            f"{_ids(assign_side(assign, 'train'))}); the speaker study needs both sides "
            "(add speakers, or choose another split_policy)")
    # train-split trials (the speaker back-end calibrates its threshold on them): seeded
    # same/different pairs of the sampled train clips, never touching a test clip
    train_rels = sorted(c.attrs["voxceleb_path"] for c in out if c.split == "train")
    pool = [(0, a, b, int(a.split("/")[0] == b.split("/")[0]))
            for i, a in enumerate(train_rels) for b in train_rels[i + 1:]]
    n_tr = int(cfg.get("n_train_trials", 200))
    train_trials = pool
    if n_tr and len(pool) > n_tr:
        rng_t = seeded_rng(seed, "voxceleb1", "train-trials")
        same = [t for t in pool if t[3] == 1]
        diff = [t for t in pool if t[3] == 0]
        k_same = min(len(same), n_tr // 2)
        k_diff = min(len(diff), n_tr - k_same)
        train_trials = sorted(
            [same[int(i)] for i in rng_t.choice(len(same), k_same, replace=False)]
            + [diff[int(i)] for i in rng_t.choice(len(diff), k_diff, replace=False)])
    rows = [{"trial_id": f"vox1_t{line:06d}", "clip_a": clip_id(a), "clip_b": clip_id(b),
             "same": same, "split": "test"} for line, a, b, same in trials]
    rows += [{"trial_id": f"vox1_tr{i:06d}", "clip_a": clip_id(a), "clip_b": clip_id(b),
              "same": same, "split": "train"} for i, (_, a, b, same) in enumerate(train_trials)]
    table = pd.DataFrame(rows, columns=["trial_id", "clip_a", "clip_b", "same", "split"])
    summary = {"n_trials": len(trials), "n_trials_in_list": len(all_trials),
               "n_same": int(sum(t[3] for t in trials)), "n_train_trials": len(train_trials),
               "n_clips": len(out),
               "trial_list": str(trial_list),
               **split_summary(out, used, **info)}
    return out, table, summary


ATTR_COLUMNS = ["video_id", "utterance_id", "voxceleb_path"]
