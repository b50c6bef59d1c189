"""Train / predict entry points over manifests (what the rule scripts and the
`python -m judgeaudit.specialists` command call).

`train` / `predict` dispatch to `crossfit` when a model is cross-fitted and to
`single` (one model, fitted on the train split only) otherwise. The manifest
helpers are re-exported here, where the scripts and tests import them from.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from judgeaudit.features.audio import DEFAULT_SCREEN, ScreenConfig
from judgeaudit.specialists import crossfit, single
from judgeaudit.specialists.base import read_meta, write_meta
from judgeaudit.specialists.single import (
    LABEL_COLUMNS,
    PRETRAINED_BACKENDS,
    base_dirs,
    features_for,
    read_manifest,
    read_trials,
    train_split,
)

__all__ = ["LABEL_COLUMNS", "PRETRAINED_BACKENDS", "base_dirs", "features_for", "predict",
           "read_manifest", "read_trials", "train", "train_split"]


def train(kind: str, manifest_path: str | os.PathLike, cfg: Mapping[str, Any],
          out_dir: str | os.PathLike, cache_dir: str | os.PathLike | None = None,
          n_jobs: int = 1, seed: int = 0, screen_cfg: ScreenConfig = DEFAULT_SCREEN,
          trials_path: str | os.PathLike | None = None,
          corpus: str | None = None) -> dict[str, Any]:
    """Fit (or configure) the `kind` specialist on the train split of `corpus`
    (default: the manifest's folder name, `data/<corpus>/manifest.tsv`) and save
    model.json + model.joblib into `out_dir`. model.json also records the training
    corpus, its kind (synthetic / real / pretrained for adapters used as they are)
    and the training speakers (the leakage check reads them). Returns the metadata."""
    from judgeaudit.specialists.corpus import PRETRAINED, corpus_kind

    corpus = corpus or Path(manifest_path).resolve().parent.name
    n_folds = int(cfg.get("crossfit_folds") or 0)
    if n_folds:  # every speaker labelled by a model fitted on the other folds
        return crossfit.train(kind, manifest_path, cfg, out_dir, n_folds,
                              cache_dir=cache_dir, n_jobs=n_jobs, seed=seed,
                              screen_cfg=screen_cfg, corpus=corpus,
                              corpus_kind=corpus_kind(corpus))
    meta = single.fit(kind, manifest_path, cfg, out_dir, cache_dir, n_jobs, seed, screen_cfg,
                      trials_path)
    if meta["backend"] in PRETRAINED_BACKENDS:  # used as it is: fitted on nothing here
        stamp = {"corpus": corpus, "corpus_kind": PRETRAINED, "train_speakers": []}
    else:
        frame = read_manifest(manifest_path)
        speakers = sorted(set(frame.loc[frame["split"] == "train", "speaker"].astype(str)))
        stamp = {"corpus": corpus, "corpus_kind": corpus_kind(corpus),
                 "train_speakers": speakers}
    meta = {**read_meta(out_dir), **stamp}
    write_meta(out_dir, meta)
    return meta


def predict(kind: str, model_path: str | os.PathLike, manifest_path: str | os.PathLike,
            cache_dir: str | os.PathLike | None = None, n_jobs: int = 1,
            corpus: str | None = None) -> pd.DataFrame:
    """Per-clip predictions of a saved specialist on every clip of a manifest.
    With `corpus` (the manifest's dataset name) a model fitted on another kind of
    corpus (synthetic vs real) is refused (`corpus.check_applicable`).

    Columns: clip_id, split, then for emotion/language `label, score_<class>...`,
    for naturalness `score, dnsmos_*`, for speaker `emb_000..emb_255`; then status
    and version (cross-fitted models add `fold`)."""
    meta = read_meta(model_path)
    if corpus is not None:
        from judgeaudit.specialists.corpus import check_applicable

        check_applicable(meta, corpus, f"{kind} predictions on '{manifest_path}'")
    if meta["backend"] == crossfit.BACKEND:
        return crossfit.predict(kind, model_path, manifest_path, cache_dir, n_jobs)
    return single.predict(kind, model_path, manifest_path, cache_dir, n_jobs, meta=meta)
