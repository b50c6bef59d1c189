"""Cross-fitting over speaker folds: every speaker of a corpus is a study speaker,
labelled by a specialist that never saw that speaker.

For a corpus used both to train a specialist and as study clips (RAVDESS: 24 actors),
a single train/test split leaves a trade-off between the specialist's training
speakers and the study's speakers. Cross-fitting removes it: the speakers are dealt
into K folds (seeded; balanced over the manifest's `gender` column when it has one);
fold k's specialist is fitted with the project's own training code on the speakers
of the other K-1 folds (the manifest's `split` column is ignored) and labels only
the clips of fold k's speakers. The composite is one `model.json`
(`backend: crossfit`) with one sub-model folder per fold (`fold<k>/`):

- `predict` (the predictions table) labels every clip with the model of its
  speaker's fold and adds a `fold` column;
- `load(kind, model.json).predict_audio(bytes)` (what the perceiving judges call)
  routes a clip of the corpus, recognised by the sha256 of its bytes, to its
  speaker's fold model; bytes that are no clip of the corpus (no speaker of the
  corpus: e.g. another corpus's audio) get the mean of the fold models' scores;
- the leakage check (`corpus.check_no_leakage`) checks each clip against the
  training speakers of the fold model that labels it, per fold;
  `check_predictions` does the same on a predictions table and returns one row per
  fold (clips labelled, clips whose speaker the fold model saw: must be 0).

Accuracy is then pooled over all clips (each labelled out of fold), with the
speaker-clustered interval of `evaluate.classification`.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import pandas as pd

from judgeaudit.io import sha256_bytes, write_bytes_atomic, write_tsv_atomic
from judgeaudit.specialists.base import (
    Memo,
    Prediction,
    SpecialistError,
    excluded_prediction,
    meta_path,
    read_meta,
    write_meta,
)
from judgeaudit.specialists.single import PRETRAINED_BACKENDS, base_dirs, fit, read_manifest
from judgeaudit.specialists.single import predict as predict_one

log = logging.getLogger(__name__)

BACKEND = "crossfit"
#: kinds whose specialists label clips and can be cross-fitted (speaker
#: verification scores trials, not clips)
KINDS = ("emotion", "language", "naturalness")
FOLDS_FILE = "crossfit_folds.tsv"


def is_crossfit(meta: Mapping[str, Any]) -> bool:
    return meta.get("backend") == BACKEND


def assign_folds(speakers: Sequence[str], n_folds: int, seed: int,
                 gender: Mapping[str, str] | None = None) -> dict[str, int]:
    """speaker -> fold in 0..n_folds-1: seeded, every fold gets floor or ceil of
    n/K speakers, genders (when given) dealt alternately so each fold mixes them."""
    spk = sorted(set(map(str, speakers)))
    if n_folds < 2:
        raise SpecialistError(f"crossfit: needs at least 2 folds, got {n_folds}")
    if len(spk) < n_folds:
        raise SpecialistError(f"crossfit: {n_folds} folds need at least {n_folds} speakers, "
                              f"the manifest has {len(spk)} ({spk})")
    digest = hashlib.sha256(f"{seed}:crossfit-folds".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "little"))
    groups: dict[str, list[str]] = {}
    for s in spk:
        groups.setdefault(str((gender or {}).get(s, "")), []).append(s)
    order: list[str] = []
    for g in sorted(groups):
        members = groups[g]
        order += [members[int(i)] for i in rng.permutation(len(members))]
    return {s: i % n_folds for i, s in enumerate(order)}


def _speaker_genders(frame: pd.DataFrame) -> dict[str, str] | None:
    if "gender" not in frame.columns:
        return None
    g = frame.drop_duplicates("speaker").set_index("speaker")["gender"].astype(str)
    return {str(k): v for k, v in g.items()}


def _absolute_paths(frame: pd.DataFrame, manifest_path: str | os.PathLike) -> pd.DataFrame:
    from judgeaudit.features.extract import resolve_clip_path

    bases = base_dirs(manifest_path)
    out = frame.copy()
    out["path"] = [str(resolve_clip_path(p, bases).resolve()) for p in frame["path"]]
    return out


def _pretruncate(kind: str, cfg: Mapping[str, Any], out_dir: Path) -> dict[str, Any]:
    """Whisper backends truncate their encoder into a copy beside model.json: make that
    copy once for all folds (the fold fits then use it as their model)."""
    cfg = dict(cfg)
    sub = {"whisper_embed": "whisper_embed", "whisper_ridge": "whisper_ridge"}.get(
        cfg.get("backend", ""))
    if sub is None:
        return cfg
    wcfg = dict(cfg.get(sub) or {})
    n_layers = int(wcfg.get("encoder_layers", 3) or 0)
    if n_layers > 0:
        from judgeaudit.specialists.whisper_embed import truncate_encoder

        cfg["model_path"] = str(truncate_encoder(cfg.get("model_path") or "",
                                                 out_dir / f"whisper-encoder{n_layers}",
                                                 n_layers))
        wcfg["encoder_layers"] = 0
        cfg[sub] = wcfg
    return cfg


def train(kind: str, manifest_path: str | os.PathLike, cfg: Mapping[str, Any],
          out_dir: str | os.PathLike, n_folds: int, *, cache_dir=None, n_jobs: int = 1,
          seed: int = 0, screen_cfg=None, corpus: str, corpus_kind: str) -> dict[str, Any]:
    """Fit one `kind` specialist per speaker fold (see the module docstring); writes
    `out_dir/fold<k>/` per fold, `out_dir/model.json` + `model.joblib` (the
    composite) and `out_dir/crossfit_folds.tsv` (one row per fold: its held-out and
    training speakers). Returns the composite's metadata."""
    from judgeaudit.features.audio import DEFAULT_SCREEN

    if kind not in KINDS:
        raise SpecialistError(f"specialists.{kind}.crossfit_folds: cross-fitting is for the "
                              f"clip-labelling kinds {list(KINDS)}, not {kind!r}")
    if cfg.get("backend") in PRETRAINED_BACKENDS:
        raise SpecialistError(f"specialists.{kind}.crossfit_folds: backend "
                              f"{cfg.get('backend')!r} is pretrained (fitted on nothing "
                              "here): nothing to cross-fit; set crossfit_folds: 0")
    screen_cfg = screen_cfg or DEFAULT_SCREEN
    out_dir = Path(out_dir)
    frame = read_manifest(manifest_path)
    fold_of = assign_folds(frame["speaker"].astype(str), int(n_folds), seed,
                           _speaker_genders(frame))
    fit_cfg = _pretruncate(kind, cfg, out_dir)
    absolute = _absolute_paths(frame, manifest_path)
    folds = []
    with tempfile.TemporaryDirectory(prefix="crossfit-") as tmp:
        for k in range(int(n_folds)):
            held = sorted(s for s, f in fold_of.items() if f == k)
            fold_frame = absolute.assign(split=np.where(
                absolute["speaker"].astype(str).isin(held), "test", "train"))
            fold_manifest = Path(tmp) / f"fold{k}" / "manifest.tsv"
            write_tsv_atomic(fold_manifest, fold_frame)
            fold_dir = out_dir / f"fold{k}"
            log.info("crossfit %s fold %d/%d: fitting on %d speakers, holding out %s",
                     kind, k + 1, n_folds, len(fold_of) - len(held), held)
            fmeta = fit(kind, fold_manifest, fit_cfg, fold_dir, cache_dir, n_jobs, seed,
                        screen_cfg)
            train_speakers = sorted(s for s, f in fold_of.items() if f != k)
            fmeta = {**read_meta(fold_dir), "corpus": corpus, "corpus_kind": corpus_kind,
                     "train_speakers": train_speakers, "crossfit_fold": k}
            write_meta(fold_dir, fmeta)
            overlap = sorted(set(train_speakers) & set(held))
            if overlap:  # cannot happen by construction; checked all the same
                raise SpecialistError(f"crossfit fold {k}: speakers {overlap} both train "
                                      "and are held out")
            folds.append({"fold": k, "dir": f"fold{k}", "version": fmeta["version"],
                          "test_speakers": held, "train_speakers": train_speakers})
    clip_fold = {str(sha): fold_of[str(spk)] for sha, spk in
                 zip(frame["sha256"], frame["speaker"], strict=True)}
    b = io.BytesIO()
    joblib.dump({"clip_fold": clip_fold}, b)
    write_bytes_atomic(out_dir / "model.joblib", b.getvalue())
    first = read_meta(out_dir / "fold0")
    digest = hashlib.sha256("|".join(f["version"] for f in folds).encode()).hexdigest()[:12]
    meta = {
        "kind": kind, "backend": BACKEND, "inner_backend": first["backend"],
        "n_folds": int(n_folds), "folds": folds, "speaker_fold": dict(sorted(fold_of.items())),
        "classes": first.get("classes", []), "screen": first.get("screen", {}),
        "feature_set": first.get("feature_set"),
        "corpus": corpus, "corpus_kind": corpus_kind,
        # every speaker trains some fold: a reader that ignores the folds sees them all
        "train_speakers": sorted(fold_of), "model_file": "model.joblib",
        "version": f"{kind}-crossfit{n_folds}-{first['backend']}-{digest}",
    }
    write_meta(out_dir, meta)
    write_tsv_atomic(out_dir / FOLDS_FILE, pd.DataFrame([
        {"fold": f["fold"], "n_test_speakers": len(f["test_speakers"]),
         "test_speakers": ",".join(f["test_speakers"]),
         "n_train_speakers": len(f["train_speakers"]),
         "n_clips": int(frame["speaker"].astype(str).isin(f["test_speakers"]).sum()),
         "overlap": 0, "version": f["version"]} for f in folds]))
    return meta


