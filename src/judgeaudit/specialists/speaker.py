"""Speaker specialist: resemblyzer d-vectors (weights ship in the wheel), cosine
similarity, and a same/different threshold set at the equal-error point of the
train-split trials."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
import pandas as pd

from judgeaudit.features.audio import DEFAULT_SCREEN, ScreenConfig
from judgeaudit.features.extract import EMBED_DIM, feature_names, featurize_bytes
from judgeaudit.io import sha256_file
from judgeaudit.specialists.base import Memo, SpecialistError, read_meta, write_meta

log = logging.getLogger(__name__)
FEATURE_SET = "resemblyzer"


def eer(scores: np.ndarray, same: np.ndarray) -> tuple[float, float]:
    """(equal error rate, threshold) of similarity scores against same-speaker flags.

    Computed on the ROC curve (sklearn.metrics.roc_curve): the point where the false
    acceptance rate equals the false rejection rate, linearly interpolated."""
    from sklearn.metrics import roc_curve

    same = np.asarray(same).astype(int)
    if same.min() == same.max():
        raise SpecialistError("EER needs both same-speaker and different-speaker trials")
    fpr, tpr, thr = roc_curve(same, np.asarray(scores, float))
    fnr = 1 - tpr
    i = int(np.nanargmin(np.abs(fnr - fpr)))
    # interpolate between i and its neighbour on the other side of the crossing
    j = i + 1 if i + 1 < len(fpr) and (fnr[i] - fpr[i]) > 0 else max(i - 1, 0)
    d_i, d_j = fnr[i] - fpr[i], fnr[j] - fpr[j]
    if j != i and d_i != d_j and np.sign(d_i) != np.sign(d_j):
        w = d_i / (d_i - d_j)
        rate = float(fpr[i] + w * (fpr[j] - fpr[i]))
        t = float(thr[i] + w * (thr[j] - thr[i])) if np.isfinite(thr[[i, j]]).all() else thr[i]
    else:
        rate, t = float((fpr[i] + fnr[i]) / 2), float(thr[i])
    return rate, float(t)


def _weights_tag() -> str:
    import importlib.util

    spec = importlib.util.find_spec("resemblyzer")
    pt = Path(spec.submodule_search_locations[0]) / "pretrained.pt"
    return sha256_file(pt)[:12] if pt.exists() else "unknown"


def trial_scores(emb: pd.DataFrame, trials: pd.DataFrame) -> np.ndarray:
    """Cosine similarity for each trial (clip_a, clip_b) from an embedding table
    (clip_id + emb_* columns of unit vectors)."""
    names = list(feature_names(FEATURE_SET))
    table = emb.set_index("clip_id")
    missing = sorted((set(trials["clip_a"]) | set(trials["clip_b"])) - set(table.index))
    if missing:
        raise SpecialistError(f"speaker trials name clips missing from the embeddings: "
                              f"{missing[:5]}")
    a = table.loc[trials["clip_a"].astype(str), names].to_numpy(float)
    b = table.loc[trials["clip_b"].astype(str), names].to_numpy(float)
    return np.nan_to_num(np.sum(a * b, axis=1), nan=0.0)


class ResemblyzerSpeaker:
    """`embed_audio(bytes)` -> unit d-vector; `similarity(a, b)`; `same_speaker(a, b)`."""

    kind = "speaker"
    backend = "resemblyzer"

    def __init__(self, meta: dict, screen_cfg: ScreenConfig = DEFAULT_SCREEN):
        self.meta = meta
        self.version = meta["version"]
        self.threshold = float(meta.get("threshold", 0.75))
        self.screen_cfg = screen_cfg
        self._memo = Memo()

    @classmethod
    def fit(cls, emb: pd.DataFrame, trials: pd.DataFrame,
            screen_cfg: ScreenConfig = DEFAULT_SCREEN) -> ResemblyzerSpeaker:
        """Threshold at the EER point of the (train-split) trials."""
        if "split" in trials.columns and set(trials["split"]) - {"train"}:
            raise SpecialistError("speaker fit(): trials must all be train-split trials")
        scores = trial_scores(emb, trials)
        rate, thr = eer(scores, trials["same"].astype(int).to_numpy())
        meta = {"kind": "speaker", "backend": cls.backend, "feature_set": FEATURE_SET,
                "threshold": thr, "train_eer": rate, "n_train_trials": len(trials),
                "screen": screen_cfg.__dict__,
                "version": f"speaker-resemblyzer-{_weights_tag()}"}
        log.info("speaker: train EER %.3f at threshold %.3f", rate, thr)
        return cls(meta, screen_cfg)

    def save(self, model_dir: str | os.PathLike) -> Path:
        write_meta(model_dir, self.meta)
        return Path(model_dir) / "model.json"

    @classmethod
    def load(cls, path: str | os.PathLike) -> ResemblyzerSpeaker:
        meta = read_meta(path)
        return cls(meta, ScreenConfig(**meta.get("screen", {})))

    def _embed(self, data: bytes) -> np.ndarray:
        status, values = featurize_bytes(data, FEATURE_SET, self.screen_cfg)
        if status != "ok":
            return np.zeros(EMBED_DIM)
        return values

    def embed_audio(self, wav_bytes: bytes) -> np.ndarray:
        """Unit-norm 256-d d-vector of a clip (zeros for a silent/unusable clip)."""
        return self._memo.get_or(bytes(wav_bytes), self._embed)

    def similarity(self, a: bytes, b: bytes) -> float:
        return float(np.dot(self.embed_audio(a), self.embed_audio(b)))

    def same_speaker(self, a: bytes, b: bytes) -> bool:
        return self.similarity(a, b) >= self.threshold
