"""Study A counter-conditions for classification (emotion, language): RQ1 feature
blueprints, RQ2 reference placement, and the cue conflict.

Builders take plain tables (clip set with gold label, specialist prediction, audio
path and sha256) and a blueprint provider, and return trial rows (CONTRACTS
section 3). The request layout and its sentences are the prompt contract's
(`judgeaudit.prompts`):

    [question + allowed answers] [rubric] [before-ref] [audio] [description]
    [specialist block] [fallible instruction] [after-ref]

with the system text first (a `system` reference is appended to it). Only the
parts a condition needs are present.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pandas as pd

from judgeaudit.conditions.common import (
    check_unique_ids,
    derangement,
    derangements,
    make_trial,
)
from judgeaudit.io import sha256_json
from judgeaudit.judges.request import AnswerSpec, AudioPart, Part, Request, TextPart
from judgeaudit.prompts import (
    ALLOWED_TEXT,
    CLS_QUESTIONS,
    CONFLICT_FALLIBLE_TEXT,
    REFERENCE_FALLIBLE_TEXT,
    REFERENCE_LABEL_TEXT,
    RUBRIC_TEXT,
    SYSTEM_TEXT,
)
from judgeaudit.vocab.study_a import (
    BLUEPRINT_CONDITIONS,
    CONFLICT_CONDITION,
    CONFLICT_FALLIBLE,
    FALLIBLE_PLACEMENTS,
    FALLIBLE_SUFFIX,
    MATCH_CONDITION,
    PLACEMENTS,
    WRONG_BLUEPRINT_CONDITIONS,
)

STUDY = "A"
ANSWER_KEY = "label"

RQ1_CONDITIONS = BLUEPRINT_CONDITIONS
WRONG_RQ1 = WRONG_BLUEPRINT_CONDITIONS
RQ2_CONDITIONS = (*PLACEMENTS, *FALLIBLE_PLACEMENTS, MATCH_CONDITION)
FAMILIES = {"blueprint": RQ1_CONDITIONS, "reference": RQ2_CONDITIONS,
            "conflict": (CONFLICT_CONDITION, CONFLICT_FALLIBLE)}

# every fixed sentence of these requests is the prompt contract's (judgeaudit.prompts)


class Blueprint(Protocol):
    """What the builders need from the blueprint renderer (features stage)."""

    template_sha256: str

    def skeleton(self) -> str: ...

    def description(self, clip_id: str) -> str: ...

    def block(self, label: str, framed: bool) -> str: ...

    def fallible(self) -> str: ...


@dataclass(frozen=True)
class ClipSet:
    """Clips of one classification task. `clips` columns: clip_id, path, sha256,
    label (gold), pred (the specialist's label for the clip), optionally speaker (the
    sampling unit intervals cluster on; without it each clip is its own cluster)."""

    task: str
    labels: tuple[str, ...]
    clips: pd.DataFrame

    def __post_init__(self) -> None:
        need = {"clip_id", "path", "sha256", "label", "pred"}
        missing = need - set(self.clips.columns)
        if missing:
            raise ValueError(f"ClipSet {self.task}: missing columns {sorted(missing)}")
        bad = sorted(set(self.clips["label"]) - set(self.labels))
        if bad:
            raise ValueError(f"ClipSet {self.task}: gold labels {bad} not in vocabulary "
                             f"{list(self.labels)}")
        if len(self.labels) < 3:
            raise ValueError(f"ClipSet {self.task}: need >= 3 labels, got {self.labels}")


def prompt_sha256() -> str:
    """Hash of every fixed prompt text of this module (enters each trial's facts)."""
    return sha256_json([SYSTEM_TEXT, CLS_QUESTIONS, RUBRIC_TEXT, ALLOWED_TEXT,
                        REFERENCE_LABEL_TEXT, REFERENCE_FALLIBLE_TEXT, CONFLICT_FALLIBLE_TEXT])


def _request(task: str, labels: Sequence[str], clip: pd.Series, *, audio: bool,
             texts: Sequence[str] = (), reference: str | None = None,
             placement: str | None = None) -> Request:
    attribute = "language" if task == "language" else task
    system = SYSTEM_TEXT
    ref = REFERENCE_LABEL_TEXT.format(label=reference) if reference is not None else None
    rubric = RUBRIC_TEXT.format(attribute=attribute)
    if ref and placement == "system":
        system = f"{system}\n{ref}"
    elif ref and placement == "rubric":
        rubric = f"{rubric} {ref}"
    elif ref and placement not in ("before", "after"):
        raise ValueError(f"unknown reference placement {placement!r}")
    parts: list[Part] = [
        TextPart(f"{CLS_QUESTIONS[task]} " + ALLOWED_TEXT.format(labels=", ".join(labels))),
        TextPart(rubric),
    ]
    if ref and placement == "before":
        parts.append(TextPart(ref))
    if audio:
        parts.append(AudioPart(str(clip["sha256"]), "wav", str(clip["path"])))
    parts.extend(TextPart(t) for t in texts)
    if ref and placement == "after":
        parts.append(TextPart(ref))
    return Request(system=system, parts=tuple(parts),
                   answer=AnswerSpec(ANSWER_KEY, tuple(labels)))


def _base_facts(cs: ClipSet, clip: pd.Series, family: str, blueprint: Blueprint | None) -> dict:
    facts: dict[str, Any] = {
        "family": family, "clip_id": str(clip["clip_id"]), "clip_sha256": str(clip["sha256"]),
        "attribute": cs.task, "k": len(cs.labels), "specialist_label": str(clip["pred"]),
        "prompt_sha256": prompt_sha256(),
    }
    # the sampling unit for cluster-robust intervals: the speaker (voice) when known
    speaker = clip.get("speaker")
    if speaker is not None and str(speaker) not in ("", "nan", "None"):
        facts.update({"speaker": str(speaker), "cluster": str(speaker), "cluster_unit": "speaker"})
    else:
        facts.update({"cluster": str(clip["clip_id"]), "cluster_unit": "clip"})
    if blueprint is not None:
        facts["template_sha256"] = blueprint.template_sha256
    return facts


def blueprint_trials(cs: ClipSet, blueprint: Blueprint, seeds: Sequence[int],
                     fallible_variants: bool = True) -> list[dict]:
    """RQ1: the blueprint conditions; wrong conditions once per derangement seed.
    `fallible_variants` adds wrong_block_fallible (the no-audio falsifier)."""
    trials = []
    maps = derangements(cs.labels, seeds, f"study A {cs.task} blueprint (study_a.seeds)")
    for _, clip in cs.clips.iterrows():
        gold = str(clip["label"])
        base = _base_facts(cs, clip, "blueprint", blueprint)
        desc = blueprint.description(str(clip["clip_id"]))
        fixed = {
            "audio_only": (True, []),
            "skeleton": (False, [blueprint.skeleton()]),
            "acoustic_description": (False, [desc]),
            "true_block": (False, [desc, blueprint.block(str(clip["pred"]), True)]),
        }
        for cond, (audio, texts) in fixed.items():
            facts = {**base, "block_label": str(clip["pred"]) if cond == "true_block" else None}
            req = _request(cs.task, cs.labels, clip, audio=audio, texts=texts)
            trials.append(make_trial(STUDY, cs.task, cond, req, gold, facts))
        for seed in seeds:
            wrong = maps[seed][gold]
            variants = {
                "wrong_block": (False, [desc, blueprint.block(wrong, True)]),
                "wrong_no_frame": (False, [desc, blueprint.block(wrong, False)]),
                "wrong_with_audio": (True, [desc, blueprint.block(wrong, True)]),
                "wrong_with_audio_fallible": (
                    True, [desc, blueprint.block(wrong, True), blueprint.fallible()]),
            }
            if fallible_variants:
                variants["wrong_block_fallible"] = (
                    False, [desc, blueprint.block(wrong, True), blueprint.fallible()])
            for cond, (audio, texts) in variants.items():
                facts = {**base, "seed": int(seed), "wrong_label": wrong, "block_label": wrong}
                req = _request(cs.task, cs.labels, clip, audio=audio, texts=texts)
                trials.append(make_trial(STUDY, cs.task, cond, req, gold, facts))
    check_unique_ids(trials, f"study A {cs.task} blueprint")
    return trials


def reference_trials(cs: ClipSet, seeds: Sequence[int], match_placement: str = "before",
                     fallible_variants: bool = True) -> list[dict]:
    """RQ2: audio plus a wrong reference at each placement (per seed) and the
    true-reference `match` control; `fallible_variants` adds, per placement, the same
    request with the fallible-label instruction (condition `<placement>_fallible`)."""
    if match_placement not in PLACEMENTS:
        raise ValueError(f"match_placement must be one of {PLACEMENTS}, got {match_placement!r}")
    trials = []
    maps = derangements(cs.labels, seeds,
                        f"study A {cs.task} reference (study_a.reference_seeds)")
    for _, clip in cs.clips.iterrows():
        gold = str(clip["label"])
        base = _base_facts(cs, clip, "reference", None)
        req = _request(cs.task, cs.labels, clip, audio=True, reference=gold,
                       placement=match_placement)
        trials.append(make_trial(STUDY, cs.task, "match", req, gold,
                                 {**base, "placement": match_placement, "reference_label": gold}))
        for seed in seeds:
            wrong = maps[seed][gold]
            for placement in PLACEMENTS:
                facts = {**base, "seed": int(seed), "placement": placement,
                         "wrong_label": wrong, "reference_label": wrong}
                req = _request(cs.task, cs.labels, clip, audio=True, reference=wrong,
                               placement=placement)
                trials.append(make_trial(STUDY, cs.task, placement, req, gold, facts))
                if fallible_variants:
                    req = _request(cs.task, cs.labels, clip, audio=True, reference=wrong,
                                   placement=placement, texts=[REFERENCE_FALLIBLE_TEXT])
                    trials.append(make_trial(STUDY, cs.task, placement + FALLIBLE_SUFFIX, req,
                                             gold, {**facts, "fallible": True}))
    check_unique_ids(trials, f"study A {cs.task} reference")
    return trials


def conflict_trials(cs: ClipSet, blueprint: Blueprint, seeds: Sequence[int],
                    placement: str = "before", fallible_variants: bool = True) -> list[dict]:
    """Cue conflict: audio + description + a framed wrong block naming one wrong label
    and a wrong reference naming a second, different wrong label; `fallible_variants`
    adds `conflict_fallible` (the same request plus the fallible-label instruction)."""
    if placement not in PLACEMENTS:
        raise ValueError(f"conflict placement must be one of {PLACEMENTS}, got {placement!r}")
    trials = []
    blocks = derangements(cs.labels, seeds, f"study A {cs.task} conflict (study_a.conflict_seeds)")
    for seed in seeds:
        d_block = blocks[int(seed)]
        d_ref = derangement(cs.labels, seed, avoid=d_block)
        for _, clip in cs.clips.iterrows():
            gold = str(clip["label"])
            block, ref = d_block[gold], d_ref[gold]
            desc = blueprint.description(str(clip["clip_id"]))
            facts = {**_base_facts(cs, clip, "conflict", blueprint), "seed": int(seed),
                     "placement": placement, "block_label": block, "reference_label": ref}
            variants = {CONFLICT_CONDITION: [desc, blueprint.block(block, True)]}
            if fallible_variants:
                variants[CONFLICT_FALLIBLE] = [desc, blueprint.block(block, True),
                                               CONFLICT_FALLIBLE_TEXT]
            for cond, texts in variants.items():
                req = _request(cs.task, cs.labels, clip, audio=True, texts=texts,
                               reference=ref, placement=placement)
                extra = {"fallible": True} if cond == CONFLICT_FALLIBLE else {}
                trials.append(make_trial(STUDY, cs.task, cond, req, gold, {**facts, **extra}))
    check_unique_ids(trials, f"study A {cs.task} conflict")
    return trials


def select_balanced(frame: pd.DataFrame, label_col: str, per_class: int | None,
                    seed: int) -> pd.DataFrame:
    """Up to `per_class` clips per label (seeded, sorted by clip_id for stability)."""
    out = []
    for _label, grp in frame.sort_values("clip_id").groupby(label_col, sort=True):
        if per_class is not None and len(grp) < per_class:  # checked by the power report
            logging.getLogger(__name__).warning(
                "select_balanced: class %r has %d clips, fewer than per_class=%d",
                _label, len(grp), per_class)
        if per_class is not None and len(grp) > per_class:
            grp = grp.sample(n=per_class, random_state=seed % (2**32)).sort_values("clip_id")
        out.append(grp)
    return pd.concat(out, ignore_index=True) if out else frame.iloc[0:0]