class CrossFitSpecialist:
    """The composite loaded by `judgeaudit.specialists.load` (see module docstring)."""

    def __init__(self, kind: str, meta: dict[str, Any], models: list[Any],
                 clip_fold: dict[str, int]):
        self.kind, self.meta, self.models, self.clip_fold = kind, meta, models, clip_fold
        self.classes = list(meta.get("classes") or [])
        self.version = meta["version"]
        self._memo = Memo()

    @classmethod
    def load(cls, path: str | os.PathLike) -> CrossFitSpecialist:
        from judgeaudit.specialists import load as load_model

        mp = meta_path(path)
        meta = read_meta(mp)
        payload = joblib.load(mp.parent / meta.get("model_file", "model.joblib"))
        models = [load_model(meta["kind"], mp.parent / f["dir"] / "model.json")
                  for f in meta["folds"]]
        return cls(meta["kind"], meta, models, dict(payload["clip_fold"]))

    def fold_of(self, data: bytes) -> int | None:
        return self.clip_fold.get(sha256_bytes(data))

    def _predict(self, data: bytes) -> Prediction:
        k = self.fold_of(data)
        if k is not None:
            return self.models[k].predict_audio(data)
        got = [m.predict_audio(data) for m in self.models]
        if got[0].excluded:
            return excluded_prediction(got[0].status, self.version)
        scores = {c: float(np.mean([p.scores.get(c, 0.0) for p in got])) for c in self.classes}
        return Prediction(max(self.classes, key=scores.__getitem__), scores, self.version)

    def predict_audio(self, wav_bytes: bytes) -> Prediction:
        """A clip of the corpus: its speaker's fold model (never saw the speaker);
        other bytes: the mean of the fold models' scores."""
        return self._memo.get_or(bytes(wav_bytes), self._predict)

    def _score(self, data: bytes) -> float:
        k = self.fold_of(data)
        if k is not None:
            return float(self.models[k].score_audio(data))
        return float(np.mean([m.score_audio(data) for m in self.models]))

    def score_audio(self, wav_bytes: bytes) -> float:
        return self._memo.get_or(bytes(wav_bytes), self._score)


