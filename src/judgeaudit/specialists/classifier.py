"""Default emotion / language specialists: openSMILE (or MFCC) functionals and a
scikit-learn classifier fitted on the speaker-disjoint train split.

The regularisation strength is chosen by speaker-grouped cross-validation inside
the train split only, so nothing of the test split ever reaches the fit.
"""

from __future__ import annotations

import io
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import pandas as pd

from judgeaudit.features.audio import DEFAULT_SCREEN, ScreenConfig
from judgeaudit.features.extract import feature_matrix, feature_names, featurize_cached
from judgeaudit.io import sha256_bytes, write_bytes_atomic
from judgeaudit.specialists.base import (
    Memo,
    Prediction,
    SpecialistError,
    check_vocabulary,
    excluded_prediction,
    read_meta,
    write_meta,
)

log = logging.getLogger(__name__)
MODEL_FILE = "model.joblib"
MODELS = ("logreg", "svm", "random_forest")


def _estimator(model: str, c: float, seed: int):
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    if model == "logreg":
        clf = LogisticRegression(C=c, max_iter=3000, random_state=seed)
    elif model == "svm":
        clf = SVC(C=c, kernel="linear", probability=True, random_state=seed)
    elif model == "random_forest":
        clf = RandomForestClassifier(n_estimators=300, random_state=seed, n_jobs=1)
    else:
        raise SpecialistError(f"unknown classifier {model!r}: expected one of {list(MODELS)}")
    return make_pipeline(SimpleImputer(strategy="median"), StandardScaler(), clf)


def _select_c(x, y, groups, model: str, grid: Sequence[float], seed: int) -> tuple[float, dict]:
    from sklearn.model_selection import GroupKFold, cross_val_score

    n_groups = len(set(groups))
    if len(grid) <= 1 or n_groups < 3 or model == "random_forest":
        return float(grid[0]) if grid else 1.0, {}
    cv = GroupKFold(n_splits=min(3, n_groups))
    scores = {}
    for c in grid:
        s = cross_val_score(_estimator(model, c, seed), x, y, groups=groups, cv=cv)
        scores[float(c)] = float(np.mean(s))
        log.info("C=%g: speaker-grouped CV accuracy %.3f", c, scores[float(c)])
    best = max(scores, key=lambda k: (scores[k], -k))
    return best, scores


