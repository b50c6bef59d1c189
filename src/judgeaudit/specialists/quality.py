"""Naturalness / quality specialist: DNSMOS (speechmos, ONNX models in the wheel)
plus eGeMAPS functionals, and a scikit-learn regressor fitted on the corpus
scores of the train split. `score_audio(bytes)` returns the predicted score."""

from __future__ import annotations

import io
import logging
import os
from collections.abc import Sequence
from pathlib import Path

import joblib
import numpy as np
import pandas as pd

from judgeaudit.features.audio import DEFAULT_SCREEN, ScreenConfig
from judgeaudit.features.extract import DNSMOS_NAMES, feature_names, featurize_cached
from judgeaudit.io import sha256_bytes, write_bytes_atomic
from judgeaudit.specialists.base import (
    Memo,
    SpecialistError,
    meta_path,
    read_meta,
    write_meta,
)

log = logging.getLogger(__name__)
MODEL_FILE = "model.joblib"
REGRESSORS = ("random_forest", "ridge", "dnsmos_only")


def _regressor(model: str, seed: int):
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import RidgeCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if model == "random_forest":
        reg = RandomForestRegressor(n_estimators=300, min_samples_leaf=2, random_state=seed,
                                    n_jobs=1)
    elif model in ("ridge", "dnsmos_only"):
        reg = RidgeCV(alphas=np.logspace(-3, 3, 13))
    else:
        raise SpecialistError(f"unknown regressor {model!r}: expected one of {list(REGRESSORS)}")
    return make_pipeline(SimpleImputer(strategy="median"), StandardScaler(), reg)


class FeatureRegressor:
    kind = "naturalness"
    backend = "dnsmos_regressor"
    #: <cache_dir> whose per-clip feature cache the *_audio methods read and fill
    #: (set by the judges' perception; None: features computed every time)
    feature_cache_dir: str | None = None

    def __init__(self, feature_set: str, pipeline, meta: dict,
                 screen_cfg: ScreenConfig = DEFAULT_SCREEN):
        self.feature_set = feature_set
        self.pipeline = pipeline
        self.meta = meta
        self.version = meta["version"]
        self.screen_cfg = screen_cfg
        self.columns = list(meta["columns"])
        self._memo = Memo()

    @classmethod
    def fit(cls, table: pd.DataFrame, target_col: str, feature_set: str,
            model: str = "random_forest", seed: int = 0,
            screen_cfg: ScreenConfig = DEFAULT_SCREEN) -> FeatureRegressor:
        if "split" in table.columns and set(table["split"]) != {"train"}:
            raise SpecialistError(f"naturalness fit() got non-train rows "
                                  f"{sorted(set(table['split']))}")
        ok = table[table["status"] == "ok"]
        if len(ok) < 5:
            raise SpecialistError(f"naturalness: only {len(ok)} usable training clips")
        columns = list(DNSMOS_NAMES) if model == "dnsmos_only" else list(
            feature_names(feature_set))
        y = pd.to_numeric(ok[target_col], errors="coerce")
        if y.isna().any():
            raise SpecialistError(f"naturalness: column '{target_col}' has non-numeric values")
        pipe = _regressor(model, seed).fit(ok[columns].to_numpy(float), y.to_numpy(float))
        buf = io.BytesIO()
        joblib.dump(pipe, buf)
        meta = {"kind": "naturalness", "backend": cls.backend, "feature_set": feature_set,
                "model": model, "columns": columns, "target": target_col,
                "n_train": len(ok), "train_speakers": sorted(set(ok["speaker"].astype(str))),
                "train_clips": sorted(ok["clip_id"].astype(str)),
                "screen": screen_cfg.__dict__,
                "version": f"naturalness-{model}-{feature_set}-{sha256_bytes(buf.getvalue())[:12]}"}
        obj = cls(feature_set, pipe, meta, screen_cfg)
        obj._bytes = buf.getvalue()
        return obj

    def save(self, model_dir: str | os.PathLike) -> Path:
        write_bytes_atomic(Path(model_dir) / MODEL_FILE, self._bytes)
        write_meta(model_dir, dict(self.meta, model_file=MODEL_FILE))
        return Path(model_dir) / "model.json"

    @classmethod
    def load(cls, path: str | os.PathLike) -> FeatureRegressor:
        meta = read_meta(path)
        pipe = joblib.load(meta_path(path).parent / meta.get("model_file", MODEL_FILE))
        return cls(meta["feature_set"], pipe, meta, ScreenConfig(**meta.get("screen", {})))

    def predict_values(self, x: np.ndarray) -> np.ndarray:
        return self.pipeline.predict(np.atleast_2d(x))

    def _score(self, data: bytes) -> float:
        status, values = featurize_cached(data, self.feature_set, self.screen_cfg,
                                          self.feature_cache_dir)
        if status != "ok":
            return float(self.meta.get("floor", 1.0))
        names = list(feature_names(self.feature_set))
        idx = [names.index(c) for c in self.columns]
        return float(self.predict_values(values[idx])[0])

    def score_audio(self, wav_bytes: bytes) -> float:
        """Predicted naturalness score of one clip (higher = more natural); memoised."""
        return self._memo.get_or(bytes(wav_bytes), self._score)

    def predict_table(self, table: pd.DataFrame, extra: Sequence[str] = DNSMOS_NAMES
                      ) -> pd.DataFrame:
        ok = (table["status"] == "ok").to_numpy()
        pred = np.full(len(table), float(self.meta.get("floor", 1.0)))
        if ok.any():
            pred[ok] = self.predict_values(table.loc[ok, self.columns].to_numpy(float))
        out = pd.DataFrame({"clip_id": table["clip_id"].to_numpy(), "score": np.round(pred, 6)})
        for c in extra:
            if c in table.columns:
                out[c] = np.round(table[c].to_numpy(float), 6)
        out["status"] = table["status"].to_numpy()
        out["version"] = self.version
        return out