def predict(kind: str, model_path: str | os.PathLike, manifest_path: str | os.PathLike,
            cache_dir=None, n_jobs: int = 1) -> pd.DataFrame:
    """Every clip labelled by the fold model of its speaker (column `fold`), in the
    manifest's order; a clip whose speaker is in no fold is an error naming it."""
    meta = read_meta(model_path)
    base = meta_path(model_path).parent
    frame = read_manifest(manifest_path)
    fold_of = {str(k): int(v) for k, v in meta["speaker_fold"].items()}
    spk = frame["speaker"].astype(str)
    unknown = sorted(set(spk) - set(fold_of))
    if unknown:
        raise SpecialistError(
            f"{kind} crossfit predictions on '{manifest_path}': speakers {unknown[:5]} are in "
            f"no fold of '{meta_path(model_path)}' (the manifest changed since the fit; "
            "retrain)")
    absolute = _absolute_paths(frame, manifest_path)
    parts = []
    with tempfile.TemporaryDirectory(prefix="crossfit-") as tmp:
        for f in meta["folds"]:
            rows = absolute[spk.isin(f["test_speakers"]).to_numpy()]
            if rows.empty:
                continue
            sub = Path(tmp) / f"fold{f['fold']}" / "manifest.tsv"
            write_tsv_atomic(sub, rows)
            out = predict_one(kind, base / f["dir"] / "model.json", sub, cache_dir, n_jobs)
            out.insert(2, "fold", int(f["fold"]))
            parts.append(out)
    out = pd.concat(parts, ignore_index=True).set_index("clip_id").loc[
        frame["clip_id"]].reset_index()
    out["split"] = frame["split"].to_numpy()
    check_predictions(out, frame, meta, f"{kind} crossfit predictions on '{manifest_path}'")
    return out