class FeatureClassifier:
    """A fitted classifier over one feature set; `predict_audio` works from bytes."""

    backend = "sklearn"
    #: <cache_dir> whose per-clip feature cache the *_audio methods read and fill
    #: (set by the judges' perception; None: features computed every time)
    feature_cache_dir: str | None = None

    def __init__(self, kind: str, feature_set: str, classes: Sequence[str], pipeline: Any,
                 meta: dict[str, Any], screen_cfg: ScreenConfig = DEFAULT_SCREEN):
        self.kind = kind
        self.feature_set = feature_set
        self.classes = tuple(classes)
        self.pipeline = pipeline
        self.meta = meta
        self.version = meta["version"]
        self.screen_cfg = screen_cfg
        self._memo = Memo()

    # ---- training -------------------------------------------------------------------
    @classmethod
    def fit(cls, kind: str, table: pd.DataFrame, label_col: str, vocabulary: Sequence[str],
            feature_set: str, model: str = "logreg", c_grid: Sequence[float] = (1.0,),
            seed: int = 0, screen_cfg: ScreenConfig = DEFAULT_SCREEN) -> FeatureClassifier:
        """Fit on the rows of `table` (features + label + speaker); they must all be
        train-split rows of a speaker-disjoint split (checked by the caller)."""
        if "split" in table.columns and set(table["split"]) != {"train"}:
            raise SpecialistError(f"{kind}: fit() got non-train rows {sorted(set(table['split']))}")
        ok = table[table["status"] == "ok"]
        if ok.empty:
            raise SpecialistError(f"{kind}: no usable training clips (all screened out)")
        check_vocabulary(ok[label_col].astype(str), vocabulary, f"{kind} training labels")
        x, _ = feature_matrix(ok[["clip_id", "sha256", "status", *feature_names(feature_set)]])
        y = ok[label_col].astype(str).to_numpy()
        groups = ok["speaker"].astype(str).to_numpy()
        best_c, cv_scores = _select_c(x, y, groups, model, list(c_grid), seed)
        pipe = _estimator(model, best_c, seed).fit(x, y)
        classes = [str(c) for c in pipe.classes_]
        buf = io.BytesIO()
        joblib.dump(pipe, buf)
        digest = sha256_bytes(buf.getvalue())[:12]
        meta = {
            "kind": kind, "backend": cls.backend, "feature_set": feature_set, "model": model,
            "C": best_c, "cv_accuracy": cv_scores, "classes": classes,
            "vocabulary": list(vocabulary), "label_column": label_col,
            "n_train": len(ok), "train_speakers": sorted(set(groups)),
            "train_clips": sorted(ok["clip_id"].astype(str)),
            "screen": screen_cfg.__dict__,
            "version": f"{kind}-{model}-{feature_set}-{digest}",
        }
        obj = cls(kind, feature_set, classes, pipe, meta, screen_cfg)
        obj._bytes = buf.getvalue()
        return obj

    def save(self, model_dir: str | os.PathLike) -> Path:
        d = Path(model_dir)
        data = getattr(self, "_bytes", None)
        if data is None:
            buf = io.BytesIO()
            joblib.dump(self.pipeline, buf)
            data = buf.getvalue()
        write_bytes_atomic(d / MODEL_FILE, data)
        write_meta(d, dict(self.meta, model_file=MODEL_FILE))
        return d / "model.json"

    @classmethod
    def load(cls, path: str | os.PathLike) -> FeatureClassifier:
        meta = read_meta(path)
        from judgeaudit.specialists.base import meta_path

        model_file = meta_path(path).parent / meta.get("model_file", MODEL_FILE)
        pipe = joblib.load(model_file)
        screen = ScreenConfig(**meta.get("screen", {}))
        return cls(meta["kind"], meta["feature_set"], meta["classes"], pipe, meta, screen)

    # ---- prediction -----------------------------------------------------------------
    def _excluded(self, status: str) -> Prediction:
        """A screened-out clip gets no label and no scores, only its reason."""
        return excluded_prediction(status, self.version)

    def predict_features(self, x: np.ndarray) -> list[Prediction]:
        probs = self.pipeline.predict_proba(np.atleast_2d(x))
        out = []
        for row in probs:
            scores = {c: float(p) for c, p in zip(self.classes, row, strict=True)}
            out.append(Prediction(self.classes[int(np.argmax(row))], scores, self.version))
        return out

    def _predict_bytes(self, data: bytes) -> Prediction:
        status, values = featurize_cached(data, self.feature_set, self.screen_cfg,
                                          self.feature_cache_dir)
        if status != "ok":
            log.warning("%s specialist: clip %s... excluded (%s): no label, no scores",
                        self.kind, sha256_bytes(data)[:12], status)
            return self._excluded(status)
        return self.predict_features(values)[0]

    def predict_audio(self, wav_bytes: bytes) -> Prediction:
        """Label, per-class scores and version for one clip's WAV bytes (memoised)."""
        return self._memo.get_or(bytes(wav_bytes), self._predict_bytes)

    def predict_table(self, table: pd.DataFrame) -> pd.DataFrame:
        """Predictions for a feature table of this model's feature set."""
        names = list(feature_names(self.feature_set))
        missing = [n for n in names[:3] if n not in table.columns]
        if missing:
            raise SpecialistError(f"{self.kind}: feature table lacks {missing} "
                                  f"(expected the {self.feature_set} set)")
        rows = []
        ok = (table["status"] == "ok").to_numpy()
        preds: list[Prediction | None] = [None] * len(table)
        if ok.any():
            for i, p in zip(np.flatnonzero(ok),
                            self.predict_features(table.loc[ok, names].to_numpy(float)),
                            strict=True):
                preds[i] = p
        for i, (clip_id, status) in enumerate(zip(table["clip_id"], table["status"],
                                                  strict=True)):
            p = preds[i] or self._excluded(str(status))
            rows.append({"clip_id": clip_id, "label": p.label,
                         **{f"score_{c}": (round(p.scores[c], 6) if p.scores else np.nan)
                            for c in self.classes},
                         "status": str(status), "version": self.version})
        if not ok.all():
            counts = table.loc[~ok, "status"].astype(str).value_counts().to_dict()
            log.warning("%s specialist: %d of %d clips excluded by the screen %s; they get "
                        "no label (status column)", self.kind, int((~ok).sum()), len(table),
                        counts)
        return pd.DataFrame(rows)
