"""Study A shards from files: manifests, specialist predictions and features in,
trial rows out. The rule scripts call these; everything here runs from Python alone.

Shards (CONTRACTS section 3, `results/trials/A/<task>/<shard>.jsonl`):
  <task> / <family>          task in vocab.study_a.CLS_TASKS, family in CLS_SHARDS
  pair_<criterion> / <format> criterion in PAIR_CRITERIA, format in PAIR_FORMATS
                              (both orders in one shard)
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.conditions.common import stable_seed
from judgeaudit.study_a import pair_sources
from judgeaudit.study_a.classification import (
    ClipSet,
    blueprint_trials,
    conflict_trials,
    reference_trials,
    select_balanced,
)
from judgeaudit.study_a.pairwise import pair_trials
from judgeaudit.vocab.study_a import CLS_SHARDS, CLS_TASKS, PAIR_CRITERIA, PAIR_FORMATS

log = logging.getLogger(__name__)
CLASSIFICATION_TASKS = CLS_TASKS
CLASSIFICATION_SHARDS = CLS_SHARDS
PAIR_SHARDS = PAIR_FORMATS


def read_table(path: str | Path, what: str, need: tuple[str, ...] = ()) -> pd.DataFrame:
    try:
        frame = pd.read_csv(path, sep="\t", dtype={"clip_id": str}, keep_default_na=False,
                            na_values=[""])
    except FileNotFoundError:
        raise FileNotFoundError(f"{what}: '{path}' does not exist") from None
    missing = [c for c in need if c not in frame.columns]
    if missing:
        raise ValueError(f"{what} '{path}': missing columns {missing} "
                         f"(has {list(frame.columns)[:12]})")
    return frame


def load_clipset(task: str, cfg: dict[str, Any], manifest: str | Path,
                 predictions: str | Path, seed: int) -> ClipSet:
    """The clips of one classification task with gold label and specialist label."""
    label_col = cfg["label_column"]
    m = read_table(manifest, f"{task} manifest", ("clip_id", "path", "sha256", label_col))
    if cfg.get("subset_column"):
        col = cfg["subset_column"]
        if col not in m.columns:
            raise ValueError(f"{task} manifest '{manifest}': subset column '{col}' not found")
        m = m[pd.to_numeric(m[col], errors="coerce").fillna(0).astype(int) == 1]
    if cfg.get("split"):
        m = m[m["split"] == cfg["split"]]
    if m.empty:
        raise ValueError(f"{task}: no clips left in '{manifest}' after subset/split filters "
                         f"(subset_column={cfg.get('subset_column')!r}, split={cfg.get('split')!r})")
    preds = read_table(predictions, f"{task} specialist predictions", ("clip_id", "label"))
    if "status" in preds.columns:  # clips the specialist's screen excluded have no label
        bad = preds[preds["status"].astype(str) != "ok"]
        dropped = m[m["clip_id"].isin(set(bad["clip_id"]))]
        if len(dropped):
            log.warning("%s: %d clip(s) excluded from the study: the specialist's screen "
                        "found no usable speech (%s), e.g. %s", task, len(dropped),
                        bad[bad["clip_id"].isin(set(dropped["clip_id"]))]["status"]
                        .value_counts().to_dict(), list(dropped["clip_id"][:5]))
            m = m[~m["clip_id"].isin(set(dropped["clip_id"]))]
    m = select_balanced(m, label_col, cfg.get("per_class") or None, stable_seed(seed, task))
    preds = preds.drop_duplicates("clip_id").set_index("clip_id")["label"].astype(str)
    missing = sorted(set(m["clip_id"]) - set(preds.index))
    if missing:
        raise ValueError(f"{task}: specialist predictions '{predictions}' lack clips "
                         f"{missing[:5]} ({len(missing)} in all)")
    clips = pd.DataFrame({"clip_id": m["clip_id"].astype(str), "path": m["path"].astype(str),
                          "sha256": m["sha256"].astype(str), "label": m[label_col].astype(str),
                          "pred": m["clip_id"].map(preds).astype(str)}).reset_index(drop=True)
    if "speaker" in m.columns:
        clips["speaker"] = m["speaker"].astype(str).to_numpy()
    return ClipSet(task, tuple(cfg["labels"]), clips)


def classification_shard(task: str, shard: str, study_cfg: dict[str, Any], clipset: ClipSet,
                         blueprint=None) -> list[dict]:
    fallible = bool(study_cfg.get("fallible_variants", True))
    if shard == "blueprint":
        return blueprint_trials(clipset, blueprint, study_cfg["seeds"], fallible)
    if shard == "reference":
        return reference_trials(clipset, study_cfg["reference_seeds"],
                                study_cfg["match_placement"], fallible)
    if shard == "conflict":
        return conflict_trials(clipset, blueprint, study_cfg["conflict_seeds"],
                               study_cfg["conflict_placement"], fallible)
    raise ValueError(f"unknown Study A classification shard {shard!r} "
                     f"(expected one of {CLASSIFICATION_SHARDS})")


def build_pairs(criterion: str, pcfg: dict[str, Any], manifest: str | Path, seed: int):
    m = read_table(manifest, f"{criterion} pairs manifest")
    n, split = pcfg["n_pairs"], pcfg.get("split") or None
    s = stable_seed(seed, "pairs", criterion)
    if criterion == "naturalness":
        return pair_sources.naturalness_pairs(m, n, s, pcfg["min_score_gap"], split)
    if criterion == "cleanness":
        return pair_sources.cleanness_pairs(m, n, s, split)
    if criterion == "speaker":
        return pair_sources.speaker_pairs(m, n, s, split)
    if criterion == "emotion":
        return pair_sources.emotion_pairs(m, n, s, split=split)
    raise ValueError(f"unknown pair criterion {criterion!r} (expected one of {PAIR_CRITERIA})")


def pair_shard(criterion: str, fmt: str, pcfg: dict[str, Any], manifest: str | Path, seed: int,
               concat_dir: str | Path | None = None) -> list[dict]:
    pairs = build_pairs(criterion, pcfg, manifest, seed)
    return pair_trials(f"pair_{criterion}", pairs, fmt, stable_seed(seed, "order"),
                       concat_dir=concat_dir,
                       reference_layout=pcfg.get("reference_layout") or "auto")
