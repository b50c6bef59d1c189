"""Which corpus a specialist was fitted on, and the two rules that keep the audit
honest on real speech (SPEC section 6):

- a model fitted on one kind of corpus (`synthetic` espeak speech or `real` speech)
  is never applied to the other kind: `check_applicable` refuses it, naming the
  model, its training corpus and the corpus it was about to be applied to;
  pretrained models used as they are (Whisper LID, emotion2vec+, ECAPA, UTMOS,
  resemblyzer with the raw cosine) carry `corpus_kind: pretrained` and apply anywhere;
- no study clip may come from a speaker a specialist trained on: `check_no_leakage`
  refuses a study's clips and names the clip, its speaker and the specialist. A
  cross-fitted specialist (`judgeaudit.specialists.crossfit`) is checked per fold:
  each clip against the training speakers of the fold model that labels it.

A corpus is `synthetic` when its dataset name starts with `synth_` (the workflow's
espeak corpora), else `real`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from judgeaudit.specialists.base import SpecialistError

SYNTHETIC = "synthetic"
REAL = "real"
PRETRAINED = "pretrained"


class LeakageError(SpecialistError):
    """A study clip comes from a speaker a specialist was trained on."""


def corpus_kind(dataset: str) -> str:
    """`synthetic` for the workflow's espeak corpora (`synth_*`), else `real`."""
    if not dataset:
        raise SpecialistError("corpus_kind: empty dataset name")
    return SYNTHETIC if str(dataset).startswith("synth_") else REAL


def model_corpus(meta: Mapping[str, Any]) -> tuple[str, str]:
    """(training corpus, its kind) recorded in a model's metadata. Models written
    before the corpus was recorded have neither and are refused by the checks."""
    return str(meta.get("corpus") or ""), str(meta.get("corpus_kind") or "")


def check_applicable(meta: Mapping[str, Any], dataset: str, what: str) -> None:
    """Refuse to apply a fitted model to a corpus of another kind than its own."""
    corpus, kind = model_corpus(meta)
    if kind == PRETRAINED:
        return
    if not kind:
        raise SpecialistError(
            f"{what}: the {meta.get('kind')} specialist ({meta.get('backend')}) records no "
            f"training corpus; retrain it with the specialists rules before applying it "
            f"to '{dataset}'")
    target = corpus_kind(dataset)
    if kind != target:
        raise SpecialistError(
            f"{what}: the {meta.get('kind')} specialist was fitted on the {kind} corpus "
            f"'{corpus}' and cannot be applied to the {target} corpus '{dataset}' (a model "
            f"fitted on one kind of speech is never applied to the other; train one on "
            f"'{dataset}''s own train split or use a pretrained backend, docs/specialists.md)")


def check_no_leakage(clips: Iterable[tuple[str, str, str]],
                     models: Mapping[str, Mapping[str, Any]], what: str) -> dict[str, int]:
    """`clips`: (clip_id, speaker, corpus) of every clip a study shows a judge;
    `models`: name -> model metadata of each specialist grounding the study (its
    `corpus` and `train_speakers`). Raises LeakageError naming every clip whose
    speaker is among a same-corpus specialist's training speakers; returns the
    number of clips checked per specialist."""
    clips = list(clips)
    bad = []
    checked = {}
    for name, meta in sorted(models.items()):
        corpus, kind = model_corpus(meta)
        if kind == PRETRAINED:
            checked[name] = 0
            continue
        if meta.get("backend") == "crossfit":  # each clip vs the fold model labelling it
            mine = [c for c in clips if c[2] == corpus]
            fold_of = {str(k): int(v) for k, v in (meta.get("speaker_fold") or {}).items()}
            folds = {int(f["fold"]): set(map(str, f["train_speakers"]))
                     for f in meta.get("folds") or []}
            for k in sorted(folds):
                checked[f"{name}[fold {k}]"] = sum(1 for c in mine
                                                    if fold_of.get(str(c[1])) == k)
            for clip, spk, _ in mine:
                k = fold_of.get(str(spk))
                if k is None or k not in folds or str(spk) in folds[k]:
                    bad.append((clip, spk, f"{name} (cross-fitted, fold {k})", corpus))
            continue
        if "train_speakers" not in meta:
            raise LeakageError(f"{what}: specialist {name} records no training speakers; "
                               f"retrain it with the specialists rules")
        speakers = set(map(str, meta["train_speakers"]))
        mine = [c for c in clips if c[2] == corpus]
        checked[name] = len(mine)
        bad += [(clip, spk, name, corpus) for clip, spk, _ in mine if str(spk) in speakers]
    if bad:
        shown = "; ".join(f"clip {c} (speaker {s}) is in the training split of the {n} "
                          f"specialist (corpus {k})" for c, s, n, k in bad[:5])
        raise LeakageError(
            f"{what}: {len(bad)} study clip(s) come from speakers a specialist was trained "
            f"on: {shown}{' ...' if len(bad) > 5 else ''}. Draw the study clips from the "
            f"held-out split (e.g. datasets.ravdess.subset_split: test, study_a.<task>.split: "
            f"test) so no judge is graded on speakers its specialists learned.")
    return checked


def check_study_clips(clip_ids: Iterable[str], manifest_path: str, corpus: str,
                      model_paths: Mapping[str, str], what: str) -> dict[str, int]:
    """check_no_leakage for study clips given by id: their speakers come from the
    corpus manifest, the specialists' training speakers from their model.json."""
    import pandas as pd

    from judgeaudit.specialists.base import read_meta

    m = pd.read_csv(manifest_path, sep="\t", dtype=str, keep_default_na=False)
    for col in ("clip_id", "speaker"):
        if col not in m.columns:
            raise SpecialistError(f"{what}: manifest '{manifest_path}' has no {col!r} column")
    speaker = dict(zip(m["clip_id"], m["speaker"], strict=True))
    ids = sorted(set(map(str, clip_ids)))
    unknown = [c for c in ids if c not in speaker]
    if unknown:
        raise SpecialistError(f"{what}: clips {unknown[:5]} are not in '{manifest_path}'")
    metas = {name: read_meta(path) for name, path in model_paths.items()}
    return check_no_leakage([(c, speaker[c], corpus) for c in ids], metas, what)