def check_predictions(pred: pd.DataFrame, manifest: pd.DataFrame, meta: Mapping[str, Any],
                      what: str) -> pd.DataFrame:
    """Per-fold leakage check of a cross-fitted predictions table: one row per fold
    (clips it labelled, clips whose speaker its model trained on). Raises
    LeakageError naming the clips when any clip was labelled by a fold model that
    saw its speaker, or has no fold."""
    from judgeaudit.specialists.corpus import LeakageError

    if "fold" not in pred.columns:
        raise SpecialistError(f"{what}: no `fold` column (not a cross-fitted table)")
    speaker = dict(zip(manifest["clip_id"].astype(str), manifest["speaker"].astype(str),
                       strict=True))
    folds = {int(f["fold"]): f for f in meta["folds"]}
    rows, bad = [], []
    for k, f in sorted(folds.items()):
        mine = pred[pd.to_numeric(pred["fold"], errors="coerce") == k]
        train = set(f["train_speakers"])
        seen = [c for c in mine["clip_id"].astype(str) if speaker.get(c) in train]
        bad += [(c, speaker.get(c), k) for c in seen]
        rows.append({"fold": k, "n_clips": len(mine),
                     "n_speakers": int(mine["clip_id"].astype(str).map(speaker).nunique()),
                     "n_clips_speaker_seen_in_training": len(seen)})
    nofold = pred[~pd.to_numeric(pred["fold"], errors="coerce").isin(list(folds))]
    bad += [(c, speaker.get(c), None) for c in nofold["clip_id"].astype(str)]
    if bad:
        shown = "; ".join(f"clip {c} (speaker {s}) labelled by fold {k}" for c, s, k in bad[:5])
        raise LeakageError(f"{what}: {len(bad)} clip(s) labelled by a model that trained on "
                           f"their speaker (or by no fold): {shown}")
    table = pd.DataFrame(rows)
    for r in table.itertuples():
        log.info("%s: fold %d labelled %d clips of %d speakers, %d by a model that saw "
                 "their speaker", what, r.fold, r.n_clips, r.n_speakers,
                 r.n_clips_speaker_seen_in_training)
    return table
